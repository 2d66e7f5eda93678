"""exact's batch route (chebcenter/kernels/batch_exact.py) against independent routes.

* exact rational vertices (tests/chebcenter/exact_reference.py): every OPTIMAL radius bounds
  the farthest true vertex from the center, evaluated in exact arithmetic, and the vertex
  count is the true one;
* the row-by-row route (``_batch_exact.ENABLED = False``, the edge walk or the basis-by-basis
  enumeration and the walking ball of kernels/ball.py): the same statuses, vertex counts and,
  to the certificates, the same balls;
* an SOCP (Clarabel) for the lower bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from exact_reference import exact_vertices, farthest
from reference import meb_socp
from test_certified import assert_same_certified_ball

import chebcenter as cc
from chebcenter.methods import exact as exact_module
from chebcenter.methods import exact_batch as _batch_exact


@pytest.fixture
def row_route_calls(monkeypatch):
    """How many rows went down the row-by-row route (its vertex listing is called once per row)."""
    calls = []
    real = exact_module.slice_vertices

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(exact_module, "slice_vertices", counting)
    return calls


def _row_route(P, B, **opts):
    _batch_exact.ENABLED = False
    try:
        return P.centers(B, "exact", **opts)
    finally:
        _batch_exact.ENABLED = True


def _dyadic_family(seed, d, m, rows=12):
    """Integer A, the unit box (or a shifted, widened one) and right-hand sides from points on
    the grid of eighths: many slices pass through box vertices (degenerate vertices reached
    from several bases), the rest are in general position along the grid."""
    rng = np.random.default_rng(seed)
    A = rng.integers(-4, 5, (m, d)).astype(float)
    A[np.arange(m), rng.choice(d, m, replace=False)] = 1.0 + rng.integers(0, 3, m)
    if seed % 2:
        lo, hi = np.full(d, -2.0), np.full(d, 6.0)
    else:
        lo, hi = np.zeros(d), np.ones(d)
    X = lo + (hi - lo) * rng.integers(0, 9, (rows, d)) / 8.0
    return A, X @ A.T, lo, hi


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("m", [1, 2, 3])
def test_every_optimal_radius_bounds_the_exact_rational_vertices(seed, m, row_route_calls):
    d = 4 + seed % 4
    A, B, lo, hi = _dyadic_family(seed, d, m)
    P = cc.BoxSlice(A, lo, hi)
    res = P.centers(B, "exact")
    scale = float(np.max(np.abs(hi)))
    for k in range(B.shape[0]):
        V = exact_vertices(A, B[k], lo, hi)
        if res.status[k] is not cc.Status.OPTIMAL:
            assert len(V) == 0 and res.status[k] is cc.Status.INFEASIBLE, (seed, k, res.status[k])
            continue
        # 8 ulps of the box's scale: the center is a float, the vertices are exact
        assert farthest(V, res.centers[k]) <= res.radii[k] + 8 * np.finfo(float).eps * scale, (seed, k)
        assert res.extras["n_vertices"][k] == len(V), (seed, k)
        assert res.extras["radius_lower"][k] <= res.radii[k]
    # the batch route answered most rows (the rest were handed to the row route, never guessed)
    assert len(row_route_calls) <= B.shape[0] // 2


def _continuous(seed, d, m, n):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    lo = np.where(rng.random(d) < 0.3, -rng.random(d) * 5, 0.0)
    hi = lo + np.where(rng.random(d) < 0.2, 1e-3, 1.0) * (1 + rng.random(d))   # some narrow coordinates
    X = lo + (hi - lo) * rng.random((n, d))
    X[: n // 4] = lo + (hi - lo) * np.where(rng.random((n // 4, d)) < 0.5, 0.02, 0.98)   # near corners
    return A, X @ A.T, lo, hi


@pytest.mark.parametrize("seed,d,m", [(0, 6, 1), (1, 9, 1), (2, 12, 1), (3, 7, 2), (4, 9, 3), (5, 10, 3), (6, 13, 1)])
def test_the_batch_route_agrees_with_the_row_route(seed, d, m, row_route_calls):
    A, B, lo, hi = _continuous(seed, d, m, 60)
    P = cc.BoxSlice(A, lo, hi)
    fast = P.centers(B, "exact")
    assert len(row_route_calls) == 0      # general position: every row certified by the batch route
    slow = _row_route(P, B)
    assert list(fast.status) == list(slow.status)
    np.testing.assert_array_equal(fast.extras["n_vertices"], slow.extras["n_vertices"])
    for k in np.flatnonzero(fast.status == cc.Status.OPTIMAL):
        assert_same_certified_ball(fast.centers[k], fast.radii[k], fast.extras["radius_lower"][k],
                                   slow.centers[k], slow.radii[k], slow.extras["radius_lower"][k])
        assert len(fast.extras["support"][k]) >= 2 or fast.radii[k] == 0.0


@pytest.mark.parametrize("m", [1, 3])
def test_the_lower_bound_is_below_the_socp_radius(m):
    A, B, lo, hi = _continuous(7, 8, m, 8)
    P = cc.BoxSlice(A, lo, hi)
    res = P.centers(B, "exact", return_vertices=False)
    ref = _row_route(P, B, return_vertices=True)
    for k in np.flatnonzero(res.status == cc.Status.OPTIMAL):
        _, r_socp = meb_socp(ref.extras["vertices"][k])
        # Clarabel's default tolerances (1e-8 relative gap) on radii of order 1
        assert res.extras["radius_lower"][k] <= r_socp + 1e-7
        assert res.radii[k] >= r_socp - 1e-7


@pytest.mark.parametrize("m", [1, 3])
def test_a_row_gets_the_same_bits_alone_in_general_position(m):
    """The warm start changes the path, not the answer: the final ball is recomputed from the
    support in a canonical order, so a row in general position gets the same bits in a batch
    (sorted among its neighbours) and alone."""
    A, B, lo, hi = _continuous(8, 9, m, 40)
    P = cc.BoxSlice(A, lo, hi)
    batch = P.centers(B[::-1], "exact")
    for k in range(0, 40, 3):
        alone = P.center(B[::-1][k], "exact")
        np.testing.assert_array_equal(batch.centers[k], alone.center)
        assert batch.radii[k] == alone.radius


def test_one_hot_records_are_degenerate_vertices_and_still_certified(row_route_calls):
    """Binary records (one-hot features) make the record itself a vertex reached from every
    basis: the batch route counts it once and certifies the row; a row it cannot certify goes
    to the row route, which agrees."""
    rng = np.random.default_rng(9)
    d = 10
    A = rng.standard_normal((1, d))
    X = (rng.random((80, d)) < 0.4).astype(float)
    B = X @ A.T
    P = cc.BoxSlice(A)
    fast = P.centers(B, "exact")
    slow = _row_route(P, B)
    assert fast.counts() == {"OPTIMAL": 80}
    np.testing.assert_array_equal(fast.extras["n_vertices"], slow.extras["n_vertices"])
    for k in range(80):
        assert np.linalg.norm(X[k] - fast.centers[k]) <= fast.radii[k] + 1e-12
        assert_same_certified_ball(fast.centers[k], fast.radii[k], fast.extras["radius_lower"][k],
                                   slow.centers[k], slow.radii[k], slow.extras["radius_lower"][k])


def test_return_support_false_drops_the_support_and_nothing_else():
    A, B, lo, hi = _continuous(10, 8, 1, 30)
    P = cc.BoxSlice(A, lo, hi)
    full, lean = P.centers(B, "exact"), P.centers(B, "exact", return_support=False)
    assert "support" in full.extras and "support" not in lean.extras and "support_indices" not in lean.extras
    np.testing.assert_array_equal(full.centers, lean.centers)
    np.testing.assert_array_equal(full.radii, lean.radii)
    np.testing.assert_array_equal(full.extras["radius_lower"], lean.extras["radius_lower"])
    with pytest.raises(cc.InvalidInputError, match="return_support"):
        P.centers(B, "exact", return_support="no")


@pytest.mark.parametrize("chunk", range(6))
def test_fuzz_shapes_ranks_and_degenerate_records_against_the_row_route(chunk):
    """Random shapes (d = 2..8, 1..4 equations, some rank-deficient, some integer), boxes of
    widths 0.01..3 and records at box vertices (degenerate slices): the same statuses as the
    row route, the same balls to the certificates, and every record inside its ball (radius
    relative 1e-12: the record is a point of S_F up to the rounding of b = A x)."""
    for seed in range(10 * chunk, 10 * chunk + 10):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(2, 9))
        m = int(rng.integers(1, min(d, 4) + 1))
        A = rng.standard_normal((m, d))
        if seed % 5 == 0 and m >= 2:
            A[-1] = 2.0 * A[0]
        if seed % 7 == 0:
            A = np.round(2.0 * A)
            A[0, 0] = A[0, 0] or 1.0
        lo = rng.uniform(-2, 0, d)
        hi = lo + rng.uniform(0.01, 3, d)
        X = lo + (hi - lo) * rng.random((30, d))
        if seed % 3 == 0:
            X = np.where(rng.random((30, d)) < 0.5, lo, hi)
        B = X @ A.T
        P = cc.BoxSlice(A, lo, hi)
        fast, slow = P.centers(B, "exact"), _row_route(P, B)
        assert list(fast.status) == list(slow.status), seed
        for k in np.flatnonzero(fast.status == cc.Status.OPTIMAL):
            assert_same_certified_ball(fast.centers[k], fast.radii[k], fast.extras["radius_lower"][k],
                                       slow.centers[k], slow.radii[k], slow.extras["radius_lower"][k])
            assert np.linalg.norm(X[k] - fast.centers[k]) <= fast.radii[k] * (1 + 1e-12) + 1e-12, (seed, k)
