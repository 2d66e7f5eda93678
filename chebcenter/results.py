"""Every result type of chebcenter, and the closed :class:`Status` enum: one place, below every layer that returns them."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = ["BatchResult", "CenterResult", "FeatureRanges", "Status"]


class Status(enum.IntEnum):
    """Outcome of one center computation (one right-hand side).

    OPTIMAL
        The center was computed to the method's stated accuracy.
    INACCURATE
        A center is returned but a solver stopped short of its tolerance
        (the certified radius is still honest).
    INFEASIBLE
        ``A x = b`` has no solution, or it has one but none inside the box
        (S_F is empty). The center is NaN.
    TOO_LARGE
        ``exact`` would exceed its size guard (``max_vertices`` or
        ``max_candidates``). The center is NaN.
    SOLVER_ERROR
        A backend failed. The center is NaN.
    INVALID_INPUT
        This row of ``B`` is not finite (NaN or infinite); nothing was computed for it
        and the center is NaN. The other rows of the batch are unaffected.
    """

    OPTIMAL = 0
    INACCURATE = 1
    INFEASIBLE = 2
    TOO_LARGE = 3
    SOLVER_ERROR = 4
    INVALID_INPUT = 5

    @property
    def ok(self) -> bool:
        """True when a center is returned (OPTIMAL or INACCURATE)."""
        return self in (Status.OPTIMAL, Status.INACCURATE)

    def __str__(self) -> str:
        return self.name


_MEMBERS = np.array(list(Status), dtype=object)


def status_array(codes: np.ndarray) -> np.ndarray:
    """Object array of :class:`Status` members from integer codes."""
    return _MEMBERS[np.asarray(codes, dtype=np.int64)]


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class CenterResult:
    """Center of one box slice ``S_F = {x in [lo, hi] : A x = b}``.

    Attributes
    ----------
    center : ndarray, shape (d,)
        The estimate; NaN when ``status`` is not OK.
    radius : float
        For ``exact`` the Chebyshev radius ``max_{x in S_F} ||x - center||``;
        for the other methods the bound the method certifies on the worst-case
        error of its own center (the method table of docs/chebcenter.md); NaN if none.
    status : Status
    method : str
    time : float
        Wall-clock seconds spent in the method for this row (batch time / N for
        batched closed forms).
    residual : float
        ``||A center - b||`` (for INFEASIBLE rows: ``||A A^+ b - b||``).
    box_violation : float
        ``max_i max(lo_i - c_i, c_i - hi_i, 0)``; 0 for every method that
        returns points of S_F (they are clipped, see ``extras['clipped']``).
    extras : Mapping
        Method-specific details (``alpha``, ``eta`` for rcc1; ``support``,
        ``radius_lower``, ``n_vertices`` for exact; ...).
    """

    center: np.ndarray
    radius: float
    status: Status
    method: str
    time: float = 0.0
    residual: float = float("nan")
    box_violation: float = float("nan")
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _readonly(np.array(self.center, dtype=np.float64)))
        object.__setattr__(self, "extras", MappingProxyType(dict(self.extras)))

    @property
    def ok(self) -> bool:
        """True when a center was returned."""
        return self.status.ok

    @property
    def max_violation(self) -> float:
        """Largest violation of the constraints: ``max(residual, box_violation)``."""
        return float(max(self.residual, self.box_violation))

    def in_slice(self, tol: float = 1e-8) -> bool:
        """Is the center in S_F to ``tol`` (``||A c - b|| <= tol`` and box violation ``<= tol``)?

        False for rows without a center. ``ls`` and ``half_star`` lie in S but
        not necessarily in the box, ``half`` in the box but not in S.
        """
        return bool(self.ok and self.max_violation <= tol)

    @property
    def gap(self) -> float:
        """``radius - radius_lower`` when the method certifies a lower bound (exact), else NaN."""
        low = self.extras.get("radius_lower")
        return float(self.radius - low) if low is not None else float("nan")


class BatchResult:
    """Centers of N box slices sharing one A (one per row of ``B``).

    Attributes
    ----------
    centers : ndarray, shape (N, d)
    radii : ndarray, shape (N,)
    status : ndarray, shape (N,), dtype object
        :class:`Status` members, so ``br.status == Status.OPTIMAL`` is a mask.
    status_codes : ndarray, shape (N,), dtype int8
    method : str
    time : float
        Wall-clock seconds for the whole batch.
    residuals, box_violations : ndarray, shape (N,)
    extras : Mapping
        Per-row arrays (first axis N) and batch-level values.
    """

    __slots__ = ("centers", "radii", "status_codes", "method", "time",
                 "residuals", "box_violations", "extras", "_status")

    def __init__(self, centers, radii, status_codes, method, time,
                 residuals, box_violations, extras=None):
        self.centers = _readonly(np.asarray(centers, dtype=np.float64))
        self.radii = _readonly(np.asarray(radii, dtype=np.float64))
        self.status_codes = _readonly(np.asarray(status_codes, dtype=np.int8))
        self.method = str(method)
        self.time = float(time)
        self.residuals = _readonly(np.asarray(residuals, dtype=np.float64))
        self.box_violations = _readonly(np.asarray(box_violations, dtype=np.float64))
        self.extras = MappingProxyType(dict(extras or {}))
        self._status = None

    @property
    def status(self) -> np.ndarray:
        """(N,) object array of :class:`Status` members."""
        if self._status is None:
            self._status = _readonly(status_array(self.status_codes))
        return self._status

    @property
    def ok(self) -> np.ndarray:
        """Boolean mask of rows with a center (OPTIMAL or INACCURATE)."""
        return self.status_codes <= Status.INACCURATE

    def __len__(self) -> int:
        return self.centers.shape[0]

    def __getitem__(self, n: int) -> CenterResult:
        """Row ``n`` as a :class:`CenterResult`."""
        n = range(len(self))[n]
        extras = {}
        for key, val in self.extras.items():
            if isinstance(val, np.ndarray) and val.ndim >= 1 and val.shape[0] == len(self):
                extras[key] = val[n]
            elif isinstance(val, (list, tuple)) and len(val) == len(self):
                extras[key] = val[n]
        return CenterResult(
            center=self.centers[n], radius=float(self.radii[n]),
            status=Status(int(self.status_codes[n])), method=self.method,
            time=self.time / max(len(self), 1), residual=float(self.residuals[n]),
            box_violation=float(self.box_violations[n]), extras=extras)

    def counts(self) -> dict:
        """``{status name: number of rows}`` for the statuses that occur."""
        codes, nums = np.unique(self.status_codes, return_counts=True)
        return {Status(int(c)).name: int(k) for c, k in zip(codes, nums)}

    def __repr__(self) -> str:
        return (f"BatchResult(method={self.method!r}, N={len(self)}, "
                f"d={self.centers.shape[1]}, status={self.counts()}, time={self.time:.3g}s)")


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
    forward_error : ndarray, shape (N,), optional
        How much each row's intervals were widened on both sides so that they contain the
        ranges of the exact set the floats describe (docs/theory.md §6.8); NaN where the row
        has none (an interval row, an empty set).
    """

    lower: np.ndarray
    upper: np.ndarray
    status_codes: np.ndarray
    time: float
    lo: np.ndarray
    hi: np.ndarray
    forward_error: np.ndarray | None = None

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
