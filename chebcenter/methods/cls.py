"""``cls``: constrained least squares, a fixed bounded least-squares route.

For a consistent system every point of S_F minimises ``||A x - b||`` over the
box, so "the" CLS estimate depends on the solver. This project fixes it as
``scipy.optimize.lsq_linear(A, b, bounds=(lo, hi), method="bvls", tol=1e-12)``
(Stark-Parker bounded-variable least squares from its default start), run on
the normalised problem every method sees (fixed coordinates substituted, the free ones
translated to the box midpoint and divided by the largest half-width), so that the
answer does not depend on the units or the origin. The result lies in the box exactly and on S to
the solver's tolerance (the residual is reported). Its certified radius is
``R + ||x - h||`` (any point c of S is within ``||c - h||`` of the center h of
a ball of radius R that contains S_F).

``solver="numba"`` (default) runs :mod:`chebcenter.kernels.bvls`, a line-by-line port of
that SciPy routine compiled for the whole batch on all cores (its least-squares
subproblems by QR or a Jacobi SVD where they are safely full rank; a row that meets one
that is not is re-run with LAPACK's gelsd, as SciPy, compiled only when first needed);
``solver="scipy"`` calls
``lsq_linear`` row by row (the reference the port is tested against).
"""

from __future__ import annotations

import numpy as np

from ..kernels.bvls import NEEDS_GELSD, bvls_rows
from ..kernels.parallel import row_blocks
from ..results import Status
from .relax import lifted_near, reasons
from .spec import Context, Extra, MethodOutput, MethodSpec, Route, WarmupStep

__all__ = ["CLS"]


def _cls_slices(ctx: Context) -> MethodOutput:
    """Bounded least squares (BVLS) per slice row; see the module docstring. The general
    body: :func:`cls`."""
    prob = ctx.problem
    n = ctx.rows.size
    centers = np.full((n, prob.d), np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    iters = np.zeros(n, dtype=np.int64)
    if ctx.options["solver"] in ("auto", "numba"):
        X = np.empty((n, prob.d))
        status = np.zeros(n, dtype=np.int64)
        A = np.ascontiguousarray(prob.A, dtype=np.float64)
        B = np.ascontiguousarray(ctx.B, dtype=np.float64)
        row_blocks(n, 1, lambda a, b: bvls_rows(A, B[a:b], prob.lo, prob.hi, 1e-12, X[a:b], iters[a:b], status[a:b]))
        redo = np.flatnonzero(status == NEEDS_GELSD)  # a subproblem near rank deficiency: LAPACK's gelsd decides
        if redo.size:
            Xr, itr, str_ = X[redo], iters[redo], status[redo]
            row_blocks(redo.size, 1, lambda a, b: bvls_rows(A, B[redo[a:b]], prob.lo, prob.hi, 1e-12, Xr[a:b],
                                                            itr[a:b], str_[a:b], True))
            X[redo], iters[redo], status[redo] = Xr, itr, str_
        centers = np.clip(X, prob.lo, prob.hi)
        codes[status <= 0] = Status.INACCURATE
        codes[~np.all(np.isfinite(X), axis=1)] = Status.SOLVER_ERROR
        return _output(ctx, centers, codes, iters)
    from scipy.optimize import lsq_linear  # here, not at import: an import does no work
    for k in range(n):
        try:
            sol = lsq_linear(prob.A, ctx.B[k], bounds=(prob.lo, prob.hi),
                             method="bvls", tol=1e-12)
        except (ValueError, np.linalg.LinAlgError):  # pragma: no cover - defensive
            codes[k] = Status.SOLVER_ERROR
            continue
        centers[k] = np.clip(sol.x, prob.lo, prob.hi)
        iters[k] = sol.nit
        if sol.status <= 0:
            codes[k] = Status.INACCURATE
    return _output(ctx, centers, codes, iters)


def _output(ctx, centers, codes, iters):
    shift = np.linalg.norm(centers - ctx.H, axis=1)
    radii = ctx.radius_ball + shift
    return MethodOutput(centers, radii, codes, {"iterations": iters})


def cls(ctx: Context) -> MethodOutput:
    """The general body: the box least-squares point of ``A x = (L + U) / 2``, projected onto S
    (:func:`chebcenter.methods.relax.lifted_near`, with its radius bound)."""
    core, n = ctx.problem, ctx.rows.size
    B = np.ascontiguousarray(0.5 * (ctx.L + ctx.U))
    A = np.ascontiguousarray(core.A)
    X = np.empty((n, core.d))
    its = np.zeros(n, dtype=np.int64)
    status = np.zeros(n, dtype=np.int64)
    bvls_rows(A, B, core.lo, core.hi, 1e-12, X, its, status)
    redo = np.flatnonzero(status == NEEDS_GELSD)
    if redo.size:
        Xr, itr, sr = X[redo], its[redo], status[redo]
        bvls_rows(A, B[redo], core.lo, core.hi, 1e-12, Xr, itr, sr, True)
        X[redo], its[redo], status[redo] = Xr, itr, sr
    X = np.where(np.isfinite(X), np.clip(X, core.lo, core.hi), 0.0)
    C, R, st, ok = lifted_near(ctx, np.ascontiguousarray(X), None)
    st[status <= 0] = Status.INACCURATE
    out = reasons(~ok | (status <= 0), "the box least-squares solver did not converge")
    if out:
        out["check"][~ok] = "a projection onto S did not converge"
    out["iterations"] = its
    return MethodOutput(C, R, st, out)


CLS = MethodSpec("cls", cls, lies_in="S_F", certifies="R + ||x - h|| (<= 2R)",
                 options={"solver": "auto"}, solvers=("auto", "numba", "scipy"),
                 interval_values={"solver": ("auto", "numba")},
                 routes=(Route("box slice", _cls_slices, {"equations"},
                               "BVLS of A x = b itself (a point of S_F), radius R + ||x - h||"),),
                 extras=(Extra("iterations", "count", "i8", "the box least-squares solver's iterations"),),
                 warmup=(WarmupStep("cls", ("closed_forms.prepare_rows", "closed_forms.forward_rows", "bvls.bvls_rows")),
                         # a repeated row: the subproblems need LAPACK's gelsd
                         WarmupStep("cls_gelsd", problems=("repeated_row",), always=False),
                         WarmupStep("cls_intervals", ("interval_rows.project_points_boxes",), rows="interval",
                                    always=False)))
