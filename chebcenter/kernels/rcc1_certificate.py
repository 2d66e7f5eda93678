"""The RCC1 certificate: a bound ``eta(alpha)`` on the squared worst-case error of
``x(alpha)`` that holds for any weights ``alpha``, optimal or not, recomputed in floating
point with the hypotheses (``M = W^T D_alpha W >= I``) verified despite rounding
(docs/theory.md §6.3), for box slices (:func:`certify_rows`) and for general quadratic
sets (:func:`certify_quadratics`).

Private module: float64 arrays only, no validation.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import cholesky_in_place
from .rcc1 import _finite_solve

__all__ = ["certified_value", "certify_quadratics", "certify_rows"]


@jit
def _verified_above(M, s):
    """Whether ``lambda_min(M) >= s`` is proved by one floating-point Cholesky factorisation.

    The factorisation is of ``M - (s + tau) I``. If it runs to completion, its computed
    factor satisfies ``L L^T = M - (s + tau) I + E`` with ``|E| <= gamma_{p+1} |L| |L|^T``
    (Demmel's backward error bound for Cholesky, ``gamma_k = k eps / (1 - k eps)``), so
    ``||E||_2 <= gamma_{p+1} ||L||_F^2``; the subtraction on the diagonal adds at most
    ``eps (max m_ii + s + tau)``. As ``L L^T >= 0``, ``lambda_min(M) >= s + tau - ||E||_2``:
    proved when that error is at most ``tau``. ``tau = 2 gamma_{p+1} tr(M) + 4 eps (max m_ii +
    s)`` is chosen ahead of the factorisation (``||L||_F^2 = tr(L L^T)`` is about ``tr(M)``) and
    checked after it. p^3 / 3 flops in place of a symmetric eigensolver, 12x faster at
    p = 47. False means undecided: the caller takes the eigenvalue route."""
    p = M.shape[0]
    if p == 0:
        return True
    eps = 2.220446049250313e-16
    g = (p + 1) * eps / (1.0 - (p + 1) * eps)
    trace = 0.0
    dmax = 0.0
    for i in range(p):
        if not (M[i, i] > 0.0 and math.isfinite(M[i, i])):
            return False
        trace += M[i, i]
        dmax = max(dmax, M[i, i])
    tau = 2.0 * g * trace + 4.0 * eps * (dmax + s)
    L = np.empty((p, p))
    for i in range(p):
        for j in range(i + 1):
            L[i, j] = M[i, j]
        L[i, i] -= s + tau
    if not cholesky_in_place(L, p, 0.0):
        return False
    fro2 = 0.0
    for i in range(p):
        for j in range(i + 1):
            fro2 += L[i, j] * L[i, j]
    bound = g * fro2 * (1.0 + 4.0 * p * eps) + eps * (dmax + s + tau)
    return bound <= tau


@jit
def certified_value(M, v, at, s1, s2, n_terms, y):
    """The EBT certificate from ``M = sum alpha_i Q_i``, ``v = sum alpha_i g_i`` and ``at = alpha^T t``.

    The one implementation behind every RCC1 radius (box slices, polytopes, quadratic
    sets). For ANY ``alpha >= 0`` with ``M >= I``,
    ``max_{x in set} ||x - x(alpha)||^2 <= eta = v^T M^{-1} v - alpha^T t`` with
    ``x(alpha) = -M^{-1} v``. If ``lambda_min(M)`` is within the eigenvalue rounding
    ``margin = 16 (p + 1) eps ||M||_F`` of 1, alpha is scaled by
    ``f = 1 / (lambda_min - margin)`` (M, v and ``at`` scale with it; ``M^{-1} v`` does not),
    so that ``M >= I`` survives the rounding; ``lambda_min(M) >= 1 + margin`` (f = 1) is
    first tried by a verified Cholesky factorisation (:func:`_verified_above`), and the
    eigenvalue is computed only if that cannot decide. ``eta`` then gets an allowance for its own
    rounding, ``16 n_terms eps scale`` with ``scale = (f s1)^2 + f s2``: ``s1 = sum alpha_i
    ||g_i||`` and ``s2 = sum |alpha_i t_i|`` are the terms before cancellation.

    Writes ``y = M^{-1} v`` and returns ``(f, eta + allowance, reliable)``; ``f`` is NaN
    when M is not positive definite. ``reliable``: eta is not negative beyond the
    allowance (impossible for a nonempty set) and cancels at most 1e8-fold.
    """
    eps = 2.220446049250313e-16
    p = M.shape[0]
    fro = 0.0
    for i in range(p):
        for j in range(p):
            fro += M[i, j] * M[i, j]
    margin = 16.0 * (p + 1) * eps * math.sqrt(fro)
    if _verified_above(M, 1.0 + margin):
        f = 1.0   # lambda_min(M) >= 1 + margin, proved by one Cholesky factorisation
    else:
        lam = np.linalg.eigvalsh(M)[0] if p > 0 else 1.0
        if not (lam - margin > 1e-12):
            return np.nan, np.nan, False
        f = 1.0 / (lam - margin) if lam - margin < 1.0 else 1.0
    L = M * f
    vf = v * f
    if not _finite_solve(L, vf, y, p):
        return np.nan, np.nan, False
    eta = vf @ y - f * at
    scale = (f * s1) ** 2 + f * s2
    allowance = 16.0 * n_terms * eps * scale
    return f, eta + allowance, eta >= -allowance - 1e-12 and scale <= 1e8 * (1.0 + abs(eta))


@jit
def certify_rows(W, Q, C, T, Alpha, X, Eta, reliable):
    """:func:`certified_value` for every row of a box slice, in u-space ``x = q + W u``.

    Box row i is the quadratic ``(x_i - lo_i + delta)(x_i - hi_i - delta) <= 0``, so
    ``Q_i = w_i w_i^T`` (w_i the i-th row of W), ``g_i = c_i w_i`` with ``c = q - m``, and
    ``t_i = (q_i - lo_i + delta)(q_i - hi_i - delta)``: ``M = W^T D_alpha W``. The caller
    passes ``C[n] = c`` and ``T[n] = t`` per row, so a row may have its own box (the
    lifted rows of an interval set, :func:`chebcenter.methods.relax.rcc1`, are rows of W too).
    ``delta`` widens the box to cover the rounding in q and W (points of the true S_F lie
    in the widened box on the computed affine set), so eta bounds the true set too. Writes
    back Alpha (clipped at 0, zero on rows of W that are 0, scaled by the certificate's f),
    the centers ``X = q - W M^{-1} v`` and Eta (NaN where M is not positive definite)."""
    d, p = W.shape
    norms = np.empty(d)
    for i in range(d):
        s = 0.0
        for k in range(p):
            s += W[i, k] * W[i, k]
        norms[i] = math.sqrt(s)
    y = np.empty(p)
    for n in range(Q.shape[0]):
        alpha = Alpha[n]
        ok = True
        for i in range(d):
            if not math.isfinite(alpha[i]):
                ok = False
            elif alpha[i] < 0.0 or norms[i] == 0.0:
                # a zero row of W: the constraint is constant on S (inside the box), so
                # its weight only adds -alpha_i t_i >= 0; 0 is the best valid weight
                alpha[i] = 0.0
        reliable[n] = False
        Eta[n] = np.nan
        if not ok:
            continue
        q = Q[n]
        c = C[n]
        t = T[n]
        M = (W.T * alpha) @ W
        v = W.T @ (alpha * c)
        s1 = 0.0
        s2 = 0.0
        for i in range(d):
            s1 += abs(alpha[i] * c[i]) * norms[i]
            s2 += abs(alpha[i] * t[i])
        f, eta, good = certified_value(M, v, alpha @ t, s1, s2, d + p, y)
        if not math.isfinite(f):
            continue
        for i in range(d):
            alpha[i] = alpha[i] * f
        for i in range(d):
            s = q[i]
            for k in range(p):
                s -= W[i, k] * y[k]
            X[n, i] = s
        Eta[n] = eta
        reliable[n] = good


@jit
def certify_quadratics(Qs, G, T, alpha, x):
    """:func:`certified_value` for the set ``{x : x^T Q_i x + 2 g_i^T x + t_i <= 0}``.

    Writes ``x = -M^{-1} v`` and scales ``alpha`` (clipped at 0) in place; returns
    ``(eta, reliable)``, eta NaN when ``M = sum alpha_i Q_i`` is not positive definite."""
    k, n = G.shape
    M = np.zeros((n, n))
    v = np.zeros(n)
    at = 0.0
    s1 = 0.0
    s2 = 0.0
    for i in range(k):
        if not (alpha[i] > 0.0):  # NaN and negative weights become 0
            alpha[i] = 0.0
            continue
        M += alpha[i] * Qs[i]
        g2 = 0.0
        for j in range(n):
            v[j] += alpha[i] * G[i, j]
            g2 += G[i, j] * G[i, j]
        at += alpha[i] * T[i]
        s1 += alpha[i] * math.sqrt(g2)
        s2 += abs(alpha[i] * T[i])
    y = np.empty(n)
    f, eta, good = certified_value(M, v, at, s1, s2, k + n, y)
    if not math.isfinite(f):
        for j in range(n):
            x[j] = np.nan
        return np.nan, False
    for i in range(k):
        alpha[i] = alpha[i] * f
    for j in range(n):
        x[j] = -y[j]
    return eta, good
