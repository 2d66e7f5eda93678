"""rcc2 (numba dual Newton) and cls (compiled BVLS port) vs scipy lsq_linear (bvls) row by row
and a fresh cvxpy QP per row."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from conftest import planted, quiet
from scipy.optimize import lsq_linear

import chebcenter as cc


def cvxpy_fresh(A, B):
    out = []
    for b in B:
        x = cp.Variable(A.shape[1])
        cp.Problem(cp.Minimize(cp.sum_squares(x - 0.5)), [A @ x == b, x >= 0, x <= 1]).solve(solver="CLARABEL")
        out.append(x.value)
    return np.array(out)


def bvls_loop(A, B):
    return np.array([lsq_linear(A, b, bounds=(0, 1), method="bvls").x for b in B])


@pytest.mark.parametrize("d,m", [(8, 1), (16, 5), (32, 9), (50, 1), (50, 3), (50, 9), (128, 9)])
@pytest.mark.parametrize("route", ["chebcenter_rcc2", "chebcenter_cls", "scipy_bvls", "cvxpy_fresh_qp"])
def test_projection(benchmark, d, m, route):
    n = {"chebcenter_rcc2": 2000, "chebcenter_cls": 2000, "scipy_bvls": 200, "cvxpy_fresh_qp": 20}[route]
    A, X, B = planted(d, m, n)
    P = cc.BoxSlice(A)
    fn = {
        "chebcenter_rcc2": lambda: P.centers(B, "rcc2").centers,
        "chebcenter_cls": lambda: P.centers(B, "cls").centers,
        "scipy_bvls": lambda: bvls_loop(A, B),
        "cvxpy_fresh_qp": lambda: quiet(lambda: cvxpy_fresh(A, B)),
    }[route]
    C = benchmark.pedantic(fn, rounds=3, iterations=1, warmup_rounds=1)
    info = {"per_row": benchmark.stats.stats.mean / n, "n": n}
    if route == "chebcenter_rcc2":
        ref = quiet(lambda: cvxpy_fresh(A, B[:5]))
        info["max_dev_vs_cvxpy"] = float(np.max(np.abs(C[:5] - ref)))
    if route == "chebcenter_cls":
        # the definition: SciPy's BVLS on the normalised problem (solver="scipy"); a raw
        # lsq_linear(A, b) starts elsewhere and may stop at another point of S_F
        ref = P.centers(B[:50], "cls", solver="scipy").centers
        info["max_dev_vs_scipy"] = float(np.max(np.abs(C[:50] - ref)))
    info["max_residual"] = float(np.max(np.abs(C @ A.T - B)))
    benchmark.extra_info.update(info)
