"""exact: vertex enumeration vs brute force, MEB vs an SOCP, planted centers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from reference import assert_center_close, brute_vertices, meb_socp, worst_error
from strategies import instances, scaled
from tolerances import TOL

import chebcenter as cc
from chebcenter._exact_kernels import min_enclosing_ball
from chebcenter.methods.exact import candidate_count, slice_vertices


def _same_set(V1, V2, tol):
    assert V1.shape == V2.shape
    for v in V1:
        assert np.min(np.max(np.abs(V2 - v), axis=1)) <= tol


@settings(max_examples=scaled(30))
@given(instances(max_d=7, min_p=1))
def test_vertices_match_brute_force(inst):
    A, lo, hi, x = inst
    P = cc.BoxSlice(A, lo, hi)
    b = A @ x
    V = slice_vertices(P, P.A_pinv @ b, 10**6)
    _same_set(V, brute_vertices(A, b, lo, hi), TOL["vertex"])


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
    c, radius, lower, sup, k, status = min_enclosing_ball(P, 10_000)
    c_ref, t_ref = meb_socp(P)
    assert status == 0
    assert abs(radius - t_ref) <= 1e-6 * (1 + t_ref)
    assert radius - lower <= 1e-9 * (1 + radius)
    assert_center_close(P, c, lower, c_ref)
    # support points on the sphere
    np.testing.assert_allclose(np.linalg.norm(P[sup[:k]] - c, axis=1), radius, rtol=1e-9)


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
    c, r, lower, sup, k, status = min_enclosing_ball(points, 1000)
    assert status == 0
    np.testing.assert_allclose(c, center, atol=1e-12)
    assert abs(r - radius) <= 1e-12
    assert abs(lower - radius) <= 1e-9


def test_meb_kernel_is_not_trivially_right():
    """The centroid is not the MEB center: a lopsided cloud tells them apart."""
    P = np.array([[0.0, 0.0], [0.1, 0.0], [0.05, 0.05], [10.0, 0.0]])
    c, r, *_ = min_enclosing_ball(P, 1000)
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
