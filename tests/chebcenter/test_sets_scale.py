"""Scale and translation equivariance of Polytope and QuadraticSet (x -> s x + t).

The reference is independent of the class under test: the vertices of a polytope come from
a brute-force enumeration written here (every n-subset of rows, solved and filtered), and
the enclosing ball from the SOCP in ``reference.meb_socp``. Each set is solved at unit
scale and at ``s`` in 1e-12 .. 1e12 with an offset ``t`` of 1 .. 3 set-sizes; answers must
map back: centers to ``EQUI`` of the set's size, radii to ``EQUI`` relative (exact,
inscribed) or ``RCC1_EQUI`` (rcc1, an interior-point solver run to about 1e-8 on the
normalised problem, whose center is only determined to about the square root of that).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from reference import meb_socp, worst_error

import chebcenter as cc

SCALES = (1e-12, 1e-6, 1e-2, 1.0, 1e3, 1e6, 1e12)
EQUI = 1e-7
RCC1_EQUI = 1e-4


def brute_polytope_vertices(G, h, tol=1e-9):
    """Every n-subset of rows of G x <= h solved; the feasible solutions, de-duplicated."""
    m, n = G.shape
    out = []
    for rows in itertools.combinations(range(m), n):
        M = G[list(rows)]
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        x = np.linalg.solve(M, h[list(rows)])
        if np.all(G @ x <= h + tol * (1 + np.abs(h))):
            out.append(x)
    V = np.array(out)
    keep = [i for i in range(len(V)) if not any(np.allclose(V[i], V[j], atol=1e-9) for j in range(i))]
    return V[keep]


def polytope_family(kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "random":
        n = int(rng.integers(2, 4))
        G = np.vstack([rng.standard_normal((n + 3, n)), np.eye(n), -np.eye(n)])
        h = np.concatenate([rng.random(n + 3) + 0.1, np.full(2 * n, 2.0)])
        return G, h
    if kind == "simplex":
        n = int(rng.integers(2, 5))
        return np.vstack([-np.eye(n), np.ones((1, n))]), np.r_[np.zeros(n), 1.0]
    if kind == "integer":  # integer rows, parallel pairs (paired into quadratics by rcc1)
        n = 3
        G = rng.integers(-3, 4, size=(3, n)).astype(float)
        G[np.linalg.norm(G, axis=1) == 0, 0] = 1.0
        G = np.vstack([G, -G, np.eye(n), -np.eye(n)])
        return G, np.concatenate([rng.random(6) + 0.5, np.ones(2 * n)])
    raise ValueError(kind)


def _frame(G, h, s, t):
    """The image of {G x <= h} under x -> s x + t: {G y <= s h + G t}."""
    return G, s * h + G @ t


@pytest.mark.parametrize("kind,seed", [(k, s) for k in ("random", "simplex", "integer") for s in range(3)])
def test_polytope_methods_are_scale_and_translation_equivariant(kind, seed):
    G, h = polytope_family(kind, seed)
    n = G.shape[1]
    V = brute_polytope_vertices(G, h)
    assert len(V) >= n + 1
    c_ref, r_ref = meb_socp(V)
    unit = {m: cc.Polytope(G, h).center(m) for m in ("exact", "rcc1", "inscribed")}
    assert unit["exact"].status is cc.Status.OPTIMAL
    assert unit["exact"].radius == pytest.approx(r_ref, rel=1e-6)
    assert worst_error(V, unit["exact"].center) <= unit["exact"].radius * (1 + 1e-9)
    assert worst_error(V, unit["rcc1"].center) <= unit["rcc1"].radius * (1 + 1e-9)   # a bound
    assert unit["rcc1"].radius >= unit["exact"].radius * (1 - 1e-9)
    rng = np.random.default_rng(100 + seed)
    for s in SCALES:
        t = s * (1 + 2 * rng.random(n)) * rng.choice([-1, 1], n)
        Gs, hs = _frame(G, h, s, t)
        P = cc.Polytope(Gs, hs)
        for method, ref in unit.items():
            got = P.center(method)
            assert got.status is ref.status, (method, s)
            tol = RCC1_EQUI if method == "rcc1" else EQUI
            np.testing.assert_allclose((got.center - t) / s, ref.center, atol=tol * max(1.0, r_ref),
                                       err_msg=f"{method} at s={s}")
            assert got.radius / s == pytest.approx(ref.radius, rel=tol), (method, s)
        ex = P.center("exact")  # the contract in the scaled frame, against the scaled brute-force vertices
        assert worst_error(s * V + t, ex.center) <= ex.radius * (1 + 1e-7)
        assert ex.extras["radius_lower"] <= ex.radius


@pytest.mark.parametrize("s", SCALES)
def test_polytope_with_equalities_and_a_fixed_coordinate_scales(s):
    """A BoxSlice's polytope (box rows, an equality row, one fixed coordinate) at scale s."""
    A = np.array([[1.0, 2.0, -1.0, 0.5]])
    lo, hi = np.array([0.0, 0.0, 0.3, 0.0]), np.array([1.0, 1.0, 0.3, 1.0])
    x = np.array([0.2, 0.7, 0.3, 0.4])
    t = s * np.array([3.0, -2.0, 5.0, 1.0])
    ref = cc.BoxSlice(A, lo, hi).to_polytope(A @ x)
    got = cc.BoxSlice(A, s * lo + t, s * hi + t).to_polytope(A @ (s * x + t))
    for method in ("exact", "rcc1"):
        r0, r1 = ref.center(method), got.center(method)
        assert r1.status is cc.Status.OPTIMAL, (method, s)
        tol = RCC1_EQUI if method == "rcc1" else EQUI
        np.testing.assert_allclose((r1.center - t) / s, r0.center, atol=tol)
        assert r1.radius / s == pytest.approx(r0.radius, rel=tol)
        assert abs(r1.center[2] - (0.3 * s + t[2])) <= 1e-9 * s   # the fixed coordinate stays fixed


