"""Feature ranges: 10^4 rows at d = 10 (rank 1..9) vs HiGHS called per LP (2 d LPs per row).

The compiled routes run on one numba thread (per core, like the single-threaded HiGHS loop)
and on two (beside it). HiGHS runs on 20 rows; its per-row time is the figure compared."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from conftest import planted

import chebcenter as cc
from chebcenter.bench.cases import highs_ranges


def highs_rows(A, B):
    return highs_ranges(A, B)


@pytest.mark.parametrize("rank", [1, 2, 3, 5, 9])
@pytest.mark.parametrize("route", ["chebcenter@1", "chebcenter@2", "highs_per_lp"])
def test_feature_ranges(benchmark, rank, route):
    route, _, threads = route.partition("@")
    n = 10_000 if route == "chebcenter" else 20
    A, X, B = planted(10, rank, n)
    P = cc.BoxSlice(A)
    before = numba.get_num_threads()
    numba.set_num_threads(min(int(threads or 1), numba.config.NUMBA_NUM_THREADS))
    try:
        if route == "chebcenter":
            P.feature_ranges(B[:10])
            res = benchmark.pedantic(lambda: P.feature_ranges(B), rounds=3, iterations=1)
            ref = highs_rows(A, B[:5])
            dev = max(np.max(np.abs(res.lower[:5] - ref[:, 0])), np.max(np.abs(res.upper[:5] - ref[:, 1])))
            benchmark.extra_info.update(max_dev_vs_highs=float(dev), counts=res.counts())
        else:
            benchmark.pedantic(lambda: highs_rows(A, B), rounds=1, iterations=1)
    finally:
        numba.set_num_threads(before)
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean / n, n=n, threads=int(threads or 1))
