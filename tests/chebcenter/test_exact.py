"""exact: vertex enumeration vs brute force, MEB vs an SOCP, planted centers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from reference import assert_center_close, brute_vertices, meb_socp, worst_error
from strategies import instances, scaled
from tolerances import TOL

import chebcenter as cc
from chebcenter.kernels.ball import min_enclosing_ball
from chebcenter.kernels.edge_walk import PIVOT_OK, PIVOT_TOO_MANY, PIVOT_UNSURE, pivot_vertices
from chebcenter.kernels.simplex import lp_max
from chebcenter.methods.exact import _start_direction, candidate_count, slice_vertices


def _same_set(V1, V2, tol):
    assert V1.shape == V2.shape
    for v in V1:
        assert np.min(np.max(np.abs(V2 - v), axis=1)) <= tol


def _vertices(P, b, capacity=10**6, walk=True):
    """``slice_vertices`` on the box slice's core (the normalised frame the methods see),
    mapped back to P's coordinates; None past ``capacity``."""
    core = P._core
    bc = (np.asarray(b, dtype=float) - P._offset) / P.scale
    V = slice_vertices(core, core.q_of(bc), capacity, walk=walk)
    return None if V is None else P._to_original(V)


@settings(max_examples=scaled(30))
@given(instances(max_d=7, min_p=1))
def test_vertices_match_brute_force(inst):
    A, lo, hi, x = inst
    P = cc.BoxSlice(A, lo, hi)
    b = A @ x
    V = _vertices(P, b)
    _same_set(V, brute_vertices(A, b, lo, hi), TOL["vertex"])


@settings(max_examples=scaled(40))
@given(instances(max_d=9, min_p=1))
def test_edge_walk_matches_the_basis_enumeration(inst):
    """The edge walk (default) and the basis-by-basis enumeration list the same vertices,
    including on slices with coordinates at bounds and rank-deficient A, where the walk
    must notice a degenerate vertex and hand over."""
    A, lo, hi, x = inst
    P = cc.BoxSlice(A, lo, hi)
    _same_set(_vertices(P, A @ x), _vertices(P, A @ x, walk=False), TOL["vertex"])


def _walk(P, q, capacity=10**6, x0=None):
    beta = P.Vr @ q
    if x0 is None:
        x0 = np.empty(P.d)
        assert lp_max(P.Vr, beta, P.lo, P.hi, _start_direction(P.d), x0) == 0
    return pivot_vertices(P.Vr, beta, P.lo, P.hi, x0, capacity, 100 * P.box_tol, 1e-9)


@pytest.mark.parametrize("d,r", [(10, 1), (10, 3), (12, 5), (9, 8), (14, 2)])
def test_edge_walk_lists_each_vertex_of_a_generic_slice_once(d, r):
    """On a generic slice the walk itself answers (no hand-over), each vertex once, and
    the set is the enumeration's."""
    rng = np.random.default_rng(d * 10 + r)
    A = rng.standard_normal((r, d))
    lo = -rng.random(d)
    hi = 1.0 + rng.random(d)
    P = cc.BoxSlice(A, lo, hi)
    q = P.A_pinv @ (A @ (lo + (hi - lo) * rng.random(d)))
    V, count, code = _walk(P, q)
    assert code == PIVOT_OK
    V = V[:count]
    ref = _vertices(P, A @ q, walk=False)
    assert count == ref.shape[0] > 1
    _same_set(V, ref, TOL["vertex"])
    assert np.unique(np.round(V, 9), axis=0).shape[0] == count
    assert np.abs(V @ A.T - A @ q).max() <= 1e-9 * (1 + np.abs(A @ q).max())


