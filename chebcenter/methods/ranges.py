"""Feature ranges: the interval ``[min x_i, max x_i]`` over S_F of every coordinate.

:meth:`chebcenter.BoxSlice.feature_ranges` runs :data:`RANGES` through the same batch
machinery as the centers (validation, normalisation, the consistency and emptiness
decisions, per-row statuses) and returns a :class:`chebcenter.FeatureRanges`.
"""

from __future__ import annotations

import numpy as np

from .._core.lifting import group_ranges
from ..kernels.linalg import rows_times
from ..kernels.parallel import row_blocks
from ..kernels.simplex import RANGES_EMPTY, RANGES_FAILED, RANGES_OK, range_rows
from ..results import Status
from .spec import Context, Extra, MethodOutput, MethodSpec, Route, WarmupStep

__all__ = ["RANGES"]


def _ranges_slices(ctx: Context) -> MethodOutput:
    """The ranges of slice rows in the normalised coordinates (the general body:
    :func:`_ranges`)."""
    prob = ctx.problem
    n, d = ctx.rows.size, prob.d
    lower, upper = np.full((n, d), np.nan), np.full((n, d), np.nan)
    status = np.zeros(n, dtype=np.int64)
    if prob.p == 0:  # S_F = {q}
        lower[:] = ctx.Q
        upper[:] = ctx.Q
    else:
        Vr = np.ascontiguousarray(prob.Vr)
        Beta = rows_times(ctx.Q, Vr)
        row_blocks(n, 1, lambda a, b: range_rows(Vr, Beta[a:b], prob.lo, prob.hi, lower[a:b], upper[a:b],
                                                 status[a:b]))
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    # rows the compiled LPs found empty although the row passed the feasibility decision,
    # whose LPs failed (a basis entered at condition ~1e16 near a degenerate vertex, which
    # the refactored tableau cannot confirm), or whose intervals came out inverted: the
    # slice is nearly degenerate (near-parallel
    # equations put the computed slice 1e-9 off the true one: in a measured batch, 754 of
    # 8 000 such rows have lower > upper). They get outer intervals at the equations' own
    # tolerances.
    # an interval inverted by no more than the coordinate's tolerance is a point up to
    # rounding (a coordinate pinned by the equations): both ends become its midpoint
    solved = (status == RANGES_OK)[:, None]
    with np.errstate(invalid="ignore"):
        flip = solved & (lower > upper) & (lower - upper <= prob.coord_tol)
        lower[flip] = upper[flip] = 0.5 * (lower[flip] + upper[flip])
        bad = np.flatnonzero((status == RANGES_EMPTY) | (status == RANGES_FAILED)
                             | np.any(solved & (lower > upper), axis=1))
    for k in bad:
        lower[k], upper[k] = _outer_ranges(prob, ctx.Q[k])
        codes[k] = Status.INACCURATE
    mid = 0.5 * (lower + upper)
    return MethodOutput(mid, np.full(n, np.nan), codes, {"lower": lower, "upper": upper})


def _ranges(ctx: Context) -> MethodOutput:
    """The ranges of a lifted group, the general body: the lifted LPs (:func:`chebcenter._core.lifting.group_ranges`),
    which decide emptiness themselves (phase 1; ``RANGES.decides_emptiness``). A row they find
    empty is judged again at the tolerances: with no point of it there (the projection, then
    an LP) it is INFEASIBLE; with one, its LPs run again on the bounds widened by the
    tolerances, and it is INACCURATE."""
    grp, k, d = ctx.group, ctx.k, ctx.problem.d
    lo_, up_, status = group_ranges(grp, k)
    codes = np.where(status == RANGES_OK, Status.OPTIMAL, Status.SOLVER_ERROR).astype(np.int8)
    again = np.flatnonzero(status == RANGES_EMPTY)
    if again.size:
        found = np.all(np.isfinite(grp.feasible_points(k[again])), axis=1)
        codes[again[~found]] = Status.INFEASIBLE
        again = again[found]
    if again.size:
        j = k[again]
        saved = grp.Lo[j], grp.Hi[j]
        grp.Lo[j], grp.Hi[j] = saved[0] - grp.tol[j], saved[1] + grp.tol[j]
        try:
            lo2, up2, st2 = group_ranges(grp, j)
        finally:
            grp.Lo[j], grp.Hi[j] = saved
        lo_[again], up_[again] = lo2, up2
        codes[again] = np.where(st2 == RANGES_OK, Status.INACCURATE, Status.SOLVER_ERROR)
    lower, upper = np.ascontiguousarray(lo_[:, :d]), np.ascontiguousarray(up_[:, :d])
    bad = codes > Status.INACCURATE
    lower[bad], upper[bad] = np.nan, np.nan
    return MethodOutput(0.5 * (lower + upper), np.full(k.size, np.nan), codes, {"lower": lower, "upper": upper})


def _outer_ranges(prob, q):
    """Outer intervals of one row by HiGHS: ``min / max x_i`` over S_F's constraints at their
    tolerances (each equation at its own scale, ``chebcenter._core.normalised._Core.tolerance_lp``), then clipped to the
    box; the box itself if an LP fails. Every point of S_F satisfies these constraints, so
    the intervals contain S_F's ranges: they are never inverted. Returns ``(lower, upper)``."""
    from scipy.optimize import linprog

    d = prob.d
    lp = prob.tolerance_lp(prob.A @ q)
    lower, upper = prob.lo.copy(), prob.hi.copy()
    for i in range(d):
        e = np.zeros(d)
        e[i] = 1.0
        lo_res, hi_res = linprog(e, **lp), linprog(-e, **lp)
        if lo_res.status != 0 or hi_res.status != 0:
            return prob.lo.copy(), prob.hi.copy()
        lower[i] = max(prob.lo[i], lo_res.fun - prob.coord_tol[i])
        upper[i] = min(prob.hi[i], -hi_res.fun + prob.coord_tol[i])
    return lower, upper


#: not a center: the table entry through which feature_ranges runs the batch machinery
RANGES = MethodSpec("ranges", _ranges, lies_in="none", decides_emptiness=True,
                    certifies="nothing (the interval's midpoints stand in the center column)",
                    extras=(Extra("lower", "point", "f8", "min x_i over S_F, per coordinate", shape=("d",)),
                            Extra("upper", "point", "f8", "max x_i over S_F, per coordinate", shape=("d",))),
                    estimates=False,
                    routes=(Route("box slice", _ranges_slices, {"equations"},
                                  "the slice's LPs on its factors, outer intervals by HiGHS where they fail"),),
                    warmup=(WarmupStep("ranges", ("closed_forms.prepare_rows", "closed_forms.forward_rows", "simplex.range_rows")),
                            WarmupStep("ranges_intervals", ("interval_rows.range_boxes",), rows="interval",
                                       always=False)))
