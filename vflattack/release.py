r"""What the active party saw, and the bounds it implies on ``A x`` (docs/theory.md §3, "Releases").

A :class:`Release` names how scores were published: exact probabilities (the default),
probabilities rounded to K decimals, log-probabilities rounded, probabilities clipped to
``[eps, 1 - eps]``, the label only, the top-1 label with its rounded probability, bounded
additive noise, or Gaussian / Laplace noise of known scale at a stated confidence.

:func:`release_to_bounds` turns a release into an **outer** approximation of the preimage:
interval rows ``L <= A x <= U`` over every pair of classes ``i < j``, with
``A = (e_j - e_i)^T W_pas``, from bounds on ``ln(c_j / c_i) = z_j - z_i``. The record always
lies in the set, so every certificate chebcenter computes on it stays true (for noise of
known scale: with the stated probability per record). A saturated or label-only row gives
one-sided rows and is attacked, not refused; only non-finite or impossible values are
refused, with a flag that says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import InvalidInputError, as_active
from .model import VFLModel
from .system import ScoreFlag

__all__ = ["KINDS", "BoundedSystem", "Release", "release_to_bounds"]

#: the release kinds and the parameter each takes
KINDS = {"exact": None, "round": "decimals", "loground": "decimals", "clip": "epsilon", "label": None,
         "top1": "decimals", "noise": "delta", "gaussian": "scale", "laplace": "scale"}


@dataclass(frozen=True)
class Release:
    """How the scores were published (module docstring).

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    value : float, optional
        The kind's parameter: decimals for ``round``, ``loground`` and ``top1``; epsilon for
        ``clip``; the bound delta for ``noise``; the scale (sigma, or Laplace's b) for
        ``gaussian`` and ``laplace``.
    confidence : float
        For ``gaussian`` and ``laplace``: the certificates hold with this probability per
        record (default 0.95).

    Examples
    --------
    >>> Release.parse("round:2")
    Release(kind='round', value=2.0, confidence=0.95)
    >>> Release.parse("round:2").half_width_for(3)
    0.005
    >>> round(Release.parse("gaussian:0.01").half_width_for(2), 5)    # sigma Phi^-1(1 - 0.05 / 4)
    0.02241
    """

    kind: str = "exact"
    value: float | None = None
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidInputError(f"release kind must be one of {tuple(KINDS)}; got {self.kind!r}")
        need = KINDS[self.kind]
        if need is None and self.value is not None:
            raise InvalidInputError(f"release {self.kind!r} takes no parameter; got {self.value!r}")
        if need is not None:
            if self.value is None or not np.isfinite(self.value) or self.value < 0:
                raise InvalidInputError(f"release {self.kind!r} needs {need} >= 0 (e.g. '{self.kind}:2'); got {self.value!r}")
            if need == "decimals" and float(self.value) != int(self.value):
                raise InvalidInputError(f"release {self.kind!r}: decimals must be an integer; got {self.value!r}")
            if self.kind == "clip" and not self.value < 0.5:
                raise InvalidInputError(f"release 'clip': epsilon must be below 0.5; got {self.value!r}")
            object.__setattr__(self, "value", float(self.value))
        if not 0.0 < self.confidence < 1.0:
            raise InvalidInputError(f"confidence must be in (0, 1); got {self.confidence!r}")

    @classmethod
    def parse(cls, text: str) -> Release:
        """``"exact"``, ``"round:K"``, ``"loground:K"``, ``"clip:EPS"``, ``"label"``,
        ``"top1:K"``, ``"noise:DELTA"``, ``"gaussian:SIGMA[:CONFIDENCE]"``,
        ``"laplace:B[:CONFIDENCE]"``."""
        parts = str(text).strip().split(":")
        kind = parts[0]
        try:
            value = float(parts[1]) if len(parts) > 1 else None
            confidence = float(parts[2]) if len(parts) > 2 else 0.95
        except ValueError:
            raise InvalidInputError(f"release {text!r}: the parameter must be a number (e.g. round:2)") from None
        if len(parts) > 3 or (len(parts) > 2 and kind not in ("gaussian", "laplace")):
            raise InvalidInputError(f"release {text!r} has too many fields")
        return cls(kind, value, confidence)

    def publish(self, model: VFLModel, Y: Any, X: Any, rng: Any = 0) -> Any:
        """What a deployment with this release would publish for the records ``(Y, X)``: the
        argument :func:`release_to_bounds` and ``whitebox_attack(release=)`` take. Noise is
        drawn from ``rng`` (bounded noise uniform in [-delta, delta])."""
        P = model.predict_proba(Y, X)
        gen = np.random.default_rng(rng)
        K = None if self.value is None else int(self.value)
        if self.kind == "exact":
            return P
        if self.kind == "round":
            return np.round(P, K)
        if self.kind == "loground":
            return np.round(model.predict_log_proba(Y, X), K)
        if self.kind == "clip":
            return np.clip(P, self.value, 1.0 - self.value)
        if self.kind == "label":
            return np.argmax(P, axis=1)
        if self.kind == "top1":
            return np.argmax(P, axis=1), np.round(P.max(axis=1), K)
        if self.kind == "noise":
            return P + gen.uniform(-self.value, self.value, P.shape)
        if self.kind == "gaussian":
            return P + gen.normal(0.0, self.value, P.shape)
        return P + gen.laplace(0.0, self.value, P.shape)

    def describe(self) -> str:
        """The release in words, for the first line of a report."""
        v, kind = self.value, self.kind
        if kind == "exact":
            return "exact scores (full-precision probabilities)"
        if kind == "label":
            return "the label only (argmax)"
        if kind in ("round", "loground"):
            return f"{'log-' if kind == 'loground' else ''}probabilities rounded to {int(v)} decimals"
        if kind == "top1":
            return f"the top-1 label with its probability rounded to {int(v)} decimals"
        if kind == "clip":
            return f"probabilities clipped to [{v:g}, {1 - v:g}]"
        if kind == "noise":
            return f"probabilities with bounded noise |w| <= {v:g}"
        return (f"probabilities with {'Gaussian' if kind == 'gaussian' else 'Laplace'} noise "
                f"({'sigma' if kind == 'gaussian' else 'b'} {v:g}); certificates hold with probability "
                f"{self.confidence:g} per record")

    @property
    def exact(self) -> bool:
        return self.kind == "exact"

    @property
    def spec(self) -> str:
        """The release as :meth:`parse` reads it.

        Examples
        --------
        >>> [Release.parse(t).spec for t in ("round:2", "label", "gaussian:0.01")]
        ['round:2', 'label', 'gaussian:0.01:0.95']
        """
        if self.value is None:
            return self.kind
        conf = f":{self.confidence:g}" if self.kind in ("gaussian", "laplace") else ""
        return f"{self.kind}:{self.value:g}{conf}"

    @property
    def decimals(self) -> int | None:
        """The published precision in decimals (rounded kinds), ``None`` otherwise."""
        return int(self.value) if self.kind in ("round", "loground", "top1") else None

    def half_width_for(self, k: int) -> float:
        """The half-width t of each published probability's interval, for k classes: the
        rounding half-width 0.5 10^-K, the noise bound delta, or the two-sided quantile of
        random noise at level beta / k (beta = 1 - confidence; the union bound over the k
        classes), ``sigma Phi^{-1}(1 - beta / (2k))`` or ``b ln(k / beta)``."""
        if self.kind in ("round", "loground", "top1"):
            return 0.5 * 10.0 ** (-self.value)
        if self.kind == "noise":
            return self.value
        beta = (1.0 - self.confidence) / k          # per class, so that all k hold together
        if self.kind == "gaussian":
            from scipy.stats import norm

            return self.value * float(norm.ppf(1.0 - beta / 2.0))
        if self.kind == "laplace":
            return self.value * math.log(1.0 / beta)
        return 0.0


@dataclass(frozen=True)
class BoundedSystem:
    """``L[n] <= A x_n <= U[n]`` over the class pairs ``pairs``; ``flags`` explain refused rows."""

    A: np.ndarray
    L: np.ndarray
    U: np.ndarray
    pairs: tuple
    flags: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        return self.flags == 0


def _simplex_tightened(lo, hi):
    """Per-class probability bounds tightened by the simplex (they sum to 1); flags rows
    with no probability vector inside them."""
    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    s_hi, s_lo = hi.sum(axis=1, keepdims=True), lo.sum(axis=1, keepdims=True)
    # 1 - (sum of the others) is computed from k floating-point values of at most 1, each
    # also a few ulps from the real probability it stands for: an absolute error of a few k
    # ulps, which a small tightened bound (1 - 0.9997 = 2.5e-4) turns into a large relative
    # one in log space. Those bounds are rounded outward by 8 k ulps.
    pad = 8.0 * lo.shape[1] * np.finfo(float).eps
    ell = np.maximum(lo, 1.0 - (s_hi - hi) - pad)
    ups = np.minimum(hi, 1.0 - (s_lo - lo) + pad)
    impossible = np.any(ell > ups + 1e-12, axis=1) | np.any(ups <= 0.0, axis=1)
    return ell, ups, impossible


def _prob_intervals(S, release, k):
    """Per-class bounds ``[lo, hi]`` on the probabilities behind the published ``S`` (N, k)."""
    if release.kind == "clip":
        eps = release.value
        lo, hi = S.copy(), S.copy()
        at_low, at_high = np.isclose(S, eps, rtol=0, atol=1e-12), np.isclose(S, 1.0 - eps, rtol=0, atol=1e-12)
        lo[at_low], hi[at_high] = 0.0, 1.0
        return lo, hi
    t = release.half_width_for(k)
    return S - t, S + t


def _log_ratio_bounds(release, S, k):
    """Bounds on ``ln(c_j / c_i)`` for every pair ``i < j``: (lo, hi, impossible), each (N, P)."""
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    N = S.shape[0]
    if release.kind == "loground":
        t = release.half_width_for(k)
        lo = np.stack([S[:, j] - S[:, i] - 2 * t for i, j in pairs], axis=1)
        return pairs, lo, lo + 4 * t, np.zeros(N, dtype=bool)
    plo, phi = _prob_intervals(S, release, k)
    ell, ups, impossible = _simplex_tightened(plo, phi)
    with np.errstate(divide="ignore", invalid="ignore"):   # ln 0 = -inf; impossible rows are flagged
        log_ell, log_ups = np.log(ell), np.log(np.maximum(ups, 0.0))
        lo = np.stack([log_ell[:, j] - log_ups[:, i] for i, j in pairs], axis=1)
        hi = np.stack([log_ups[:, j] - log_ell[:, i] for i, j in pairs], axis=1)
    return pairs, lo, hi, impossible


def _label_bounds(labels, k, pairs):
    """``z_y - z_j >= 0`` for the released label y: one-sided pair rows."""
    N = labels.shape[0]
    lo, hi = np.full((N, len(pairs)), -np.inf), np.full((N, len(pairs)), np.inf)
    for p, (i, j) in enumerate(pairs):
        lo[labels == j, p] = 0.0     # ln(c_j / c_i) >= 0 when j is the argmax
        hi[labels == i, p] = 0.0     # ln(c_j / c_i) <= 0 when i is
    return lo, hi


def release_to_bounds(model: VFLModel, released: Any, Y: Any, release: Release) -> BoundedSystem:
    """The interval rows ``L <= A x <= U`` that what was published implies (module docstring).

    ``released`` is what the active party saw: (N, k) probabilities (or log-probabilities
    for ``loground``); for ``label``, the labels (N,) as class indices or one-hot (N, k)
    rows; for ``top1``, a pair ``(labels, probabilities)``. ``Y`` is (N, d_a).

    Examples
    --------
    >>> import numpy as np, vflattack as va
    >>> m = va.VFLModel(np.zeros((2, 0)), np.array([[0.0, 0.0], [1.0, 1.0]]), np.zeros(2))
    >>> x = np.array([[0.3, 0.6]]); c = m.predict_proba(None, x)
    >>> sysb = release_to_bounds(m, np.round(c, 2), None, va.Release("round", 2))
    >>> bool(sysb.L[0, 0] <= sysb.A[0] @ x[0] <= sysb.U[0, 0])
    True
    """
    if not isinstance(release, Release):
        raise InvalidInputError(f"release must be a vflattack.Release (Release.parse('round:2')); got {release!r}")
    k = model.n_classes
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if release.kind == "label":
        lab = np.asarray(released)
        labels = np.argmax(lab, axis=1) if lab.ndim == 2 else lab.astype(np.int64)
        N = labels.shape[0]
        flags = np.where((labels < 0) | (labels >= k), int(ScoreFlag.IMPOSSIBLE), 0).astype(np.int64)
        lo, hi = _label_bounds(np.where(flags == 0, labels, 0), k, pairs)
    elif release.kind == "top1":
        labels, p = (np.asarray(v) for v in released)
        labels, p = labels.astype(np.int64), p.astype(float)
        N = labels.shape[0]
        t = release.half_width_for(2)
        ell, ups = np.clip(p - t, 0.0, 1.0), np.clip(p + t, 0.0, 1.0)
        flags = np.zeros(N, dtype=np.int64)
        flags[~np.isfinite(p)] |= int(ScoreFlag.NONFINITE)
        flags[(labels < 0) | (labels >= k) | (p < -t) | (p > 1 + t) | (ups <= 0)] |= int(ScoreFlag.IMPOSSIBLE)
        with np.errstate(divide="ignore", invalid="ignore"):
            low_margin = np.log(ell) - np.log1p(-ell)      # z_y - z_j >= logit(ell) for every j
            high_margin = np.log(ups) - np.log1p(-ups) if k == 2 else np.full(N, np.inf)
        lo, hi = np.full((N, len(pairs)), -np.inf), np.full((N, len(pairs)), np.inf)
        for q, (i, j) in enumerate(pairs):
            top_j, top_i = labels == j, labels == i
            lo[top_j, q], hi[top_j, q] = low_margin[top_j], high_margin[top_j]
            lo[top_i, q], hi[top_i, q] = -high_margin[top_i], -low_margin[top_i]
    else:
        S = np.asarray(released, dtype=np.float64)
        if S.ndim != 2 or S.shape[1] != k:
            raise InvalidInputError(f"released scores must have shape (N, {k}); got shape {S.shape}")
        N = S.shape[0]
        flags = np.zeros(N, dtype=np.int64)
        finite = np.all(np.isfinite(S), axis=1)
        flags[~finite] |= int(ScoreFlag.NONFINITE)
        Sf = np.where(finite[:, None], S, 0.5)
        if release.kind != "loground":
            t = release.half_width_for(k)
            flags[finite & (np.any(Sf < -t - 1e-12, axis=1) | np.any(Sf > 1 + t + 1e-12, axis=1))] |= int(ScoreFlag.IMPOSSIBLE)
        pairs, lo, hi, impossible = _log_ratio_bounds(release, Sf, k)
        flags[finite & impossible] |= int(ScoreFlag.IMPOSSIBLE)
    Y = as_active("Y", Y, N, model.n_active)
    A = model.pair_matrix
    D_act = np.array([model.W_act[j] - model.W_act[i] for i, j in pairs]).reshape(len(pairs), model.n_active)
    D_b = np.array([model.b[j] - model.b[i] for i, j in pairs])
    shift = Y @ D_act.T + D_b
    with np.errstate(invalid="ignore"):   # inf - inf does not occur: shift is finite
        L, U = lo - shift, hi - shift
        # Outward rounding. In real arithmetic the record's A x lies in [lo - shift, hi - shift];
        # in floating point the scores, the logs, the shift and A x itself each carry rounding
        # errors of a few units in the last place of the magnitudes involved (a dot product of
        # length n: n of them). Without this, a row whose interval is a point (an unclipped
        # score, zero noise) came out with L above U, or A x outside, by ~1e-15: reported empty.
        slack = 4.0 * (8 + model.n_passive + model.n_active) * np.finfo(float).eps * (
            1.0 + np.abs(shift) + np.abs(A).sum(axis=1) + np.where(np.isfinite(lo), np.abs(lo), 0.0)
            + np.where(np.isfinite(hi), np.abs(hi), 0.0))
        L, U = L - slack, U + slack
    L[flags != 0], U[flags != 0] = np.nan, np.nan
    return BoundedSystem(A, L, U, tuple(pairs), flags)
