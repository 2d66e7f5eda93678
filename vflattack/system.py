r"""What the active party's view implies: the linear system ``A x = b'`` of docs/theory.md §3.

The one place where a model and its scores become chebcenter's input: the difference
matrix ``J``, the system matrix ``A = J W_pas`` (``VFLModel.system_matrix``, with its
factored box slice ``VFLModel.box_slice``), the per-row score checks and the right-hand
sides ``b'``.

With ``J`` the (k-1) x k difference matrix (row m: -1 at column m, +1 at m+1)
and ``c'_m = ln(c_{m+1} / c_m) = z_{m+1} - z_m``:

    A = J W_pas,        b'_n = c'_n - J W_act y_n - J b,      A x_n = b'_n.

``A`` is the same for every prediction. Log-ratios are differences of log
scores (pass ``log_scores=True`` to give ``log softmax`` directly, which keeps
saturated scores exact). Score rows that are not valid probability vectors are
flagged per row and never used: see :class:`ScoreFlag`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import InvalidInputError, as_active
from .model import VFLModel

__all__ = ["LinearSystem", "ScoreFlag", "checked_log_scores", "difference_matrix", "scores_to_system"]


def difference_matrix(k: int) -> np.ndarray:
    """``J``: (k-1) x k, row m has -1 at column m and +1 at column m+1.

    ``J W`` is the row differences of ``W`` (``np.diff(W, axis=0)``, which is how
    :attr:`VFLModel.system_matrix` computes it, to the bit).

    Examples
    --------
    >>> difference_matrix(3).tolist()
    [[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]]
    """
    J = np.zeros((k - 1, k))
    idx = np.arange(k - 1)
    J[idx, idx] = -1.0
    J[idx, idx + 1] = 1.0
    return J


class ScoreFlag(enum.IntFlag):
    """Why a score row was not used (bits; 0 = valid)."""

    OK = 0
    NONFINITE = 1        #: NaN or inf in the row
    SATURATED = 2        #: an entry <= 0 or >= 1: its log-ratio is infinite or lost
    NOT_NORMALISED = 4   #: the row does not sum to 1 within ``sum_tol``
    IMPOSSIBLE = 8       #: no score vector is consistent with this release (:mod:`vflattack.release`)


@dataclass(frozen=True)
class LinearSystem:
    """``A x_n = B[n]`` for the valid rows; ``flags`` explains the others (B rows are NaN)."""

    A: np.ndarray
    B: np.ndarray
    flags: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        """Mask of the rows whose scores were valid."""
        return self.flags == 0


def checked_log_scores(S: np.ndarray, k: int, *, log_scores: bool = False,
                       sum_tol: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Validate (N, k) scores row by row; return ``(log scores, ScoreFlag bits)``.

    Rows that are flagged get a finite placeholder in the log scores and must
    not be used (every attack masks them with the flags).

    Examples
    --------
    >>> L, flags = checked_log_scores(np.array([[0.25, 0.75], [0.0, 1.0]]), 2)
    >>> flags.tolist()
    [0, 2]
    """
    if S.ndim != 2 or S.shape[1] != k:
        raise InvalidInputError(f"scores must have shape (N, {k}) (one column per class); got shape {S.shape}")
    flags = np.zeros(S.shape[0], dtype=np.int64)
    with np.errstate(all="ignore"):
        finite = np.all(np.isfinite(S), axis=1)
        flags[~finite] |= ScoreFlag.NONFINITE
        if log_scores:
            P = np.exp(S)
            flags[finite & np.any(S >= 0.0, axis=1)] |= ScoreFlag.SATURATED
            L = np.where(finite[:, None], S, 0.0)
        else:
            P = S
            flags[finite & (np.any(S <= 0.0, axis=1) | np.any(S >= 1.0, axis=1))] |= ScoreFlag.SATURATED
            L = np.log(np.where(finite[:, None] & (S > 0), S, 1.0))
        flags[finite & (np.abs(P.sum(axis=1) - 1.0) > sum_tol)] |= ScoreFlag.NOT_NORMALISED
    return L, flags


def scores_to_system(model: VFLModel, scores: Any, Y: Any, *, log_scores: bool = False,
                     sum_tol: float = 1e-6) -> LinearSystem:
    """Turn (N, k) scores and (N, d_a) active features into ``(A, B', flags)``.

    Parameters
    ----------
    model : VFLModel
        Supplies ``W_act``, ``W_pas`` and ``b`` (white-box knowledge).
    scores : array_like, shape (N, k)
        Probabilities (or log-probabilities with ``log_scores=True``).
    Y : array_like, shape (N, d_a)
    sum_tol : float
        A probability row must sum to 1 within this tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> m = VFLModel(np.array([[0.0], [1.0]]), np.array([[0.0, 0.0], [1.0, -1.0]]), np.zeros(2))
    >>> Y, X = np.array([[0.3]]), np.array([[0.9, 0.2]])
    >>> s = scores_to_system(m, m.predict_proba(Y, X), Y)
    >>> bool(np.allclose(s.A @ X[0], s.B[0]))
    True
    """
    k = model.n_classes
    S = np.asarray(scores, dtype=np.float64)
    N = S.shape[0] if S.ndim == 2 else 0
    L, flags = checked_log_scores(S, k, log_scores=log_scores, sum_tol=sum_tol)
    Y = as_active("Y", Y, N, model.n_active)
    J = difference_matrix(k)
    A = model.system_matrix
    B = L @ J.T - Y @ (J @ model.W_act).T - J @ model.b
    B[flags != 0] = np.nan
    return LinearSystem(A, B, flags)
