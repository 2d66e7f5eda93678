"""Bounded-error sets ``{x in [lo, hi] : L <= A x <= U}`` (docs/theory.md §8) against the
independent routes of tests/chebcenter/interval_reference.py: brute-force vertices and their
SOCP ball, the RCC1 SDP with interval quadratics, the RCC2 QP, HiGHS ranges.

Tolerances. The references are solved by Clarabel at its default accuracy (about 1e-8 on
these unit-scale problems), so radii and eta are compared at rtol 1e-6 and centers at
1e-5 (a center moves like the square root of the objective's error near a flat optimum).
Every radius must bound the brute-force vertices and the unknown with a slack of 1e-9
(rounding of a unit-scale problem); the ordering r^2 <= eta_rcc1 <= eta_rcc2 <= R_box^2
is checked with the same slack relative to the box's half-diagonal.
"""

from __future__ import annotations

import numpy as np
import pytest
from interval_reference import brute_vertices, clamped, highs_ranges, rcc1_sdp, rcc2_qp
from reference import assert_center_close, meb_socp, worst_error

import chebcenter as cc
from chebcenter import Status

pytestmark = pytest.mark.numerics

KINDS = ("noise", "one_sided", "mixed", "corner", "wide", "fixed", "repeated", "rank5")
SLACK = 1e-9


def instance(seed, kind, d=None, m=None):
    """``(A, lo, hi, x, L, U)`` with the unknown x in the set."""
    rng = np.random.default_rng(seed)
    d = d or (5 if kind == "rank5" else int(rng.integers(2, 6)))
    m = m or (5 if kind == "rank5" else int(rng.integers(1, 4)))
    A = rng.standard_normal((m, d))
    lo, hi = np.zeros(d), np.ones(d)
    x = rng.random(d)
    if kind == "corner":
        x = np.round(x)
    if kind == "fixed":
        lo[0] = hi[0] = 0.3
        x[0] = 0.3
    if kind == "repeated" and m >= 2:
        A[1] = 2.0 * A[0]
    b = A @ x
    w1, w2 = rng.uniform(0.0, 0.3, m), rng.uniform(0.0, 0.3, m)
    L, U = b - w1, b + w2
    if kind == "one_sided":
        L[0] = -np.inf
        if m > 1:
            U[1] = np.inf
    if kind == "mixed":
        L[0] = U[0] = b[0]
    if kind == "corner":
        L, U = b - 1e-3 * w1, b + 1e-3 * w2
    if kind == "wide":
        L[0], U[0] = b[0] - 100.0, b[0] + 100.0
    return A, lo, hi, x, L, U


CASES = [(seed, kind) for kind in KINDS for seed in range(6)]


@pytest.mark.parametrize("seed,kind", CASES)
def test_exact_is_the_ball_of_the_brute_force_vertices(seed, kind):
    A, lo, hi, x, L, U = instance(seed, kind)
    V = brute_vertices(A, L, U, lo, hi)
    assert V.shape[0] >= 1
    c_ref, r_ref = meb_socp(V) if V.shape[0] > 1 else (V[0], 0.0)
    res = cc.BoxSlice(A, lo, hi).center(method="exact", lower=L, upper=U)
    assert res.status == cc.Status.OPTIMAL
    assert res.radius == pytest.approx(r_ref, rel=1e-6, abs=1e-8)
    assert worst_error(V, res.center) <= res.radius + SLACK
    assert res.extras["radius_lower"] <= r_ref + 1e-7
    if V.shape[0] > 1:     # strong convexity: both centers within the bound of their excess over the lower bound
        assert_center_close(V, res.center, res.extras["radius_lower"], c_ref, slack=SLACK)


#: the "corner" family (slabs 1e-4 thin through a box corner) is left out here: Clarabel fails
#: on 3 of its 6 instances at every tolerance and SCS ends "inaccurate" (measured); those sets
#: are held to r^2 <= eta_rcc1 <= eta_rcc2 and to covering the unknown in the test below
SDP_CASES = [(seed, kind) for seed, kind in CASES if kind != "corner"]


