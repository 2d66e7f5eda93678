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
