"""Per-row boxes for the lifted slices of interval sets (:mod:`chebcenter._core.lifting`).

Private module (float64 arrays only). An interval set ``{x in box : L <= A x <= U}`` is,
in the lifted coordinates ``y = (x, A x)``, a box slice whose box ``[lo, L] x [hi, U]``
differs from row to row while its equations ``V y = beta`` are shared. These loops call
the box-slice kernels one row at a time with that row's box; they add no arithmetic.
"""

from __future__ import annotations

from .jit import jit
from .projection import project_points
from .qp import project_metric_rows
from .simplex import range_rows

__all__ = ["project_metric_boxes", "project_points_boxes", "range_boxes"]


@jit
def project_points_boxes(C, Vr, Beta, Lo, Hi, X, state, iterations, maxit, tol):
    """``X[n] = argmin {||y - C[n]|| : Vr y = Beta[n], Lo[n] <= y <= Hi[n]}`` (Euclidean in
    the lifted coordinates; it decides emptiness and gives a feasible point)."""
    for n in range(Beta.shape[0]):
        project_points(C[n:n + 1], Vr, Beta[n:n + 1], Lo[n], Hi[n], X[n:n + 1], state[n:n + 1],
                       iterations[n:n + 1], maxit, tol)


@jit
def project_metric_boxes(P, V, Beta, Lo, Hi, Anchor, X, status, iterations, maxit, tol):
    """``argmin 1/2 (y - a)^T P (y - a)`` over ``{V y = Beta[n], Lo[n] <= y <= Hi[n]}`` from the
    feasible start ``X[n]`` (overwritten). ``P`` may vanish on the lifted coordinates ``A x``:
    it is positive definite on the directions the equations leave free."""
    for n in range(Beta.shape[0]):
        project_metric_rows(P, V, Beta[n:n + 1], Lo[n], Hi[n], Anchor[n:n + 1], X[n:n + 1], status[n:n + 1],
                            iterations[n:n + 1], maxit, tol)


@jit
def range_boxes(V, Beta, Lo, Hi, Lower, Upper, status):
    """Ranges of every lifted coordinate over ``{V y = Beta[n], Lo[n] <= y <= Hi[n]}``."""
    for n in range(Beta.shape[0]):
        range_rows(V, Beta[n:n + 1], Lo[n], Hi[n], Lower[n:n + 1], Upper[n:n + 1], status[n:n + 1])
