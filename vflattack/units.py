"""The passive features' box in the data's own units (docs/vflattack.md, "Feature domains").

Every attack works on the unit box ``[0, 1]^d``: the papers' protocol min-max scales each
feature. A deployment's data are rarely so: FATE's example data are z-scored (about
``[-2, 8]``), a SecretFlow table holds raw amounts. :class:`FeatureBounds` says what each
passive feature's range is, ``lo_j <= x_j <= hi_j``, and moves the audit to the unit box by
the change of coordinates ``x = lo + w * u`` (``w = hi - lo``), which keeps every published
value: the logits ``W_pas x + b = (W_pas diag(w)) u + (b + W_pas lo)``. So the audit of data
with ``bounds`` *is* the audit of the same data min-max scaled to those bounds; its
reconstructions map back by ``x = lo + w * u``, each feature's MSE by ``w_j^2``, and a
radius in unit coordinates is the radius relative to each feature's range.

Bounds come from what the auditor knows (a JSON file: the features' documented ranges) or
from the passive party's own data: the observed minimum and maximum, widened by a stated
margin of the range. **An observed range is not a guarantee**: a record outside it makes its
set empty or wrong, so :meth:`FeatureBounds.observed` warns.
"""

from __future__ import annotations

import json
import pathlib
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import InvalidInputError
from .model import VFLModel

__all__ = ["FeatureBounds", "ObservedBoundsWarning"]


class ObservedBoundsWarning(UserWarning):
    """Bounds read off the data: a record outside the observed range is outside the box."""


