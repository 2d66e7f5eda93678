"""half_star / ls batches: numba batch kernel vs the numpy per-row loop a user would write.

Per-row time is in extra_info; the README quotes the ratio of per-row times.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import planted

import chebcenter as cc

GRID = [(d, m) for d in (8, 16, 32, 64, 128) for m in (1, 5, 9)]


def numpy_loop(A, B):
    """The baseline: per row, least squares + projection of 1/2 onto Null(A)."""
    pinv = np.linalg.pinv(A)
    proj_half = 0.5 * np.ones(A.shape[1]) - pinv @ (A @ (0.5 * np.ones(A.shape[1])))
    return np.array([pinv @ b + proj_half for b in B])


@pytest.mark.parametrize("d,m", GRID)
@pytest.mark.parametrize("n", [1, 10_000, 1_000_000])
def test_half_star_chebcenter(benchmark, d, m, n):
    if n == 1_000_000 and d > 32:
        pytest.skip("N = 1e6 rows only for d <= 32 (the output alone is 8 N d bytes)")
    A, X, B = planted(d, m, n)
    P = cc.BoxSlice(A)
    res = benchmark.pedantic(P.centers, args=(B, "half_star"), rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean / n, n=n,
                                max_dev_vs_numpy=float(np.max(np.abs(res.centers[:100] - numpy_loop(A, B[:100])))))


@pytest.mark.parametrize("d,m", GRID)
def test_ls_chebcenter(benchmark, d, m):
    n = 10_000
    A, X, B = planted(d, m, n)
    P = cc.BoxSlice(A)
    res = benchmark.pedantic(P.centers, args=(B, "ls"), rounds=3, iterations=1, warmup_rounds=1)
    ref = B[:100] @ np.linalg.pinv(A).T
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean / n, n=n,
                                max_dev_vs_numpy=float(np.max(np.abs(res.centers[:100] - ref))))


@pytest.mark.parametrize("d,m", GRID)
def test_half_star_numpy_loop(benchmark, d, m):
    n = 10_000
    A, X, B = planted(d, m, n)
    benchmark.pedantic(numpy_loop, args=(A, B), rounds=3, iterations=1)
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean / n, n=n)


@pytest.mark.parametrize("d,m", [(16, 5), (64, 9)])
def test_half_star_numpy_vectorised(benchmark, d, m):
    """The best plain-numpy route (one BLAS matmul) for reference."""
    n = 10_000
    A, X, B = planted(d, m, n)
    pinv = np.linalg.pinv(A)
    shift = 0.5 - pinv @ (A @ np.full(d, 0.5))
    benchmark.pedantic(lambda: B @ pinv.T + shift, rounds=5, iterations=1)
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean / n, n=n)
