"""The compiled Euclidean projection onto ``S_F = {x : Vr x = beta, lo <= x <= hi}`` (dual
semismooth Newton), which also decides emptiness for every method.

Private: float64 arrays in and out, no validation."""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import cholesky_solve, residual_norm

#: outcomes of :func:`project_one`
PROJECTED, EMPTY, UNDECIDED = 0, 1, 2
#: the dual Newton's iteration budget, for every caller (it converges in tens of steps where it
#: converges at all; a row it leaves UNDECIDED goes to the caller's exact route)
PROJECT_MAXIT = 200

__all__ = ["EMPTY", "PROJECTED", "UNDECIDED", "project_one", "project_points", "project_rows"]


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
def project_one(c, Vr, beta, lo, hi, x, maxit, tol):
    """Euclidean projection of ``c`` onto ``{x : Vr x = beta, lo <= x <= hi}``.

    Dual semismooth Newton: maximise the concave dual
    ``g(lam) = min_{lo<=x<=hi} 1/2||x - c||^2 - lam^T (Vr x - beta)``, whose
    minimiser is ``x(lam) = clip(c + Vr^T lam, lo, hi)`` and gradient
    ``beta - Vr x(lam)``. The Newton matrix is ``Vr_F Vr_F^T + mu I`` over the
    free coordinates F; Armijo backtracking, and a gradient step of length 1
    (``Vr`` has orthonormal rows, so ``grad g`` is 1-Lipschitz) if it fails.
    Returns ``(state, iterations)``: PROJECTED (``x`` is the projection, ``||Vr x - beta||
    <= tol``, x in the box exactly), EMPTY, or UNDECIDED (the iteration budget ran out).

    Emptiness certificate (weak duality): if S_F is nonempty then for every lam,
    ``g(lam) <= min_{x in S_F} 1/2 ||x - c||^2 <= f_max = 1/2 sum_i max(c_i - lo_i, hi_i - c_i)^2``.
    An empty S_F makes the dual unbounded, so the Newton iterates soon exhibit a lam with
    ``g(lam) > f_max`` beyond the rounding error of g; that lam proves S_F empty.
    """
    r, d = Vr.shape
    lam = np.zeros(r)
    lam_new = np.zeros(r)
    grad = np.zeros(r)
    step_dir = np.zeros(r)
    y = np.empty(d)
    H = np.empty((r, r))
    f_max = 0.0
    size = 0.0
    for i in range(d):
        f_max += 0.5 * max(c[i] - lo[i], hi[i] - c[i]) ** 2
        size = max(size, abs(lo[i]), abs(hi[i]), abs(c[i]))
    bsize = 0.0
    for k in range(r):
        bsize += abs(beta[k])
    for it in range(maxit):
        g0 = _dual_value(c, Vr, beta, lo, hi, lam, y, x)
        lsize = 0.0
        for k in range(r):
            lsize += abs(lam[k])
        # rounding of g: its terms are at most f_max and |lam| (|beta| + sqrt(d) size)
        if g0 > f_max + 1e-10 * (1.0 + f_max + lsize * (bsize + math.sqrt(d) * size)):
            return EMPTY, it
        gnorm2 = 0.0
        for k in range(r):
            s = beta[k]
            for i in range(d):
                s -= Vr[k, i] * x[i]
            grad[k] = s
            gnorm2 += s * s
        gnorm = math.sqrt(gnorm2)
        if gnorm <= tol:
            return PROJECTED, it
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
                if residual_norm(Vr, beta, x) <= 0.9 * gnorm:
                    accepted = True
                    break
                t *= 0.5
        if not accepted:
            for k in range(r):
                lam_new[k] = lam[k] + grad[k]
        for k in range(r):
            lam[k] = lam_new[k]
    _dual_value(c, Vr, beta, lo, hi, lam, y, x)
    return (PROJECTED if residual_norm(Vr, beta, x) <= tol else UNDECIDED), maxit


@jit
def project_rows(c, Vr, Beta, lo, hi, X, state, iterations, maxit, tol):
    """``X[n] = argmin {||x - c|| : Vr x = Beta[n], lo <= x <= hi}`` for every row n
    (see :func:`project_one`); ``state[n]`` is PROJECTED, EMPTY or UNDECIDED."""
    for n in range(Beta.shape[0]):
        st, its = project_one(c, Vr, Beta[n], lo, hi, X[n], maxit, tol)
        state[n] = st
        iterations[n] = its


@jit
def project_points(C, Vr, Beta, lo, hi, X, state, iterations, maxit, tol):
    """``X[n] = argmin {||x - C[n]|| : Vr x = Beta[n], lo <= x <= hi}``: one point per row
    (see :func:`project_one`); ``state[n]`` is PROJECTED, EMPTY or UNDECIDED."""
    for n in range(Beta.shape[0]):
        st, its = project_one(C[n], Vr, Beta[n], lo, hi, X[n], maxit, tol)
        state[n] = st
        iterations[n] = its