@dataclass(frozen=True)
class FeatureBounds:
    """Each passive feature's range ``[lo_j, hi_j]`` (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> fb = FeatureBounds([-2.0, 0.0], [8.0, 100.0])
    >>> fb.to_unit(np.array([[3.0, 25.0]])).tolist(), fb.from_unit(np.array([[0.5, 0.25]])).tolist()
    ([[0.5, 0.25]], [[3.0, 25.0]])
    """

    lo: Any
    hi: Any
    source: str = "given"
    margin: float = 0.0

    def __post_init__(self) -> None:
        lo, hi = np.asarray(self.lo, dtype=float).reshape(-1), np.asarray(self.hi, dtype=float).reshape(-1)
        if lo.shape != hi.shape or lo.size == 0:
            raise InvalidInputError(f"bounds: lo and hi must have one entry per passive feature; got {lo.size} and "
                                    f"{hi.size}")
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)):
            bad = np.flatnonzero(~(np.isfinite(lo) & np.isfinite(hi) & (hi > lo)))
            raise InvalidInputError(f"bounds: every feature needs finite lo < hi; features {bad.tolist()[:8]} do not "
                                    f"(lo {lo[bad][:4].tolist()}, hi {hi[bad][:4].tolist()})")
        for name, v in (("lo", lo), ("hi", hi)):
            v.setflags(write=False)
            object.__setattr__(self, name, v)

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo

    @classmethod
    def observed(cls, X: Any, margin: float = 0.05) -> FeatureBounds:
        """The observed range of each column of ``X``, widened by ``margin`` of it on each
        side (a constant column by ``margin`` of 1). Warns: an observed range is not a
        guarantee."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] == 0 or not np.all(np.isfinite(X)):
            raise InvalidInputError(f"bounds: the data to observe must be a finite 2-D array with rows; got shape "
                                    f"{X.shape}")
        if not (np.isfinite(margin) and margin >= 0):
            raise InvalidInputError(f"bounds: margin must be a finite number >= 0; got {margin!r}")
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        warnings.warn(f"bounds observed on {X.shape[0]} records, widened by {margin:g} of each range: an observed "
                      "range is not a guarantee (a record outside it is outside the audit's box); give the features' "
                      "documented ranges when they are known", ObservedBoundsWarning, stacklevel=2)
        return cls(lo - margin * span, hi + margin * span, "observed", float(margin))

    @classmethod
    def from_json(cls, path: Any, model: VFLModel | None = None) -> FeatureBounds:
        """Bounds from a JSON file: ``{"lo": [...], "hi": [...]}`` in the passive columns'
        order, or ``{"features": {"NAME": [lo, hi], ...}}`` by the model's passive feature
        names (every passive feature named once)."""
        try:
            doc = json.loads(pathlib.Path(path).read_text())
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise InvalidInputError(f"bounds file {str(path)!r} is not readable JSON: {exc}") from None
        if isinstance(doc, dict) and "lo" in doc and "hi" in doc:
            return cls(doc["lo"], doc["hi"])
        feats = doc.get("features") if isinstance(doc, dict) else None
        if not isinstance(feats, dict):
            raise InvalidInputError(f"bounds file {str(path)!r} must hold {{'lo': [...], 'hi': [...]}} or "
                                    f"{{'features': {{NAME: [lo, hi], ...}}}}")
        names = None if model is None or model.feature_names is None else list(model.feature_names["passive"])
        if names is None:
            raise InvalidInputError(f"bounds file {str(path)!r} names features, but the model has no feature names: "
                                    f"give lo and hi in column order")
        missing, extra = [n for n in names if n not in feats], [n for n in feats if n not in names]
        if missing or extra:
            raise InvalidInputError(f"bounds file {str(path)!r} must name each passive feature once: missing "
                                    f"{missing[:8]}, unknown {extra[:8]}")
        try:
            pairs = np.array([[float(v) for v in feats[n]] for n in names])
        except (TypeError, ValueError):
            raise InvalidInputError(f"bounds file {str(path)!r}: each feature's value must be [lo, hi]") from None
        if pairs.shape != (len(names), 2):
            raise InvalidInputError(f"bounds file {str(path)!r}: each feature's value must be [lo, hi]")
        return cls(pairs[:, 0], pairs[:, 1])

    def _check(self, d: int) -> None:
        if self.lo.size != d:
            raise InvalidInputError(f"bounds give {self.lo.size} features; the model has d = {d} passive features")

    def to_unit(self, X: Any) -> np.ndarray:
        """``u = (x - lo) / (hi - lo)``: the data in the audit's unit box."""
        X = np.asarray(X, dtype=float)
        self._check(X.shape[-1])
        return (X - self.lo) / self.width

    def from_unit(self, U: Any) -> np.ndarray:
        """``x = lo + (hi - lo) u``: a reconstruction back in the data's units."""
        U = np.asarray(U, dtype=float)
        self._check(U.shape[-1])
        return self.lo + self.width * U

    def mse_in_units(self, mse_per_feature: Any) -> np.ndarray:
        """Per-feature MSE of unit coordinates, in the data's units (times ``w_j^2``)."""
        per = np.asarray(mse_per_feature, dtype=float)
        self._check(per.shape[-1])
        return per * self.width ** 2

    def unit_model(self, model: VFLModel) -> VFLModel:
        """``model`` in unit coordinates: ``W_pas diag(w)`` and ``b + W_pas lo`` (module
        docstring). Refused for float32 deployments: their rounding is that of the data's own
        coordinates, which the moved intercept would misstate."""
        if not isinstance(model, VFLModel):
            raise InvalidInputError(f"model must be a VFLModel; got {type(model).__name__}")
        self._check(model.n_passive)
        if model.precision == "float32":
            raise InvalidInputError("bounds with a float32 deployment are not supported: its rounding bound is that "
                                    "of the data's own coordinates; audit it on data in [0, 1] or with a release")
        W = np.asarray(model.W_pas) * self.width
        b = np.asarray(model.b) + np.asarray(model.W_pas) @ self.lo
        cols = list(model.binary_columns)
        if cols and not (np.all(self.lo[cols] == 0.0) and np.all(self.hi[cols] == 1.0)):
            raise InvalidInputError("bounds: the one-hot and binary columns take 0 or 1; their bounds must be [0, 1] "
                                    "(FeatureBounds.with_binary sets them)")
        return VFLModel(model.W_act, W, b, model.classes, link=model.link, parties=[list(p) for p in model.parties],
                        party_names=list(model.party_names), yhat_scale=model.yhat_scale, precision=model.precision,
                        feature_names=model.feature_names, onehot=[list(g) for g in model.onehot] or None,
                        binary=list(model.binary) or None)

    def with_binary(self, columns: Any) -> FeatureBounds:
        """These bounds with ``[0, 1]`` on ``columns`` (features known to be 0 or 1: their range
        is known, whatever was observed).

        Examples
        --------
        >>> FeatureBounds([-0.05, -2.0], [1.05, 8.0]).with_binary([0]).lo.tolist()
        [0.0, -2.0]
        """
        cols = [int(c) for c in columns]
        if not cols:
            return self
        lo, hi = self.lo.copy(), self.hi.copy()
        lo[cols], hi[cols] = 0.0, 1.0
        return FeatureBounds(lo, hi, self.source, self.margin)

    def to_dict(self) -> dict:
        return {"lo": self.lo.tolist(), "hi": self.hi.tolist(), "source": self.source, "margin": self.margin}
