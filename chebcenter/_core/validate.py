"""Input validation, done once at the public entry points.

Every message names the argument, says what is required and what was received.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InvalidInputError

__all__ = ["as_array", "as_matrix", "as_vector", "as_bounds", "as_rhs", "as_batch_rhs", "check_choice", "check_options",
           "as_bool", "as_positive_int", "as_positive_float"]


def _describe(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"array of shape {x.shape} and dtype {x.dtype}"
    return f"{type(x).__name__} {x!r}"[:120]


def _as_float_array(name: str, value: Any) -> np.ndarray:
    raw = value if isinstance(value, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"{name} must be an array of real numbers; got {_describe(value)}") from exc
    if np.iscomplexobj(raw):
        raise InvalidInputError(f"{name} must be real; got complex values ({_describe(raw)})")
    if raw.dtype.kind in "USMmV":
        raise InvalidInputError(f"{name} must be an array of real numbers; got {_describe(value)}")
    try:
        arr = np.array(raw, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name} must be an array of real numbers; got {_describe(value)}") from exc
    return arr


def as_array(name: str, value: Any) -> np.ndarray:
    """A real float64 array of any shape (no finiteness test)."""
    return _as_float_array(name, value)


def _check_finite(name: str, arr: np.ndarray) -> None:
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInputError(
            f"{name} must be finite; got {arr[tuple(bad)]} at index {tuple(int(i) for i in bad)}")


def as_matrix(name: str, value: Any) -> np.ndarray:
    """A finite 2-D float64 array with at least one column."""
    arr = _as_float_array(name, value)
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be a 2-D array (m, d); got {arr.ndim}-D shape {arr.shape}")
    if arr.shape[1] == 0:
        raise InvalidInputError(f"{name} must have at least one column (d >= 1); got shape {arr.shape}")
    _check_finite(name, arr)
    return np.ascontiguousarray(arr)


def as_bounds(lo: Any, hi: Any, d: int) -> tuple[np.ndarray, np.ndarray]:
    """``lo``, ``hi`` as finite (d,) arrays with ``lo <= hi``."""
    out = []
    for name, value in (("lo", lo), ("hi", hi)):
        arr = _as_float_array(name, value)
        if arr.ndim == 0:
            arr = np.full(d, float(arr))
        if arr.shape != (d,):
            raise InvalidInputError(f"{name} must be a scalar or an array of shape ({d},); got shape {arr.shape}")
        _check_finite(name, arr)
        out.append(np.ascontiguousarray(arr))
    lo_a, hi_a = out
    if np.any(lo_a > hi_a):
        i = int(np.argmax(lo_a > hi_a))
        raise InvalidInputError(f"lo must be <= hi elementwise; got lo[{i}] = {lo_a[i]} > hi[{i}] = {hi_a[i]}")
    return lo_a, hi_a


def as_rhs(name: str, value: Any, m: int) -> np.ndarray:
    """A finite (m,) right-hand side."""
    arr = _as_float_array(name, value)
    if arr.ndim == 0 and m == 1:
        arr = arr.reshape(1)
    if arr.shape != (m,):
        hint = " (use .centers for a batch)" if arr.ndim == 2 else ""
        raise InvalidInputError(f"{name} must have shape ({m},) to match A; got shape {arr.shape}{hint}")
    _check_finite(name, arr)
    return arr


def as_batch_rhs(name: str, value: Any, m: int, allow_nonfinite: bool = False) -> np.ndarray:
    """An (N, m) batch of right-hand sides (one per row); finite unless ``allow_nonfinite``
    (then the caller gives non-finite rows their own status)."""
    arr = _as_float_array(name, value)
    if arr.ndim == 1 and m == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2 or arr.shape[1] != m:
        raise InvalidInputError(
            f"{name} must have shape (N, {m}): one right-hand side per row; got shape {arr.shape}")
    if not allow_nonfinite:
        _check_finite(name, arr)
    return np.ascontiguousarray(arr)


def check_choice(name: str, value: Any, choices) -> str:
    """``value`` must be one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidInputError(f"{name} must be one of {tuple(choices)}; got {value!r}")
    return value