@pytest.mark.parametrize("seed,kind", SDP_CASES)
def test_rcc1_is_the_sdp_with_interval_quadratics(seed, kind):
    A, lo, hi, x, L, U = instance(seed, kind)
    x_ref, eta_ref = rcc1_sdp(A, L, U, lo, hi, origin=x)
    res = cc.BoxSlice(A, lo, hi).center(method="rcc1", lower=L, upper=U)
    assert res.status == cc.Status.OPTIMAL
    # ours: the barrier stops at mu = 1e-9, a duality gap of about mu (K + p) <= 2e-8 (K + p <= 20
    # here); the reference is solved to a 1e-10 gap. The objective tr(D) - ||x||^2 is
    # 2-strongly concave in x, so each center is within sqrt(its gap) of the optimum.
    assert res.radius ** 2 == pytest.approx(eta_ref, rel=1e-8, abs=3e-8)
    np.testing.assert_allclose(res.center, x_ref, atol=np.sqrt(2e-8) + np.sqrt(1e-10))


#: one instance per family (the corner family as above), each moved to an offset of 1e8 and
#: scaled by 1e-12 and 1e12
OFFSET_CASES = [(seed, kind) for seed, kind in SDP_CASES if seed in (0, 3)]


@pytest.mark.parametrize("seed,kind", OFFSET_CASES)
def test_rcc1_is_the_sdp_at_offsets_and_scales(seed, kind):
    """An OPTIMAL rcc1 row's value ``eta`` is the relaxation's optimum whatever the units and
    origin: ``eta / s^2`` equals the SDP of the unit-scale set to 1e-6 relative. Budget: the
    bounds at an offset of 1e8 are rounded by ``eps 1e8 ||a||_1`` (about 5e-8, at most 5e-7 of
    an interval's half-width here), which moves eta by as much relative to the intervals;
    with the two solvers' gaps (2e-8, 1e-10) that is below 1e-6 (measured: 6e-8). The radius
    is ``sqrt(eta)`` plus the forward-error widening of the rounded bounds
    (``extras["forward_error"]``, which the value does not include), capped at the farthest
    box corner."""
    A, lo, hi, x, L, U = instance(seed, kind)
    _, eta_ref = rcc1_sdp(A, L, U, lo, hi, origin=x)
    o = np.full(lo.size, 1e8)
    for s in (1e-12, 1.0, 1e12):
        res = cc.BoxSlice(A, s * (lo + o), s * (hi + o)).center(
            method="rcc1", lower=s * (L + A @ o), upper=s * (U + A @ o))
        assert res.status == cc.Status.OPTIMAL, s
        assert res.extras["eta"] / s ** 2 == pytest.approx(eta_ref, rel=1e-6), s
        r_eta = np.sqrt(res.extras["eta"])
        assert r_eta * (1 - 1e-12) <= res.radius <= (r_eta + res.extras["forward_error"]) * (1 + 1e-12), s


@pytest.mark.parametrize("seed,kind", CASES)
def test_the_radii_are_ordered_and_bound_the_set_and_the_unknown(seed, kind):
    A, lo, hi, x, L, U = instance(seed, kind)
    V = brute_vertices(A, L, U, lo, hi)
    sl = cc.BoxSlice(A, lo, hi)
    got = {m: sl.center(method=m, lower=L, upper=U) for m in cc.METHODS}
    hd2 = float(np.sum(((hi - lo) / 2) ** 2))
    r = got["exact"].radius
    e1, e2 = got["rcc1"].radius ** 2, got["rcc2"].radius ** 2
    assert r ** 2 <= e1 + SLACK * hd2 and e1 <= e2 + SLACK * hd2 and e2 <= hd2 + SLACK * hd2
    Lc, Uc = clamped(A, L, U, lo, hi)
    for name, res in got.items():
        assert res.status in (cc.Status.OPTIMAL, cc.Status.INACCURATE), name
        assert np.linalg.norm(res.center - x) <= res.radius + SLACK, name     # the unknown is covered
        assert worst_error(V, res.center) <= res.radius + SLACK, name         # so is every vertex
        if name not in ("half", "ls", "half_star"):                           # these claim the set
            ax = A @ res.center
            tol = 1e-8 * (1.0 + np.abs(A).sum(axis=1))
            assert np.all(res.center >= lo) and np.all(res.center <= hi), name
            assert np.all(ax >= Lc - tol) and np.all(ax <= Uc + tol), name


