"""Small dense linear algebra for the compiled kernels: per-row products in a fixed summation
order, Cholesky factorisation and substitution on a leading block, stable argsorts.

Private: float64 arrays in and out, no validation. ``rows_times`` is the one way a per-row
product ``X @ M.T`` is formed in the library, so that a row's bits do not depend on the
batch around it (docs/theory.md §6.7)."""

from __future__ import annotations

import math

import numpy as np

from .jit import jit

__all__ = [
    "EPS",
    "argsort_into",
    "argsort_stable",
    "cholesky_in_place",
    "cholesky_solve",
    "cholesky_substitute",
    "forward_substitute",
    "numerical_rank",
    "rank_threshold",
    "residual_norm",
    "row_products",
    "rows_times",
]

#: the unit roundoff of float64 times two (machine epsilon): the one constant every module
#: (compiled or not) writes its rounding allowances in
EPS = 2.220446049250313e-16


def rank_threshold(s, shape, rank_tol=None):
    """The singular value at or below which a direction of a matrix of ``shape`` with singular
    values ``s`` (descending) counts as zero: ``rank_tol`` where the caller gave one, else
    NumPy's ``matrix_rank`` rule ``s[0] max(shape) eps`` (0 for an empty ``s``)."""
    if rank_tol is not None:
        return float(rank_tol)
    return float(s[0]) * max(shape) * EPS if len(s) else 0.0


def numerical_rank(s, shape, rank_tol=None):
    """The rank of a matrix of ``shape`` with singular values ``s``: those above
    :func:`rank_threshold`. The one rank rule of the library (the box slice's matrix, a
    lifted group's equations, a polytope's equations, the rows a certificate projects out)."""
    return int(np.sum(np.asarray(s) > rank_threshold(s, shape, rank_tol)))


@jit
def row_products(X, M, out):
    """``out[n] = M @ X[n]`` for every row n, each sum taken in index order.

    A BLAS product ``X @ M.T`` of a batch picks its kernel, and so its order of summation,
    from the batch's shape (OpenBLAS has separate paths for small and edge blocks), so a row
    could round differently alone, in a Dask block or in the whole batch. Here the result of
    a row depends on that row and M only: the same bits in any batch that runs this kernel
    (docs/theory.md, "What is reproducible")."""
    n_rows, k = X.shape
    r = M.shape[0]
    for n in range(n_rows):
        x = X[n]
        for j in range(r):
            s = 0.0
            row = M[j]
            for i in range(k):
                s += row[i] * x[i]
            out[n, j] = s


def rows_times(X, M):
    """``X @ M.T`` row by row through :func:`row_products` (see there): a new (n, r) array."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    M = np.ascontiguousarray(M, dtype=np.float64)
    out = np.empty((X.shape[0], M.shape[0]))
    if X.shape[0] and M.shape[0]:
        row_products(X, M, out)
    elif X.shape[0]:
        out[:] = 0.0
    return out


@jit
def residual_norm(Vr, beta, x):
    """``||beta - Vr x||``."""
    r, d = Vr.shape
    total = 0.0
    for k in range(r):
        s = beta[k]
        for i in range(d):
            s -= Vr[k, i] * x[i]
        total += s * s
    return math.sqrt(total)


@jit
def argsort_stable(key):
    """Indices that sort ``key`` ascending, ties in index order (bottom-up merge sort).

    Written out rather than ``np.argsort``, whose compiled introsort cost 3.5 s of every
    fresh install's first branch-and-bound call; this one compiles in a fraction of that."""
    n = key.size
    idx = np.empty(n, dtype=np.int64)
    argsort_into(key, idx, np.empty(n, dtype=np.int64))
    return idx


@jit
def argsort_into(key, idx, tmp):
    """:func:`argsort_stable` into ``idx`` with the work array ``tmp`` (no allocation)."""
    n = key.size
    for i in range(n):
        idx[i] = i
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if key[idx[j]] < key[idx[i]]:
                    tmp[k] = idx[j]
                    j += 1
                else:
                    tmp[k] = idx[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = idx[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = idx[j]
                j += 1
                k += 1
        for i in range(n):
            idx[i] = tmp[i]
        width *= 2


@jit
def cholesky_in_place(H, n, min_pivot):
    """Lower Cholesky factor of ``H[:n, :n]`` written into its lower triangle; False when
    a squared pivot is ``<= min_pivot`` (not positive definite to working precision) or NaN."""
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= H[j, k] * H[j, k]
        if not s > min_pivot:
            return False
        ljj = math.sqrt(s)
        H[j, j] = ljj
        for i in range(j + 1, n):
            t = H[i, j]
            for k in range(j):
                t -= H[i, k] * H[j, k]
            H[i, j] = t / ljj
    return True


@jit
def cholesky_solve(H, rhs, out, n, min_pivot):
    """Solve ``H[:n, :n] z = rhs[:n]`` (symmetric positive definite) by Cholesky, in place
    on ``H``; returns False when :func:`cholesky_in_place` fails."""
    if not cholesky_in_place(H, n, min_pivot):
        return False
    cholesky_substitute(H, rhs, out, n)
    return True


@jit
def forward_substitute(T, rhs, out, n, upper):
    """Solve ``L z = rhs[:n]`` into ``out`` with L lower triangular: ``L = T[:n, :n]``
    (lower part), or ``L = T[:n, :n]^T`` when ``upper`` (T's upper part, e.g. the R of a QR)."""
    for i in range(n):
        t = rhs[i]
        for k in range(i):
            t -= (T[k, i] if upper else T[i, k]) * out[k]
        out[i] = t / T[i, i]


@jit
def cholesky_substitute(L, rhs, out, n):
    """Solve ``L L^T z = rhs[:n]`` into ``out`` for a lower factor ``L[:n, :n]`` (as left
    by :func:`cholesky_in_place`): forward, then backward substitution."""
    forward_substitute(L, rhs, out, n, np.bool_(False))
    for i in range(n - 1, -1, -1):
        t = out[i]
        for k in range(i + 1, n):
            t -= L[k, i] * out[k]
        out[i] = t / L[i, i]
