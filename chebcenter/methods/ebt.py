r"""The Eldar-Beck-Teboulle relaxed Chebyshev center for ``{x : x^T Q_i x + 2 g_i^T x + t_i <= 0}``.

Dual (EBT Theorem III.1): minimise ``tau - sum_i alpha_i t_i`` over ``alpha >= 0``
subject to ``[[M, v], [v^T, tau]] >= 0`` and ``M >= I`` with ``M = sum alpha_i Q_i``,
``v = sum alpha_i g_i``; the center is ``x = -M^{-1} v``. For ANY ``alpha >= 0`` with
``M > I``, ``max_{x' in set} ||x' - x(alpha)||^2 <= eta(alpha) = v^T M^{-1} v - alpha^T t``,
so :func:`ebt_certificate` recomputes the bound from the solver's alpha (rescaled so
that ``M >= I`` holds exactly) and it is rigorous whatever the solver's accuracy.
Linear constraints are the case ``Q_i = 0``.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._errors import MissingBackendError

__all__ = ["ebt_certificate", "ebt_dual"]


def ebt_certificate(Qs, gs, ts, alpha):
    """``(x, eta, alpha_scaled)`` at a given alpha (``(None, nan, alpha)`` if M is not PD)."""
    alpha = np.maximum(np.asarray(alpha, dtype=float), 0.0)
    M = np.einsum("i,ijk->jk", alpha, Qs)
    lam_min = np.linalg.eigvalsh(M)[0]
    if not np.isfinite(lam_min) or lam_min <= 1e-12:
        return None, float("nan"), alpha
    if lam_min < 1.0:
        alpha = alpha / lam_min * (1.0 + 1e-14)
        M = np.einsum("i,ijk->jk", alpha, Qs)
    v = alpha @ gs
    y = np.linalg.solve(M, v)
    return -y, float(v @ y - alpha @ ts), alpha


def ebt_dual(Qs, gs, ts, solver="CLARABEL"):
    """Solve the EBT dual with cvxpy; returns ``(alpha, status)`` (alpha None on failure)."""
    try:
        import cvxpy as cp
    except ImportError as exc:  # pragma: no cover
        raise MissingBackendError("the EBT relaxation needs cvxpy: pip install cvxpy clarabel scs") from exc
    k, n, _ = Qs.shape
    alpha = cp.Variable(k, nonneg=True)
    tau = cp.Variable((1, 1))
    quad = [i for i in range(k) if np.any(Qs[i])]
    M = sum(alpha[i] * Qs[i] for i in quad) if quad else np.zeros((n, n))
    v = cp.reshape(gs.T @ alpha, (n, 1), order="F")
    big = cp.bmat([[M, v], [v.T, tau]])
    cons = [(big + big.T) / 2 >> 0, (M + M.T) / 2 >> np.eye(n)]
    prob = cp.Problem(cp.Minimize(tau[0, 0] - ts @ alpha), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver=solver)
        except cp.error.SolverError:
            return None, "solver_error"
    return alpha.value, prob.status