@pytest.mark.parametrize("seed,kind", CASES[::3])
def test_rcc2_is_the_projection_of_the_midpoint(seed, kind):
    A, lo, hi, x, L, U = instance(seed, kind)
    res = cc.BoxSlice(A, lo, hi).center(method="rcc2", lower=L, upper=U)
    np.testing.assert_allclose(res.center, rcc2_qp(A, L, U, lo, hi), atol=1e-6)


@pytest.mark.parametrize("seed,kind", CASES[::2])
def test_feature_ranges_are_highs_lps(seed, kind):
    A, lo, hi, x, L, U = instance(seed, kind)
    ref = highs_ranges(A, L, U, lo, hi)
    fr = cc.BoxSlice(A, lo, hi).feature_ranges(lower=L[None], upper=U[None])
    assert fr.status_codes[0] == cc.Status.OPTIMAL
    np.testing.assert_allclose(fr.lower[0], ref[0], atol=1e-7)
    np.testing.assert_allclose(fr.upper[0], ref[1], atol=1e-7)
    assert np.all(fr.lower[0] <= x + SLACK) and np.all(x <= fr.upper[0] + SLACK)


@pytest.mark.parametrize("method", cc.METHODS)
def test_point_intervals_are_the_equality_case(method):
    rng = np.random.default_rng(5)
    A = rng.standard_normal((2, 6))
    B = rng.random((40, 6)) @ A.T
    B[3] = 30.0                              # an empty slice
    sl = cc.BoxSlice(A)
    ref = sl.centers(B, method)
    for got in (sl.centers(B, method, noise=0.0), sl.centers(method=method, lower=B, upper=B)):
        np.testing.assert_array_equal(got.centers, ref.centers)
        np.testing.assert_array_equal(got.radii, ref.radii)
        np.testing.assert_array_equal(got.status_codes, ref.status_codes)


@pytest.mark.parametrize("k, d, width, per_class", [(7, 6, 0.3, False), (10, 8, 1e-2, False), (9, 8, 1e-3, True),
                                                    (9, 8, 0.1, True)])
def test_dependent_interval_rows_project_like_the_reference_qp(k, d, width, per_class):
    """Rows that are every pairwise difference of k vectors (k(k - 1)/2 rows of rank k - 1: a
    release over k classes), with independent intervals or, as a release gives them, from per-class
    ranges z_i in [l_i, u_i] (L_ij = l_j - u_i, U_ij = u_j - l_i: many vertices of the lifted set
    are degenerate): the lifted coordinates are combinations of one another, and the active-set
    QP once stopped singular on them. rcc2 against Clarabel's QP on every row: in the set (to
    1e-10, below the box tolerance of 1e-9) with an objective ||x - m||^2 no higher than the
    reference's, up to Clarabel's duality-gap tolerance (its defaults, 1e-8 absolute and 1e-8
    relative: 1e-8 (1 + f)). Strong convexity (modulus 2) then puts the centers within
    sqrt(1e-8 (1 + f)) of the optimum; the reference's own center was seen 6e-6 from ours with
    a higher objective."""
    rng = np.random.default_rng(9)
    Wp = rng.standard_normal((k, d))
    A = np.array([Wp[j] - Wp[i] for i in range(k) for j in range(i + 1, k)])
    X = rng.random((25, d))
    B = X @ A.T
    if per_class:
        Z = X @ Wp.T
        lz, uz = Z - width * rng.random(Z.shape), Z + width * rng.random(Z.shape)
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        L = np.stack([lz[:, j] - uz[:, i] for i, j in pairs], axis=1)
        U = np.stack([uz[:, j] - lz[:, i] for i, j in pairs], axis=1)
    else:
        L, U = B - width * rng.random(B.shape), B + width * rng.random(B.shape)
    sl = cc.BoxSlice(A)
    got = sl.centers(method="rcc2", lower=L, upper=U)
    assert np.all(got.status_codes == cc.Status.OPTIMAL)
    for n in range(25):
        ref, c = rcc2_qp(A, L[n], U[n], np.zeros(d), np.ones(d)), got.centers[n]
        viol = max(np.max(L[n] - A @ c), np.max(A @ c - U[n]), np.max(-c), np.max(c - 1.0))
        assert viol <= 1e-10
        f_ref = np.sum((ref - 0.5) ** 2)
        assert np.sum((c - 0.5) ** 2) <= f_ref + 1e-8 * (1.0 + f_ref)


