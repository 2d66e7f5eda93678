"""The cuts of the box (chebcenter/kernels/cuts.py, docs/theory.md §8.7): the vertices of
``{x in [lo, hi] : G x <= h}`` against exact rational vertices, and exact's cuts route
against its lifted enumeration on k-class releases (the sets the route is for).

Tolerance: the vertices are compared as sets, each within 1e-9 of the box's largest
half-width of one of the other's. A vertex of the kernel is recomputed from d of its active
constraints (one small solve: rounding about 1e-15 times the basis' condition, below 1e2
on these 1/8-grid matrices); the row tolerance tau (1e-9 relative) decides which
constraints are active, so a vertex that is one only within tau may be merged or kept, which
moves no vertex by more than tau times that condition: 1e-7 at worst, 1e-9 on the dyadic
families where no vertex is that close to a face it does not lie on.
"""

from __future__ import annotations

import numpy as np
import pytest
from exact_reference import exact_interval_vertices
from reference import meb_socp
from test_interval_certified import FAMILIES, family

import chebcenter as cc
import chebcenter._core.lifting as lifting
from chebcenter import Status
from chebcenter.kernels.ball import working_set_ball
from chebcenter.kernels.cuts import CUTS_EMPTY, CUTS_OK, CUTS_TOO_MANY, cut_vertices, slab_vertices


def _cuts_of(A, L, U):
    """The finite sides of ``L <= A x <= U`` as unit-normal rows ``g^T x <= h``."""
    norms = np.linalg.norm(A, axis=1)
    G, h = [], []
    for j in range(A.shape[0]):
        if np.isfinite(U[j]):
            G.append(A[j] / norms[j])
            h.append(U[j] / norms[j])
        if np.isfinite(L[j]):
            G.append(-A[j] / norms[j])
            h.append(-L[j] / norms[j])
    d = A.shape[1]
    return np.array(G).reshape(-1, d), np.array(h)


def _hausdorff(P, Q):
    D = np.linalg.norm(P[:, None, :] - Q[None, :, :], axis=2)
    return max(D.min(axis=1).max(), D.min(axis=0).max())


@pytest.mark.parametrize("name", [f for f in FAMILIES if f not in ("offset1e5", "offset1e8", "all_fixed")])
def test_the_cuts_find_the_exact_vertices(name):
    """Every row of the dyadic families (offsets and the all-fixed box are left out: the
    kernel is called on the normalised problem, where neither exists)."""
    for A, lo, hi, L, U, _ in family(name):
        if np.any(lo == hi):
            continue
        s_box = float(np.max(0.5 * (hi - lo)))
        for i in range(L.shape[0]):
            V = exact_interval_vertices(A, L[i], U[i], lo, hi).astype(float)
            G, h = _cuts_of(A, L[i], U[i])
            tol = np.full(h.size, 1e-12 * s_box)
            P, n, code = cut_vertices(np.ascontiguousarray(G), h, tol, lo, hi, 100_000)
            if len(V) == 0:
                assert code == CUTS_EMPTY or n == 0, (name, i)
                continue
            assert code == CUTS_OK, (name, i, code)
            assert _hausdorff(P[:n], V) <= 1e-9 * s_box, (name, i)


def test_a_segment_is_cut_to_its_two_ends():
    """d = 1 (a fixed coordinate leaves one free one): an edge needs no common constraint,
    and a rank test that wanted one kept a single end, so exact said radius 0."""
    P, n, code = cut_vertices(np.array([[1.0]]), np.array([0.3]), np.array([1e-12]), np.zeros(1), np.ones(1), 10)
    assert code == CUTS_OK and sorted(P[:n, 0].tolist()) == [0.0, 0.3]


