"""Compiled RCC1 dual solver: barrier path-following Newton on the weights alpha.

Private module (float64 arrays only). With ``a_i`` the rows of W (d x p),
``c_i = q_i - m_i`` and ``t_i = (q_i - lo_i)(q_i - hi_i)``, the RCC1 dual after
eliminating tau is

    minimise  phi(alpha) = v^T M^{-1} v - alpha^T t   over alpha >= 0, M >= I,
    M = sum_i alpha_i a_i a_i^T,   v = sum_i alpha_i c_i a_i.

With ``y = M^{-1} v`` and ``s_i = c_i - a_i^T y``:
``grad phi_i = 2 c_i a_i^T y - (a_i^T y)^2 - t_i`` and
``hess phi = 2 (s s^T) o K``, ``K = W M^{-1} W^T`` (o: elementwise). The barrier
``-mu (log det(M - I) + sum log alpha_i)`` adds ``-mu a_i^T (M-I)^{-1} a_i - mu/alpha_i``
to the gradient and ``mu (K1 o K1) + mu diag(1/alpha^2)`` to the Hessian,
``K1 = W (M - I)^{-1} W^T``. Start at ``alpha = 2`` (``M = 2 I``, strictly feasible),
damped Newton steps with a fraction-to-boundary rule, ``mu`` divided by 100 (MU_FACTOR) when the
Newton decrement is small, down to ``mu_min`` (the duality gap is about
``mu (d + p)``).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from ._kernels import cholesky_in_place

__all__ = ["rcc1_barrier_rows"]

MU_FACTOR = 0.01


@jit
def _feasible(W, alpha):
    """``M - I`` positive definite and alpha > 0?"""
    for i in range(alpha.size):
        if alpha[i] <= 0.0:
            return False
    M = (W.T * alpha) @ W
    p = M.shape[0]
    for i in range(p):
        M[i, i] -= 1.0
    return cholesky_in_place(M, p, 0.0)


@jit
def _merit(W, c, t, alpha, mu):
    """``phi(alpha) - mu (log det(M - I) + sum log alpha)``."""
    M = (W.T * alpha) @ W
    v = W.T @ (alpha * c)
    y = np.linalg.solve(M, v)
    val = v @ y - alpha @ t
    p = M.shape[0]
    sign, logdet = np.linalg.slogdet(M - np.eye(p))
    return val - mu * (logdet + np.sum(np.log(alpha)))


@jit
def _solve_one(W, c, t, alpha, mu0, mu_min, maxit):
    d, p = W.shape
    mu = mu0
    its = 0
    for it in range(maxit):
        its = it + 1
        M = (W.T * alpha) @ W
        Minv = np.linalg.inv(M)
        v = W.T @ (alpha * c)
        y = Minv @ v
        Wy = W @ y
        s = c - Wy
        K = W @ Minv @ W.T
        Minv1 = np.linalg.inv(M - np.eye(p))
        K1 = W @ Minv1 @ W.T
        grad = 2.0 * c * Wy - Wy * Wy - t
        H = 2.0 * np.outer(s, s) * K + mu * K1 * K1
        for i in range(d):
            grad[i] -= mu * K1[i, i] + mu / alpha[i]
            H[i, i] += mu / (alpha[i] * alpha[i])
        step = -np.linalg.solve(H, grad)
        decrement = -(grad @ step)
        if decrement < 1e-1 * mu * d:
            if mu <= mu_min:
                return its, True
            mu = max(mu * MU_FACTOR, mu_min)
            continue
        # fraction to the boundary for alpha > 0, then backtracking on feasibility and merit
        tau = 1.0
        for i in range(d):
            if step[i] < 0.0:
                tau = min(tau, -0.99 * alpha[i] / step[i])
        f0 = _merit(W, c, t, alpha, mu)
        accepted = False
        for _ in range(50):
            cand = alpha + tau * step
            if _feasible(W, cand):
                if _merit(W, c, t, cand, mu) <= f0 - 1e-4 * tau * decrement:
                    accepted = True
                    break
            tau *= 0.5
        if not accepted:
            if mu <= mu_min:
                return its, True
            mu = max(mu * MU_FACTOR, mu_min)
            continue
        alpha[:] = cand
    return its, False


@jit
def rcc1_barrier_rows(W, C, T, Alpha, iterations, converged, mu_min, maxit):
    """Solve the RCC1 dual for every row n (``C[n] = q - m``, ``T[n] = t``); writes
    ``Alpha[n]`` (start: 2), the Newton iteration count and a convergence flag."""
    for n in range(C.shape[0]):
        alpha = np.full(W.shape[0], 2.0)
        its, ok = _solve_one(W, C[n], T[n], alpha, 1.0, mu_min, maxit)
        Alpha[n] = alpha
        iterations[n] = its
        converged[n] = ok
