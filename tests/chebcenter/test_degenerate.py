"""Named edge cases: each has a defined, documented result or status."""

from __future__ import annotations

import numpy as np
import pytest

import chebcenter as cc


@pytest.mark.parametrize("method", [m for m in cc.METHODS if m != "half"])
def test_unique_solution_every_method_returns_it(method):
    """Every estimate of S_F returns its one point; ``half`` is not one (next test). The
    radius of a point is the forward error of the computed point alone (docs/theory.md §6.8):
    a few eps, never 0, so it covers the exact solution even where the computed one is an
    ulp off."""
    A = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = np.array([0.25, 0.75])
    r = cc.BoxSlice(A).center(A @ x, method=method)
    assert r.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(r.center, x, atol=1e-12)
    assert r.radius == r.extras["forward_error"]
    assert 0.0 < r.radius <= 1e3 * np.finfo(float).eps   # rounding, times a conditioning of about 3


def test_half_stays_the_box_midpoint_when_the_slice_is_one_point():
    """``half`` is the know-nothing baseline: the box midpoint with the half-diagonal radius
    on every nonempty slice, also when A x = b (alone, or with fixed coordinates) leaves
    one point. It used to return that point with radius 0."""
    A = np.array([[2.0, 1.0], [1.0, 3.0]])
    r = cc.BoxSlice(A).center(A @ np.array([0.25, 0.75]), method="half")
    assert r.status is cc.Status.OPTIMAL
    assert r.center.tolist() == [0.5, 0.5] and r.radius == np.sqrt(0.5)
    # x0 fixed at 0.3 by its box, x0 + x1 = 1 determines x1 = 0.7
    P = cc.BoxSlice([[1.0, 1.0]], lo=[0.3, 0.0], hi=[0.3, 1.0])
    r = P.center([1.0], method="half")
    assert r.status is cc.Status.OPTIMAL
    assert r.center.tolist() == [0.3, 0.5] and r.radius == 0.5
    assert P.center([1.0], method="half_star").center.tolist() == pytest.approx([0.3, 0.7], abs=1e-15)
    # an empty slice is INFEASIBLE for half too
    assert P.center([5.0], method="half").status is cc.Status.INFEASIBLE


@pytest.mark.parametrize("method", cc.METHODS)
def test_unique_solution_outside_box_is_infeasible(method):
    r = cc.BoxSlice(np.eye(2)).center([0.5, 1.5], method=method)
    assert r.status is cc.Status.INFEASIBLE and np.all(np.isnan(r.center)) and np.isnan(r.radius)


@pytest.mark.parametrize("method", cc.METHODS)
def test_empty_slice_is_infeasible_for_every_method(method):
    """x1 + x2 + x3 = 3.5 is consistent but misses [0,1]^3: no silent center, even for 'half'."""
    r = cc.BoxSlice(np.ones((1, 3))).center([3.5], method=method)
    assert r.status is cc.Status.INFEASIBLE
    assert np.all(np.isnan(r.center))


@pytest.mark.parametrize("method", cc.METHODS)
def test_empty_slice_with_half_star_far_outside(method):
    """Half* far outside and S_F empty: the compiled projection does not converge, the LP decides."""
    A = np.array([[1.0, -1.0, 0.0, 0.0]])
    r = cc.BoxSlice(A).center([1.2], method=method)
    assert r.status is cc.Status.INFEASIBLE


@pytest.mark.parametrize("method", cc.METHODS)
def test_inconsistent_b_status_or_projection(method):
    A = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])  # duplicated row, rank 1
    b = np.array([1.0, 1.2])  # inconsistent: no x
    P = cc.BoxSlice(A)
    r = P.center(b, method=method)
    assert r.status is cc.Status.INFEASIBLE and np.all(np.isnan(r.center))
    assert r.extras["rhs_residual"] == pytest.approx(np.sqrt(0.02), rel=1e-9)
    rp = P.center(b, method=method, on_inconsistent="project")
    assert rp.status is cc.Status.OPTIMAL
    # nearest consistent slice: x1 + x2 = 1.1
    assert rp.center[0] + rp.center[1] == pytest.approx(1.1, abs=1e-6) or method == "half"
    assert rp.extras["rhs_residual"] == pytest.approx(np.sqrt(0.02), rel=1e-9)


def test_segment_nullity_one_exact_is_midpoint():
    A = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0]])  # rank 2, d - r = 1
    x = np.array([0.2, 0.3, 0.6])
    P = cc.BoxSlice(A)
    V = None
    r = P.center(A @ x, method="exact", return_vertices=True)
    V = r.extras["vertices"]
    assert V.shape[0] == 2
    np.testing.assert_allclose(r.center, V.mean(axis=0), atol=1e-12)
    assert r.radius == pytest.approx(np.linalg.norm(V[0] - V[1]) / 2, rel=1e-12)


