"""A 10^6-row batch with 1 % corrupted rows (NaN, inconsistent, empty) beside the clean
batch: time (pytest-benchmark) and peak memory of the call (tracemalloc, in extra_info).

Target of the reliability work: the corrupted batch costs at most 2x the clean one (the
empty rows are proven empty by the compiled dual projection, not by an LP per row).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import chebcenter as cc

N, M, D = 1_000_000, 3, 10


def _batch(corrupt: bool):
    rng = np.random.default_rng(0)
    A = np.vstack([rng.standard_normal((M - 1, D)), rng.standard_normal((1, D))])
    A = np.vstack([A, A[:1]])  # a repeated row: m = 4 > rank = 3, so inconsistency is possible
    X = rng.random((N, D))
    B = X @ A.T
    if corrupt:
        k = N // 300  # 3 kinds x 1/300 = 1 %
        idx = rng.permutation(N)[: 3 * k]
        B[idx[:k], 0] = np.nan                    # corrupted log entries
        B[idx[k:2 * k], -1] += 0.5               # inconsistent: the repeated row disagrees
        B[idx[2 * k:]] += 40.0 * np.abs(A).sum(axis=1)  # consistent-looking but far outside the box
    return A, B


@pytest.mark.parametrize("corrupt", [False, True], ids=["clean", "1pct-corrupted"])
@pytest.mark.parametrize("method", ["half_star", "rcc2"])
def test_corrupted_batch(benchmark, method, corrupt):
    A, B = _batch(corrupt)
    P = cc.BoxSlice(A)
    P.centers(B[:1000], method)  # compile
    tracemalloc.start()
    res = P.centers(B, method)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    benchmark.extra_info.update(peak_mb=peak / 2**20, counts=res.counts())
    benchmark.pedantic(P.centers, args=(B, method), rounds=3, iterations=1)