@pytest.mark.parametrize("method", ["rcc1", "rcc2", "exact", "cls"])
def test_rounding_level_intervals_are_points(method):
    """Intervals a few ulps wide, or inverted by a few ulps, as computed bounds come out (a
    release whose interval is a point in real arithmetic): the equality case's answer on their
    midpoints, not INFEASIBLE and not the ill-conditioned thin-interval solve. Inverted by more
    than the equality tolerance (docs/theory.md §6.2), the row stays empty. Includes redundant
    rows (3 rows of rank 2)."""
    rng = np.random.default_rng(6)
    A2 = rng.standard_normal((2, 5))
    A = np.vstack([A2, A2[0] - A2[1]])
    B = rng.random((30, 5)) @ A.T
    sl = cc.BoxSlice(A)
    ulps = 8 * np.finfo(float).eps * (1 + np.abs(B))
    signs = rng.choice([-1.0, 1.0], B.shape)
    L, U = B - signs * ulps, B + signs * ulps          # half the entries inverted
    ref = sl.centers(0.5 * L + 0.5 * U, method)
    got = sl.centers(method=method, lower=L, upper=U)
    assert np.all(got.status_codes == cc.Status.OPTIMAL)
    np.testing.assert_array_equal(got.status_codes, ref.status_codes)
    np.testing.assert_allclose(got.centers, ref.centers, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.radii, ref.radii, rtol=1e-9, atol=1e-12)
    far = sl.centers(method=method, lower=B + 1e-3, upper=B - 1e-3)
    assert np.all(far.status_codes == cc.Status.INFEASIBLE)


@pytest.mark.parametrize("method", ["rcc2", "exact"])
def test_an_equation_is_judged_alike_in_a_slice_and_among_intervals(method):
    """One consistency rule: two copies of an equation whose right-hand sides differ by
    delta (a_2 = a_1, b_2 = b_1 + delta), solved as a slice (every row an equation) and in a
    batch where a third row is an interval (a lifted group with two equations), get the same
    status for every delta from 1e-12 to 1e-5: OPTIMAL while each residual delta / 2 is within
    its tau, then INFEASIBLE. (The slices were held to feas_tol (||b|| + sigma_max ||w||) on
    ||r||, the groups to tau per row; between the two thresholds a row was INFEASIBLE as a
    slice and OPTIMAL among intervals, and then, with the slices' membership test, INACCURATE.)"""
    rng = np.random.default_rng(3)
    a, c = rng.standard_normal(4), rng.standard_normal(4)
    A = np.vstack([a, a, c])
    b = A @ rng.random(4)
    deltas = np.geomspace(1e-12, 1e-5, 60)
    B = np.tile(b, (deltas.size, 1))
    B[:, 1] += deltas
    L, U = B.copy(), B.copy()
    L[:, 2] -= 0.1
    U[:, 2] += 0.1
    sl = cc.BoxSlice(A)
    as_slice = sl.centers(B, method=method).status_codes
    among = sl.centers(method=method, lower=L, upper=U).status_codes
    np.testing.assert_array_equal(as_slice, among)
    assert set(as_slice.tolist()) == {Status.OPTIMAL, Status.INFEASIBLE}
    first = np.argmax(as_slice == Status.INFEASIBLE)
    assert np.all(as_slice[:first] == Status.OPTIMAL) and np.all(as_slice[first:] == Status.INFEASIBLE)


@pytest.mark.parametrize("s", [1e-12, 1e-6, 1.0, 1e6, 1e12])
@pytest.mark.parametrize("method", ["exact", "rcc1", "rcc2", "cls", "half_star", "project"])
@pytest.mark.parametrize("kind", ["noise", "repeated"])
def test_rescaling_the_box_and_the_intervals_rescales_the_answers(method, s, kind):
    """Units and origin do not change the answer, on independent and on repeated rows
    (``a_2 = 2 a_1`` with its own interval, where a least-squares route meets a rank-deficient
    system)."""
    A, lo, hi, x, L, U = instance(11, kind, d=4, m=2)
    t = s * np.array([3.0, -1.0, 0.5, 2.0])   # a shift in the same units (a fixed shift at s = 1e-12
    # would leave the data themselves only eps |A t| / s = 1e-4 accurate)
    base = cc.BoxSlice(A, lo, hi).center(method=method, lower=L, upper=U)
    big = cc.BoxSlice(A, s * lo + t, s * hi + t).center(method=method, lower=s * L + A @ t, upper=s * U + A @ t)
    assert big.status == base.status
    np.testing.assert_allclose((big.center - t) / s, base.center, atol=1e-9)
    assert big.radius / s == pytest.approx(base.radius, rel=1e-9)