def test_the_cuts_report_too_many_and_empty():
    lo, hi = np.zeros(3), np.ones(3)
    G = np.array([[1.0, 1.0, 1.0]]) / np.sqrt(3.0)
    assert cut_vertices(G, np.array([-0.1]), np.array([1e-12]), lo, hi, 100)[2] == CUTS_EMPTY
    assert cut_vertices(G, np.array([0.5]), np.array([1e-12]), lo, hi, 4)[2] == CUTS_TOO_MANY
    P, n, code = cut_vertices(G, np.array([1.0 / np.sqrt(3.0)]), np.array([1e-12]), lo, hi, 100)
    assert code == CUTS_OK
    assert sorted(map(tuple, P[:n].round(12))) == [(0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0)]


def _release(k, d, n, h, seed):
    """A k-class release: pair rows ``w_j - w_i`` with the intervals per-class scores
    ``z_i +- h`` imply (many degenerate vertices: a class at its bound makes all its pairs
    active at once)."""
    rng = np.random.default_rng(seed)
    Wp = rng.standard_normal((k, d))
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    A = np.array([Wp[j] - Wp[i] for i, j in pairs])
    X = rng.random((n, d))
    Z = X @ Wp.T
    L = np.stack([(Z[:, j] - h) - (Z[:, i] + h) for i, j in pairs], axis=1)
    U = np.stack([(Z[:, j] + h) - (Z[:, i] - h) for i, j in pairs], axis=1)
    return A, L, U, X


@pytest.mark.parametrize("k, d, h", [(4, 3, 0.05), (5, 4, 0.01), (6, 5, 0.02), (7, 5, 0.01),
                                     pytest.param(8, 6, 0.005, marks=pytest.mark.slow)])   # 20 s a row lifted
def test_exact_by_cuts_agrees_with_the_lifted_enumeration(k, d, h, monkeypatch):
    """exact on k-class releases: the cuts route (chosen by cost) against the lifted basis
    enumeration (forced), row by row: the same statuses, radii within 1e-9 (both certify the
    same vertex set), and every planted record inside its ball."""
    A, L, U, X = _release(k, d, 6, h, seed=k)
    sl = cc.BoxSlice(A)
    cuts = sl.centers(method="exact", lower=L, upper=U)
    monkeypatch.setattr(lifting, "_CUTS_MAX_D", 0)
    lifted = cc.BoxSlice(A).centers(method="exact", lower=L, upper=U)
    assert np.all(cuts.status_codes == Status.OPTIMAL) and np.all(lifted.status_codes == Status.OPTIMAL)
    if k * (k - 1) // 2 + d > 31:      # past the edge walk's reach: the cost decides
        assert set(cuts.extras["route"]) == {lifting.ROUTE_CUTS}
    assert np.allclose(cuts.radii, lifted.radii, rtol=0, atol=1e-9)
    assert np.all(np.linalg.norm(X - cuts.centers, axis=1) <= cuts.radii + 1e-9)


def test_a_slab_is_its_corners_between_and_the_edges_crossing_its_faces():
    """slab_vertices against exact rational vertices on dyadic slabs (d = 2..6, one row,
    some rows at a corner's value, one-sided and empty ones), as sets."""
    rng = np.random.default_rng(11)
    for trial in range(60):
        d = 2 + trial % 5
        a = rng.integers(-8, 9, size=d) / 8.0
        if not a.any():
            a[0] = 1.0
        lo = np.zeros(d)
        hi = rng.integers(4, 17, size=d) / 8.0
        corners = np.array([[hi[i] if (c >> i) & 1 else lo[i] for i in range(d)] for c in range(1 << d)])
        vals = corners @ a
        kind = trial % 4
        if kind == 0:    # a generic slab
            x = np.floor(rng.random(d) * hi * 64) / 64
            L, U = a @ x - rng.integers(0, 17) / 64, a @ x + rng.integers(0, 17) / 64
        elif kind == 1:  # faces through corners
            L, U = np.sort(rng.choice(vals, 2))
        elif kind == 2:  # one-sided
            L, U = rng.choice(vals) - 1 / 64, np.inf
        else:            # empty
            L, U = vals.max() + 0.25, vals.max() + 0.5
        V = exact_interval_vertices(a[None, :], [L], [U], lo, hi).astype(float)
        P, n = slab_vertices(a, lo, hi, L, U, 1e-12)
        got = distinct_rows_exact(P[:n])
        if len(V) == 0:
            assert n == 0, trial
            continue
        assert _hausdorff(got, V) <= 1e-12, trial
        assert len(got) == len(V), (trial, len(got), len(V))


