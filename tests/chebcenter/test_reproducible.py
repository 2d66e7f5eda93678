"""What is reproducible, and how exactly (docs/theory.md §6, "What is reproducible").

Bit-identity is promised only where the same compiled kernel runs on the same bytes: a row
solved alone, in any block of a batch, or on any worker of a homogeneous cluster gives the
same bits for the closed forms, rcc2 and project, because every per-row quantity is formed
by kernels that read that row only (no BLAS product over the batch, whose kernel, and so
whose order of summation, depends on the batch's shape). This module checks it in one
process over random blockings, which is where it failed on an AVX2 machine (rcc2 and
project differed by 3e-16 in one row of 600 between a block of 97 and the whole batch).
"""

from __future__ import annotations

import numpy as np
import pytest

import chebcenter as cc

BLOCK_INVARIANT = ("half", "ls", "half_star", "rcc2", "cls", "project")


def _batch(seed, N=600, d=8, m=2):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    X = rng.random((N, d))
    X[::5, :3] = np.round(X[::5, :3])      # corner-touching slices: many rows go to the projection
    B = X @ A.T
    B[7] = np.nan
    B[11] = 40.0 * (-1.0) ** np.arange(m)
    return A, B


def _blocks(rng, N):
    cuts = np.sort(rng.choice(np.arange(1, N), size=rng.integers(1, 12), replace=False))
    return np.split(np.arange(N), cuts)


@pytest.mark.parametrize("method", BLOCK_INVARIANT)
@pytest.mark.parametrize("seed", [0, 1])
def test_a_row_gets_the_same_bits_in_any_block(method, seed):
    A, B = _batch(seed)
    P = cc.BoxSlice(A)
    ref = P.centers(B, method)
    rng = np.random.default_rng(100 + seed)
    for _ in range(3):
        blocks = _blocks(rng, B.shape[0])
        parts = [P.centers(B[idx], method) for idx in blocks]
        np.testing.assert_array_equal(np.vstack([p.centers for p in parts]), ref.centers)
        np.testing.assert_array_equal(np.concatenate([p.radii for p in parts]), ref.radii)
        np.testing.assert_array_equal(np.concatenate([p.status_codes for p in parts]), ref.status_codes)
    one = P.center(B[3], method)                             # and alone
    np.testing.assert_array_equal(one.center, ref.centers[3])


def test_rank_deficient_rows_projected_onto_col_a_get_the_same_bits_in_any_block():
    """on_inconsistent="project" replaces b by its projection onto Col(A) row by row."""
    rng = np.random.default_rng(5)
    A = rng.standard_normal((2, 6))
    A = np.vstack([A, A[0] + A[1]])                         # rank 2, three rows
    B = rng.random((300, 6)) @ A.T + 1e-3 * rng.standard_normal((300, 3))   # inconsistent rows
    P = cc.BoxSlice(A)
    ref = P.centers(B, "half_star", on_inconsistent="project")
    parts = [P.centers(B[idx], "half_star", on_inconsistent="project") for idx in _blocks(rng, 300)]
    np.testing.assert_array_equal(np.vstack([p.centers for p in parts]), ref.centers)


def test_row_products_match_blas_to_rounding_and_ignore_the_batch():
    """The kernel behind it: ``rows_times(X, M) = X @ M.T`` to the rounding of a dot product
    (|error| <= k eps sum |x_i m_i|, Higham's bound for recursive summation), and a row's
    bits do not depend on the rows around it."""
    from chebcenter.kernels.linalg import rows_times

    rng = np.random.default_rng(0)
    X, M = rng.standard_normal((257, 13)), rng.standard_normal((5, 13))
    got = rows_times(X, M)
    bound = 13 * np.finfo(float).eps * (np.abs(X) @ np.abs(M).T)
    assert np.all(np.abs(got - X @ M.T) <= bound)
    np.testing.assert_array_equal(rows_times(X[100:101], M)[0], got[100])
    assert rows_times(np.zeros((0, 13)), M).shape == (0, 5)
    assert rows_times(X, np.zeros((0, 13))).shape == (257, 0)