@pytest.mark.parametrize("s", SCALES)
def test_polytope_empty_and_point_sets_at_every_scale(s):
    t = s * np.array([2.0, -1.0])
    box = np.vstack([np.eye(2), -np.eye(2)])
    empty = cc.Polytope(box, s * np.array([1, 1, -2, 0.0]) + box @ t)      # x1 <= 1 and x1 >= 2
    for m in ("exact", "rcc1", "inscribed"):
        assert empty.center(m).status is cc.Status.INFEASIBLE, (m, s)
    point = cc.Polytope(box, s * np.array([0.5, 0.5, -0.5, -0.5]) + box @ t)  # the point (.5, .5)
    r = point.center("exact")
    # the rows pin both coordinates (opposite unit rows): the point and its radius come from
    # the data, not from the LPs' box
    assert r.status is cc.Status.OPTIMAL and r.radius <= 1e-9 * s and r.extras["radius_lower"] == 0.0
    np.testing.assert_allclose((r.center - t) / s, [0.5, 0.5], atol=1e-9)


def _ellipsoids(seed, n=3, k=3):
    rng = np.random.default_rng(seed)
    Qs, gs, ts = [], [], []
    for _ in range(k):
        L = rng.standard_normal((n, n))
        Q = L @ L.T / n + 0.1 * np.eye(n)
        c = rng.standard_normal(n) * 0.3
        Qs.append(Q), gs.append(-Q @ c), ts.append(c @ Q @ c - 1.0)
    return np.array(Qs), np.array(gs), np.array(ts)


def _quadratics_image(Qs, gs, ts, s, t):
    """The image of {x^T Q x + 2 g^T x + c <= 0} under x -> s x + t, written as the user would."""
    # y = s x + t  =>  x = (y - t)/s:  (y-t)^T Q (y-t)/s^2 + 2 g^T (y-t)/s + c
    Q2 = Qs / s**2
    g2 = np.array([-Q @ t / s**2 + g / s for Q, g in zip(Qs, gs)])
    c2 = np.array([t @ Q @ t / s**2 - 2 * g @ t / s + c for Q, g, c in zip(Qs, gs, ts)])
    return Q2, g2, c2


@pytest.mark.parametrize("seed", range(3))
def test_quadratic_set_rcc1_is_scale_and_translation_equivariant(seed):
    Qs, gs, ts = _ellipsoids(seed)
    ref = cc.QuadraticSet(Qs, gs, ts).center("rcc1")
    assert ref.status is cc.Status.OPTIMAL
    for s in (1e-6, 1e-3, 1.0, 1e3, 1e6):   # Q / s^2 must stay a normal float: |s| <= ~1e150
        t = s * np.array([1.5, -2.0, 0.5])
        got = cc.QuadraticSet(*_quadratics_image(Qs, gs, ts, s, t)).center("rcc1")
        assert got.status is cc.Status.OPTIMAL, s
        np.testing.assert_allclose((got.center - t) / s, ref.center, atol=RCC1_EQUI)
        assert got.radius / s == pytest.approx(ref.radius, rel=RCC1_EQUI)


def test_quadratic_set_at_the_extreme_scales():
    """A ball of radius 3 s around s (1, 2) + t, at s = 1e-12 and 1e12: exact closed form."""
    for s in (1e-12, 1e12):
        c = s * np.array([1.0, 2.0]) + s * np.array([4.0, -7.0])
        ball = cc.QuadraticSet([np.eye(2)], [-c], [c @ c - 9 * s * s])
        r = ball.center("rcc1")
        assert r.status is cc.Status.OPTIMAL
        np.testing.assert_allclose(r.center, c, rtol=0, atol=1e-6 * s)
        assert r.radius == pytest.approx(3 * s, rel=1e-6)