def distinct_rows_exact(P):
    """The distinct rows of P up to 1e-12 (a crossing at a corner's value repeats it)."""
    keep = []
    for p in P:
        if not any(np.max(np.abs(p - q)) <= 1e-12 for q in keep):
            keep.append(p)
    return np.array(keep).reshape(-1, P.shape[1])


@pytest.mark.parametrize("seed", range(6))
def test_the_working_set_ball_is_the_minimum_ball(seed):
    """working_set_ball against the SOCP on clouds of box corners and slab crossings (the
    points the slab route gives it: many on one sphere), and on Gaussian clouds: the same
    radius to 1e-8 relative, the radius over every point, the lower bound below it."""
    rng = np.random.default_rng(seed)
    d = 4 + seed % 4
    if seed % 2:
        a = rng.standard_normal(d)
        x = rng.random(d)
        P, n = slab_vertices(a, np.zeros(d), np.ones(d), a @ x - 0.3, a @ x + 0.3, 1e-12)
        P = P[:n]
    else:
        P = rng.standard_normal((400, d))
    c, r, low, sup, status = working_set_ball(P)
    ref = meb_socp(P)[1]
    assert status == 0
    assert abs(r - ref) <= 1e-8 * (1 + ref)
    assert r >= np.max(np.linalg.norm(P - c, axis=1)) - 1e-15
    assert low <= r


@pytest.mark.parametrize("n", [2_000, 12_000])
def test_walked_or_working_set_ball_on_clustered_points_either_side_of_the_switch(n):
    """Clusters of vertices 1e-7 wide (a thin set's: each vertex of a slice split by float32
    intervals), below and above WORKING_SET_FIRST (the walk first, or the working set
    first): the SOCP's radius of the cluster centres, within the clusters' spread, a radius
    over every point, a lower bound below it, certified at the default 1e-9 gap."""
    from chebcenter.kernels.ball import WORKING_SET_FIRST, walked_or_working_set_ball

    assert 2_000 < WORKING_SET_FIRST <= 12_000
    rng = np.random.default_rng(n)
    centres = rng.standard_normal((150, 8))
    P = centres[rng.integers(0, 150, size=n)] + 1e-7 * rng.uniform(-1, 1, size=(n, 8))
    c, r, low, sup, status = walked_or_working_set_ball(P, start=P.mean(axis=0))
    ref = meb_socp(centres)[1]
    assert status == 0 and r - low <= 1e-9 * (1 + r)
    assert abs(r - ref) <= 1e-7 * np.sqrt(8) + 1e-8 * (1 + ref)
    assert r >= np.max(np.linalg.norm(P - c, axis=1)) - 1e-15


def test_the_candidate_budget_bounds_the_cuts_too():
    """max_candidates caps the cuts' estimated work as it caps the enumeration's (230 ns a
    candidate): a release over 8 classes is TOO_LARGE at a budget of 100 candidates (the cuts estimate 13 ns x 56 cuts x 4^6, 3 ms), and
    auto then answers it with rcc1."""
    A, L, U, _ = _release(8, 6, 2, 0.005, seed=8)
    sl = cc.BoxSlice(A)
    assert np.all(sl.centers(method="exact", lower=L, upper=U, max_candidates=100).status_codes == Status.TOO_LARGE)
    res = sl.centers(method="auto", lower=L, upper=U, max_candidates=100)
    assert list(res.extras["method"]) == ["rcc1", "rcc1"]
    assert np.all(res.status_codes <= Status.INACCURATE)
