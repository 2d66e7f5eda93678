r"""``project``: the projection of an anchor onto S_F in a metric.

``argmin_{x in S_F} (x - a)^T Sigma^{-1} (x - a)`` for an anchor ``a`` (shared, shape (d,),
or one per row, shape (N, d)) and a positive-definite metric ``Sigma`` (a (d, d) matrix, or
the (d,) diagonal). With ``a`` = the box midpoint and ``Sigma = I`` this is ``rcc2``. Under
a Gaussian prior N(a, Sigma) restricted to S_F it is the MAP estimate; with the prior's
mean as anchor it also equals the Sigma-projection of the Gaussian conditional mean
``a + Sigma A^T (A Sigma A^T)^+ (b - A a)`` (docs/theory.md §1.6).

Coordinates fixed by the box (lo = hi) are removed before the solve: with
``Pi = Sigma^{-1}`` split into free (F) and fixed (C) blocks, the objective over the free
coordinates is the projection of ``a_F - Pi_FF^{-1} Pi_FC (c - a_C)`` in the metric
``Pi_FF^{-1}`` (the conditional covariance given x_C = c). The anchor is translated and
scaled with the box (the metric only needs its shape: the minimiser does not change when
Sigma is multiplied by a constant). The compiled primal active-set solver starts from the
Euclidean projection of the midpoint (:mod:`chebcenter.kernels.qp`). Its radius is the
bound ``R + ||x - h||`` (as for cls): every point of S_F lies within R of half*.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._core.validate import as_array
from .._errors import InvalidInputError
from ..kernels.linalg import rows_times
from ..kernels.parallel import row_blocks
from ..kernels.qp import QP_OPTIMAL, project_metric_rows
from ..results import Status
from .relax import RCC2, lifted_near, reasons
from .spec import Context, Extra, MethodOutput, MethodSpec, Route, WarmupStep

__all__ = ["PROJECT"]


def _anchor(name, value):
    if value is None:
        return None
    arr = as_array(name, value)
    if arr.ndim not in (1, 2) or not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be a finite array of shape (d,) or (N, d); got shape {arr.shape}")
    return arr


def _metric(name, value):
    if value is None:
        return None
    arr = as_array(name, value)
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be finite")
    if arr.ndim == 1:
        if np.any(arr <= 0):
            raise InvalidInputError(f"{name} as a diagonal must be positive; got min {arr.min():.3g}")
        return arr
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise InvalidInputError(f"{name} must be a (d,) diagonal or a (d, d) matrix; got shape {arr.shape}")
    if np.abs(arr - arr.T).max() > 1e-10 * (1.0 + np.abs(arr).max()):
        raise InvalidInputError(f"{name} must be symmetric")
    try:
        np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:
        raise InvalidInputError(f"{name} must be positive definite") from None
    return arr


def _to_frame(box, opts, rows, n_rows):
    """Anchor and precision in the normalised coordinates of ``box`` (a BoxSlice)."""
    d = box.d
    a = opts["anchor"]
    if a is None:
        a = 0.5 * (box.lo + box.hi)
    if a.shape[-1] != d:
        raise InvalidInputError(f"anchor must have {d} columns (one per coordinate); got shape {a.shape}")
    if a.ndim == 2:
        if a.shape[0] != n_rows:
            raise InvalidInputError(f"anchor must have one row per row of B ({n_rows}); got shape {a.shape}")
        a = a[rows]
    S = opts["metric"]
    if S is None:
        S = np.ones(d)
    if S.shape[0] != d:
        raise InvalidInputError(f"metric must be ({d},) or ({d}, {d}); got shape {S.shape}")
    Pi = np.diag(1.0 / S) if S.ndim == 1 else np.linalg.inv(S)
    free = np.zeros(d, dtype=bool)
    free[box._free] = True       # box._free holds the indices of the free coordinates
    fixed = ~free
    PFF = Pi[np.ix_(free, free)]
    aF = a[..., free]
    if fixed.any():  # condition on the fixed coordinates x_C = lo_C
        shift = (box.lo[fixed] - a[..., fixed]) @ Pi[np.ix_(free, fixed)].T
        aF = aF - np.linalg.solve(PFF, shift.T).T
    z = (aF - box._shift[free]) / box.scale
    PFF = PFF / np.abs(PFF).max()
    return dict(opts, anchor=np.ascontiguousarray(np.atleast_2d(z)), metric=np.ascontiguousarray(0.5 * (PFF + PFF.T)),
                shared=a.ndim == 1)


def _project_slices(ctx: Context) -> MethodOutput:
    """Projection of the anchor onto S_F in the metric (see the module docstring). The
    general body: :func:`project`."""
    prob = ctx.problem
    n, d = ctx.rows.size, prob.d
    opts = ctx.options
    A = opts["anchor"]
    Anchor = np.ascontiguousarray(np.broadcast_to(A[0], (n, d)) if opts["shared"] else A[ctx.rows])
    X = np.ascontiguousarray(ctx.projection())  # the Euclidean projection of m: a feasible start
    if np.isnan(X).any():  # rows the compiled projection left open: rcc2's own fallback (cvxpy QP)
        X = np.ascontiguousarray(RCC2.run(dataclasses.replace(ctx, options={"solver": "numba"})).centers)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    status = np.zeros(n, dtype=np.int64)
    its = np.zeros(n, dtype=np.int64)
    start = np.all(np.isfinite(X), axis=1)
    if prob.p == 0:
        X[:] = ctx.Q
    elif start.any():
        rows = np.flatnonzero(start)
        Xs = np.ascontiguousarray(X[rows])
        Beta = rows_times(ctx.Q[rows], prob.Vr)
        Ar = np.ascontiguousarray(Anchor[rows])
        st = np.zeros(rows.size, dtype=np.int64)
        it = np.zeros(rows.size, dtype=np.int64)
        Vr = np.ascontiguousarray(prob.Vr)
        row_blocks(rows.size, 1, lambda a, b: project_metric_rows(
            opts["metric"], Vr, Beta[a:b], prob.lo, prob.hi, Ar[a:b], Xs[a:b], st[a:b], it[a:b],
            50 * (d + 1), 1e-12))
        X[rows], status[rows], its[rows] = Xs, st, it
    codes[~start] = Status.SOLVER_ERROR
    route = np.full(n, "compiled active set", dtype=object)
    check = np.full(n, None, dtype=object)
    for k in np.flatnonzero(start & (status != QP_OPTIMAL)):
        codes[k], route[k], check[k] = _qp_fallback(prob, opts["metric"], Anchor[k], ctx.Q[k], X, k)
    radii = ctx.radius_ball + np.linalg.norm(X - ctx.H, axis=1)
    extras = {"iterations": its, "route": route}
    if any(c is not None for c in check):
        extras["check"] = check
    return MethodOutput(X, radii, codes, extras)


def _qp_fallback(prob, metric, a, q, X, k):
    """The metric projection of one row the compiled active set did not bring to its
    optimum, as a cvxpy QP (Clarabel): ``min ||R (x - a)||^2`` with ``R^T R`` the metric,
    s.t. ``Vr x = Vr q``, ``lo <= x <= hi``. The better of the two points (smaller objective,
    both in the box) is kept in ``X[k]``. Returns ``(code, route, check)``."""
    import cvxpy as cp

    M = np.diag(metric) if metric.ndim == 1 else metric
    R = np.linalg.cholesky(0.5 * (M + M.T)).T
    x = cp.Variable(prob.d)
    qp = cp.Problem(cp.Minimize(cp.sum_squares(R @ (x - a))),
                    [prob.Vr @ x == prob.Vr @ q, x >= prob.lo, x <= prob.hi])
    try:
        qp.solve(solver="CLARABEL")
    except cp.error.SolverError:
        return (Status.INACCURATE, "compiled active set",
                "the compiled active set did not converge and the cvxpy QP failed: its last iterate is reported")
    if x.value is None or qp.status not in ("optimal", "optimal_inaccurate"):
        return (Status.INACCURATE, "compiled active set",
                f"the compiled active set did not converge and the cvxpy QP ended {qp.status}: its last iterate is reported")
    z = np.clip(x.value, prob.lo, prob.hi)
    def f(v):
        return float(np.sum((R @ (v - a)) ** 2))
    if f(z) <= f(X[k]):
        X[k] = z
    code = Status.OPTIMAL if qp.status == "optimal" else Status.INACCURATE
    return code, "cvxpy QP (Clarabel)", "the compiled active set did not converge: solved as a cvxpy QP (Clarabel)"


def project(ctx: Context) -> MethodOutput:
    """The general body: the projection of the anchor onto S in the metric, in the lifted
    coordinates (:func:`chebcenter.methods.relax.lifted_near`, with its radius bound)."""
    a = ctx.options["anchor"]
    n, d = ctx.rows.size, ctx.problem.d
    anchors = np.broadcast_to(a[0], (n, d)) if ctx.options["shared"] else a[ctx.rows]
    X, R, st, ok = lifted_near(ctx, np.ascontiguousarray(anchors),
                               ctx.options["metric"])
    out = reasons(~ok, "a projection onto S did not converge")
    out["route"] = np.full(n, "lifted projection", dtype=object)
    return MethodOutput(X, R, st, out)


PROJECT = MethodSpec(
    "project", project, lies_in="S_F",
    certifies="R + ||x - h|| (every point of S_F is within R of half*)",
    options={"anchor": None, "metric": None},
    validators={"anchor": _anchor, "metric": _metric},
    to_frame=_to_frame,
    routes=(Route("box slice", _project_slices, {"equations"},
                  "the compiled active set on the slice from rcc2's point, a cvxpy QP for the rows it leaves; "
                  "radius R + ||x - h||"),),
    extras=(
        Extra("iterations", "count", "i8", "the projection solver's iterations"),
        Extra("route", "label", "O", "which solver projected the row"),
    ),
    warmup=(WarmupStep("project", ("closed_forms.prepare_rows", "closed_forms.forward_rows", "qp.project_metric_rows")),
            WarmupStep("project_intervals", ("interval_rows.project_points_boxes",
                                             "interval_rows.project_metric_boxes"), rows="interval", always=False)),
)