@pytest.mark.parametrize("method", cc.METHODS)
def test_single_point_slice(method):
    """x1 + x2 = 2 touches the unit square only at (1, 1)."""
    r = cc.BoxSlice([[1.0, 1.0]]).center([2.0], method=method)
    assert r.status is cc.Status.OPTIMAL
    if method != "half" and method != "ls":
        np.testing.assert_allclose(r.center, [1.0, 1.0], atol=1e-6)
    if method == "exact":
        assert r.radius == pytest.approx(0.0, abs=1e-12)


def test_duplicated_and_near_parallel_rows():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((2, 6))
    x = rng.random(6)
    A_dup = np.vstack([base, base[0]])
    A_near = np.vstack([base, base[0] + 1e-18])
    ref = cc.BoxSlice(base).center(base @ x, method="exact")
    for A in (A_dup, A_near):
        P = cc.BoxSlice(A)
        assert P.rank == 2
        r = P.center(A @ x, method="exact")
        np.testing.assert_allclose(r.center, ref.center, atol=1e-9)
    # a genuinely (if slightly) different row raises the rank: honest, documented tolerance
    assert cc.BoxSlice(np.vstack([base, base[0] + 1e-6])).rank == 3


@pytest.mark.parametrize("scale", [1e-8, 1e8])
@pytest.mark.parametrize("method", ["half_star", "rcc2", "exact", "rcc1"])
def test_tiny_and_huge_scales_of_A_do_not_change_centers(scale, method):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((2, 5))
    x = rng.random(5)
    ref = cc.BoxSlice(A).center(A @ x, method=method)
    r = cc.BoxSlice(A * scale).center((A * scale) @ x, method=method)
    assert r.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(r.center, ref.center, atol=1e-6)


def test_box_scale_is_respected():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((1, 4))
    x = rng.random(4)
    r = cc.BoxSlice(A).center(A @ x, method="exact")
    big = cc.BoxSlice(A, lo=0.0, hi=1e6).center(A @ (x * 1e6), method="exact")
    np.testing.assert_allclose(big.center / 1e6, r.center, atol=1e-9)
    assert big.radius / 1e6 == pytest.approx(r.radius, rel=1e-9)


def test_fixed_coordinate_lo_equals_hi():
    A = np.array([[1.0, 1.0, 1.0]])
    r = cc.BoxSlice(A, lo=[0.0, 0.0, 0.25], hi=[1.0, 1.0, 0.25]).center([1.25], method="exact")
    np.testing.assert_allclose(r.center, [0.5, 0.5, 0.25], atol=1e-12)


@pytest.mark.parametrize("method", cc.METHODS)
def test_a_batch_never_dies_on_bad_rows(method):
    A = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    B = np.array([[1.0, 1.0], [5.0, 0.0], [0.5, 0.5], [3.0, 3.0], [1.0, 1.5]])
    br = cc.BoxSlice(A).centers(B, method=method)
    assert br.status_codes.tolist() == [0, 2, 0, 2, 0]
    assert np.all(np.isfinite(br.centers[[0, 2, 4]])) and np.all(np.isnan(br.centers[[1, 3]]))


def test_zero_matrix_has_the_box_as_slice():
    P = cc.BoxSlice(np.zeros((2, 3)))
    assert P.rank == 0
    r = P.center([0.0, 0.0], method="exact")
    np.testing.assert_allclose(r.center, 0.5)
    assert P.center([0.0, 1.0], method="exact").status is cc.Status.INFEASIBLE


# --- the same degenerate cases on interval rows (bounded-error sets, docs/theory.md §8) ---


def test_intervals_around_duplicated_and_near_parallel_rows_are_the_single_rows():
    """A row repeated, or repeated 1e-18 off, with the same interval: the set is the single
    rows' set, so exact's center is the same (to its gap on radii of order 1, 1e-9)."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((2, 6))
    x = rng.random(6)
    b = base @ x
    ref = cc.BoxSlice(base).centers(method="exact", lower=(b - 0.1)[None], upper=(b + 0.1)[None])
    for A in (np.vstack([base, base[0]]), np.vstack([base, base[0] + 1e-18])):
        bb = A @ x
        r = cc.BoxSlice(A).centers(method="exact", lower=(bb - 0.1)[None], upper=(bb + 0.1)[None])
        assert r.status_codes[0] == cc.Status.OPTIMAL
        np.testing.assert_allclose(r.centers[0], ref.centers[0], atol=1e-9)
        assert r.radii[0] == pytest.approx(ref.radii[0], rel=1e-9)


@pytest.mark.parametrize("scale", [1e-8, 1e8])
@pytest.mark.parametrize("method", ["half_star", "rcc2", "exact", "rcc1"])
def test_intervals_with_tiny_and_huge_rows_give_the_same_centers(scale, method):
    """Scaling a row and its interval by s leaves the set as it is (1e-6: rcc1's tolerance on
    centers where its optimum is flat, as for equations)."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((2, 5))
    x = rng.random(5)
    b = A @ x
    ref = cc.BoxSlice(A).centers(method=method, lower=(b - 0.05)[None], upper=(b + 0.05)[None])
    r = cc.BoxSlice(A * scale).centers(method=method, lower=(scale * (b - 0.05))[None],
                                       upper=(scale * (b + 0.05))[None])
    assert r.status_codes[0] == cc.Status.OPTIMAL
    np.testing.assert_allclose(r.centers[0], ref.centers[0], atol=1e-6)


