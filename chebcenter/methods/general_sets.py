r"""The methods on the general sets: :class:`chebcenter.Polytope` and :class:`chebcenter.QuadraticSet`.

Each function is the route of one method of the table on one kind of set,
``func(set, t0, **options) -> CenterResult`` (``t0``: the call's start time), registered in
the method's ``MethodSpec.sets``. The set object brings its normalised frame
``x = t + s (x0 + W u)`` (docs/theory.md, general sets); the methods work in ``u`` and map
back.

* ``rcc1`` on a quadratic set: the EBT dual (Eldar, Beck and Teboulle, Theorem III.1) of the
  set's quadratics, solved by cvxpy; the radius is recomputed from the weights by the
  compiled certificate, never read from the solver (``auto`` there is rcc1);
* ``inscribed`` on a polytope: the center of the largest inscribed ball (one LP), the other
  notion, for comparison only: its radius bounds nothing.

The other methods reach a polytope through the box slice it reduces to (its bounding box,
its rows one-sided intervals; :meth:`chebcenter.Polytope.center`), not through a route here.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from .._core.cvxpy_forms import EbtDual, status_of
from ..kernels.rcc1_certificate import certify_quadratics
from ..results import CenterResult, Status
from .spec import MethodSpec, SetRoute

__all__ = ["INSCRIBED", "nan_result", "polytope_inscribed", "quadratic_auto", "quadratic_rcc1"]

#: the cvxpy solver that "auto" names on a general set
_AUTO_SOLVER = "clarabel"


def nan_result(n, status, method, t0, **extras):
    """A result with no center and no radius, with its status."""
    return CenterResult(np.full(n, np.nan), float("nan"), status, method, time.perf_counter() - t0, extras=extras)


def quadratic_auto(S, t0, solver):
    """auto on a quadratic set: rcc1 (the exact minimax center is NP-hard there; rcc1's radius
    bounds it); ``extras["method"]`` says so."""
    return _as_auto(quadratic_rcc1(S, t0, solver))


def _as_auto(res):
    """``res`` as auto's answer: the method that produced it moves to ``extras["method"]``."""
    return dataclasses.replace(res, method="auto", extras={**(res.extras or {}), "method": res.method})


def polytope_inscribed(P, t0):
    """The center of the largest ball inscribed in ``P`` (Chebyshev's LP), for comparison."""
    if P.p == 0:   # the equalities' single point: the ball of radius 0 there
        return CenterResult(P._to_x(P.x0), 0.0, Status.OPTIMAL, "inscribed", time.perf_counter() - t0)
    norms = np.linalg.norm(P.Gu, axis=1)
    c = np.zeros(P.p + 1)
    c[-1] = -1.0
    from scipy.optimize import linprog  # here, not at import: an import does no work
    res = linprog(c, A_ub=np.hstack([P.Gu, norms[:, None]]), b_ub=P.hu,
                  bounds=[(None, None)] * P.p + [(0, None)], method="highs")
    if res.status != 0:
        return nan_result(P.d, Status.SOLVER_ERROR, "inscribed", t0)
    return CenterResult(P._to_x(P.x0 + P.W @ res.x[:-1]), float(res.x[-1]) * P._s, Status.OPTIMAL, "inscribed",
                        time.perf_counter() - t0,
                        extras={"note": "center of the largest INSCRIBED ball; radius is the inscribed radius, "
                                        "not a bound on the estimation error"})


def quadratic_rcc1(S, t0, solver):
    """RCC1 on the quadratic set ``S``, in the set's starting frame, then once more in the
    frame of the answer when the first answer was far off it."""
    c, s = S._c0, S._s0
    res = None
    for _ in range(2):
        Qn, gn, tn = _quadratics_in_frame(S.Qs, S.gs, S.ts, c, s)
        res = _ebt_result(Qn, gn, tn, solver, t0, lambda y, c=c, s=s: c + s * y, s, S.d, {})
        if not res.status.ok or res.radius <= 0:
            break
        u = (res.center - c) / s
        if np.abs(u).max() <= 1.0 and 0.1 <= res.radius / s <= 10.0:
            break
        c, s = res.center, res.radius
    return res



#: a method of the polytopes only, for comparison: not a minimax estimate
INSCRIBED = MethodSpec("inscribed", None, lies_in="S_F", certifies="nothing: the radius of the largest inscribed ball",
                       sets={"polytope": SetRoute(polytope_inscribed)})

def _ebt_result(Qs, gs, ts, solver, t0, to_x, scale, n, extras):
    """Solve the EBT dual on normalised data and map back: ``x = to_x(u)``, radius times ``scale``.

    ``eta`` in the extras is in the caller's units (times ``scale**2``); ``alpha`` belongs to
    the normalised constraints.
    """
    alpha, status = EbtDual(_AUTO_SOLVER if solver == "auto" else solver, Qs=Qs).solve(gs, ts)
    st = status_of(status, dual=True)
    if alpha is None or st > Status.INACCURATE:
        return nan_result(n, st if st is Status.INFEASIBLE else Status.SOLVER_ERROR, "rcc1", t0,
                          solver_status=status)
    u = np.empty(Qs.shape[1])
    eta, _ = certify_quadratics(np.ascontiguousarray(Qs), np.ascontiguousarray(gs), np.ascontiguousarray(ts),
                                alpha, u)
    if not np.isfinite(eta):
        return nan_result(n, Status.SOLVER_ERROR, "rcc1", t0, solver_status=status)
    eta = max(eta, 0.0)
    return CenterResult(to_x(u), float(np.sqrt(eta)) * scale, st, "rcc1", time.perf_counter() - t0,
                        extras=dict(extras, alpha=alpha, eta=eta * scale**2))


def _quadratics_in_frame(Qs, gs, ts, c, s):
    """The constraints in the frame ``x = c + s y``, each divided by a positive constant.

    ``f(c + s y) = s^2 y^T Q y + 2 s (Q c + g)^T y + f(c)``; dividing by ``s^2 ||Q||`` (or by
    ``s ||g||`` for a linear constraint) leaves the set unchanged and makes the data O(1).
    """
    Qn, gn, tn = np.empty_like(Qs), np.empty_like(gs), np.empty_like(ts)
    for i in range(Qs.shape[0]):
        g = Qs[i] @ c + gs[i]
        f = c @ Qs[i] @ c + 2 * gs[i] @ c + ts[i]
        q = np.abs(Qs[i]).max()
        k = s * s * q if q > 0 else 2 * s * max(np.abs(g).max(), 1e-300)
        Qn[i], gn[i], tn[i] = Qs[i] * (s * s / k), g * (s / k), f / k
    return Qn, gn, tn
