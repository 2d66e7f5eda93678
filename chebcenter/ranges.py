"""Feature ranges: the interval ``[min x_i, max x_i]`` over S_F of every coordinate.

:meth:`chebcenter.BoxSlice.feature_ranges` runs :data:`RANGES` through the same batch
machinery as the centers (validation, normalisation, the consistency and emptiness
decisions, per-row statuses) and returns a :class:`FeatureRanges`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._parallel import row_blocks
from ._ranges_kernel import RANGES_EMPTY, RANGES_OK, range_rows
from .methods import Context, MethodOutput, MethodSpec
from .results import Status

__all__ = ["FeatureRanges", "RANGES"]


def _ranges(ctx: Context) -> MethodOutput:
    """The ranges of the context's rows in the normalised coordinates."""
    prob = ctx.problem
    n, d = ctx.rows.size, prob.d
    lower, upper = np.empty((n, d)), np.empty((n, d))
    status = np.zeros(n, dtype=np.int64)
    if prob.p == 0:  # S_F = {q}
        lower[:] = ctx.Q
        upper[:] = ctx.Q
    else:
        Vr = np.ascontiguousarray(prob.Vr)
        Beta = np.ascontiguousarray(ctx.Q @ Vr.T)
        row_blocks(n, 1, lambda a, b: range_rows(Vr, Beta[a:b], prob.lo, prob.hi, lower[a:b], upper[a:b],
                                                 status[a:b]))
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    codes[status == RANGES_EMPTY] = Status.INACCURATE   # the feasibility test and the LP disagree at rounding level
    codes[(status != RANGES_OK) & (status != RANGES_EMPTY)] = Status.SOLVER_ERROR
    mid = 0.5 * (lower + upper)
    return MethodOutput(mid, np.full(n, np.nan), codes, {"lower": lower, "upper": upper})


#: not a center: the table entry through which feature_ranges runs the batch machinery
RANGES = MethodSpec("ranges", _ranges, lies_in="none",
                    certifies="nothing (the interval's midpoints stand in the center column)")


@dataclass
class FeatureRanges:
    """Per-row, per-coordinate intervals ``[lower, upper]`` of S_F (NaN where S_F is empty).

    Attributes
    ----------
    lower, upper : ndarray, shape (N, d)
    status_codes : ndarray of int8, shape (N,)
        As for centers (:class:`chebcenter.Status`).
    time : float
        Seconds for the batch.
    lo, hi : ndarray, shape (d,)
        The box, for :meth:`pinned`.
    """

    lower: np.ndarray
    upper: np.ndarray
    status_codes: np.ndarray
    time: float
    lo: np.ndarray
    hi: np.ndarray

    @property
    def status(self) -> np.ndarray:
        """Status per row (object array of :class:`Status`)."""
        return np.array([Status(int(c)) for c in self.status_codes], dtype=object)

    @property
    def ok(self) -> np.ndarray:
        """Rows with intervals (OPTIMAL or INACCURATE)."""
        return self.status_codes <= Status.INACCURATE

    @property
    def widths(self) -> np.ndarray:
        """``upper - lower`` (NaN rows where S_F is empty)."""
        return self.upper - self.lower

    def pinned(self, tau: float = 0.1) -> np.ndarray:
        """Boolean (N, d): the coordinate is known to within ``tau`` of its box side,
        ``upper - lower <= tau (hi - lo)``. Fixed coordinates (lo = hi) count as pinned."""
        tau = float(tau)
        if not (np.isfinite(tau) and tau >= 0):
            from ._errors import InvalidInputError
            raise InvalidInputError(f"tau must be a finite number >= 0; got {tau!r}")
        with np.errstate(invalid="ignore"):
            return self.ok[:, None] & (self.widths <= tau * (self.hi - self.lo) + 1e-12 * (self.hi - self.lo))

    def counts(self) -> dict[str, int]:
        """``{status name: number of rows}``."""
        codes, nums = np.unique(self.status_codes, return_counts=True)
        return {Status(int(c)).name: int(k) for c, k in zip(codes, nums)}