def test_an_interval_with_a_fixed_coordinate():
    """x3 fixed at 0.25 and 1 <= x1 + x2 + x3 <= 1.5 over the unit box: x1 + x2 in [0.75, 1.25],
    a band across the square with vertices (0.75, 0), (1, 0), (1, 0.25), (0.25, 1), (0, 1),
    (0, 0.75). (1, 0) and (0, 1) are a diameter through (0.5, 0.5), and every other vertex is
    nearer to it: center (0.5, 0.5, 0.25), radius sqrt(0.5)."""
    A = np.array([[1.0, 1.0, 1.0]])
    r = cc.BoxSlice(A, lo=[0.0, 0.0, 0.25], hi=[1.0, 1.0, 0.25]).centers(method="exact", lower=[[1.0]],
                                                                          upper=[[1.5]])
    np.testing.assert_allclose(r.centers[0], [0.5, 0.5, 0.25], atol=1e-12)
    assert r.radii[0] == pytest.approx(np.sqrt(0.5), rel=1e-9)


@pytest.mark.parametrize("method", cc.METHODS)
def test_a_batch_of_interval_rows_never_dies_on_bad_rows(method):
    """Empty rows (an interval beyond what the row reaches, an inverted interval) and NaN
    bounds beside good rows: each row gets its own status, the good ones answers."""
    A = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    L = np.array([[0.9, 0.9], [4.0, 0.0], [0.4, 0.4], [1.0, 0.5], [np.nan, 0.0], [0.8, -np.inf]])
    U = np.array([[1.1, 1.1], [5.0, 0.1], [0.6, 0.6], [0.9, 0.6], [1.0, 1.0], [1.2, 1.4]])
    r = cc.BoxSlice(A).centers(method=method, lower=L, upper=U)
    codes = r.status_codes.tolist()
    assert codes[0] == 0 and codes[2] == 0 and codes[5] == 0, codes
    assert codes[1] == cc.Status.INFEASIBLE and codes[3] == cc.Status.INFEASIBLE, codes
    assert codes[4] not in (0, 1), codes       # a NaN bound: its own status, never an answer
    assert np.all(np.isfinite(r.centers[[0, 2, 5]])) and np.all(np.isnan(r.centers[[1, 3, 4]]))


def test_a_zero_matrix_with_intervals_is_the_box_or_empty():
    """0 <= 0 x <= 1 holds everywhere (the box, center 0.5); 0.5 <= 0 x <= 1 nowhere."""
    P = cc.BoxSlice(np.zeros((2, 3)))
    r = P.centers(method="exact", lower=[[0.0, -1.0], [0.5, 0.0]], upper=[[1.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(r.centers[0], 0.5)
    assert r.radii[0] == pytest.approx(np.sqrt(0.75), rel=1e-12)
    assert r.status_codes[1] == cc.Status.INFEASIBLE


@pytest.mark.parametrize("miss", [3.6e-9, 1e-8])
def test_a_slice_beyond_a_face_by_less_than_tau_gets_exacts_answer(miss):
    """b just above the row's maximum over the box (4.75), by less than the equations'
    tolerance: the set is nonempty at tau (rcc2 answers), and exact answers it too with the
    face's ball (center (0.5, 0.5, 1, 0.5, 0, 0.875), radius sqrt(3)/2, widened by the
    tolerance when INACCURATE, which then names its reason), where it said SOLVER_ERROR with
    no reason. The same set as an interval [4.75 + miss, 5]."""
    A = np.array([[0, 0, 3, 0, -3, 2.0]])
    lo, hi = np.zeros(6), np.array([1, 1, 1, 1, 1, 0.875])
    P = cc.BoxSlice(A, lo, hi)
    face = np.array([0.5, 0.5, 1.0, 0.5, 0.0, 0.875])
    for r in (P.center([4.75 + miss], method="exact"),
              P.centers(method="exact", lower=[[4.75 + miss]], upper=[[5.0]])[0]):
        # (the interval snaps to its midpoint, half as far beyond: there the rounding-level
        # tolerance may already accept it, and OPTIMAL is right)
        assert r.status in (cc.Status.OPTIMAL, cc.Status.INACCURATE), r.status
        assert r.status is cc.Status.OPTIMAL or r.extras.get("check") is not None
        np.testing.assert_allclose(r.center, face, atol=1e-7)
        assert np.sqrt(0.75) <= r.radius <= np.sqrt(0.75) + 1e-6