def test_a_slice_that_is_one_point_keeps_its_frame():
    """Regression (found by the ci profile): a slice of rank 4 in 5 unknowns touching the box
    at one vertex. The bounding-box LPs, relaxed by the feasibility tolerance, return a box of
    width ~1e-9; refining the frame on it shrank the scale to noise and 'exact' answered a
    point outside the box."""
    A = np.array([[0.20923297, 2.04045416, 1.24637468, 0.9913903, 0.60194925],
                  [-1.49529674, 0.58969215, 1.59405262, -0.22294697, 0.82305252],
                  [2.11761811, 0.88931721, -0.33754071, -2.34359144, -0.75918527],
                  [0.18306667, -0.16527298, 0.20527324, -0.21093965, 2.09791665]])
    x = np.array([0.0, 0.0, 0.0, 0.68695088, 0.39757166])
    V = brute_polytope_vertices(np.vstack([A, -A, np.eye(5), -np.eye(5)]),
                                np.r_[A @ x, -(A @ x), np.ones(5), np.zeros(5)], tol=1e-9)
    assert len(V) == 1
    r = cc.BoxSlice(A).to_polytope(A @ x).center("exact")
    assert r.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(r.center, x, atol=1e-9)
    # one point up to the LPs' resolution (general rows, no pin): the radius is the half-diagonal
    # of its LP box, each half-extent within _thin() = 10 tol (1 + max|h|) of a frame of the
    # set's first size (|h| <= 3 here, tol = feas_tol 1e-9 plus rounding): below 1e-7
    assert r.radius <= 1e-7


def _degenerate_polytope(kind):
    """Families the box slices were hardened on, as polytopes ``(G, h, A_eq, b_eq)``: a row
    written twice, a thin slab (two opposite rows 1e-7 apart), a coordinate fixed by an
    equality, one pinned by two inequalities, near-parallel rows, and a plain random one."""
    rng = np.random.default_rng({"duplicated": 1, "thin": 2, "fixed": 3, "near_parallel": 4, "random": 5,
                                 "pinned": 6}[kind])
    n = 3
    G = np.vstack([rng.standard_normal((4, n)), np.eye(n), -np.eye(n)])
    h = np.concatenate([rng.random(4) + 0.2, np.ones(2 * n)])
    A_eq = b_eq = None
    if kind == "duplicated":
        G, h = np.vstack([G, G[:2]]), np.concatenate([h, h[:2]])
    elif kind == "thin":
        a = rng.standard_normal(n)
        G, h = np.vstack([G, a, -a]), np.concatenate([h, [0.1, -0.1 + 1e-7]])
    elif kind == "fixed":
        A_eq, b_eq = np.eye(n)[:1], np.array([0.25])
    elif kind == "pinned":   # x_1 <= -0.25 and -x_1 <= 0.25: fixed by two inequalities
        h[n + 4], h[4] = 0.25, -0.25
    elif kind == "near_parallel":
        G = np.vstack([G, G[0] + 1e-7 * rng.standard_normal(n)])
        h = np.concatenate([h, [h[0]]])
    return G, h, A_eq, b_eq


@pytest.mark.parametrize("kind", ["duplicated", "thin", "fixed", "pinned", "near_parallel", "random"])
@pytest.mark.parametrize("s, offset", [(1e-12, 0.0), (1.0, 0.0), (1e12, 0.0), (1.0, 1e4)])
def test_every_polytope_method_keeps_its_contract_on_degenerate_families(kind, s, offset):
    """Every estimator a polytope has (through its box slice) on the degenerate families, at
    scales 1e-12 to 1e12 and an offset of 1e4 set-sizes, against brute-force vertices (every
    n-subset of rows, the equality among them) mapped into the frame: an answered row's radius
    is at least its farthest vertex and a center that claims the set lies in it. Allowances:
    1e-9 of the set's size (the contract's own rounding allowance is below it) plus 100 eps
    |t|, the rounding of the data and of the mapped vertices at the offset t; exact answers
    OPTIMAL on every family."""
    G, h, A_eq, b_eq = _degenerate_polytope(kind)
    n = G.shape[1]
    Gb, hb = (G, h) if A_eq is None else (np.vstack([G, A_eq, -A_eq]), np.concatenate([h, b_eq, -b_eq]))
    V = brute_polytope_vertices(Gb, hb)
    t = s * offset * np.linspace(1.0, 2.0, n)
    Vs = s * V + t
    P = cc.Polytope(G, s * h + G @ t, None if A_eq is None else A_eq, None if A_eq is None else s * b_eq + A_eq @ t)
    allow = 1e-9 * s + 100 * np.finfo(float).eps * np.linalg.norm(t)
    for method in P.METHODS:
        if method == "inscribed":   # the other notion: its radius bounds nothing
            continue
        got = P.center(method)
        assert got.status.ok, (method, got.status, got.extras.get("check"))
        assert worst_error(Vs, got.center) <= got.radius + allow, method
        if cc.methods.REGISTRY[method].lies_in == "S_F":
            assert np.all(G @ got.center <= s * h + G @ t + allow), method
            if A_eq is not None:
                assert np.all(np.abs(A_eq @ got.center - (s * b_eq + A_eq @ t)) <= allow), method
    assert P.center("exact").status is cc.Status.OPTIMAL