def check_options(spec, options, declared=None) -> dict:
    """The method's options: its defaults updated by ``options`` (each validated); an
    unknown name is an error that lists the allowed ones. ``declared`` (default ``spec``)
    holds the ``options`` and ``validators`` that apply (a method's route on a general set)."""
    declared = spec if declared is None else declared
    unknown = sorted(set(options) - set(declared.options))
    if unknown:
        allowed = ", ".join(sorted(declared.options)) or "none"
        raise InvalidInputError(
            f"unknown option(s) {unknown} for method {spec.name!r}; allowed: {allowed}")
    opts = dict(declared.options)
    for key, val in options.items():
        validate = declared.validators.get(key)
        opts[key] = validate(key, val) if validate else val
    return opts


def as_bool(name: str, value: Any) -> bool:
    """A real boolean (``True``/``False`` or a NumPy bool), never a truthy string or number."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InvalidInputError(f"{name} must be True or False; got {_describe(value)}")


def as_positive_int(name: str, value: Any) -> int:
    """An integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidInputError(f"{name} must be an integer >= 1; got {value!r}")
    return int(value)


def as_positive_float(name: str, value: Any) -> float:
    """A finite float > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a positive number; got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise InvalidInputError(f"{name} must be a positive finite number; got {value!r}")
    return v


def as_interval_batch(B: Any, noise: Any, lower: Any, upper: Any, m: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The bounds ``(L, U)``, each (N, m), of a bounded-error batch, or None for the equality
    case (no ``noise``, ``lower`` or ``upper``).

    ``noise`` (a scalar, (m,) or (N, m), every entry >= 0) goes with ``B``:
    ``L = B - noise``, ``U = B + noise``. ``lower``/``upper`` go without ``B``; a missing one is
    ``-inf``/``+inf`` (every row one-sided). Entries may be infinite; a NaN makes its row
    INVALID_INPUT, an empty interval (``L > U`` beyond the equation's tolerance, docs/theory.md §8.6) its
    row INFEASIBLE: the caller decides.
    """
    if noise is None and lower is None and upper is None:
        return None
    if noise is not None:
        if lower is not None or upper is not None:
            raise InvalidInputError("give noise= with B, or lower=/upper= without B; not both")
        if B is None:
            raise InvalidInputError("noise= needs B: the measured right-hand sides, one row per set")
        Bm = as_batch_rhs("B", B, m, allow_nonfinite=True)
        D = _as_float_array("noise", noise)
        if D.ndim > 2 or (D.ndim >= 1 and D.shape[-1] != m) or (D.ndim == 2 and D.shape[0] != Bm.shape[0]):
            raise InvalidInputError(f"noise must be a scalar or have shape ({m},) or ({Bm.shape[0]}, {m}); "
                                    f"got shape {D.shape}")
        if np.any(D < 0):
            raise InvalidInputError(f"noise must be >= 0 (a half-width); got a minimum of {float(np.nanmin(D))!r}")
        D = np.broadcast_to(D, Bm.shape)
        return np.ascontiguousarray(Bm - D), np.ascontiguousarray(Bm + D)
    if B is not None:
        raise InvalidInputError("lower=/upper= replace B: pass B=None (or noise= with B)")
    given = [(n, v) for n, v in (("lower", lower), ("upper", upper)) if v is not None]
    arrays = {}
    for name, value in given:
        arr = _as_float_array(name, value)
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1) if m == 1 and arr.size != 1 else arr.reshape(1, -1)
        if arr.ndim != 2 or arr.shape[1] != m:
            raise InvalidInputError(f"{name} must have shape (N, {m}) (or ({m},) for one set); got shape {arr.shape}")
        arrays[name] = arr
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) > 1:
        raise InvalidInputError(f"lower and upper must have the same shape; got {arrays['lower'].shape} and "
                                f"{arrays['upper'].shape}")
    shape = shapes.pop()
    L = arrays.get("lower", np.full(shape, -np.inf))
    U = arrays.get("upper", np.full(shape, np.inf))
    return np.ascontiguousarray(L, dtype=np.float64), np.ascontiguousarray(U, dtype=np.float64)


def as_vector(name: str, value: Any, n: int) -> np.ndarray:
    """A finite float64 vector of length ``n``."""
    arr = as_array(name, value)
    if arr.shape != (n,):
        raise InvalidInputError(f"{name} must be a finite array of shape ({n},); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be finite; got {arr.tolist()}")
    return arr
