"""The lower bounds of an enclosing ball, made bounds of the set: what exact, its batch route
and the center of a linear image certify ``radius_lower`` with.

Private module of the methods, under :mod:`chebcenter.methods.exact` and its batch route
:mod:`chebcenter.methods.exact_batch`: both use it, so the batch route needs nothing of exact
(exact calls the batch route; nothing calls back).
"""

from __future__ import annotations

import numpy as np

from ..kernels.projection import PROJECT_MAXIT, PROJECTED, project_points

__all__ = ["LOWER_ALLOWANCE"]


def _variance_lower(U, c, radius, active=1e-7):
    """A lower bound on the radius of the smallest ball enclosing the rows of ``U``, from
    convex weights on the points nearly farthest from ``c``.

    For any weights ``lam >= 0`` summing to 1 and any center x,
    ``max_j ||u_j - x||^2 >= sum_j lam_j ||u_j - x||^2 >= sum_j lam_j ||u_j - ubar||^2``
    with ``ubar = sum_j lam_j u_j``, so the right-hand side bounds r*^2 whatever the
    weights. Weights that put ``ubar`` on ``c`` (nonnegative least squares over the points
    within ``active`` relative of the farthest, the sum held to 1 by a heavy row) make it
    tight when c is the optimal center. The enclosing-ball walk's own dual fails on large
    cospherical vertex sets (integer data: 60 000 vertices at equal distance), where this
    one is exact to rounding."""
    from scipy.optimize import nnls

    dist = np.linalg.norm(U - c, axis=1)
    idx = np.flatnonzero(dist >= radius * (1.0 - active) - 1e-300)
    if idx.size == 0 or idx.size > 5000:
        idx = np.argsort(dist)[-min(dist.size, 5000):]
    P = U[idx]
    heavy = 1e3 * (1.0 + float(np.abs(P).max(initial=0.0)))
    M = np.vstack([P.T, np.full((1, idx.size), heavy)])
    lam, _ = nnls(M, np.concatenate([c, [heavy]]), maxiter=50 * idx.size)
    if not lam.sum() > 0:
        return 0.0
    lam = lam / lam.sum()
    ubar = lam @ P
    return float(np.sqrt(max(lam @ np.sum((P - ubar) ** 2, axis=1), 0.0)))


def _lower_in_slice(prob, q, S, low):
    """The lower bound ``low`` of the enclosing ball of the points ``S`` (rows), made a
    lower bound of S_F's radius.

    The enumeration accepts a basic solution up to the feasibility tolerance and clips it
    into the box, so on slices just inside or outside a face a candidate can be off S_F:
    the enclosing-ball dual of the candidates was above the true radius by up to 4e-10 on
    dyadic slices checked in exact arithmetic. Each point is projected onto S_F (the
    compiled projection: in the box exactly, on ``A x = b`` to 1e-13); moving every point
    by at most ``delta`` moves the radius of their smallest enclosing ball by at most
    ``delta``, and the projections are a subset of S_F, so
    ``r*(S_F) >= r*(projections) >= r*(S) - delta >= low - delta``, less ten times the
    projection's tolerance for the projections' own distance to S_F. 0 when a projection
    fails."""
    if S is None or len(S) == 0 or not np.isfinite(low):
        return 0.0
    C = np.ascontiguousarray(S, dtype=np.float64)
    beta = prob.Vr @ q
    Beta = np.ascontiguousarray(np.broadcast_to(beta, (C.shape[0], beta.size)))
    X = np.empty_like(C)
    state = np.zeros(C.shape[0], dtype=np.int64)
    its = np.zeros(C.shape[0], dtype=np.int64)
    tol = 1e-13 * (1.0 + float(np.linalg.norm(prob.hi - prob.lo)))
    project_points(C, prob.Vr, Beta, prob.lo, prob.hi, X, state, its, PROJECT_MAXIT, tol)
    if np.any(state != PROJECTED):
        return 0.0
    delta = float(np.max(np.linalg.norm(X - C, axis=1)))
    # the projections meet Vr x = beta to ``tol``: 10 tol more covers their own distance to S_F
    return max(0.0, float(low) - delta - 10.0 * tol)


#: what ``radius_lower`` gives up for the rounding of the points it is computed from, in
#: normalised units (the largest box half-width is 1), relative to 1 + the bound
LOWER_ALLOWANCE = 1e-12


def _conservative_lower(lower):
    """``radius_lower`` minus its rounding allowance, at least 0 (in place).

    The bound is the enclosing-ball dual of the candidate points less the distance they
    moved when projected onto S_F (:func:`_lower_in_slice`); ``LOWER_ALLOWANCE (1 +
    bound)`` covers the rounding of the dual. The OPTIMAL
    test (gap 1e-9 for the enumeration, ``gap_tol`` for the branch and bound) is made
    before, on the solver's own bound."""
    finite = np.isfinite(lower)
    lower[finite] = np.maximum(lower[finite] - LOWER_ALLOWANCE * (1.0 + lower[finite]), 0.0)
