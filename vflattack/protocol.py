"""The protocol every vflattack experiment follows, in one place.

* Rows: a seeded split of the records into training and prediction rows
  (:func:`split_rows`), the prediction rows optionally capped.
* Columns: a seeded shuffle whose **last d** columns are the passive party's
  (:func:`split_columns`), or the passive columns named by index or feature name
  (:func:`resolve_columns`). This is Luo et al.'s protocol, as in the papers.
* Reports: :func:`to_jsonable` turns records (NumPy arrays and scalars, NaN) into JSON
  (NaN and infinities become ``null``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validate import InvalidInputError

__all__ = ["resolve_columns", "split_columns", "split_rows", "to_jsonable"]


def split_columns(n_features: int, n_passive: int, rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """Seeded column shuffle; the last ``n_passive`` columns are passive. Returns (active, passive)."""
    if not 1 <= n_passive <= n_features - 1:
        raise InvalidInputError(f"n_passive must be in [1, {n_features - 1}] for this dataset; got {n_passive}")
    perm = np.random.default_rng(rng).permutation(n_features)
    return np.sort(perm[:-n_passive]), np.sort(perm[-n_passive:])


def resolve_columns(columns: Sequence[Any], names: Sequence[str]) -> np.ndarray:
    """Passive columns given by index or by name -> sorted distinct indices."""
    idx = []
    for c in columns:
        if isinstance(c, str) and not c.lstrip("-").isdigit():
            if c not in names:
                raise InvalidInputError(f"passive column {c!r} is not a feature name; names: {list(names)}")
            idx.append(list(names).index(c))
        else:
            idx.append(int(c))
    out = np.array(sorted(set(idx)), dtype=np.int64)
    if out.size != len(idx) or out.size == 0 or out.min() < 0 or out.max() >= len(names) or out.size >= len(names):
        raise InvalidInputError(
            f"passive columns must be 1 to {len(names) - 1} distinct indices in [0, {len(names)}) or names; "
            f"got {list(columns)}")
    return out


def split_rows(n: int, predict_fraction: float, n_predictions: int | None, rng: Any):
    """Seeded split into (train, predict) row indices; predictions capped at ``n_predictions``."""
    if not 0 < predict_fraction < 1:
        raise InvalidInputError(f"predict_fraction must be in (0, 1); got {predict_fraction}")
    perm = np.random.default_rng(rng).permutation(n)
    n_pred = int(round(predict_fraction * n))
    pred, train = perm[:n_pred], perm[n_pred:]
    if n_predictions is not None:
        if isinstance(n_predictions, bool) or not isinstance(n_predictions, (int, np.integer)) or n_predictions < 1:
            raise InvalidInputError(f"n_predictions must be a positive integer or None; got {n_predictions!r}")
        pred = pred[: int(n_predictions)]
    return np.sort(train), np.sort(pred)


def to_jsonable(obj: Any) -> Any:
    """``obj`` with arrays as lists, NumPy scalars as Python numbers and NaN/inf as None."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    return obj
