"""Argument checks for vflattack (messages name the argument, the requirement and the value).

Reuses chebcenter's error type so callers can catch one ``ValueError`` subclass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chebcenter import InvalidInputError

__all__ = ["InvalidInputError", "as_2d", "as_labels"]


def as_2d(name: str, value: Any, n_cols: int | None = None, n_rows: int | None = None,
          finite: bool = True) -> np.ndarray:
    """A float64 2-D array, optionally with a given number of columns/rows."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be an array of real numbers; got {type(value).__name__}") from exc
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be a 2-D array; got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise InvalidInputError(f"{name} must have {n_cols} columns; got shape {arr.shape}")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise InvalidInputError(f"{name} must have {n_rows} rows (one per sample); got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be finite; got NaN or inf")
    return np.ascontiguousarray(arr)


def as_labels(name: str, value: Any, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels as integer codes 0..k-1 plus the sorted class values."""
    arr = np.asarray(value)
    if arr.shape != (n_rows,):
        raise InvalidInputError(f"{name} must have shape ({n_rows},); got shape {arr.shape}")
    classes, codes = np.unique(arr, return_inverse=True)
    if classes.size < 2:
        raise InvalidInputError(f"{name} must contain at least 2 classes; got {classes.tolist()}")
    return codes.astype(np.int64), classes