def test_edge_walk_hands_over_at_a_degenerate_vertex_and_past_its_capacity():
    """x1 + x2 + x3 + 2 x4 = 2 on [0, 1]^4: (1, 1, 0, 0) is a vertex with every coordinate
    at a bound (degenerate). From the simple vertex (1, 0, 0, 0.5) the walk reaches it and
    must stop UNSURE (the enumeration then answers); with room for 2 vertices it stops
    TOO_MANY, and slice_vertices answers None like the enumeration."""
    A = np.array([[1.0, 1.0, 1.0, 2.0]])
    P = cc.BoxSlice(A)
    q = P.A_pinv @ np.array([2.0])
    _, _, code = _walk(P, q, x0=np.array([1.0, 0.0, 0.0, 0.5]))
    assert code == PIVOT_UNSURE
    V = _vertices(P, [2.0])
    assert any(np.allclose(v, [1, 1, 0, 0]) for v in V)
    _same_set(V, brute_vertices(A, np.array([2.0]), np.zeros(4), np.ones(4)), TOL["vertex"])
    P2 = cc.BoxSlice(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]))
    q2 = P2.A_pinv @ np.array([7.3])
    assert _walk(P2, q2, capacity=2)[2] == PIVOT_TOO_MANY
    assert _vertices(P2, [7.3], capacity=2) is None
    assert _vertices(P2, [7.3]).shape[0] > 2


@settings(max_examples=scaled(20))
@given(instances(max_d=6, min_p=1))
def test_exact_center_matches_socp_on_brute_force_vertices(inst):
    A, lo, hi, x = inst
    b = A @ x
    c_ref, t_ref = meb_socp(brute_vertices(A, b, lo, hi))
    r = cc.BoxSlice(A, lo, hi).center(b, method="exact")
    assert r.status is cc.Status.OPTIMAL
    assert abs(r.radius - t_ref) <= TOL["exact_radius_vs_socp"] * (1 + t_ref)
    V = brute_vertices(A, b, lo, hi)
    assert_center_close(V, r.center, r.extras["radius_lower"], c_ref)
    assert r.extras["radius_lower"] <= r.radius + 1e-12
    assert r.radius - r.extras["radius_lower"] <= 1e-9 * (1 + r.radius)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n,dim", [(1, 3), (2, 2), (7, 2), (50, 3), (400, 6), (40, 12)])
def test_meb_kernel_vs_socp_random_clouds(seed, n, dim):
    P = np.random.default_rng(seed).standard_normal((n, dim))
    c, radius, lower, sup, k, status = min_enclosing_ball(P, 10_000, P[0].copy())
    c_ref, t_ref = meb_socp(P)
    assert status == 0
    assert abs(radius - t_ref) <= 1e-6 * (1 + t_ref)
    assert radius - lower <= 1e-9 * (1 + radius)
    assert_center_close(P, c, lower, c_ref)
    # support points on the sphere
    np.testing.assert_allclose(np.linalg.norm(P[sup[:k]] - c, axis=1), radius, rtol=1e-9)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("start", ["mean", "far", "optimum", "support"])
def test_meb_kernel_any_start(seed, start):
    """The walk may start anywhere (the branch and bound starts it at the last round's
    center): the same ball, checked against the SOCP, from inside, far outside, the answer
    itself and a support point."""
    P = np.random.default_rng(seed).standard_normal((300, 8))
    c_ref, t_ref = meb_socp(P)
    c0 = {"mean": P.mean(axis=0), "far": np.full(8, 1e3), "optimum": np.asarray(c_ref, dtype=float),
          "support": P[np.argmax(np.linalg.norm(P - c_ref, axis=1))]}[start]
    c, radius, lower, sup, k, status = min_enclosing_ball(P, 10_000, np.ascontiguousarray(c0))
    assert status == 0
    assert abs(radius - t_ref) <= 1e-6 * (1 + t_ref)
    assert radius - lower <= 1e-9 * (1 + radius)
    assert_center_close(P, c, lower, c_ref)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n,dim,n_sub", [(40, 3, 10), (300, 8, 40), (60, 10, 20), (25, 12, 12)])