def _found_by_the_differential_check(name):
    """Polytopes an independent differential check found (exact-rational vertices, a certified
    enclosing ball) on which the first reduction to a box slice answered a radius below the
    farthest vertex, INFEASIBLE for a nonempty set, or crashed: ``(G, h, A_eq, b_eq)``."""
    cube = np.vstack([np.eye(3), -np.eye(3)])
    if name == "tiny_equality_coefficients":   # the LP box of y came back [0, 0]; fixing y collapsed the set
        return cube, np.ones(6), np.array([[1e-8, 1.0, 1e-8]]), np.zeros(1)
    if name == "lp_numerical_difficulty":       # HiGHS status 4 on a tiny objective was read as empty
        return cube, np.ones(6), np.array([[4e-9, 1.0, -1.3e-8]]), np.zeros(1)
    if name == "nearly_fixed_by_an_equality":   # z = 1e-9 y: fixing z pinned y through the equality
        return cube, np.ones(6), np.array([[0.0, 1e-9, -1.0]]), np.zeros(1)
    if name == "segment_in_a_far_box":          # far redundant rows set the first frame: the set looked thin
        G = np.vstack([cube, [0.0, 1, 0], [0.0, -1, 0], [1.0, 0, 0], [-1.0, 0, 0]])
        return G, np.r_[np.full(6, 1e6), 1.0, 0.0, 0.0, 0.0], np.array([[0.0, 1.0, -10.0]]), np.zeros(1)
    if name == "near_parallel_redundant_row":   # its rounding widened exact's radius by 2e-6
        return np.vstack([np.eye(2), -np.eye(2), [1.0, 1e-9]]), np.r_[np.ones(4), 1.1], None, None
    if name == "point_far_from_the_origin":     # the LPs' box gave radius 2e-9 |p| and no radius_lower
        p = np.array([10000.3, -19999.3])
        return np.vstack([np.eye(2), -np.eye(2)]), np.r_[p, -p], None, None
    if name == "equalities_of_full_rank":       # p = 0: the feasibility LP crashed
        return np.vstack([np.eye(2), -np.eye(2)]), np.ones(4), np.eye(2), np.array([0.1, 0.2])
    raise ValueError(name)


@pytest.mark.parametrize("name", ["tiny_equality_coefficients", "lp_numerical_difficulty", "nearly_fixed_by_an_equality",
                                  "segment_in_a_far_box", "near_parallel_redundant_row", "point_far_from_the_origin",
                                  "equalities_of_full_rank"])
def test_polytopes_the_differential_check_found(name):
    """Every method answers OPTIMAL with a radius that bounds the brute-force vertices (to 1e-9
    of the set's size plus the data's rounding at its offset, 100 eps |p|); exact's radius is the
    enclosing ball's (SOCP reference) to 1e-5 relative, the forward-error widening of rows with
    coefficients of 1e-9 (about 2e-6 here), and radius_lower is at most it."""
    G, h, A_eq, b_eq = _found_by_the_differential_check(name)
    Gb, hb = (G, h) if A_eq is None else (np.vstack([G, A_eq, -A_eq]), np.concatenate([h, b_eq, -b_eq]))
    V = brute_polytope_vertices(Gb, hb)
    _, r_ref = meb_socp(V) if len(V) > 1 else (V[0], 0.0)
    size = max(r_ref, 1e-300)
    allow = 1e-9 * max(size, 1.0) + 100 * np.finfo(float).eps * np.abs(V).max()
    P = cc.Polytope(G, h, A_eq, b_eq)
    for method in P.METHODS:
        got = P.center(method)
        assert got.status is cc.Status.OPTIMAL, (method, got.status)
        if method != "inscribed":
            assert worst_error(V, got.center) <= got.radius + allow, method
    ex = P.center("exact")
    # a row the box implies is left out, with its rounding: the near-parallel redundant row
    # then widens nothing, and exact's radius is the ball's to rounding
    rel = 1e-9 if name == "near_parallel_redundant_row" else 1e-5
    assert r_ref - allow <= ex.radius <= r_ref * (1 + rel) + allow
    assert ex.extras["radius_lower"] <= ex.radius
