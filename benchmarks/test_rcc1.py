"""rcc1: chebcenter (NNLS certificate of alpha=1, else the compiled barrier solver; or the
parametric cvxpy route) vs the baseline a user would write: a fresh cvxpy SDP per b.

Like with like: the cvxpy baselines are single-threaded, so every compiled route runs twice,
with one numba thread (``threads=1``: the per-core figure, the one the ratios are quoted
for) and with two (``threads=2``: this machine's both cores, shown beside it)."""

from __future__ import annotations

import cvxpy as cp
import numba
import numpy as np
import pytest
from conftest import planted, quiet

import chebcenter as cc


def fresh_sdp(A, b, solver):
    d = A.shape[1]
    r = np.linalg.matrix_rank(A)
    W = np.linalg.svd(A)[2][r:].T
    q = np.linalg.pinv(A) @ b
    p = d - r
    alpha, tau = cp.Variable(d, nonneg=True), cp.Variable((1, 1))
    M = W.T @ cp.diag(alpha) @ W
    v = cp.reshape(W.T @ cp.multiply(q - 0.5, alpha), (p, 1), order="F")
    big = cp.bmat([[M, v], [v.T, tau]])
    prob = cp.Problem(cp.Minimize(tau[0, 0] - (q * q - q) @ alpha),
                      [(big + big.T) / 2 >> 0, (M + M.T) / 2 >> np.eye(p)])
    prob.solve(solver=solver)
    a = alpha.value
    Mv = (W.T * a) @ W
    return q - W @ np.linalg.solve(Mv, W.T @ (a * (q - 0.5)))


ROUTES = ["chebcenter@1", "chebcenter@2", "chebcenter_no_fast_path@1", "chebcenter_no_fast_path@2",
          "chebcenter_cvxpy_scs", "cvxpy_fresh_scs", "cvxpy_fresh_clarabel"]


@pytest.mark.parametrize("d,m", [(8, 1), (16, 5), (32, 9), (50, 1), (50, 3), (50, 9), (200, 5)])
@pytest.mark.parametrize("route", ROUTES)
def test_rcc1(benchmark, d, m, route):
    route, _, threads = route.partition("@")
    threads = int(threads or 1)
    if route == "cvxpy_fresh_clarabel" and d >= 32:
        pytest.skip("Clarabel takes 9-15 s per solve at d = 50 on this machine")
    if d == 200 and route.startswith(("cvxpy", "chebcenter_cvxpy")):
        pytest.skip("the cvxpy routes take minutes per problem at d = 200")
    # the compiled routes run a batch (warm starts, both cores), the cvxpy ones a few rows
    n = (4 if d == 200 else 64) if route in ("chebcenter", "chebcenter_no_fast_path") else 3
    A, X, B = planted(d, m, n)
    P = cc.BoxSlice(A)
    fn = {
        "chebcenter": lambda: P.centers(B, "rcc1").centers,
        "chebcenter_no_fast_path": lambda: P.centers(B, "rcc1", fast_path=False).centers,
        "chebcenter_cvxpy_scs": lambda: P.centers(B, "rcc1", fast_path=False, solver="scs").centers,
        "cvxpy_fresh_scs": lambda: np.array([fresh_sdp(A, b, "SCS") for b in B]),
        "cvxpy_fresh_clarabel": lambda: np.array([fresh_sdp(A, b, "CLARABEL") for b in B]),
    }[route]
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        C = benchmark.pedantic(lambda: quiet(fn), rounds=2, iterations=1, warmup_rounds=1)
    finally:
        numba.set_num_threads(before)
    k = min(n, 3)
    ref = P.centers(B[:k], "rcc1", fast_path=False, solver="numba" if d == 200 else "scs").centers
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean / n, n=n, threads=threads,
                                max_dev_vs_sdp=float(np.max(np.abs(C[:k] - ref))))