def test_ball_from_support_vs_socp(seed, n, dim, n_sub):
    """The active-set restart (kernels.ball.ball_from_support), started from the support of
    the ball of a subset (as exact's working set does round after round): where it ends
    (status 0), the SOCP's radius (1e-6, the SOCP's accuracy), a dual gap <= 1e-9, every
    point inside and the support on the sphere; where it gives up, no answer is claimed.
    It gives up when the support fills (dim + 1 points) and a point is still outside, which
    happened on 4 of the 6 clouds in 3-D and on none of the 18 in 8-12 dimensions (exact's
    supports at d = 10 hold about 7 points): there the caller walks."""
    from chebcenter.kernels.ball import ball_from_support

    P = np.random.default_rng(seed).standard_normal((n, dim))
    _, _, _, sup, k, status = min_enclosing_ball(np.ascontiguousarray(P[:n_sub]), 10_000, P[0].copy())
    assert status == 0
    T = np.zeros(dim + 2, dtype=np.int64)
    T[:k] = sup[:k]
    c = np.empty(dim)
    lam, work, rhs, sol = np.empty(dim + 2), np.empty((dim + 2, dim + 2)), np.empty(dim + 2), np.empty(dim + 2)
    radius, lower, ks, status = ball_from_support(P, k, 4 * (dim + 2), c, T, lam, work, rhs, sol)
    if dim < 8 and status == 2:
        assert radius == np.inf and lower == 0.0
        return
    assert status == 0
    c_ref, t_ref = meb_socp(P)
    assert abs(radius - t_ref) <= 1e-6 * (1 + t_ref)
    assert radius - lower <= 1e-9 * (1 + radius)
    assert np.max(np.linalg.norm(P - c, axis=1)) <= radius * (1 + 1e-12)
    assert_center_close(P, c, lower, c_ref)
    np.testing.assert_allclose(np.linalg.norm(P[T[:ks]] - c, axis=1), radius, rtol=1e-9)
    assert np.all(lam[:ks] >= -1e-12)


def test_ball_from_support_gives_up_on_a_dependent_support():
    """Cospherical points (a square's corners and its center) from a support of three
    corners plus a repeated one: an affinely dependent T is a status, never an answer."""
    from chebcenter.kernels.ball import ball_from_support

    P = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0, 0], [0.5, 0.5]])
    T = np.array([0, 1, 4, 0], dtype=np.int64)
    c = np.empty(2)
    out = ball_from_support(P, 3, 20, c, T, np.empty(4), np.empty((4, 4)), np.empty(4), np.empty(4))
    assert out[3] == 2 and out[0] == np.inf


@pytest.mark.parametrize("points,center,radius", [
    # square corners: cospherical, degenerate support choices
    (np.array([[0, 0], [1, 0], [0, 1], [1, 1.0]]), [0.5, 0.5], np.sqrt(0.5)),
    # cube corners in 3-D
    (np.array(np.meshgrid([0, 1], [0, 1], [0, 1])).reshape(3, -1).T.astype(float), [0.5] * 3, np.sqrt(0.75)),
    # collinear points with duplicates
    (np.array([[0, 0], [1, 1], [1, 1], [3, 3], [2, 2.0]]), [1.5, 1.5], np.sqrt(4.5)),
    # obtuse triangle: the MEB is the diameter ball of the long side
    (np.array([[0, 0], [4, 0], [2, 0.5]]), [2, 0], 2.0),
    # a single repeated point
    (np.array([[1, 2.0], [1, 2.0]]), [1, 2], 0.0),
])
def test_meb_planted(points, center, radius):
    c, r, lower, sup, k, status = min_enclosing_ball(points, 1000, points[0].copy())
    assert status == 0
    np.testing.assert_allclose(c, center, atol=1e-12)
    assert abs(r - radius) <= 1e-12
    assert abs(lower - radius) <= 1e-9


