"""Compiled non-negative least squares for the RCC1 alpha = 1 certificate.

Private module. docs/theory.md §1: alpha = 1 is RCC1-optimal if some ``delta >= 0`` solves
``C delta = s`` with ``s_i = (h_i - lo_i)(hi_i - h_i)``, where each column of C is
``(P g)^2`` for a generator g (``C = P o P`` for the coordinate generators). The matrix is
the same for every row of a batch, so its Gram matrix is formed once and each row runs the
Lawson-Hanson active-set method on the normal equations of its passive set (a Cholesky
factor updated as variables enter), after trying the square passive sets that solved
earlier rows of its chunk.
Whatever the path, the caller only accepts a row whose residual ``||(P o P) delta - s||``,
recomputed here from delta, is at most ``tol ||s||``: a failed or inaccurate solve can only
send a row to the barrier solver, never certify a wrong alpha.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import cholesky_substitute, residual_norm

__all__ = ["CHUNK", "nnls_rows"]


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
def _nnls_one(A, G, b, maxiter, x, passive, order, L, y, z, w, Atb):
    """Lawson-Hanson for ``min ||A x - b||, x >= 0`` with ``G = A^T A``; writes x, returns
    False when a passive-set system is not numerically positive definite. The passive
    set's Cholesky factor grows by one row per added variable (O(k^2)) and is rebuilt only
    when variables leave, so a row costs O(d^3) rather than O(d^4).

    The passive columns are independent, so there are at most ``m`` (A's rows) of them:
    ``L`` is ``min(m, n)`` square, and ``w = A^T (b - A x)`` is updated from the passive
    entries of x only (``n k`` flops, not ``n^2``), which is what makes a wide A (many
    more generators than rows, :func:`nnls_rows`) cheap. The other arguments are buffers
    of length n (``L``: ``min(m, n)`` square)."""
    n = A.shape[1]
    kmax = L.shape[0]
    for i in range(n):
        passive[i] = False
        x[i] = 0.0
        t = 0.0
        for r in range(A.shape[0]):
            t += A[r, i] * b[r]
        Atb[i] = t
        w[i] = t
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(Atb[i]))
    kkt_tol = 1e-13 * (scale + 1e-300)
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
        if k == kmax or not _append_column(G, order, k, j, L):
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
            k = np.int64(0)  # rebuild the factor of the remaining passive set, in place:
            for a in range(kept):  # appending order[a] at position a rewrites the same entry
                if not _append_column(G, order, k, order[a], L):
                    return False
                k += 1
        for i in range(n):  # w = A^T b - G x, x nonzero on the passive set only
            t = Atb[i]
            for a in range(k):
                t -= G[i, order[a]] * x[order[a]]
            w[i] = t
    return True


#: square passive sets remembered per chunk of rows (most recently successful first): on
#: the pair generators of a rank-3 slice at d = 10, one of the last 8 solved a row in 73 %
#: of rows (measured with scipy's NNLS on 1 500 rows); a hit costs two m x m products
CACHE = 8
#: rows per chunk: the memory starts empty at every chunk, and the callers' row blocks are
#: whole chunks, so a row's outcome does not depend on the number of threads
CHUNK = 256


@jit
def _invert(A, basis, m, inv, work):
    """``inv = A[:, basis]^{-1}`` by Gauss-Jordan with partial pivoting; False if a pivot
    is below ``1e-13`` times the column scale (numerically singular)."""
    for r in range(m):
        for c in range(m):
            work[r, c] = A[r, basis[c]]
            inv[r, c] = 1.0 if r == c else 0.0
    for c in range(m):
        piv, best = c, 0.0
        scale = 0.0
        for r in range(m):
            scale = max(scale, abs(work[r, c]))
        for r in range(c, m):
            if abs(work[r, c]) > best:
                best, piv = abs(work[r, c]), r
        if not best > 1e-13 * scale:
            return False
        for k in range(m):
            work[c, k], work[piv, k] = work[piv, k], work[c, k]
            inv[c, k], inv[piv, k] = inv[piv, k], inv[c, k]
        f = 1.0 / work[c, c]
        for k in range(m):
            work[c, k] *= f
            inv[c, k] *= f
        for r in range(m):
            if r != c and work[r, c] != 0.0:
                g = work[r, c]
                for k in range(m):
                    work[r, k] -= g * work[c, k]
                    inv[r, k] -= g * inv[c, k]
    return True


@jit
def nnls_rows(A, S, tol, maxiter, certified, relres, chunk=CHUNK):
    """For every row s of ``S``: a nonnegative ``delta`` with ``||A delta - s|| <= tol ||s||``
    sets ``certified[n]`` (``relres[n]``: that ratio, recomputed from delta; inf on failure).

    delta is first sought on the square passive sets of earlier rows of the same chunk
    (``CACHE`` of them, most recently successful first: ``delta = A[:, set]^{-1} s``,
    accepted if nonnegative and its residual passes), else by NNLS, whose passive set is
    remembered when it is square. Either way the residual is recomputed from delta, so the
    memory only decides how fast a proof is found, never what counts as one. Chunks of
    ``chunk`` rows start with an empty memory; callers cut their row blocks at whole chunks."""
    m, n_cols = A.shape
    G = A.T @ A
    x = np.empty(n_cols)
    passive = np.zeros(n_cols, dtype=np.bool_)
    order = np.empty(n_cols, dtype=np.int64)
    kmax = min(m, n_cols)
    L = np.zeros((kmax, kmax))
    y, z, w, Atb = np.empty(n_cols), np.empty(n_cols), np.empty(n_cols), np.empty(n_cols)
    bases = np.empty((CACHE, m), dtype=np.int64)
    invs = np.empty((CACHE, m, m))
    work = np.empty((m, m))
    slot = np.empty(CACHE, dtype=np.int64)  # slot[0]: the most recently successful basis
    delta = np.empty(m)
    held = 0
    for n in range(S.shape[0]):
        if n % chunk == 0:
            held = 0
        s = S[n]
        norm_s = math.sqrt(s @ s)
        certified[n] = False
        relres[n] = np.inf
        if norm_s == 0.0:
            certified[n] = True
            relres[n] = 0.0
            continue
        hit = -1
        for h in range(held):
            k = slot[h]
            positive = True
            for r in range(m):
                t = 0.0
                for c in range(m):
                    t += invs[k, r, c] * s[c]
                delta[r] = t
                positive = positive and t >= 0.0
            if not positive:
                continue
            for i in range(n_cols):
                x[i] = 0.0
            for r in range(m):
                x[bases[k, r]] = delta[r]
            res = residual_norm(A, s, x) / norm_s
            if res <= tol:
                relres[n] = res
                certified[n] = True
                hit = h
                break
        if hit >= 0:
            k = slot[hit]
            for h in range(hit, 0, -1):
                slot[h] = slot[h - 1]
            slot[0] = k
            continue
        if not _nnls_one(A, G, s, maxiter, x, passive, order, L, y, z, w, Atb):
            continue
        relres[n] = residual_norm(A, s, x) / norm_s
        certified[n] = relres[n] <= tol
        n_pos = 0
        for i in range(n_cols):
            n_pos += x[i] > 0.0
        if certified[n] and n_pos == m:
            k = slot[held - 1] if held == CACHE else held  # a new slot, or the oldest one
            j = 0
            for i in range(n_cols):
                if x[i] > 0.0:
                    bases[k, j] = i
                    j += 1
            if _invert(A, bases[k], m, invs[k], work):
                held = min(held + 1, CACHE)
                for h in range(held - 1, 0, -1):
                    slot[h] = slot[h - 1]
                slot[0] = k
            elif held == CACHE:  # the oldest slot, now overwritten, is dropped
                held -= 1
