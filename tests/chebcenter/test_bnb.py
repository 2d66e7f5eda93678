"""exact past enumeration: the working-set branch and bound and its certificate."""

from __future__ import annotations

import numpy as np
import pytest
from reference import brute_vertices

import chebcenter as cc
from chebcenter.kernels.bnb import knapsack_lp


@pytest.mark.parametrize("seed", range(6))
def test_knapsack_lp_matches_highs(seed):
    """The compiled node LP (one equation) against scipy's HiGHS on random boxes."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 15))
    a = rng.standard_normal(d)
    a[rng.random(d) < 0.2] = 0.0
    lo = rng.uniform(-1, 0.5, d)
    hi = lo + rng.uniform(0.1, 2, d)
    beta = a @ (lo + (hi - lo) * rng.random(d))
    g = rng.standard_normal(d)
    x = np.empty(d)
    code = knapsack_lp(g, a, beta, lo, hi, x)
    ref = linprog(-g, A_eq=a[None], b_eq=[beta], bounds=np.column_stack([lo, hi]), method="highs")
    assert code != -2 and ref.status == 0
    assert g @ x == pytest.approx(-ref.fun, rel=1e-9, abs=1e-9)
    assert abs(a @ x - beta) <= 1e-12 * (1 + abs(beta)) and np.all(x >= lo) and np.all(x <= hi)
    assert (np.sum((x > lo) & (x < hi)) <= 1)  # a vertex: at most one fractional coordinate
    assert knapsack_lp(g, a, a @ hi + 10.0 * np.abs(a).sum() + 1.0, lo, hi, x) == -2 or not a.any()


@pytest.mark.parametrize("seed", range(8))
def test_bnb_matches_full_enumeration_and_its_certificate_is_tight(seed):
    rng = np.random.default_rng(100 + seed)
    d = int(rng.integers(3, 11))
    A = rng.standard_normal((1, d))
    x = rng.random(d)
    x[rng.random(d) < 0.3] = 1.0
    b = A @ x
    P = cc.BoxSlice(A)
    enum = P.center(b, method="exact", algorithm="enumerate")
    bnb = P.center(b, method="exact", algorithm="bnb", gap_tol=1e-10)
    assert bnb.status is cc.Status.OPTIMAL
    lower, upper = bnb.extras["radius_lower"], bnb.radius
    assert lower <= enum.radius + 1e-12 and enum.radius <= upper + 1e-12
    assert upper <= lower * (1 + 1e-10) + 1e-15
    # the returned radius is the farthest-vertex distance from the returned center
    V = brute_vertices(A, b, np.zeros(d), np.ones(d))
    far = np.max(np.linalg.norm(V - bnb.center, axis=1))
    assert far <= upper + 1e-12 and far >= upper * (1 - 1e-9)
    # a radius gap eps moves the center by at most R sqrt(2 eps) (both balls cover S_F)
    np.testing.assert_allclose(bnb.center, enum.center, atol=enum.radius * np.sqrt(2e-10) + 1e-9)
    assert bnb.in_slice(1e-9)


def test_bnb_on_general_boxes_degenerate_slices_and_points():
    """General boxes, coordinates at their bounds, a nearly free coordinate, and slices that
    are a single point (radius 0: only the absolute rounding floor can certify it)."""
    rng = np.random.default_rng(42)
    for trial in range(40):
        d = int(rng.integers(2, 11))
        A = rng.standard_normal((1, d))
        if trial % 3 == 0:
            A[0, 0] *= 1e-3
        lo = rng.uniform(-2, 0.5, d)
        hi = lo + rng.uniform(0.2, 2, d)
        x = lo + (hi - lo) * rng.random(d)
        hits = rng.random(d) < 0.4
        x[hits] = np.where(rng.random(hits.sum()) < 0.5, lo[hits], hi[hits])
        P = cc.BoxSlice(A, lo, hi)
        enum = P.center(A @ x, method="exact", algorithm="enumerate")
        bnb = P.center(A @ x, method="exact", algorithm="bnb", gap_tol=1e-10)
        assert bnb.status is cc.Status.OPTIMAL, trial
        assert bnb.extras["radius_lower"] <= enum.radius + 1e-9 <= bnb.radius + 2e-9
        assert bnb.radius == pytest.approx(enum.radius, rel=1e-9, abs=1e-11)
    point = cc.BoxSlice([[1.0, 1.0, 1.0]]).center([3.0], method="exact", algorithm="bnb")
    assert point.status is cc.Status.OPTIMAL and point.radius <= 1e-11
    np.testing.assert_allclose(point.center, [1.0, 1.0, 1.0], atol=1e-12)


def test_bnb_with_several_equations_agrees_with_enumeration():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((2, 7))
    b = A @ rng.random(7)
    P = cc.BoxSlice(A)
    enum = P.center(b, method="exact")
    bnb = P.center(b, method="exact", algorithm="bnb", gap_tol=1e-9)
    assert bnb.status is cc.Status.OPTIMAL
    assert bnb.extras["radius_lower"] <= enum.radius + 1e-12 <= bnb.radius + 2e-12
    assert bnb.radius == pytest.approx(enum.radius, rel=1e-9)


def test_certified_center_at_nullity_30_where_enumeration_is_out_of_reach():
    """d = 31, rank 1: C(31, 1) 2^30 = 3e10 enumeration candidates (~1e9 vertices); the
    branch and bound certifies the radius to 1e-4 relative in a few seconds (measured
    1-3 s), and the certificate is checked independently: the lower bound cannot exceed
    rcc1's relaxed radius, and random points of S_F lie in the ball."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((1, 31))
    b = A @ rng.random(31)
    P = cc.BoxSlice(A)
    r = P.center(b, method="exact", gap_tol=1e-4)
    assert r.status is cc.Status.OPTIMAL
    lower, upper = r.extras["radius_lower"], r.radius
    assert lower <= upper <= lower * (1 + 1e-4) + 1e-15
    assert r.in_slice(1e-9)
    assert lower <= P.center(b, method="rcc1").radius + 1e-9
    # vertices of S_F from random objectives: all inside the certified ball
    from scipy.optimize import linprog

    for _ in range(40):
        res = linprog(rng.standard_normal(31), A_eq=A, b_eq=b, bounds=(0, 1), method="highs")
        assert np.linalg.norm(res.x - r.center) <= upper + 1e-9


