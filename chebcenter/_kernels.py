"""Compiled kernels for the closed-form estimators and the projection onto S_F.

Private module: float64 arrays in, float64 arrays out, no validation and no
Python objects. Each docstring states the formula it evaluates. Notation as in
SPEC.md: ``q = A^+ b``, ``h = q + P m`` (half*), ``m = (lo + hi) / 2``,
``Vr`` the r x d matrix with orthonormal rows spanning Row(A), so that
``A x = b  <=>  Vr x = Vr q`` for consistent ``b``.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = [
    "ball_radii",
    "cholesky_in_place",
    "cholesky_solve",
    "check_rows",
    "clip_rows",
    "prepare_rows",
    "project_rows",
]


@jit
def prepare_rows(B, A, A_pinv_T, p_mid, lo, hi, Q, H, residual, violation):
    """Per row n: ``q = A^+ b_n``, ``h = q + P m``, ``res = ||A q - b_n||``,
    ``viol = max_i max(lo_i - h_i, h_i - hi_i, 0)``.

    ``A_pinv_T`` is ``(A^+)^T`` (m x d) so the inner loops are axpys over
    contiguous rows (they vectorise without re-associating sums).
    Writes ``Q[n] = q``, ``H[n] = h``, ``residual[n]``, ``violation[n]``.
    """
    n_rows, m = B.shape
    d = A.shape[1]
    for n in range(n_rows):
        q = Q[n]
        for i in range(d):
            q[i] = 0.0
        for k in range(m):
            bk = B[n, k]
            row = A_pinv_T[k]
            for i in range(d):
                q[i] += row[i] * bk
        res = 0.0
        for k in range(m):
            s = -B[n, k]
            row = A[k]
            for i in range(d):
                s += row[i] * q[i]
            res += s * s
        residual[n] = math.sqrt(res)
        worst = 0.0
        for i in range(d):
            h = q[i] + p_mid[i]
            H[n, i] = h
            if lo[i] - h > worst:
                worst = lo[i] - h
            if h - hi[i] > worst:
                worst = h - hi[i]
        violation[n] = worst


@jit
def check_rows(C, A, B, lo, hi, residual, violation):
    """Per row n: ``residual[n] = ||A c_n - b_n||``, ``violation[n] = max_i max(lo_i - c_i,
    c_i - hi_i, 0)``; rows with a NaN center are left untouched."""
    n_rows, d = C.shape
    m = A.shape[0]
    for n in range(n_rows):
        if math.isnan(C[n, 0]):
            continue
        res = 0.0
        for k in range(m):
            s = -B[n, k]
            for i in range(d):
                s += A[k, i] * C[n, i]
            res += s * s
        residual[n] = math.sqrt(res)
        worst = 0.0
        for i in range(d):
            v = C[n, i]
            if lo[i] - v > worst:
                worst = lo[i] - v
            if v - hi[i] > worst:
                worst = v - hi[i]
        violation[n] = worst


@jit
def ball_radii(H, mid, half_diag_sq, out):
    """``R_n = sqrt(max(0, sum_i ((hi_i - lo_i)/2)^2 - ||h_n - m||^2))`` (SPEC §2.4)."""
    n_rows, d = H.shape
    for n in range(n_rows):
        s = 0.0
        for i in range(d):
            t = H[n, i] - mid[i]
            s += t * t
        out[n] = math.sqrt(max(0.0, half_diag_sq - s))


@jit
def clip_rows(X, lo, hi, out):
    """``out = min(max(X, lo), hi)`` row-wise; returns the largest amount clipped."""
    n_rows, d = X.shape
    worst = 0.0
    for n in range(n_rows):
        for i in range(d):
            v = X[n, i]
            if v < lo[i]:
                worst = max(worst, lo[i] - v)
                v = lo[i]
            elif v > hi[i]:
                worst = max(worst, v - hi[i])
                v = hi[i]
            out[n, i] = v
    return worst


@jit
def _dual_value(c, Vr, beta, lo, hi, lam, y, x):
    """``g(lam) = 1/2 ||x - c||^2 - lam^T (Vr x - beta)``, ``x = clip(c + Vr^T lam)``."""
    r, d = Vr.shape
    for i in range(d):
        s = c[i]
        for k in range(r):
            s += Vr[k, i] * lam[k]
        y[i] = s
        x[i] = min(max(s, lo[i]), hi[i])
    g = 0.0
    for i in range(d):
        t = x[i] - c[i]
        g += 0.5 * t * t
    for k in range(r):
        s = -beta[k]
        for i in range(d):
            s += Vr[k, i] * x[i]
        g -= lam[k] * s
    return g


@jit
def cholesky_in_place(H, n, min_pivot):
    """Lower Cholesky factor of ``H[:n, :n]`` written into its lower triangle; False when
    a squared pivot is ``<= min_pivot`` (not positive definite to working precision)."""
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= H[j, k] * H[j, k]
        if s <= min_pivot:
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
def cholesky_substitute(L, rhs, out, n):
    """Solve ``L L^T z = rhs[:n]`` into ``out`` for a lower factor ``L[:n, :n]`` (as left
    by :func:`cholesky_in_place`): forward, then backward substitution."""
    for i in range(n):
        t = rhs[i]
        for k in range(i):
            t -= L[i, k] * out[k]
        out[i] = t / L[i, i]
    for i in range(n - 1, -1, -1):
        t = out[i]
        for k in range(i + 1, n):
            t -= L[k, i] * out[k]
        out[i] = t / L[i, i]


@jit
def _grad_norm(Vr, beta, x):
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
def project_one(c, Vr, beta, lo, hi, x, maxit, tol):
    """Euclidean projection of ``c`` onto ``{x : Vr x = beta, lo <= x <= hi}``.

    Dual semismooth Newton: maximise the concave dual
    ``g(lam) = min_{lo<=x<=hi} 1/2||x - c||^2 - lam^T (Vr x - beta)``, whose
    minimiser is ``x(lam) = clip(c + Vr^T lam, lo, hi)`` and gradient
    ``beta - Vr x(lam)``. The Newton matrix is ``Vr_F Vr_F^T + mu I`` over the
    free coordinates F; Armijo backtracking, and a gradient step of length 1
    (``Vr`` has orthonormal rows, so ``grad g`` is 1-Lipschitz) if it fails.
    Returns ``(converged, iterations)``; on convergence ``x`` is the
    projection and ``||Vr x - beta|| <= tol`` (x lies in the box exactly).
    An empty set makes the dual unbounded, so the method does not converge.
    """
    r, d = Vr.shape
    lam = np.zeros(r)
    lam_new = np.zeros(r)
    grad = np.zeros(r)
    step_dir = np.zeros(r)
    y = np.empty(d)
    H = np.empty((r, r))
    for it in range(maxit):
        g0 = _dual_value(c, Vr, beta, lo, hi, lam, y, x)
        gnorm2 = 0.0
        for k in range(r):
            s = beta[k]
            for i in range(d):
                s -= Vr[k, i] * x[i]
            grad[k] = s
            gnorm2 += s * s
        gnorm = math.sqrt(gnorm2)
        if gnorm <= tol:
            return True, it
        mu = min(1e-2, gnorm) + 1e-14
        for a in range(r):
            for b in range(a + 1):
                s = 0.0
                for i in range(d):
                    if lo[i] < y[i] < hi[i]:
                        s += Vr[a, i] * Vr[b, i]
                H[a, b] = s
                H[b, a] = s
            H[a, a] += mu
        ok = cholesky_solve(H, grad, step_dir, r, 0.0)
        slope = 0.0
        for k in range(r):
            slope += grad[k] * step_dir[k]
        accepted = False
        if ok and slope > 0.0:
            t = 1.0
            for _ in range(40):
                for k in range(r):
                    lam_new[k] = lam[k] + t * step_dir[k]
                g1 = _dual_value(c, Vr, beta, lo, hi, lam_new, y, x)
                if g1 >= g0 + 1e-4 * t * slope:
                    accepted = True
                    break
                # near the solution dual values differ below rounding: accept a step
                # that shrinks the gradient instead (non-monotone safeguard)
                if _grad_norm(Vr, beta, x) <= 0.9 * gnorm:
                    accepted = True
                    break
                t *= 0.5
        if not accepted:
            for k in range(r):
                lam_new[k] = lam[k] + grad[k]
        for k in range(r):
            lam[k] = lam_new[k]
    _dual_value(c, Vr, beta, lo, hi, lam, y, x)
    return _grad_norm(Vr, beta, x) <= tol, maxit


@jit
def project_rows(c, Vr, Beta, lo, hi, X, converged, iterations, maxit, tol):
    """``X[n] = argmin {||x - c|| : Vr x = Beta[n], lo <= x <= hi}`` for every row n
    (see :func:`project_one`); flags rows that did not converge."""
    for n in range(Beta.shape[0]):
        ok, its = project_one(c, Vr, Beta[n], lo, hi, X[n], maxit, tol)
        converged[n] = ok
        iterations[n] = its
