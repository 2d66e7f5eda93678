"""Compiled non-negative least squares for the RCC1 alpha = 1 certificate.

Private module. docs/theory.md §1: alpha = 1 is RCC1-optimal iff some ``delta >= 0`` solves
``(P o P) delta = s`` with ``s_i = (h_i - lo_i)(hi_i - h_i)``. The matrix ``P o P`` is the
same for every row of a batch, so its Gram matrix is formed once and each row runs the
Lawson-Hanson active-set method on the normal equations of its passive set (a Cholesky
factor updated as variables enter).
Whatever the path, the caller only accepts a row whose residual ``||(P o P) delta - s||``,
recomputed here from delta, is at most ``tol ||s||``: a failed or inaccurate solve can only
send a row to the barrier solver, never certify a wrong alpha.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from .linalg import cholesky_substitute

__all__ = ["nnls_rows"]


@jit
def _append_column(G, order, k, j, L):
    """Extend the Cholesky factor ``L[:k, :k]`` of ``G[order[:k]][:, order[:k]]`` by column
    j in O(k^2); False when the extended matrix is not positive definite."""
    for a in range(k):
        t = G[order[a], j]
        for c in range(a):
            t -= L[a, c] * L[k, c]
        L[k, a] = t / L[a, a]
    t = G[j, j]
    for c in range(k):
        t -= L[k, c] * L[k, c]
    if t <= 0.0:
        return False
    L[k, k] = math.sqrt(t)
    order[k] = j
    return True


@jit
def _nnls_one(A, G, b, maxiter, x):
    """Lawson-Hanson for ``min ||A x - b||, x >= 0`` with ``G = A^T A``; writes x, returns
    False when a passive-set system is not numerically positive definite. The passive
    set's Cholesky factor grows by one row per added variable (O(k^2)) and is rebuilt only
    when variables leave, so a row costs O(d^3) rather than O(d^4)."""
    n = A.shape[1]
    passive = np.zeros(n, dtype=np.bool_)
    x[:] = 0.0
    Atb = A.T @ b
    w = Atb.copy()
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(Atb[i]))
    kkt_tol = 1e-13 * (scale + 1e-300)
    order = np.empty(n, dtype=np.int64)
    L = np.zeros((n, n))
    y = np.empty(n)
    z = np.empty(n)
    k = np.int64(0)
    it = 0
    while it < maxiter:
        j = np.int64(-1)
        wmax = kkt_tol
        for i in range(n):
            if not passive[i] and w[i] > wmax:
                wmax, j = w[i], i
        if j < 0:
            break
        if not _append_column(G, order, k, j, L):
            return False
        passive[j] = True
        k += 1
        while it < maxiter:
            it += 1
            for a in range(k):
                y[a] = Atb[order[a]]
            cholesky_substitute(L, y, z, k)  # L L^T z = Atb[order]
            positive = True
            for a in range(k):
                if z[a] <= 0.0:
                    positive = False
            if positive:
                for a in range(k):
                    x[order[a]] = z[a]
                break
            step = 1.0
            for a in range(k):
                if z[a] <= 0.0:
                    xa = x[order[a]]
                    step = min(step, xa / (xa - z[a]))
            kept = 0
            for a in range(k):
                i = order[a]
                x[i] += step * (z[a] - x[i])
                if x[i] <= 1e-15 * (1.0 + abs(z[a])):
                    x[i] = 0.0
                    passive[i] = False
                else:
                    order[kept] = i
                    kept += 1
            k = np.int64(0)  # rebuild the factor of the remaining passive set
            survivors = order[:kept].copy()
            for a in range(kept):
                if not _append_column(G, order, k, survivors[a], L):
                    return False
                k += 1
        w = Atb - G @ x
    return True


@jit
def nnls_rows(A, S, tol, maxiter, certified, relres):
    """For every row s of ``S``: NNLS on ``A delta = s``, then ``certified[n]`` when
    ``||A delta - s|| <= tol ||s||`` (``relres[n]``: that ratio; inf on failure)."""
    G = A.T @ A
    x = np.empty(A.shape[1])
    for n in range(S.shape[0]):
        s = S[n]
        norm_s = math.sqrt(s @ s)
        certified[n] = False
        relres[n] = np.inf
        if norm_s == 0.0:
            certified[n] = True
            relres[n] = 0.0
            continue
        if not _nnls_one(A, G, s, maxiter, x):
            continue
        r = A @ x - s
        relres[n] = math.sqrt(r @ r) / norm_s
        certified[n] = relres[n] <= tol
