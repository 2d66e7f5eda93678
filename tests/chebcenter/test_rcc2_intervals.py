"""rcc2 on bounded-error sets without equation rows (chebcenter.kernels.rcc2_intervals): the
dual coordinate ascent with Newton steps, whose radius is certified at any dual point.

Independent routes:

* the vertices of S by brute force in x (tests/chebcenter/interval_reference.py): the radius
  bounds every vertex, at the converged point and at a dual point stopped after 0, 1 or 2
  sweeps (the certificate does not depend on convergence);
* the projection of the box center onto S as a cvxpy QP (interval_reference.rcc2_qp): an
  OPTIMAL row's center is that projection, and its radius is RCC2's sqrt(H - ||c||^2).

Tolerances: the brute-force vertices are LU solves of bases of unit rows, 1e-9 (their own
feasibility tolerance); the QP's solution is accurate to about 1e-7 of the box (Clarabel's
default tolerances 1e-8, on a problem of unit scale), so the centers are compared to 1e-6
and the radii to 1e-6 of the box.
"""

from __future__ import annotations

import numpy as np
import pytest
from interval_reference import brute_vertices, rcc2_qp

import chebcenter as cc
from chebcenter import Status
from chebcenter.kernels.rcc2_intervals import RCC2_OPTIMAL, rcc2_interval_rows


def _instance(seed, d, m, n, width):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    w = rng.uniform(0.3, 1.5, d)
    X = rng.uniform(-1, 1, (n, d)) * w
    B = X @ A.T
    reach = np.abs(A) @ w
    W = width * reach * rng.uniform(0.2, 1.0, (n, m))
    return A, w, B - W, B + W


@pytest.mark.parametrize("sweeps", [0, 1, 2, 200])
@pytest.mark.parametrize("d, m", [(3, 1), (4, 2), (5, 3)])
def test_the_radius_bounds_every_vertex_at_any_dual_point(d, m, sweeps):
    A, w, L, U = _instance(10 * d + m, d, m, 6, 0.1)
    n = L.shape[0]
    X, R, st = np.full((n, d), np.nan), np.full(n, np.nan), np.ones(n, dtype=np.int64)
    rcc2_interval_rows(A, w, L, U, np.full((n, m), 1e-12), sweeps, 1e-12, X, R, st)
    for r in range(n):
        V = brute_vertices(A, L[r], U[r], -w, w)
        assert len(V) > 0
        far = np.max(np.linalg.norm(V - X[r], axis=1))
        assert R[r] >= far - 1e-9, (r, R[r], far, sweeps)
    if sweeps == 200:
        assert np.all(st == RCC2_OPTIMAL)


@pytest.mark.parametrize("d, m", [(4, 1), (6, 3), (8, 5)])
def test_an_optimal_row_is_the_projection_and_rcc2s_radius(d, m):
    A, w, L, U = _instance(7 * d + m, d, m, 5, 0.05)
    n = L.shape[0]
    X, R, st = np.full((n, d), np.nan), np.full(n, np.nan), np.ones(n, dtype=np.int64)
    rcc2_interval_rows(A, w, L, U, np.full((n, m), 1e-12), 200, 1e-12, X, R, st)
    H = float(w @ w)
    for r in range(n):
        assert st[r] == RCC2_OPTIMAL
        c_ref = rcc2_qp(A, L[r], U[r], -w, w)
        np.testing.assert_allclose(X[r], c_ref, atol=1e-6)
        assert R[r] == pytest.approx(np.sqrt(H - X[r] @ X[r]), abs=1e-6)


def test_the_dual_route_and_the_qp_route_agree_through_the_api(monkeypatch):
    """The public rcc2 on a batch of interval rows, with the dual route and with every row
    sent to the lifted QP instead: the same statuses, centers within 1e-9 of the box, radii
    within 1e-9 (both converge to 1e-12; the dual's radius is certified, the QP's is the
    closed form at its point)."""
    from chebcenter.methods import relax

    rng = np.random.default_rng(4)
    d, m, n = 8, 3, 200
    A = rng.standard_normal((m, d))
    X0 = rng.random((n, d))
    B = X0 @ A.T
    fast = cc.BoxSlice(A).centers(method="rcc2", lower=B - 0.05, upper=B + 0.05)

    def uncertified(A, w, L, U, tol, sweeps, gap, X, R, status):
        status[:] = 1

    monkeypatch.setattr(relax, "rcc2_interval_rows", uncertified)
    slow = cc.BoxSlice(A).centers(method="rcc2", lower=B - 0.05, upper=B + 0.05)
    assert np.all(fast.status_codes == Status.OPTIMAL) and np.all(slow.status_codes == Status.OPTIMAL)
    np.testing.assert_allclose(fast.centers, slow.centers, atol=1e-9)
    np.testing.assert_allclose(fast.radii, slow.radii, atol=1e-9)
    assert np.all(np.linalg.norm(X0 - fast.centers, axis=1) <= fast.radii * (1 + 1e-12))