def test_empty_and_invalid_rows_get_statuses_and_bad_arguments_name_themselves():
    A = np.array([[1.0, 1.0], [1.0, -1.0]])
    sl = cc.BoxSlice(A)
    L = np.array([[0.5, -0.2], [5.0, 0.0], [1.5, 0.9], [np.nan, 0.0], [0.6, 0.0]])
    U = np.array([[1.0, 0.2], [6.0, 1.0], [2.0, 1.0], [1.0, 1.0], [0.4, 1.0]])
    # row 1: x1 + x2 in [5, 6] misses the box; row 2: each row meets the box, not both together
    # (x1 + x2 >= 1.5 and x1 - x2 >= 0.9 give x1 >= 1.2); row 3: NaN; row 4: L > U
    for method in cc.METHODS:
        br = sl.centers(method=method, lower=L, upper=U)
        assert br.status_codes.tolist() == [cc.Status.OPTIMAL, cc.Status.INFEASIBLE, cc.Status.INFEASIBLE,
                                            cc.Status.INVALID_INPUT, cc.Status.INFEASIBLE], method
    fr = sl.feature_ranges(lower=L, upper=U)
    assert fr.status_codes.tolist()[1:] == [cc.Status.INFEASIBLE, cc.Status.INFEASIBLE, cc.Status.INVALID_INPUT,
                                            cc.Status.INFEASIBLE]
    with pytest.raises(cc.InvalidInputError, match="noise must be >= 0"):
        sl.centers(np.zeros((1, 2)), noise=-1.0)
    with pytest.raises(cc.InvalidInputError, match="noise must be a scalar or have shape"):
        sl.centers(np.zeros((1, 2)), noise=np.zeros(3))
    with pytest.raises(cc.InvalidInputError, match="lower=/upper= replace B"):
        sl.centers(np.zeros((1, 2)), lower=np.zeros((1, 2)))
    with pytest.raises(cc.InvalidInputError, match="lower must have shape"):
        sl.centers(lower=np.zeros((1, 3)), upper=np.ones((1, 3)))
    with pytest.raises(cc.InvalidInputError, match="noise= needs B"):
        sl.centers(noise=0.1)


def test_one_sided_rows_and_a_single_set():
    """``x1 + x2 >= 1.5`` alone: the triangle (0.5, 1), (1, 0.5), (1, 1); its center is the
    midpoint of the hypotenuse... of the right angle at (1, 1): (0.75, 0.75), radius sqrt(2)/4."""
    sl = cc.BoxSlice([[1.0, 1.0]])
    res = sl.center(method="exact", lower=[1.5])
    np.testing.assert_allclose(res.center, [0.75, 0.75], atol=1e-12)
    assert res.radius == pytest.approx(np.sqrt(2) / 4, rel=1e-12)
    assert sl.center([1.5], method="exact", noise=0.0).radius == pytest.approx(np.sqrt(2) / 4)   # the segment


