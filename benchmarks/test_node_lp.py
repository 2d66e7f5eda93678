"""Branch-and-bound node LPs: the compiled bounded-variable simplex vs HiGHS per node (single
thread both), and the whole branch and bound at rank 3."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

import chebcenter as cc
import chebcenter.methods.exact_bnb as bnb


def _node(r, d, seed=0):
    rng = np.random.default_rng(seed)
    V = np.linalg.qr(rng.standard_normal((d, r)))[0].T.copy()
    beta = V @ rng.uniform(-1, 1, d)
    return V, beta, rng.standard_normal(d), -np.ones(d), np.ones(d)


@pytest.mark.parametrize("r,d", [(2, 14), (3, 16), (5, 20)])
@pytest.mark.parametrize("route", ["compiled", "highs"])
def test_node_lp(benchmark, r, d, route):
    V, beta, g, lo, hi = _node(r, d)
    if route == "compiled":
        bnb._node_lp(V, beta, g, lo, hi)
        benchmark(bnb._node_lp, V, beta, g, lo, hi)
    else:
        benchmark(lambda: linprog(-g, A_eq=V, b_eq=beta, bounds=np.column_stack([lo, hi]), method="highs"))
    benchmark.extra_info.update(per_node=benchmark.stats.stats.mean)


@pytest.mark.parametrize("d", [14, 16, 20])
def test_bnb_rank3(benchmark, d):
    rng = np.random.default_rng(d)
    A = rng.standard_normal((3, d))
    b = A @ rng.random(d)
    P = cc.BoxSlice(A)
    res = benchmark.pedantic(lambda: P.center(b, "exact", algorithm="bnb", gap_tol=1e-6), rounds=1, iterations=1)
    benchmark.extra_info.update(status=res.status.name, gap=float(res.radius - res.extras["radius_lower"]))
