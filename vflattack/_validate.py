"""Argument checks for vflattack (messages name the argument, the requirement and the value).

Raises vflattack's :class:`~vflattack._errors.InvalidInputError` (a ``ValueError``, and a
``chebcenter.InvalidInputError``). Strings,
objects and complex values are refused rather than cast, and shapes are checked, never
repaired: an array of the wrong shape is an error, not a reshape.
"""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
from typing import Any

import numpy as np

from ._errors import InvalidInputError

__all__ = ["MANIFEST", "InvalidInputError", "as_2d", "as_active", "as_array", "as_labels", "as_out_dir", "is_report",
           "passive_columns"]

#: the file a report directory is recognised by (written last, vflattack.report.directory)
MANIFEST = "manifest.json"


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


def passive_columns(name: str, columns: Any, n_features: int, names: Any = None, *,
                    leave_active: bool = False, keep_order: bool = False) -> np.ndarray:
    """The passive party's columns as sorted distinct int64 indices in ``[0, n_features)``
    (with ``keep_order``: in the order given, ``X = F[:, columns]``).

    ``columns`` holds column indices (integers, integral floats or digit strings) and, where
    the features have ``names``, feature names, mixed freely. At least one column; with
    ``leave_active``, at most ``n_features - 1`` (the active party keeps a column).
    """
    lookup = None if names is None else {str(n): i for i, n in enumerate(names)}
    given = list(np.atleast_1d(np.asarray(columns, dtype=object))) if np.ndim(columns) <= 1 else None
    idx = []
    for c in given or ():
        if isinstance(c, str) and not c.lstrip("-").isdigit():
            if lookup is None:
                raise InvalidInputError(f"{name} names columns, but the features have no column names (give a "
                                        f"DataFrame, or indices); got {columns!r}")
            if c not in lookup:
                raise InvalidInputError(f"{name}: {c!r} is not a feature name; names: {list(lookup)}")
            idx.append(lookup[c])
        elif isinstance(c, (str, int, np.integer)) and not isinstance(c, bool):
            idx.append(int(c))
        elif isinstance(c, (float, np.floating)) and float(c).is_integer():
            idx.append(int(c))
        else:
            given = None
            break
    if not given:
        raise InvalidInputError(f"{name} must be a 1-D list of integer column indices (or feature names), "
                                f"non-empty; got {columns!r}")
    out = np.array(sorted(set(idx)), dtype=np.int64)
    if keep_order and out.size == len(idx):
        out = np.array(idx, dtype=np.int64)
    most = n_features - 1 if leave_active else n_features
    if out.size != len(idx) or out.min() < 0 or out.max() >= n_features or out.size > most:
        keep = f", at most {most} of them (the active party keeps a column)" if leave_active else ""
        raise InvalidInputError(f"{name} must be distinct indices in [0, {n_features}){keep}; got {idx}")
    return out


def is_report(path: pathlib.Path) -> bool:
    """Whether ``path`` holds a vflattack report (our manifest), which a new report may replace."""
    try:
        return json.loads((path / MANIFEST).read_text()).get("tool") == "vflattack"
    except (OSError, ValueError, AttributeError):
        return False


def as_out_dir(value: str | os.PathLike, flag: str = "--out") -> pathlib.Path:
    """Check, before any work, that a report can be written at ``value``; return the path.

    Raises :class:`InvalidInputError` naming ``flag`` if the path is empty, is a file, is a
    non-empty directory that is not a previous report, or if its parent is not writable
    (probed by creating and removing a temporary directory there).
    """
    if value is None or str(value).strip() == "":
        raise InvalidInputError(f"{flag} must name a directory; got an empty path")
    path = pathlib.Path(value).expanduser()
    if path.exists():
        if not path.is_dir():
            raise InvalidInputError(f"{flag} {str(path)!r} is a file; give a directory (new, empty, or a previous "
                                    "vflattack report, which is replaced)")
        if any(path.iterdir()) and not is_report(path):
            raise InvalidInputError(f"{flag} {str(path)!r} is a non-empty directory that is not a vflattack report; "
                                    "give a new or empty directory (a previous report there would be replaced)")
    parent = path.absolute().parent
    existing = parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise InvalidInputError(f"{flag} {str(path)!r}: {str(existing)!r} is a file, not a directory")
    try:
        probe = tempfile.mkdtemp(prefix=".vflattack-probe-", dir=existing)
    except OSError as exc:
        raise InvalidInputError(f"{flag} {str(path)!r} is not writable: cannot create files in "
                                f"{str(existing)!r} ({exc.strerror})") from exc
    os.rmdir(probe)
    return path