@pytest.mark.parametrize("method", cc.METHODS)
def test_a_batch_equals_its_rows_one_by_one(method):
    """Rows of one batch with different equality patterns, one-sided rows, an empty set and a
    NaN: the batch gives each row what the row alone gives (rcc1's barrier warm-starts along
    the batch, so its rows agree to the barrier's accuracy, about 1e-8 in eta)."""
    rng = np.random.default_rng(8)
    A = rng.standard_normal((2, 5))
    X = rng.random((8, 5))
    B = X @ A.T
    L, U = B - 0.05, B + 0.1
    L[1, 0] = U[1, 0] = B[1, 0]           # one equation, one interval
    L[2, 1] = -np.inf                      # one-sided
    U[3, 0] = np.inf
    L[4], U[4] = 40.0, 41.0                # empty
    L[5, 1] = np.nan                       # invalid
    L[6] = U[6] = B[6]                     # the equality case
    sl = cc.BoxSlice(A)
    batch = sl.centers(method=method, lower=L, upper=U)
    for n in range(L.shape[0]):
        one = sl.centers(method=method, lower=L[n:n + 1], upper=U[n:n + 1])
        assert one.status_codes[0] == batch.status_codes[n], n
        if method == "rcc1":
            np.testing.assert_allclose(one.radii[0], batch.radii[n], rtol=1e-7, equal_nan=True)
            np.testing.assert_allclose(one.centers[0], batch.centers[n], atol=2e-4, equal_nan=True)
        else:
            np.testing.assert_array_equal(one.centers[0], batch.centers[n])
            np.testing.assert_array_equal(one.radii[0], batch.radii[n])
        if batch.status_codes[n] == cc.Status.OPTIMAL:
            assert np.linalg.norm(batch.centers[n] - X[n]) <= batch.radii[n] + SLACK


