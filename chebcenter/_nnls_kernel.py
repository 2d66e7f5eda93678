"""Compiled non-negative least squares for the RCC1 alpha = 1 certificate.

Private module. SPEC §1: alpha = 1 is RCC1-optimal iff some ``delta >= 0`` solves
``(P o P) delta = s`` with ``s_i = (h_i - lo_i)(hi_i - h_i)``. The matrix ``P o P`` is the
same for every row of a batch, so its Gram matrix is formed once and each row runs the
Lawson-Hanson active-set method on the normal equations of its passive set (Cholesky).
Whatever the path, the caller only accepts a row whose residual ``||(P o P) delta - s||``,
recomputed here from delta, is at most ``tol ||s||``: a failed or inaccurate solve can only
send a row to the barrier solver, never certify a wrong alpha.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from ._kernels import cholesky_solve

__all__ = ["nnls_rows"]


@jit
def _nnls_one(A, G, b, maxiter, x):
    """Lawson-Hanson for ``min ||A x - b||, x >= 0`` with ``G = A^T A``; writes x, returns
    False when a passive-set system is not numerically positive definite."""
    n = A.shape[1]
    passive = np.zeros(n, dtype=np.bool_)
    x[:] = 0.0
    Atb = A.T @ b
    w = Atb.copy()
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(Atb[i]))
    kkt_tol = 1e-13 * (scale + 1e-300)
    idx = np.empty(n, dtype=np.int64)
    H = np.empty((n, n))
    rhs = np.empty(n)
    z = np.empty(n)
    it = 0
    while it < maxiter:
        j = -1
        wmax = kkt_tol
        for i in range(n):
            if not passive[i] and w[i] > wmax:
                wmax, j = w[i], i
        if j < 0:
            break
        passive[j] = True
        while it < maxiter:
            it += 1
            k = 0
            for i in range(n):
                if passive[i]:
                    idx[k] = i
                    k += 1
            for a in range(k):
                rhs[a] = Atb[idx[a]]
                for c in range(k):
                    H[a, c] = G[idx[a], idx[c]]
            if not cholesky_solve(H, rhs, z, k, 0.0):
                return False
            positive = True
            for a in range(k):
                if z[a] <= 0.0:
                    positive = False
            if positive:
                for a in range(k):
                    x[idx[a]] = z[a]
                break
            step = 1.0
            for a in range(k):
                if z[a] <= 0.0:
                    xa = x[idx[a]]
                    step = min(step, xa / (xa - z[a]))
            for a in range(k):
                i = idx[a]
                x[i] += step * (z[a] - x[i])
                if x[i] <= 1e-15 * (1.0 + abs(z[a])):
                    x[i] = 0.0
                    passive[i] = False
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
