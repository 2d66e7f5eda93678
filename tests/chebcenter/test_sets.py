"""General sets: Polytope and QuadraticSet (issue: estimation users' sets)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import meb_socp, worst_error
from strategies import instances, scaled

import chebcenter as cc


@settings(max_examples=scaled(15))
@given(instances(max_d=5, min_p=1, general_box=False))
def test_box_slice_through_to_polytope_gives_the_same_centers(inst):
    """The exact center does not depend on how the set is written. RCC1 does: the polytope
    reduces to the box slice of its bounding box with its rows as one-sided intervals, whose
    relaxation holds the slice's box quadratics as consequences (x (x - 1) <= 0 follows from
    the rows' lifted intervals and X >= x x^T) up to the bounding box's pad (1e-6 of its
    width, <= 1e-6 here), which moves the radius by at most the pad's diagonal; it is at
    least the exact radius (a relaxation)."""
    A, lo, hi, x = inst
    b = A @ x
    P = cc.BoxSlice(A, lo, hi)
    poly = P.to_polytope(b)
    exact = poly.center("exact")
    ref = P.center(b, method="exact")
    assert exact.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(exact.center, ref.center, atol=1e-9)
    assert exact.radius == pytest.approx(ref.radius, rel=1e-5, abs=1e-7)
    got, ref = poly.center("rcc1"), P.center(b, method="rcc1")
    assert got.status is cc.Status.OPTIMAL
    assert exact.radius * (1 - 1e-9) <= got.radius <= ref.radius + 1e-6 * np.sqrt(A.shape[1]) + 1e-12
    assert np.all(got.center >= lo - 1e-9) and np.all(got.center <= hi + 1e-9)
    assert np.linalg.norm(A @ got.center - b) <= 1e-8 * (1 + np.linalg.norm(b))


def test_to_polytope_needs_b_when_there_are_equations():
    with pytest.raises(cc.InvalidInputError, match="b is required"):
        cc.BoxSlice([[1.0, 1.0]]).to_polytope()
    box = cc.BoxSlice(np.zeros((0, 2)), lo=0, hi=[1, 3]).to_polytope()
    np.testing.assert_allclose(box.center("exact").center, [0.5, 1.5])


@pytest.mark.parametrize("n", [2, 3, 5])
def test_corner_simplex_inscribed_vs_minimax(n):
    simplex = cc.Polytope(np.vstack([-np.eye(n), np.ones((1, n))]), np.r_[np.zeros(n), 1.0])
    ins = simplex.center("inscribed")
    np.testing.assert_allclose(ins.center, 1 / (n + np.sqrt(n)), atol=1e-9)
    ex = simplex.center("exact")
    if n == 2:  # right triangle: the midpoint of the hypotenuse
        np.testing.assert_allclose(ex.center, [0.5, 0.5], atol=1e-12)
        assert ex.radius == pytest.approx(np.sqrt(0.5))
    else:  # the circumcenter of the far face, 1/n
        np.testing.assert_allclose(ex.center, 1 / n, atol=1e-12)
        assert ex.radius == pytest.approx(np.sqrt(1 - 1 / n))
    r1 = simplex.center("rcc1")
    assert r1.radius >= ex.radius - 1e-9


@pytest.mark.parametrize("n", [2, 3, 4])
def test_cross_polytope(n):
    import itertools

    G = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    poly = cc.Polytope(G, np.ones(len(G)))
    ex = poly.center("exact")
    np.testing.assert_allclose(ex.center, 0, atol=1e-12)
    assert ex.radius == pytest.approx(1.0) and ex.extras["n_vertices"] == 2 * n
    r1 = poly.center("rcc1")
    np.testing.assert_allclose(r1.center, 0, atol=1e-6)
    assert r1.radius >= 1.0 - 1e-9


def test_ball_as_one_ellipsoid_and_an_ellipse():
    c, r = np.array([1.0, -2.0, 0.5]), 2.0
    ball = cc.QuadraticSet([np.eye(3)], [-c], [c @ c - r * r])
    res = ball.center("rcc1")
    np.testing.assert_allclose(res.center, c, atol=1e-6)
    assert res.radius == pytest.approx(r, rel=1e-6)
    # ellipse x^2/9 + y^2 <= 1: center 0, radius 3 (the semi-major axis)
    ell = cc.QuadraticSet([np.diag([1 / 9, 1.0])], [[0.0, 0.0]], [-1.0])
    res = ell.center("rcc1")
    np.testing.assert_allclose(res.center, 0, atol=1e-6)
    assert res.radius == pytest.approx(3.0, rel=1e-5)


def _ebt_primal(Qs, gs, ts):
    n = Qs.shape[1]
    Z = cp.Variable((n + 1, n + 1), PSD=True)
    D, x = Z[:n, :n], Z[:n, n]
    cons = [Z[n, n] == 1] + [cp.trace(Qs[i] @ D) + 2 * gs[i] @ x + ts[i] <= 0 for i in range(len(ts))]
    prob = cp.Problem(cp.Maximize(cp.trace(D) - cp.sum_squares(x)), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL")
    return x.value, prob.value


@pytest.mark.parametrize("seed", range(5))
def test_ebt_dual_matches_primal_on_intersections_of_ellipsoids(seed):
    rng = np.random.default_rng(seed)
    n, k = 3, 3
    Qs, gs, ts = [], [], []
    for _ in range(k):
        L = rng.standard_normal((n, n))
        Q = L @ L.T / n + 0.1 * np.eye(n)
        c = rng.standard_normal(n) * 0.3
        Qs.append(Q), gs.append(-Q @ c), ts.append(c @ Q @ c - 1.0)  # (x-c)^T Q (x-c) <= 1
    Qs, gs, ts = np.array(Qs), np.array(gs), np.array(ts)
    res = cc.QuadraticSet(Qs, gs, ts).center("rcc1")
    x_p, eta_p = _ebt_primal(Qs, gs, ts)
    assert res.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(res.center, x_p, atol=1e-4)
    assert res.extras["eta"] == pytest.approx(eta_p, rel=1e-5)
    # the center lies in the set
    assert np.all(np.einsum("ij,kij->k", np.outer(res.center, res.center), Qs) + 2 * gs @ res.center + ts <= 1e-6)


@st.composite
def random_polytopes(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 4))
    rng = np.random.default_rng(seed)
    m = draw(st.integers(n + 1, 3 * n + 2))
    G = rng.standard_normal((m, n))
    h = rng.random(m) + 0.1  # contains the origin
    G = np.vstack([G, np.eye(n), -np.eye(n)])  # keep it bounded
    h = np.concatenate([h, np.full(2 * n, 2.0)])
    return G, h


@settings(max_examples=scaled(20))
@given(random_polytopes())
def test_rcc1_radius_bounds_the_exact_radius_and_exact_matches_socp(poly):
    G, h = poly
    P = cc.Polytope(G, h)
    ex = P.center("exact")
    V = P.vertices()
    c_ref, t_ref = meb_socp(V)
    assert ex.radius == pytest.approx(t_ref, rel=1e-5, abs=1e-7)
    assert worst_error(V, ex.center) <= worst_error(V, c_ref) + 1e-9
    r1 = P.center("rcc1")
    assert r1.status.ok and r1.radius >= ex.radius - 1e-7
    assert worst_error(V, r1.center) <= r1.radius + 1e-7  # its certificate holds
    ins = P.center("inscribed")
    assert np.all(G @ ins.center + ins.radius * np.linalg.norm(G, axis=1) <= h + 1e-7)


def test_unbounded_empty_and_bad_input():
    with pytest.raises(cc.InvalidInputError, match="unbounded: it contains the ray"):
        cc.Polytope([[1.0, 0.0], [-1.0, 0.0]], [1.0, 1.0])
    empty = cc.Polytope(np.vstack([np.eye(2), -np.eye(2)]), [1, 1, -2, 0.0])  # x1 <= 1 and x1 >= 2
    for m in ("exact", "rcc1", "inscribed"):
        assert empty.center(m).status is cc.Status.INFEASIBLE
    sl = cc.Polytope(np.vstack([np.eye(2), -np.eye(2)]), np.ones(4), A_eq=[[1.0, 1.0], [1.0, 1.0]], b_eq=[0.0, 1.0])
    assert sl.center("exact").status is cc.Status.INFEASIBLE  # inconsistent equalities
    with pytest.raises(cc.InvalidInputError, match="not available for quadratic sets"):
        cc.QuadraticSet([np.eye(2)], [[0.0, 0.0]], [-1.0]).center("exact")
    with pytest.raises(cc.InvalidInputError, match="positive semidefinite"):
        cc.QuadraticSet([np.diag([1.0, -1.0])], [[0.0, 0.0]], [-1.0])
    with pytest.raises(cc.InvalidInputError, match="must be positive definite"):
        cc.QuadraticSet([np.diag([1.0, 0.0])], [[0.0, 0.0]], [-1.0])
    with pytest.raises(cc.InvalidInputError, match="method must be one of"):
        cc.Polytope(np.vstack([np.eye(1), -np.eye(1)]), [1.0, 1.0]).center("analytic")
    with pytest.raises(cc.InvalidInputError, match="h must be a finite array of shape"):
        cc.Polytope(np.eye(2), [1.0])


def test_rcc1_on_a_polytope_that_is_one_point_up_to_the_tolerance():
    """Found by the ci profile (seed 2027): a box slice through two box faces whose polytope
    is a single point; Clarabel's SDP reported it infeasible, and rcc1 ended SOLVER_ERROR.
    The relaxation of a point is the point: the frame refinement, which finds the set's LP
    bounding box, recognises it, and rcc1 answers from that box."""
    A = np.array([[-0.98218815, 1.08727136, 0.10286271, -1.33841978, -0.08943544],
                  [-1.23238151, -0.04565618, 0.37460019, 0.97261621, 0.23831707],
                  [0.36803063, 0.36650541, 1.62116619, -1.9204483, -1.71460793],
                  [1.19731698, 1.48121355, 0.35328406, -0.0489984, 0.65404157]])
    x = np.array([1.0, 0.0, 0.06730559, 0.31470973, 0.31068978])
    P = cc.BoxSlice(A)
    poly = P.to_polytope(A @ x)
    got = poly.center("rcc1")
    ref = P.center(A @ x, method="exact")
    assert got.status is cc.Status.OPTIMAL and ref.radius <= 1e-9
    np.testing.assert_allclose(got.center, ref.center, atol=1e-7)
    assert got.radius <= 1e-7 and worst_error(np.array([ref.center]), got.center) <= got.radius + 1e-12


def test_auto_is_the_default_of_every_set_type():
    """Polytope and QuadraticSet default to auto, as BoxSlice does: on a polytope the exact
    center where its enumeration fits (the simplex's centroid, radius sqrt((n - 1) / n) for
    n = 3, a closed form), rcc1 past max_candidates (a bound no smaller than the exact radius);
    on a quadratic set rcc1 (a ball: its own center and radius). extras["method"] says which."""
    n = 3
    simplex = cc.Polytope(np.vstack([-np.eye(n), np.ones((1, n))]), np.r_[np.zeros(n), 1.0])
    got = simplex.center()
    assert got.method == "auto" and got.extras["method"] == "exact" and got.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(got.center, np.full(n, 1 / n), atol=1e-12)
    assert got.radius == pytest.approx(np.sqrt((n - 1) / n), rel=1e-12)
    past = simplex.center(max_candidates=1)
    assert past.extras["method"] == "rcc1" and past.radius >= got.radius * (1 - 1e-9)
    c, r = np.array([1.0, -2.0, 0.5]), 2.0
    ball = cc.QuadraticSet([np.eye(3)], [-c], [c @ c - r * r]).center()
    assert ball.method == "auto" and ball.extras["method"] == "rcc1"
    np.testing.assert_allclose(ball.center, c, atol=1e-6)
    assert ball.radius == pytest.approx(r, rel=1e-6)
