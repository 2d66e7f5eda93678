"""Feature ranges against HiGHS per LP, against the vertices of S_F, and at every scale.

Tolerance: endpoints agree with HiGHS to 1e-7 of the box side (HiGHS's own primal
feasibility tolerance is 1e-7 in absolute terms, and the boxes here have sides 0.2..2).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import brute_vertices
from scipy.optimize import linprog
from strategies import instances, scaled

import chebcenter as cc

AGREE = 1e-7


def highs_ranges(A, b, lo, hi):
    """min and max of every coordinate over S_F: 2 d LPs with HiGHS."""
    d = A.shape[1]
    lower, upper = np.empty(d), np.empty(d)
    bounds = list(zip(lo, hi))
    for i in range(d):
        e = np.zeros(d)
        e[i] = 1.0
        kw = {"A_eq": A, "b_eq": b} if A.shape[0] else {}
        lo_res = linprog(e, bounds=bounds, method="highs", **kw)
        hi_res = linprog(-e, bounds=bounds, method="highs", **kw)
        assert lo_res.status == 0 and hi_res.status == 0
        lower[i], upper[i] = lo_res.fun, -hi_res.fun
    return lower, upper


@settings(max_examples=scaled(40), deadline=None)
@given(instances(max_d=7), st.integers(0, 2**31 - 1))
def test_ranges_match_highs_and_contain_every_vertex(inst, seed):
    A, lo, hi, x = inst
    rng = np.random.default_rng(seed)
    X = lo + (hi - lo) * rng.random((3, lo.size))
    X[0] = x
    B = X @ A.T
    r = cc.BoxSlice(A, lo, hi).feature_ranges(B)
    assert r.counts() == {"OPTIMAL": 3}
    side = hi - lo
    for n in range(3):
        hl, hu = highs_ranges(A, B[n], lo, hi)
        np.testing.assert_allclose(r.lower[n], hl, atol=AGREE * side.max(), rtol=0)
        np.testing.assert_allclose(r.upper[n], hu, atol=AGREE * side.max(), rtol=0)
        assert np.all(r.lower[n] <= X[n] + 1e-9) and np.all(X[n] <= r.upper[n] + 1e-9)  # the planted point
        V = brute_vertices(A, B[n], lo, hi)
        assert np.all(V >= r.lower[n] - 1e-9) and np.all(V <= r.upper[n] + 1e-9)
        # every endpoint is attained: the vertex extremes reach it
        np.testing.assert_allclose(V.min(axis=0), r.lower[n], atol=1e-7 * side.max())
        np.testing.assert_allclose(V.max(axis=0), r.upper[n], atol=1e-7 * side.max())


@pytest.mark.parametrize("rank", [1, 2, 4, 9])
def test_ranges_batches_at_d10_match_highs(rank):
    rng = np.random.default_rng(rank)
    A = rng.standard_normal((rank, 10))
    X = rng.random((40, 10))
    X[:, :3] = np.round(X[:, :3])          # records at box corners: degenerate LPs
    B = X @ A.T
    r = cc.BoxSlice(A).feature_ranges(B)
    assert r.counts() == {"OPTIMAL": 40}
    for n in range(0, 40, 7):
        hl, hu = highs_ranges(A, B[n], np.zeros(10), np.ones(10))
        np.testing.assert_allclose(r.lower[n], hl, atol=AGREE)
        np.testing.assert_allclose(r.upper[n], hu, atol=AGREE)


def test_fixed_coordinates_empty_and_bad_rows():
    A = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 1.0]])
    lo, hi = np.array([0.0, 0.3, 0.0]), np.array([1.0, 0.3, 1.0])   # x_2 fixed at 0.3
    x = np.array([0.4, 0.3, 0.6])
    B = np.array([A @ x, [50.0, 50.0], [np.nan, 1.0]])
    r = cc.BoxSlice(A, lo, hi).feature_ranges(B)
    assert r.status.tolist() == [cc.Status.OPTIMAL, cc.Status.INFEASIBLE, cc.Status.INVALID_INPUT]
    assert r.lower[0, 1] == r.upper[0, 1] == 0.3
    hl, hu = highs_ranges(A, B[0], lo, hi)
    np.testing.assert_allclose(r.lower[0], hl, atol=AGREE)
    np.testing.assert_allclose(r.upper[0], hu, atol=AGREE)
    assert np.all(np.isnan(r.lower[1:])) and np.all(np.isnan(r.upper[1:]))
    assert r.pinned(0.1)[0, 1] and not r.pinned(0.1)[1].any()
    with pytest.raises(cc.InvalidInputError, match="tau must be"):
        r.pinned(-1)


@pytest.mark.parametrize("s", [1e-12, 1e-6, 1.0, 1e6, 1e12])
def test_ranges_scale_and_translate(s):
    rng = np.random.default_rng(5)
    A = rng.standard_normal((2, 6))
    x = rng.random(6)
    ref = cc.BoxSlice(A).feature_ranges([A @ x])
    t = s * rng.uniform(-3, 3, 6)
    got = cc.BoxSlice(A, t, s + t).feature_ranges([A @ (s * x + t)])
    np.testing.assert_allclose((got.lower - t) / s, ref.lower, atol=1e-7)
    np.testing.assert_allclose((got.upper - t) / s, ref.upper, atol=1e-7)


def test_rank_one_closed_form_on_a_segment():
    """x1 - 2 x2 = 0.2 on the unit square: the segment (0.2, 0) - (1, 0.4)."""
    r = cc.BoxSlice([[1.0, -2.0]]).feature_ranges([[0.2]])
    np.testing.assert_allclose(r.lower[0], [0.2, 0.0], atol=1e-15)
    np.testing.assert_allclose(r.upper[0], [1.0, 0.4], atol=1e-15)


# A rank-4 slice of a sparse V (four zero columns) with beta at a rounded vertex: the simplex
# enters a basis of condition ~1e16 there. Before the tableau was refactored at each optimum,
# the kernel returned OK with one interval 3e-3 inside HiGHS's range.
_DEGENERATE_V = np.array([float.fromhex(t) for t in """
-0x1.9531dfd0d3056p-1 -0x1.36b90414d267dp-3 -0x0.0p+0 -0x0.0p+0 0x0.0p+0 0x0.0p+0
0x1.20e55c30d827fp-2 -0x1.5958354c17f29p-2 0x0.0p+0 -0x1.aaa6f9151cb60p-3 0x1.15c234ebb1a7dp-2
-0x1.27ef6b8778ee4p-5 0x0.0p+0 0x0.0p+0 0x0.0p+0 -0x0.0p+0 0x1.35c3eb03fd2c9p-4 0x0.0p+0
-0x0.0p+0 0x1.75f416f86fa9ep-3 -0x1.6894302d8cff2p-12 -0x1.1482527b1c613p-14
-0x1.94de354fdcfeep-2 0x1.45c3230e4cec2p-1 0x0.0p+0 -0x1.d415258d3539ap-2 0x1.0115ec2f041c0p-13
-0x1.335196d7a8387p-13 0x0.0p+0 -0x1.7bac713d8398ap-14 -0x1.8508f340d6113p-10
-0x1.07598ed0a038fp-16 0x0.0p+0 0x1.e7ca2a6e2b8c0p-4 0x1.db9a8180a6db1p-2 -0x0.0p+0
0x1.13a836449e247p-15 0x0.0p+0 0x0.0p+0 0x1.4cc709f562bdcp-14 0x1.0afe87ca27d17p-4
0x1.997ce5093721dp-7 0x1.dacec7565619ep-17 -0x1.7e09655006be2p-16 0x0.0p+0 0x1.1278a2afbc2a8p-16
-0x1.7cb92aead92b9p-6 0x1.c71d4eca940f6p-6 0x1.d82b93622db3cp-1 -0x1.8349c92844c3ap-2
-0x1.6e0b8454a1ddap-6 0x1.8600060600fa7p-9 0x0.0p+0 -0x1.1e06e6a4987dcp-18
-0x1.16e19d765242fp-16 0x0.0p+0 -0x1.9839e40f70b42p-8 0x0.0p+0 0x0.0p+0 -0x1.ecd12173e13cep-7
-0x1.3160553d48e17p-5 -0x1.d45aaed2ff98fp-8 -0x1.2a80931514817p-4 -0x1.c2229492832c5p-5 0x0.0p+0
-0x1.591bfa5a286adp-4 0x1.119e7a771b6aap-2 -0x1.04451cf12e291p-6 -0x1.d1cd62541425ep-9
-0x1.0f9f755a0f848p-7 0x1.98fdf2576d821p-7 -0x1.00b9a80514825p-2 0x0.0p+0 -0x1.3604188f59ff5p-1
0x1.5ea78325c2c85p-4 0x0.0p+0 0x1.d2e93ecec4325p-9 0x0.0p+0 0x0.0p+0 -0x1.60a780f5e9885p-1
""".split()]).reshape(4, 20)
_DEGENERATE_BETA = np.array([float.fromhex(t) for t in
                             "0x1.a5f3a9cedc7e6p-3 0x1.19ce0fddd441cp+0 -0x1.16ae6c2acb5dfp-6 0x1.2d5870708d412p-2".split()])


def _highs_ranges(V, beta, lo, hi):
    opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    out = np.empty((2, V.shape[1]))
    for i in range(V.shape[1]):
        e = np.zeros(V.shape[1])
        e[i] = 1.0
        for k, sgn in enumerate((1.0, -1.0)):
            res = linprog(sgn * e, A_eq=V, b_eq=beta, bounds=list(zip(lo, hi)), method="highs", options=opts)
            assert res.status == 0
            out[k, i] = sgn * res.fun
    return out


def test_ranges_near_a_degenerate_vertex_contain_highs_or_say_they_cannot():
    """The compiled ranges either contain HiGHS's (at feasibility tolerance 1e-10, so its
    endpoints sit within about 1e-10 times the basis' growth of the exact ones; the margin
    1e-6 is three orders below the 3e-3 miss this instance produced) or report that their
    LPs failed; through the API such a row gets outer intervals and says INACCURATE."""
    from chebcenter.kernels.simplex import RANGES_FAILED, RANGES_OK, range_rows

    V, beta = np.ascontiguousarray(_DEGENERATE_V), _DEGENERATE_BETA
    d = V.shape[1]
    lo, hi = np.zeros(d), np.ones(d)
    ref = _highs_ranges(V, beta, lo, hi)
    L, U, status = np.empty((1, d)), np.empty((1, d)), np.empty(1, dtype=np.int64)
    range_rows(V, beta[None, :].copy(), lo, hi, L, U, status)
    assert status[0] in (RANGES_OK, RANGES_FAILED)
    if status[0] == RANGES_OK:
        assert np.all(L[0] <= ref[0] + 1e-6) and np.all(U[0] >= ref[1] - 1e-6)
    fr = cc.BoxSlice(V, lo, hi).feature_ranges(beta[None, :])
    assert fr.status[0] in (cc.Status.OPTIMAL, cc.Status.INACCURATE)
    assert np.all(fr.lower[0] <= ref[0] + 1e-6) and np.all(fr.upper[0] >= ref[1] - 1e-6)


def test_rows_whose_lps_fail_get_outer_intervals_and_say_inaccurate(monkeypatch):
    """Rows the compiled LPs report RANGES_FAILED (forced here) get the tolerance LP's outer
    intervals, INACCURATE, and they contain the true ranges (HiGHS on the same data)."""
    import chebcenter.methods.ranges as ranges_mod
    from chebcenter.kernels.simplex import RANGES_FAILED

    real = ranges_mod.range_rows

    def failing(V, Beta, lo, hi, Lower, Upper, status):
        real(V, Beta, lo, hi, Lower, Upper, status)
        status[:] = RANGES_FAILED

    monkeypatch.setattr(ranges_mod, "range_rows", failing)
    rng = np.random.default_rng(5)
    A = rng.standard_normal((3, 8))
    X = rng.random((2, 8))
    fr = cc.BoxSlice(A).feature_ranges(X @ A.T)
    assert np.all(fr.status == cc.Status.INACCURATE)
    ref = _highs_ranges(A, A @ X[0], np.zeros(8), np.ones(8))
    assert np.all(fr.lower[0] <= ref[0] + 1e-9) and np.all(fr.upper[0] >= ref[1] - 1e-9)
