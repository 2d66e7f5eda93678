"""Argument checks for vflattack (messages name the argument, the requirement and the value).

Raises vflattack's :class:`~vflattack._errors.InvalidInputError` (a ``ValueError``, and a
``chebcenter.InvalidInputError``). Strings,
objects and complex values are refused rather than cast, and shapes are checked, never
repaired: an array of the wrong shape is an error, not a reshape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._errors import InvalidInputError

__all__ = ["InvalidInputError", "as_2d", "as_active", "as_array", "as_labels"]


def as_array(name: str, value: Any) -> np.ndarray:
    """A real float64 array of any shape; complex, string and object input is an error."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise InvalidInputError(f"{name} must be an array of real numbers; got {type(value).__name__}") from exc
    if raw.dtype.kind == "c":
        raise InvalidInputError(f"{name} must be real; got complex values (shape {raw.shape})")
    if raw.dtype.kind not in "biuf":
        raise InvalidInputError(f"{name} must be an array of real numbers; got {type(value).__name__} "
                                f"of dtype {raw.dtype}")
    return raw.astype(np.float64)


def as_2d(name: str, value: Any, n_cols: int | None = None, n_rows: int | None = None,
          finite: bool = True, rows: str = "one per sample", cols: str = "") -> np.ndarray:
    """A real float64 2-D array, optionally with a given number of rows and columns.

    ``rows``/``cols`` say what a row/column is, for the error message.
    """
    arr = as_array(name, value)
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be a 2-D array; got {arr.ndim}-D shape {arr.shape}")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise InvalidInputError(f"{name} must have {n_rows} rows ({rows}); got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        what = f" ({cols})" if cols else ""
        raise InvalidInputError(f"{name} must have {n_cols} columns{what}; got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be finite; got NaN or inf")
    return np.ascontiguousarray(arr)


def as_active(name: str, value: Any, n_rows: int, n_active: int | None) -> np.ndarray:
    """The active party's features: shape ``(n_rows, n_active)``; ``None`` when there are none."""
    if value is None:
        if n_active:
            raise InvalidInputError(f"{name} is required: the model has {n_active} active features")
        return np.zeros((n_rows, 0))
    arr = as_array(name, value)
    if arr.size == 0 and arr.ndim <= 1 and not n_active:
        return np.zeros((n_rows, 0))
    want = f"({n_rows}, {n_active})" if n_active is not None else f"({n_rows}, d_a)"
    if arr.ndim != 2 or arr.shape[0] != n_rows or (n_active is not None and arr.shape[1] != n_active):
        raise InvalidInputError(
            f"{name} must have shape {want}: one row per sample, one column per active feature; "
            f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be finite; got NaN or inf")
    return np.ascontiguousarray(arr)


def as_labels(name: str, value: Any, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels as integer codes 0..k-1 plus the sorted class values."""
    arr = np.asarray(value)
    if arr.shape != (n_rows,):
        raise InvalidInputError(f"{name} must have shape ({n_rows},): one label per sample; got shape {arr.shape}")
    classes, codes = np.unique(arr, return_inverse=True)
    if classes.size < 2:
        raise InvalidInputError(f"{name} must contain at least 2 classes; got {classes.size} class: {classes.tolist()}")
    return codes.astype(np.int64), classes


def keyword_only(*old_order: str):
    """Make a function's arguments after its first keyword-only, keeping for one release the
    earlier positional call: extra positional arguments are mapped to ``old_order`` (their
    earlier names, in order) with a ``DeprecationWarning``.

    Examples
    --------
    >>> import warnings
    >>> @keyword_only("b", "c")
    ... def f(a, *, b=1, c=2):
    ...     return a, b, c
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f(0, 5), f(0, c=3), len(w)
    ((0, 5, 2), (0, 1, 3), 1)
    """
    import functools
    import types
    import warnings

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            if len(args) > 1:
                extra = args[1:]
                if len(extra) > len(old_order):
                    raise TypeError(f"{fn.__name__}() takes 1 positional argument but {len(args)} were given")
                names = old_order[:len(extra)]
                clash = [n for n in names if n in kwargs]
                if clash:
                    raise TypeError(f"{fn.__name__}() got multiple values for {clash}")
                warnings.warn(f"{fn.__name__}: pass {', '.join(names)} by name (positional arguments after the "
                              "first are deprecated and will be refused in the next release)", DeprecationWarning,
                              stacklevel=2)
                kwargs.update(zip(names, extra))
                args = args[:1]
            return fn(*args, **kwargs)
        # the shim runs in the wrapped function's module (its globals), so that a call through
        # it stays in the caller's layer (tests/test_layers.py follows calls by module)
        code = inner.__code__.replace(co_name=fn.__name__)
        shim = types.FunctionType(code, fn.__globals__, fn.__name__, None, inner.__closure__)
        return functools.wraps(fn)(shim)
    return wrap
