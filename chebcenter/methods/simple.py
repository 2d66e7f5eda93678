"""Closed-form estimators: ``half``, ``ls``, ``half_star`` (docs/theory.md §1).

With ``h = q + P m`` (half*), ``R_n^2 = sum_i ((hi_i - lo_i)/2)^2 - ||h_n - m||^2``
and the orthogonal split ``x - c = (x - h) + (h - c)`` for ``c`` in S:

* half_star: ``max_{x in S_F} ||x - h|| <= R`` (docs/theory.md §2.4);
* ls: the minimum-norm solution is the projection of the origin o onto S,
  ``q = h + P (o - m)``, so ``x - q = (x - h) - P (o - m)`` and only the triangle
  inequality holds: ``||x - q|| <= R + ||P (o - m)||``. (In the normalised coordinates the
  methods see, ``m = 0`` and ``o`` is ``problem.origin``.)
* half: ``||x - m||^2 = ||x - h||^2 + ||h - m||^2 <= sum_i ((hi_i - lo_i)/2)^2``.

On interval rows ``L <= A x <= U`` (docs/theory.md §8), ``ls`` and ``half_star`` are the
same formulas on the intervals' midpoints ``A x = (L + U) / 2``; that point need not lie in
the set, so their radius is the distance to the farthest box corner, which bounds every
subset of the box. ``half`` does not read the rows.
"""

from __future__ import annotations

import numpy as np

from .._core.normalised import corner_radius
from ..kernels.linalg import rows_times
from .spec import Context, MethodOutput, MethodSpec, Route, WarmupStep

#: the kernels every slice batch reaches: the closed forms and the projection deciding emptiness
#: (the step's "projecting" problem has a row whose half* point leaves the box)
_CLOSED = ("closed_forms.prepare_rows", "closed_forms.forward_rows", "projection.project_rows")

__all__ = ["HALF", "LS", "HALF_STAR"]


def _all_optimal(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.int8)


def half(ctx: Context) -> MethodOutput:
    """``x = (lo + hi) / 2``, the box midpoint."""
    prob = ctx.problem
    n = ctx.rows.size
    centers = np.broadcast_to(prob.mid, (n, prob.d)).copy()
    radii = np.full(n, np.sqrt(prob.half_diag_sq))
    return MethodOutput(centers, radii, _all_optimal(n))


def ls(ctx: Context) -> MethodOutput:
    """``x = A^+ bbar + P o`` for the rows' midpoints ``bbar = (L + U) / 2``: the minimum-norm
    solution (the ESA attack), with the farthest box corner's distance as its radius (a bound
    on any subset of the box)."""
    X = _midpoint_solution(ctx) + ctx.problem.p_origin
    return MethodOutput(X, corner_radius(ctx.problem, X), _all_optimal(ctx.rows.size))


def _ls_slices(ctx: Context) -> MethodOutput:
    """Slices: ``h + P o`` with the radius ``R + ||P o||`` (the module docstring)."""
    radii = ctx.radius_ball + float(np.linalg.norm(ctx.problem.p_origin))
    return MethodOutput(ctx.H + ctx.problem.p_origin, radii, _all_optimal(ctx.rows.size))


def half_star(ctx: Context) -> MethodOutput:
    """``x = A^+ bbar + P m``: the projection of the box midpoint onto the midpoints' slice,
    with the farthest box corner's distance as its radius."""
    X = _midpoint_solution(ctx) + ctx.problem.p_mid
    return MethodOutput(X, corner_radius(ctx.problem, X), _all_optimal(ctx.rows.size))


def _half_star_slices(ctx: Context) -> MethodOutput:
    """Slices: half* is ``H`` and its radius R (docs/theory.md §2.4)."""
    return MethodOutput(ctx.H, ctx.radius_ball, _all_optimal(ctx.rows.size))


def _midpoint_solution(ctx: Context) -> np.ndarray:
    """``A^+ bbar`` for the interval rows' midpoints ``bbar = (L + U) / 2``."""
    core = ctx.problem
    if not core.rank:
        return np.zeros((ctx.rows.size, core.d))
    Bbar = 0.5 * (ctx.L + ctx.U)
    return rows_times(rows_times(Bbar, core.Ur.T) / core.s_r, core.Vr.T)


HALF = MethodSpec("half", half, lies_in="box",
                  certifies="sqrt(sum((hi-lo)^2)/4): the box half-diagonal",
                  warmup=(WarmupStep("half", _CLOSED, problems=("projecting",)),))
#: the slices' radius R (and R + ||P o||) holds for S_F only: the general body's corner radius
#: bounds any set, and is what interval rows get
_SLICE_RADIUS = "the slice's own radius bound (R, from its factors) instead of the farthest box corner"
LS = MethodSpec("ls", ls, lies_in="S",
                routes=(Route("box slice", _ls_slices, {"equations"}, _SLICE_RADIUS),),
                certifies="R + ||P (o - m)|| (o: the origin)",
                warmup=(WarmupStep("ls", _CLOSED, problems=("projecting",)),))
HALF_STAR = MethodSpec("half_star", half_star, lies_in="S",
                       routes=(Route("box slice", _half_star_slices, {"equations"}, _SLICE_RADIUS),),
                       certifies="R = sqrt(sum((hi-lo)^2)/4 - ||h - m||^2) (docs/theory.md §2.4)",
                       warmup=(WarmupStep("half_star", _CLOSED, problems=("projecting",)),))