@pytest.mark.parametrize("seed", range(8))
def test_the_branch_and_bound_on_one_interval_row_agrees_with_the_enumeration(seed):
    """One interval row, no equations: ``algorithm="bnb"`` (the box slices' branch and bound
    on the lifted row, docs/theory.md §8.4) and the enumeration bracket the same radius:
    each one's lower bound is below the other's radius (slack 1e-9: both accept vertices to
    the feasibility tolerance), and the branch and bound's gap is within ``gap_tol``."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 9))
    a = rng.integers(-4, 5, size=(1, d)).astype(float) if seed % 2 else rng.standard_normal((1, d))
    a[0, 0] = a[0, 0] or 1.0
    x = rng.random(d)
    lo_b, up_b = float(a[0] @ x) - rng.uniform(0, 0.4), float(a[0] @ x) + rng.uniform(0, 0.4)
    sl = cc.BoxSlice(a)
    en = sl.center(method="exact", lower=[lo_b], upper=[up_b], algorithm="enumerate")
    bb = sl.center(method="exact", lower=[lo_b], upper=[up_b], algorithm="bnb")
    assert bb.status == en.status == cc.Status.OPTIMAL
    assert bb.extras["radius_lower"] <= en.radius + SLACK and en.extras["radius_lower"] <= bb.radius + SLACK
    assert bb.radius <= bb.extras["radius_lower"] * (1 + 1e-6) + 1e-12
    V = brute_vertices(a, np.array([lo_b]), np.array([up_b]), np.zeros(d), np.ones(d))
    assert worst_error(V, bb.center) <= bb.radius + SLACK
    assert np.linalg.norm(bb.center - x) <= bb.radius + SLACK


def test_past_the_enumeration_one_interval_row_is_certified_by_the_branch_and_bound():
    """d = 28: millions of vertices; with a vertex budget of 1000, ``exact`` (algorithm "auto")
    hands the row to the branch and bound, which certifies it; the unknown is covered."""
    rng = np.random.default_rng(2)
    d = 28
    a = rng.standard_normal((1, d))
    x = rng.random(d)
    sl = cc.BoxSlice(a)
    res = sl.center(a @ x, method="exact", noise=0.1, max_vertices=1000)
    assert res.status == cc.Status.OPTIMAL
    assert res.extras["radius_lower"] <= res.radius <= res.extras["radius_lower"] * (1 + 1e-6) + 1e-12
    assert np.linalg.norm(res.center - x) <= res.radius + SLACK
    assert sl.center(a @ x, method="exact", noise=0.1, max_vertices=1000, algorithm="enumerate").status == cc.Status.TOO_LARGE


def test_project_on_an_all_fixed_box_holds_for_point_rows_given_as_intervals():
    """Every coordinate fixed, A lo = 1.5 and b = 1.6: ``on_inconsistent="project"`` makes the
    slice the point lo whether b comes as B, as noise=0 or as lower == upper; "status" leaves it
    INFEASIBLE (found by a differential review of the one pipeline, where the interval spellings
    lost the option)."""
    P = cc.BoxSlice([[1.0, 2.0]], lo=[0.5, 0.5], hi=[0.5, 0.5])
    b = np.array([[1.6]])
    spellings = ({"B": b}, {"B": b, "noise": 0.0}, {"lower": b, "upper": b.copy()})
    for kw in spellings:
        r = P.centers(method="rcc2", on_inconsistent="project", **kw)
        assert r.status_codes.tolist() == [Status.OPTIMAL] and r.centers.tolist() == [[0.5, 0.5]], kw
        assert P.centers(method="rcc2", **kw).status_codes.tolist() == [Status.INFEASIBLE], kw
    r = P.feature_ranges(lower=b, upper=b.copy(), on_inconsistent="project")
    assert r.status_codes.tolist() == [Status.OPTIMAL]


def test_an_anchor_of_the_wrong_shape_is_refused_whatever_the_rows():
    """Whether a call raises does not depend on the data: an anchor with the wrong number of
    rows is refused on a batch with no valid row and on an empty batch too."""
    P = cc.BoxSlice([[1.0, 1.0, 1.0]])
    for B in (np.full((2, 1), np.nan), np.zeros((0, 1)), np.full((2, 1), 1.0)):
        with pytest.raises(cc.InvalidInputError, match="anchor must have one row per row of B"):
            P.centers(B, "project", anchor=np.zeros((5, 3)))


def test_rows_that_never_reach_the_solver_hold_each_extras_declared_fill():
    """A NaN row (INVALID_INPUT) and an inverted interval (INFEASIBLE) hold the same extras as
    a row the solver found empty: each extra's declared fill (n_vertices -1, clipped and moved
    0), and a per-coordinate extra is NaN on every coordinate, fixed ones included."""
    A = [[1.0, 1.0], [1.0, -1.0]]
    r = cc.BoxSlice(A).centers(method="exact", lower=[[0.5, -0.2], [1.9, 0.5], [np.nan, 0.0]],
                               upper=[[1.5, 0.2], [2.0, 1.0], [1.0, 1.0]])
    assert r.status_codes.tolist() == [Status.OPTIMAL, Status.INFEASIBLE, Status.INVALID_INPUT]
    assert r.extras["n_vertices"].tolist() == [4, -1, -1]
    assert r.extras["clipped"].tolist() == [0.0, 0.0, 0.0] and r.extras["moved"].tolist() == [0.0, 0.0, 0.0]
    r = cc.BoxSlice([[1.0, 1.0, 1.0]], lo=[0, 0, 0.5], hi=[1, 1, 0.5]).centers(
        method="rcc1", lower=[[1.0], [np.nan]], upper=[[1.0], [1.2]])
    assert r.status_codes.tolist() == [Status.OPTIMAL, Status.INVALID_INPUT]
    assert np.all(np.isnan(r.extras["alpha"][1]))


def test_rank_tol_reaches_the_lifted_equations():
    """The caller's rank_tol ranks a lifted group's equations as it ranks A: rows 0 and 1
    differ by 1e-9 in x2, so with rank_tol = 1e-6 they are one equation and x2 is free over
    [0, 1]; the set is then {x1 = 0.5, x2 in [0, 1], x3 in [0.6, 0.8]}, radius
    sqrt(0.5^2 + 0.1^2). With NumPy's rule the two equations pin x2 and the radius is the
    interval's 0.1. (The lifted group ranked its equations by NumPy's rule whatever rank_tol.)"""
    A = np.array([[1.0, 0.0, 0.0], [1.0, 1e-9, 0.0], [0.0, 0.0, 1.0]])
    b = A @ np.array([0.5, 0.3, 0.7])
    L, U = b.copy(), b.copy()
    L[2], U[2] = b[2] - 0.1, b[2] + 0.1
    loose = cc.BoxSlice(A, 0.0, 1.0, rank_tol=1e-6).centers(lower=L[None], upper=U[None], method="exact")
    assert loose.status[0].name == "OPTIMAL"
    # the radius carries the forward-error widening (the rows' Hoffman constant is ~1e9 here)
    assert loose.radii[0] - loose.extras["forward_error"][0] == pytest.approx(np.hypot(0.5, 0.1), rel=1e-9)
    tight = cc.BoxSlice(A, 0.0, 1.0).centers(lower=L[None], upper=U[None], method="exact")
    assert tight.radii[0] - tight.extras["forward_error"][0] == pytest.approx(0.1, rel=1e-6)