def test_budget_exhausted_is_inaccurate_but_still_certified():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((1, 24))
    b = A @ rng.random(24)
    r = cc.BoxSlice(A).center(b, method="exact", gap_tol=1e-12, max_nodes=20_000)
    assert r.status is cc.Status.INACCURATE
    assert np.isfinite(r.radius) and r.extras["radius_lower"] <= r.radius
    assert r.in_slice(1e-9)


def test_compiled_node_lp_matches_highs_on_random_and_degenerate_nodes():
    """The branch and bound's node LP (compiled bounded simplex) against HiGHS: the same optimal
    value to 1e-9 (its vertex may differ on ties), and 'empty' exactly where HiGHS says so."""
    from scipy.optimize import linprog

    import chebcenter.methods.exact_bnb as bnb

    rng = np.random.default_rng(17)
    checked = empty = 0
    for trial in range(300):
        r = int(rng.integers(2, 6))
        d = int(rng.integers(r + 1, 14))
        V = np.linalg.qr(rng.standard_normal((d, r)))[0].T.copy()
        x0 = rng.uniform(-1, 1, d)
        if trial % 3 == 0:
            x0[: d // 2] = np.sign(x0[: d // 2])           # a vertex-heavy start: degenerate LPs
        beta = V @ x0
        lo, hi = -np.ones(d), np.ones(d)
        k = int(rng.integers(0, d))                         # a node: one coordinate's interval cut
        cut = rng.uniform(-1, 1)
        lo[k], hi[k] = (cut, 1.0) if rng.random() < 0.5 else (-1.0, cut)
        g = rng.standard_normal(d)
        got = bnb._node_lp(V, beta, g, lo, hi)
        ref = linprog(-g, A_eq=V, b_eq=beta, bounds=np.column_stack([lo, hi]), method="highs")
        if ref.status == 2:
            assert got is None
            empty += 1
            continue
        assert got is not None and ref.status == 0
        assert np.all(got >= lo - 1e-12) and np.all(got <= hi + 1e-12)
        np.testing.assert_allclose(V @ got, beta, atol=1e-9)
        assert g @ got == pytest.approx(-ref.fun, abs=1e-9)
        checked += 1
    assert checked > 150 and empty > 10


@pytest.mark.parametrize("rank,d", [(2, 8), (3, 9), (4, 10), (3, 11)])
def test_compiled_search_at_higher_rank_matches_enumeration(rank, d):
    """The compiled depth-first search with simplex node LPs (rank > 1) against vertex
    enumeration + the minimum enclosing ball, on planted rows with corner coordinates: the
    same radius to the certified gap, a certified lower bound below it, the center in S_F
    and every vertex within the radius."""
    rng = np.random.default_rng(rank * 100 + d)
    A = rng.standard_normal((rank, d))
    X = rng.random((4, d))
    X[:, :2] = np.round(X[:, :2])
    B = X @ A.T
    P = cc.BoxSlice(A)
    bb = P.centers(B, "exact", algorithm="bnb")
    en = P.centers(B, "exact", algorithm="enumerate", return_vertices=True)
    assert bb.counts() == {"OPTIMAL": 4} and en.counts() == {"OPTIMAL": 4}
    np.testing.assert_allclose(bb.radii, en.radii, rtol=2e-6, atol=1e-12)
    assert np.all(bb.extras["radius_lower"] <= bb.radii)
    assert np.max(bb.box_violations) == 0.0 and np.max(bb.residuals) <= 1e-9
    for k in range(4):
        V = en.extras["vertices"][k]
        assert np.max(np.linalg.norm(V - bb.centers[k], axis=1)) <= bb.radii[k] * (1 + 1e-9) + 1e-12


def test_the_outer_loop_needs_few_rounds_with_gap_scaled_slack():
    """Each round's search returns a point within (1 + slack) of the farthest, slack a tenth-
    to-third of the current gap (chebcenter.methods.exact_bnb.SLACK_FRAC). With a fixed slack of 1e-3
    this instance took 132 rounds to a 1e-6 gap; now 28. A coarser slack would still give a
    certified answer, only slowly: so the round count is bounded here, with room."""
    rng = np.random.default_rng(12)
    A = rng.standard_normal((1, 18))
    B = rng.random((1, 18)) @ A.T
    P = cc.BoxSlice(A)
    r = P.centers(B, "exact", algorithm="bnb", gap_tol=1e-6)
    assert r.status[0] is cc.Status.OPTIMAL
    assert r.extras["bnb_rounds"][0] <= 70
    assert r.radii[0] - r.extras["radius_lower"][0] <= 1e-6 * r.radii[0] + 1e-12
    ref = P.centers(B, "exact", algorithm="enumerate", max_vertices=10**6)
    assert abs(r.radii[0] - ref.radii[0]) <= 1e-6 * ref.radii[0]


@pytest.mark.parametrize("seed", range(4))
def test_warm_started_node_lp_equals_the_cold_one_on_child_nodes(seed):
    """lp_max_warm from the parent's optimal basis (a child: one basic coordinate's bound moved
    to its parent value, a new objective) reaches the cold simplex's optimal value; a state
    that is infeasible for the new bounds falls back to the cold start."""
    from chebcenter.kernels.simplex import RANGES_OK, lp_max, lp_max_warm

    rng = np.random.default_rng(seed)
    for r, d in [(2, 10), (3, 14), (5, 20)]:
        V = np.linalg.qr(rng.standard_normal((d, r)))[0].T.copy()
        x_in = rng.random(d)
        beta = V @ x_in
        lo, hi = np.zeros(d), np.ones(d)
        n = d + r
        T, rhs = np.empty((r, n)), np.empty(r)
        basis, where = np.empty(r, dtype=np.int64), np.empty(n, dtype=np.int64)
        xs, blo, bhi = np.empty(n), np.empty(n), np.empty(n)
        for _ in range(10):
            c = rng.random(d)
            g = lo + hi - 2 * c
            x = np.empty(d)
            assert lp_max_warm(V, beta, lo, hi, g, x, T, rhs, basis, where, xs, blo, bhi, False) == RANGES_OK
            frac = [j for j in range(d) if lo[j] + 1e-9 < x[j] < hi[j] - 1e-9]
            if not frac:
                continue
            j = frac[0]
            for side in (0, 1):
                l2, u2 = lo.copy(), hi.copy()
                (u2 if side == 0 else l2)[j] = x[j]
                g2 = l2 + u2 - 2 * c
                state = (T.copy(), rhs.copy(), basis.copy(), where.copy(), xs.copy())
                xw, xc = np.empty(d), np.empty(d)
                assert lp_max_warm(V, beta, l2, u2, g2, xw, *state, blo, bhi, True) == RANGES_OK
                assert lp_max(V, beta, l2, u2, g2, xc) == RANGES_OK
                assert g2 @ xw == pytest.approx(g2 @ xc, rel=1e-9, abs=1e-9)
                assert np.abs(V @ xw - beta).max() <= 1e-9 and np.all(xw >= l2) and np.all(xw <= u2)
            # a warm state whose vertex is outside the new box: the cold start answers
            l3 = lo.copy()
            l3[j] = min(x[j] + 0.5 * (hi[j] - x[j]), hi[j])
            state = (T.copy(), rhs.copy(), basis.copy(), where.copy(), xs.copy())
            x3, x4 = np.empty(d), np.empty(d)
            s3 = lp_max_warm(V, beta, l3, hi, g, x3, *state, blo, bhi, True)
            s4 = lp_max(V, beta, l3, hi, g, x4)
            assert s3 == s4
            if s3 == RANGES_OK:
                assert g @ x3 == pytest.approx(g @ x4, rel=1e-9, abs=1e-9)