def test_meb_kernel_is_not_trivially_right():
    """The centroid is not the MEB center: a lopsided cloud tells them apart."""
    P = np.array([[0.0, 0.0], [0.1, 0.0], [0.05, 0.05], [10.0, 0.0]])
    c, r, *_ = min_enclosing_ball(P, 1000, P[0].copy())
    assert abs(c[0] - 5.0) < 1e-12 and abs(r - 5.0) < 1e-12
    assert np.linalg.norm(c - P.mean(axis=0)) > 1


@pytest.mark.parametrize("d", [2, 3, 5, 8])
def test_symmetric_slice_center_is_midpoint(d):
    """sum x = d/2 is symmetric under x -> 1 - x and coordinate swaps: center = 1/2."""
    r = cc.chebyshev_center(np.ones((1, d)), [d / 2], method="exact")
    np.testing.assert_allclose(r.center, 0.5, atol=1e-12)


def test_segment_midpoint_and_spec_example():
    """docs/theory.md §1: A = [1, -2], b = 0.2: segment (0.2, 0)-(1, 0.4), center (0.6, 0.2), radius sqrt(0.2)."""
    r = cc.chebyshev_center([[1.0, -2.0]], [0.2], method="exact")
    np.testing.assert_allclose(r.center, [0.6, 0.2], atol=1e-12)
    assert abs(r.radius - np.sqrt(0.2)) <= 1e-12
    assert r.extras["n_vertices"] == 2


def test_box_face_center():
    """x1 = 0.3 cuts the unit cube in a square face: center (0.3, .5, .5), radius sqrt(2)/2."""
    r = cc.chebyshev_center([[1.0, 0.0, 0.0]], [0.3], method="exact")
    np.testing.assert_allclose(r.center, [0.3, 0.5, 0.5], atol=1e-12)
    assert abs(r.radius - np.sqrt(0.5)) <= 1e-12
    assert r.extras["n_vertices"] == 4


def test_exact_with_no_equations_is_the_box():
    P = cc.BoxSlice(np.zeros((0, 3)), lo=[0, -1, 2], hi=[1, 1, 2])
    r = P.center(np.zeros(0), method="exact")
    np.testing.assert_allclose(r.center, [0.5, 0.0, 2.0], atol=1e-12)
    assert abs(r.radius - np.sqrt(0.25 + 1.0)) <= 1e-12


def test_size_guards_report_too_large_without_running():
    P = cc.BoxSlice(np.ones((1, 30)))
    assert candidate_count(30, 1) > 2e8
    r = P.center([15.0], method="exact", algorithm="enumerate")
    assert r.status is cc.Status.TOO_LARGE and np.all(np.isnan(r.center))
    # rank 2 past the enumeration: "auto" does not start a HiGHS branch and bound
    r = cc.BoxSlice(np.vstack([np.ones(30), np.arange(30.0)])).center([15.0, 200.0], method="exact")
    assert r.status is cc.Status.TOO_LARGE
    r = cc.BoxSlice(np.ones((1, 10))).center([5.0], method="exact", max_vertices=10)
    assert r.status is cc.Status.TOO_LARGE
    r = cc.BoxSlice(np.ones((1, 10))).center([5.0], method="exact", max_vertices=10**5)
    assert r.status is cc.Status.OPTIMAL and r.extras["n_vertices"] == 252  # C(10, 5)


def test_support_and_vertices_returned():
    r = cc.chebyshev_center([[1.0, 1.0, 1.0]], [1.5], method="exact", return_vertices=True)
    V, S = r.extras["vertices"], r.extras["support"]
    np.testing.assert_array_equal(V[r.extras["support_indices"]], S)
    assert V.shape == (6, 3)  # hexagon: permutations of (1, .5, 0)
    np.testing.assert_allclose(np.linalg.norm(S - r.center, axis=1), r.radius, rtol=1e-12)
    assert worst_error(V, r.center) == pytest.approx(r.radius, rel=1e-12)
