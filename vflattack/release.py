r"""What the active party saw, and the bounds it implies on ``A x`` (docs/theory.md §3, "Releases").

A :class:`Release` names how scores were published: exact probabilities (the default),
probabilities rounded to K decimals, log-probabilities rounded, probabilities clipped to
``[eps, 1 - eps]``, the label only, the top-1 label with its rounded probability, bounded
additive noise, or Gaussian / Laplace noise of known scale at a stated confidence; and the
published defences (docs/vflattack.md, "Do the published defences protect?"): the order of
the classes only (FH-OPE), the top-K classes with rounded probabilities, rounding then
renormalising, S significant digits or float32, and the Gaussian mechanism by its privacy
parameters (epsilon, delta, sensitivity).

:func:`release_to_bounds` turns a release into an **outer** approximation of the preimage:
interval rows ``L <= A x <= U`` over every pair of classes ``i < j``, with
``A = (e_j - e_i)^T W_pas``, from bounds on ``ln(c_j / c_i) = z_j - z_i``. The record always
lies in the set, so every certificate chebcenter computes on it stays true (for noise of
known scale: with the stated probability per record). A saturated or label-only row gives
one-sided rows and is attacked, not refused; only non-finite or impossible values are
refused, with a flag that says why.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validate import InvalidInputError, as_active
from .model import VFLModel
from .system import ScoreFlag

__all__ = ["KINDS", "BoundedSystem", "Release", "decimals_of", "fitting_kinds", "gaussian_sigma", "privee_publish",
           "recover_privee", "release_to_bounds", "verdict", "verdict_line"]

#: the release kinds and the parameter each takes
KINDS = {"exact": None, "round": "decimals", "loground": "decimals", "clip": "epsilon", "label": None,
         "top1": "decimals", "noise": "delta", "gaussian": "scale", "laplace": "scale", "rank": None,
         "topk": "decimals", "roundnorm": "decimals", "sig": "digits", "float32": None, "privee": "rho",
         "priveeplus": None}
#: float32's unit roundoff relative to the *rounded* value, u / (1 - u) with u = 2^-24, and
#: half the spacing of its subnormals (what a value below the smallest one rounds within)
_F32_REL = 2.0 ** -24 / (1.0 - 2.0 ** -24)
_F32_ABS = 2.0 ** -150


#: each kind in words (Release.describe; the noise kinds are worded there)
_WORDS = {
    "exact": "exact scores (full-precision probabilities)",
    "label": "the label only (argmax)",
    "round": "probabilities rounded to {d} decimals",
    "loground": "log-probabilities rounded to {d} decimals",
    "top1": "the top-1 label with its probability rounded to {d} decimals",
    "clip": "probabilities clipped to [{v:g}, {w:g}]",
    "noise": "probabilities with bounded noise |w| <= {v:g}",
    "rank": "the order of the classes only (FH-OPE)",
    "topk": "the top {top} classes with probabilities rounded to {d} decimals, the rest withheld",
    "roundnorm": "probabilities rounded to {d} decimals, then renormalised to sum 1",
    "sig": "probabilities to {d} significant digits",
    "privee": "PRIVEE at rho {v:g} (sorted scores through A + diag(n), one draw of n per batch, float32)",
    "priveeplus": "PRIVEE++ (sorted scores through A + diag(n), per-class scales, one draw per batch, float32)",
    "float32": "probabilities as float32 (relative precision 2^-24, subnormals below 2^-126)",
}


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The noise scale of the Gaussian mechanism with privacy parameters (epsilon, delta) for
    an L2 sensitivity: ``sqrt(2 ln(1.25 / delta)) sensitivity / epsilon`` for epsilon <= 1
    (Dwork and Roth, Theorem A.1, whose proof needs epsilon < 1), and above it the analytic
    Gaussian mechanism (Balle and Wang, 2018): the smallest sigma with
    ``Phi(D/(2 sigma) - epsilon sigma/D) - e^epsilon Phi(-D/(2 sigma) - epsilon sigma/D) <= delta``.

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1e-5, 1.0), 4)     # sqrt(2 ln 125000)
    4.8448
    >>> gaussian_sigma(4.0, 1e-5) < gaussian_sigma(1.0, 1e-5)
    True
    """
    for name, v in (("epsilon", epsilon), ("delta", delta), ("sensitivity", sensitivity)):
        if not (isinstance(v, (int, float, np.floating, np.integer)) and np.isfinite(v) and v > 0):
            raise InvalidInputError(f"gaussian mechanism: {name} must be a positive number; got {v!r}")
    if not delta < 1:
        raise InvalidInputError(f"gaussian mechanism: delta must be below 1; got {delta!r}")
    if epsilon <= 1.0:
        return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon
    from scipy.optimize import brentq
    from scipy.stats import norm

    def excess(sigma):   # the privacy loss's delta at this sigma, minus the target (decreasing)
        a, b = sensitivity / (2.0 * sigma), epsilon * sigma / sensitivity
        return norm.cdf(a - b) - math.exp(epsilon + norm.logcdf(-a - b)) - delta   # e^eps in log space

    hi = math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity   # the classical scale at epsilon 1: enough
    lo = hi / 1e6
    while excess(lo) <= 0:
        lo /= 1e3
    sigma = float(brentq(excess, lo, hi, xtol=1e-12 * hi, rtol=1e-12))
    while excess(sigma) > 0:   # the root from above: the sigma returned meets delta
        sigma *= 1.0 + 1e-12
    return sigma


@dataclass(frozen=True)
class Release:
    """How the scores were published (module docstring).

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    value : float, optional
        The kind's parameter: decimals for ``round``, ``loground``, ``top1``, ``topk`` and
        ``roundnorm``; epsilon for ``clip``; rho for ``privee``; the bound delta for ``noise``; the scale (sigma,
        or Laplace's b) for ``gaussian`` and ``laplace`` (derived from ``dp`` when given);
        significant digits for ``sig``.
    confidence : float
        For ``gaussian`` and ``laplace``: the certificates hold with this probability per
        record (default 0.95).
    top : int, optional
        For ``topk``: how many classes are published (the others withheld).
    dp : (float, float, float), optional
        For ``gaussian``: the mechanism's (epsilon, delta, sensitivity); sigma is then
        :func:`gaussian_sigma` of them.

    Examples
    --------
    >>> Release.parse("round:2")
    Release(kind='round', value=2.0, confidence=0.95)
    >>> round(Release.parse("round:2").half_width_for(3), 12)    # and 4 ulps of 1
    0.005
    >>> round(Release.parse("gaussian:0.01").half_width_for(2), 5)    # sigma Phi^-1(1 - 0.05 / 4)
    0.02241
    >>> round(Release.parse("gaussian:eps=1,delta=1e-5,sens=0.01").value, 6)
    0.048448
    >>> Release.parse("topk:3:2").spec
    'topk:3:2'
    """

    kind: str = "exact"
    value: float | None = None
    confidence: float = 0.95
    top: int | None = field(default=None, repr=False)
    dp: tuple | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidInputError(f"release kind must be one of {tuple(KINDS)}; got {self.kind!r}")
        if self.dp is not None:
            if self.kind != "gaussian" or self.value is not None:
                raise InvalidInputError("dp=(epsilon, delta, sensitivity) applies to a 'gaussian' release without "
                                        f"its sigma; got kind {self.kind!r}, value {self.value!r}")
            if len(tuple(self.dp)) != 3:
                raise InvalidInputError(f"dp must be (epsilon, delta, sensitivity); got {self.dp!r}")
            dp = tuple(float(v) for v in self.dp)
            object.__setattr__(self, "dp", dp)
            object.__setattr__(self, "value", gaussian_sigma(*dp))
        if (self.kind == "topk") != (self.top is not None):
            raise InvalidInputError("a 'topk' release needs top (the number of classes published), and only it "
                                    f"takes one; got kind {self.kind!r}, top {self.top!r}")
        if self.top is not None:
            if isinstance(self.top, bool) or not float(self.top) == int(self.top) or int(self.top) < 1:
                raise InvalidInputError(f"release 'topk': top must be an integer >= 1; got {self.top!r}")
            object.__setattr__(self, "top", int(self.top))
        need = KINDS[self.kind]
        if need is None and self.value is not None:
            raise InvalidInputError(f"release {self.kind!r} takes no parameter; got {self.value!r}")
        if need is not None:
            if self.value is None or not np.isfinite(self.value) or self.value < 0:
                raise InvalidInputError(f"release {self.kind!r} needs {need} >= 0 (e.g. '{self.kind}:2'); got {self.value!r}")
            if need in ("decimals", "digits") and float(self.value) != int(self.value):
                raise InvalidInputError(f"release {self.kind!r}: {need} must be an integer; got {self.value!r}")
            if need == "digits" and not 1 <= self.value <= 17:
                raise InvalidInputError(f"release 'sig': digits must be between 1 and 17; got {self.value!r}")
            if self.kind == "privee" and not self.value > 0:
                raise InvalidInputError(f"release 'privee': rho must be > 0; got {self.value!r}")
            if self.kind == "clip" and not self.value < 0.5:
                raise InvalidInputError(f"release 'clip': epsilon must be below 0.5; got {self.value!r}")
            object.__setattr__(self, "value", float(self.value))
        if not 0.0 < self.confidence < 1.0:
            raise InvalidInputError(f"confidence must be in (0, 1); got {self.confidence!r}")

    @classmethod
    def parse(cls, text: str) -> Release:
        """``"exact"``, ``"round:K"``, ``"loground:K"``, ``"clip:EPS"``, ``"label"``,
        ``"top1:K"``, ``"noise:DELTA"``, ``"gaussian:SIGMA[:CONFIDENCE]"``,
        ``"gaussian:eps=E,delta=D,sens=S[:CONFIDENCE]"``, ``"laplace:B[:CONFIDENCE]"``,
        ``"rank"``, ``"topk:K:D"`` (K classes, D decimals), ``"roundnorm:D"``, ``"sig:S"``,
        ``"float32"``, ``"privee:RHO"``, ``"priveeplus"``."""
        parts = str(text).strip().split(":")
        kind = parts[0]
        if kind == "topk":
            if len(parts) != 3:
                raise InvalidInputError(f"release {text!r}: write topk:K:D (K classes published, D decimals; "
                                        "e.g. topk:3:2)")
            try:
                top, decimals = float(parts[1]), float(parts[2])
            except ValueError:
                raise InvalidInputError(f"release {text!r}: K and D must be integers (e.g. topk:3:2)") from None
            return cls("topk", decimals, top=top)
        if kind == "gaussian" and len(parts) > 1 and "=" in parts[1]:
            given = {}
            for item in parts[1].split(","):
                key, _, val = item.partition("=")
                try:
                    given[key.strip()] = float(val)
                except ValueError:
                    raise InvalidInputError(f"release {text!r}: {key.strip()}= needs a number") from None
            if set(given) - {"eps", "delta", "sens"} or not {"eps", "delta"} <= set(given):
                raise InvalidInputError(f"release {text!r}: write gaussian:eps=E,delta=D[,sens=S] (sensitivity "
                                        "default 1)")
            try:
                confidence = float(parts[2]) if len(parts) > 2 else 0.95
            except ValueError:
                raise InvalidInputError(f"release {text!r}: the confidence must be a number") from None
            if len(parts) > 3:
                raise InvalidInputError(f"release {text!r} has too many fields")
            return cls("gaussian", None, confidence, dp=(given["eps"], given["delta"], given.get("sens", 1.0)))
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
        drawn from ``rng`` (bounded noise uniform in [-delta, delta]). A model whose link is
        not softmax publishes its outputs as the deployment computes them
        (:func:`vflattack.outputs.published_outputs`, float32 where the model says so)."""
        if model.link != "softmax":
            from .outputs import published_outputs

            out = published_outputs(model, Y, X)
            with np.errstate(divide="ignore"):
                return self.publish_scores(out, rng, log_scores=np.log(np.abs(out)))
        return self.publish_scores(model.predict_proba(Y, X), rng, log_scores=model.predict_log_proba(Y, X))

    def publish_scores(self, P: Any, rng: Any = 0, *, log_scores: Any = None) -> Any:
        """What this release publishes for the exact probabilities ``P`` (N, k): :meth:`publish`
        without the model, for scores already computed (a prediction log's). ``log_scores``
        (log P, default computed from P) orders the classes where P underflows to 0 (rank,
        top-k) and is what ``loground`` rounds.

        Examples
        --------
        >>> Release.parse("round:1").publish_scores(np.array([[0.26, 0.74]])).tolist()
        [[0.3, 0.7]]
        """
        P = np.asarray(P, dtype=np.float64)
        if P.ndim != 2:
            raise InvalidInputError(f"P must be the (N, k) exact probabilities; got shape {P.shape}")
        if log_scores is None:
            with np.errstate(divide="ignore"):
                log_scores = np.log(P)
        log_P = np.asarray(log_scores, dtype=np.float64)
        gen = np.random.default_rng(rng)
        K = None if self.value is None else int(self.value)
        if self.kind == "exact":
            return P
        if self.kind == "round":
            return np.round(P, K)
        if self.kind == "loground":
            return np.round(log_P, K)
        if self.kind == "clip":
            return np.clip(P, self.value, 1.0 - self.value)
        if self.kind == "label":   # by log-probability, as rank and top-k: no ties where P underflows
            return np.argmax(log_P, axis=1)
        if self.kind == "top1":
            return np.argmax(P, axis=1), np.round(P.max(axis=1), K)
        if self.kind == "rank":   # the classes best first (by log-probability: no ties where P underflows)
            return np.argsort(-log_P, axis=1, kind="stable")
        if self.kind == "topk":   # the top classes rounded, the others withheld (NaN)
            out = np.full(P.shape, np.nan)
            top = np.argsort(-log_P, axis=1, kind="stable")[:, :min(self.top, P.shape[1])]
            np.put_along_axis(out, top, np.round(np.take_along_axis(P, top, axis=1), K), axis=1)
            return out
        if self.kind == "roundnorm":   # a row that rounds to all zeros cannot be renormalised: NaN
            R = np.round(P, K)
            total = R.sum(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(total > 0, R / total, np.nan)
        if self.kind == "sig":
            return _round_significant(P, K)
        if self.kind == "float32":
            return P.astype(np.float32)
        if self.kind in ("privee", "priveeplus"):
            return privee_publish(P, None if self.kind == "priveeplus" else self.value, gen)
        if self.kind == "noise":
            return P + gen.uniform(-self.value, self.value, P.shape)
        if self.kind == "gaussian":
            return P + gen.normal(0.0, self.value, P.shape)
        return P + gen.laplace(0.0, self.value, P.shape)

    def describe(self) -> str:
        """The release in words, for the first line of a report."""
        v = self.value
        if self.kind in _WORDS:
            return _WORDS[self.kind].format(v=v, d=None if v is None else int(v), w=None if v is None else 1 - v,
                                            top=self.top)
        if self.dp is not None:
            e, d, sens = self.dp
            return (f"the Gaussian mechanism at epsilon {e:g}, delta {d:g}, sensitivity {sens:g} (sigma {v:.4g}); "
                    f"certificates hold with probability {self.confidence:g} per record")
        gauss = self.kind == "gaussian"
        return (f"probabilities with {'Gaussian' if gauss else 'Laplace'} noise "
                f"({'sigma' if gauss else 'b'} {v:g}); certificates hold with probability "
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
        if self.kind == "topk":
            return f"topk:{self.top}:{self.value:g}"
        if self.dp is not None:
            e, d, sens = self.dp
            return f"gaussian:eps={e:g},delta={d:g},sens={sens:g}{conf}"
        return f"{self.kind}:{self.value:g}{conf}"

    @property
    def decimals(self) -> int | None:
        """The published precision in decimals (rounded kinds), ``None`` otherwise."""
        return int(self.value) if self.kind in ("round", "loground", "top1", "topk", "roundnorm") else None

    def top_class(self, published: Any) -> np.ndarray:
        """The class each published row ranks first (-1 where it says nothing): what a
        consumer of the release reads as the prediction, so ``top_class(published) ==
        argmax(exact scores)`` is the accuracy the release keeps.

        Examples
        --------
        >>> Release.parse("topk:1:2").top_class(np.array([[np.nan, 0.71], [0.5, np.nan]]))
        array([1, 0])
        """
        if self.kind in ("label", "top1"):
            lab = np.asarray(published[0] if self.kind == "top1" else published)
            return (np.argmax(lab, axis=1) if lab.ndim == 2 else lab).astype(np.int64)
        V = np.asarray(published)
        if self.kind == "rank" and np.issubdtype(V.dtype, np.integer):
            return V[:, 0].astype(np.int64)
        V = V.astype(float)
        none = ~np.any(np.isfinite(V), axis=1)
        top = np.argmax(np.where(np.isfinite(V), V, -np.inf), axis=1)
        return np.where(none, -1, top).astype(np.int64)

    def half_width_for(self, k: int) -> float:
        """The half-width t of each published probability's interval, for k classes: the
        rounding half-width 0.5 10^-K, the noise bound delta, or the two-sided quantile of
        random noise at level beta / k (beta = 1 - confidence; the union bound over the k
        classes), ``sigma Phi^{-1}(1 - beta / (2k))`` or ``b ln(k / beta)``."""
        if self.kind == "loground":
            return 0.5 * 10.0 ** (-self.value)
        if self.kind in ("round", "top1", "topk", "roundnorm"):
            # np.round of a probability can land an ulp past the half step (at 11 decimals
            # and more, P * 10^D rounds to ...999.5 and then to even): 4 ulps of 1 more
            return float(0.5 * 10.0 ** (-self.value) + 4 * np.finfo(float).eps)
        if self.kind == "noise":
            return self.value
        beta = (1.0 - self.confidence) / k          # per class, so that all k hold together
        if self.kind == "gaussian":
            from scipy.stats import norm

            return self.value * float(norm.ppf(1.0 - beta / 2.0))
        if self.kind == "laplace":
            return self.value * math.log(1.0 / beta)
        return 0.0

    def half_widths(self, S: np.ndarray) -> Any:
        """The half-width of each published probability's interval: :meth:`half_width_for`
        (one number) for the absolute kinds, per entry for the relative ones: ``sig:S``,
        ``0.5 10^(1-S) |s|`` (the rounded value's leading digit is at least the true one's),
        and ``float32``, ``|s| 2^-24 / (1 - 2^-24)`` or half a subnormal spacing, whichever is
        larger; both widened by 4 ulps of s for the float64 arithmetic of the test itself."""
        if self.kind == "sig":
            # a published 0 is a float64 softmax that underflowed: below the smallest normal number
            return np.maximum((0.5 * 10.0 ** (1.0 - self.value) + 4 * np.finfo(float).eps) * np.abs(S),
                              np.finfo(float).tiny)
        if self.kind == "float32":
            return np.maximum((_F32_REL + 4 * np.finfo(float).eps) * np.abs(S), _F32_ABS)
        return self.half_width_for(S.shape[1])


def _privee_noise(k, rho, gen):
    """PRIVEE's diagonal: n_i uniform in the i-th of k equal cells of [0, 3] times 0.48448 / rho;
    PRIVEE++'s (``rho`` None): cells of [0, 1], class i scaled by 0.48448 / rho_i with rho_i
    the i-th of k equal steps from 0.05 to 0.1."""
    if rho is None:
        edges, scale = np.linspace(0.0, 1.0, k + 1), 0.48448 / np.linspace(0.05, 0.1, k + 1)[1:]
    else:
        edges, scale = np.linspace(0.0, 3.0, k + 1), np.full(k, 0.48448 / rho)
    return gen.uniform(edges[:-1], edges[1:]) * scale


def privee_publish(P, rho, rng=0, dtype=np.float32):
    """The PRIVEE (``rho`` a number) or PRIVEE++ (``rho`` None) defence applied to one batch of
    scores ``P`` (N, k): one draw of the diagonal n for the batch, ``M = I - (2/k) 1 1^T +
    diag(n)``, each row sorted ascending, multiplied by M and put back in its classes'
    places; published as ``dtype`` (float32 by default, as the defence's reference code does)."""
    P = np.asarray(P, dtype=float)
    N, k = P.shape
    gen = np.random.default_rng(rng)
    M = np.eye(k) - (2.0 / k) + np.diag(_privee_noise(k, rho, gen))
    order = np.argsort(P, axis=1, kind="stable")
    out = np.empty_like(P)
    np.put_along_axis(out, order, np.take_along_axis(P, order, axis=1) @ M.T, axis=1)
    return out.astype(dtype)


def recover_privee(U) -> tuple:
    """Invert a PRIVEE or PRIVEE++ release of one batch (docs/vflattack.md, "PRIVEE").

    The map keeps each row's order (``(M s)_i = (1 + n_i) s_i - 2/k`` grows with i when s is
    sorted ascending and n is), so sorting each published row gives ``U_sorted = S_sorted
    M^T``. Every row of S sums to 1, so ``U_sorted w = 1`` for ``w = M^-T 1``: one least
    squares problem over the batch, k unknowns, full rank for N >= k generic rows. Then
    ``M^T w = 1`` with ``M = I - (2/k) 1 1^T + diag(n)`` gives ``n_i = (1 - (w_i - (2/k) sum
    w)) / w_i``, and each row is ``M^-1 u_sorted``, put back in its classes' places.

    Returns ``(S, half, n)``: the recovered scores (N, k), each one's half-width (N, k),
    and the recovered diagonal. PRIVEE++'s diagonal need not grow with i (its scales
    shrink as its cells rise), so the map may reorder close scores within a run of places
    where it does not grow; every order of such a run that keeps the row's scores summing
    to 1 and rising with the rank is tried, and a score's interval spans all that are
    consistent. Beyond that, the half-width is 30 times the error measured by
    refitting (:func:`_privee_delta`): the map is fitted again on 16 copies of the batch,
    each without a random quarter of its rows and with every value moved at random by its
    rounding (float32: 2^-24), and the largest change of a recovered score, plus the
    rounding of u itself through ``|M^-1|``, is the error, ``delta``. On saturated or
    near-uniform batches U_sorted is ill-conditioned, the refits disagree and delta grows:
    the audit then says less, rather than something false. It is a measured estimate, not a
    proof (a worst-case bound through sigma_min(U_sorted) is 10^3 to 10^6 times the real
    error on float32 releases; the margin 30 is measured, see ``_PRIVEE_MARGIN``); the
    tests hold every record inside it, on float32 and float64 releases, k = 2 to 10,
    saturated, near-uniform or with duplicated rows.

    Raises
    ------
    InvalidInputError
        If the batch has fewer than k + 1 rows (the system for w has k unknowns, and k rows
        fit some map exactly, right or wrong), or its rows do not determine w
        (rank-deficient: e.g. repeated rows).
    """
    U = np.asarray(U, dtype=float)
    if U.ndim != 2:
        raise InvalidInputError(f"a PRIVEE release must be a 2-D batch (N, k); got shape {U.shape}")
    N, k = U.shape
    finite = np.all(np.isfinite(U), axis=1)
    if finite.sum() < k + 1:
        raise InvalidInputError(f"PRIVEE's map is recovered from the batch: it needs at least k + 1 = {k + 1} rows "
                                f"with finite scores (one draw per batch, k unknowns, and one row more to check the "
                                f"fit: k rows fit some map exactly, right or wrong); got {int(finite.sum())}")
    order = np.argsort(np.where(finite[:, None], U, 0.0), axis=1, kind="stable")
    Us = np.take_along_axis(U, order, axis=1)
    Uf = Us[finite]
    w, _, rank, _ = np.linalg.lstsq(Uf, np.ones(Uf.shape[0]), rcond=None)
    if rank < k or np.any(w == 0):
        raise InvalidInputError(f"the PRIVEE batch does not determine its map: its sorted rows have rank {rank} < "
                                f"k = {k} (repeated or too few distinct rows)")
    eta = 2.0 ** -24 if _is_float32(U[finite]) else 8 * np.finfo(float).eps
    w, fitted = _privee_fit(Uf, w, eta, k)
    n = (1.0 - (w - (2.0 / k) * w.sum())) / w
    delta, dn = _privee_delta(fitted, w, n, eta, k)
    # each class's interval spans every consistent assignment; a row with none is dropped
    lo_s, hi_s = np.full(Uf.shape, np.inf), np.full(Uf.shape, -np.inf)
    for _, ok, Sa in _privee_candidates(Uf, n, delta, k, dn):
        lo_s[ok], hi_s[ok] = np.minimum(lo_s[ok], Sa[ok] - delta), np.maximum(hi_s[ok], Sa[ok] + delta)
    found = np.isfinite(lo_s).all(axis=1)
    S, half = np.full(U.shape, np.nan), np.full(U.shape, np.nan)
    S_sorted, half_sorted = np.full(U.shape, np.nan), np.full(U.shape, np.nan)
    fin = np.flatnonzero(finite)
    S_sorted[fin[found]] = 0.5 * (lo_s[found] + hi_s[found])
    half_sorted[fin[found]] = 0.5 * (hi_s[found] - lo_s[found])
    np.put_along_axis(S, order, S_sorted, axis=1)
    np.put_along_axis(half, order, half_sorted, axis=1)
    return S, half, n


def _privee_fit(Uf, w, eta, k) -> tuple:
    """The map's ``w`` fitted robustly on the sorted finite rows ``Uf`` from the first least
    squares ``w``, and the rows it was last fitted on."""
    # PRIVEE++'s diagonal need not grow with i (its scales shrink as its cells rise), so the
    # map may swap close scores: such a row, sorted, is not M s_sorted and misses u . w = 1.
    # The map is fitted again without the rows that miss it by more than ten times the
    # median row (or the rounding, if larger), until those rows stop changing.
    tol = 1e3 * eta * float(np.abs(w).sum() * np.abs(Uf).max())
    good = np.ones(Uf.shape[0], dtype=bool)
    for _ in range(20):
        miss = np.abs(Uf @ w - 1.0)
        now = miss <= max(tol, 10.0 * float(np.median(miss)))
        if now.sum() < k or np.array_equal(now, good):
            break
        good = now
        w = np.linalg.lstsq(Uf[good], np.ones(int(good.sum())), rcond=None)[0]
    # Then, three times: each row's consistent assignments of ranks (_privee_candidates)
    # under the fitted map; the map is fitted again on the rows with exactly one, each in it.
    fitted = Uf[good]
    for _ in range(3):
        n = (1.0 - (w - (2.0 / k) * w.sum())) / w
        delta, dn = _privee_delta(fitted, w, n, eta, k)
        cands = _privee_candidates(Uf, n, delta, k, dn)
        count = sum(ok.astype(int) for _, ok, _ in cands)
        ranked = Uf.copy()
        for ranks, ok, _ in cands:
            one = ok & (count == 1)
            if ranks is not None and one.any():
                placed = np.empty((int(one.sum()), k))
                placed[:, ranks] = Uf[one]
                ranked[one] = placed
        good = count == 1
        if good.sum() < k:
            break
        fitted = ranked[good]
        w = np.linalg.lstsq(fitted, np.ones(fitted.shape[0]), rcond=None)[0]
    return w, fitted


def _privee_delta(Ur, w, n, eta, k):
    """The recovered scores' error, measured by fitting the map again on copies of the rows
    ``Ur`` (in rank order): each copy leaves out a random quarter of the rows (at least one)
    and moves every published value at random by eta of its magnitude (float32: 2^-24;
    float64: a few ulps of the defence's arithmetic). The first shows how well the batch
    determines the map (a diagonal entry that only saturated rows see, a row swapped
    unseen), the second the rounding. 10 times the largest change of a recovered score,
    plus the rounding of u through |M^-1|; and the same margin times the largest change of
    the diagonal n (a fall of n within it may be a rise, and the reverse)."""
    gen = np.random.default_rng(0)
    base = _privee_solve(Ur, n, k)
    N = Ur.shape[0]
    keep = max(k, min(N - 1, (3 * N) // 4))
    spread = dn = 0.0
    for _ in range(_PRIVEE_REFITS):
        rows = np.sort(gen.choice(N, size=keep, replace=False))
        Up = Ur[rows] * (1.0 + eta * gen.uniform(-1.0, 1.0, (keep, k)))
        wp = np.linalg.lstsq(Up, np.ones(keep), rcond=None)[0]
        if np.any(wp == 0):
            return np.inf, np.inf
        n_p = (1.0 - (wp - (2.0 / k) * wp.sum())) / wp
        spread = max(spread, float(np.abs(_privee_solve(Ur, n_p, k) - base).max()))
        dn = max(dn, float(np.abs(n_p - n).max()))
    M = np.eye(k) - (2.0 / k) + np.diag(n)
    rounding = float(np.abs(np.linalg.inv(M)).sum(axis=1).max()) * eta * float(np.abs(Ur).max())
    return _PRIVEE_MARGIN * (spread + rounding), _PRIVEE_MARGIN * dn


def _inversion_blocks(n, dn: float = 0.0) -> list:
    """The runs of sorted places ``[lo, hi]`` within which the map may reorder scores: the
    smallest intervals covering every pair i < j with n_i > n_j - dn (``dn``: how far the
    fitted n may be from the true one; between runs, n grows, so the order is kept)."""
    k = n.size
    blocks: list = []
    for i in range(k):
        for j in range(i + 1, k):
            if n[i] > n[j] - dn:
                if blocks and i <= blocks[-1][1]:
                    blocks[-1][1] = max(blocks[-1][1], j)
                else:
                    blocks.append([i, j])
    merged: list = []
    for lo, hi in sorted(blocks):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


#: at most this many rank assignments are tried per batch (the product of the blocks'
#: permutations); past it, each place's score is bounded over its block's ranks instead
_PRIVEE_ASSIGNMENTS = 720


def _privee_candidates(Us, n, delta, k, dn=0.0):
    """Which classes took which rank, row by row. Within an inversion block
    (:func:`_inversion_blocks`) the map may have permuted the scores in any order; every
    permutation of every block is tried, and an assignment is consistent when its scores sum
    to 1 and rise with the rank, up to delta. Returns ``[(ranks, consistent rows, scores by
    sorted place)]``, the sorted order first; ``ranks[p]`` is the rank of the class at
    sorted place p. With more than ``_PRIVEE_ASSIGNMENTS`` assignments, two entries with
    ``ranks`` None bound each place's score over the ranks of its block, on every row."""
    blocks = _inversion_blocks(n, dn)
    sizes = [hi - lo + 1 for lo, hi in blocks]
    if math.prod(math.factorial(m) for m in sizes) > _PRIVEE_ASSIGNMENTS:
        lo_s, hi_s = (Us + 2.0 / k) / (1.0 + n), (Us + 2.0 / k) / (1.0 + n)
        for lo, hi in blocks:
            for r in range(lo, hi + 1):
                v = (Us[:, lo:hi + 1] + 2.0 / k) / (1.0 + n[r])
                lo_s[:, lo:hi + 1], hi_s[:, lo:hi + 1] = np.minimum(lo_s[:, lo:hi + 1], v), np.maximum(hi_s[:, lo:hi + 1], v)
        every = np.ones(Us.shape[0], dtype=bool)
        return [(None, every, lo_s), (None, every, hi_s)]
    out = []
    for perms in itertools.product(*(itertools.permutations(range(lo, hi + 1)) for lo, hi in blocks)):
        ranks = np.arange(k)
        for (lo, hi), perm in zip(blocks, perms):
            ranks[lo:hi + 1] = perm
        Sa = (Us + 2.0 / k) / (1.0 + n[ranks])
        by_rank = np.empty_like(Sa)
        by_rank[:, ranks] = Sa
        ok = (np.abs(Sa.sum(axis=1) - 1.0) <= k * delta) & np.all(np.diff(by_rank, axis=1) >= -2 * delta, axis=1)
        out.append((ranks, ok, Sa))
    return out


#: refits on subsampled, perturbed copies that measure how well the batch determines the
#: recovered scores (recover_privee)
_PRIVEE_REFITS = 16
#: the half-width over the measured spread. The refits sample the error, they do not bound
#: it: over 590 random batches (k = 2..10, N = k + 1..300, Dirichlet alpha 0.01..1000,
#: duplicated rows, float32 and float64) the error reached 15 times the spread, on
#: near-uniform float32 batches (alpha 1000, whose sorted rows are nearly parallel); at 30,
#: with the inversion runs widened by the refits' change of n, 1 000 other batches had no
#: score outside its interval (tests/vflattack/test_va_defences.py runs such batches)
_PRIVEE_MARGIN = 30.0


def _privee_solve(Us, n, k):
    """The sorted scores of each sorted row for the diagonal ``n``: ``M s = u`` with
    ``1^T s = 1`` gives ``s_i = (u_i + 2/k) / (1 + n_i)``."""
    return (Us + 2.0 / k) / (1.0 + n)


def _is_float32(values) -> bool:
    """Whether every value is a float32 number (a float32 release, or one handed over as float64)."""
    return bool(np.all(values.astype(np.float32).astype(float) == values))


def _round_significant(P, digits):
    """``P`` rounded to ``digits`` significant decimal digits, entry by entry (through the
    decimal string, as a deployment printing ``%.{digits-1}e`` does)."""
    flat = np.asarray(P, dtype=float).ravel()
    out = np.array([float(f"{v:.{digits - 1}e}") if np.isfinite(v) else v for v in flat])
    return out.reshape(np.shape(P))


@dataclass(frozen=True)
class _Recovered(Release):
    """Scores recovered from a defence (PRIVEE), each with its own half-width: audited as
    bounded noise of those widths."""

    half: Any = field(default=None, repr=False, compare=False)

    def half_widths(self, S: np.ndarray) -> Any:
        return np.where(np.isfinite(self.half), self.half, 0.0)


@dataclass(frozen=True)
class BoundedSystem:
    """``L[n] <= A x_n <= U[n]`` over the class pairs ``pairs`` (for a link other than softmax,
    one row ``(j,)`` per output); ``flags`` explain refused rows; ``outer`` (N, rows), where
    given, marks rows whose interval is the hull of a union (a link that is not monotone)."""

    A: np.ndarray
    L: np.ndarray
    U: np.ndarray
    pairs: tuple
    flags: np.ndarray
    outer: np.ndarray | None = None

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
    t = release.half_widths(S)
    return S - t, S + t


def _pair_log_bounds(ell, ups, pairs):
    """``[ln(ell_j / ups_i), ln(ups_j / ell_i)]`` for every pair (ln 0 = -inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ell, log_ups = np.log(ell), np.log(np.maximum(ups, 0.0))
        lo = np.stack([log_ell[:, j] - log_ups[:, i] for i, j in pairs], axis=1)
        hi = np.stack([log_ups[:, j] - log_ell[:, i] for i, j in pairs], axis=1)
    return lo, hi


def _order_rows(lo, hi, above, pairs):
    """Intersect the pair bounds with the known order: ``above[n, a, b]`` True says
    ``c_a >= c_b`` (so ``z_a - z_b >= 0``) in row n."""
    for q, (i, j) in enumerate(pairs):
        lo[above[:, j, i], q] = np.maximum(lo[above[:, j, i], q], 0.0)   # ln(c_j / c_i) >= 0
        hi[above[:, i, j], q] = np.minimum(hi[above[:, i, j], q], 0.0)
    return lo, hi


def _rank_bounds(released, k, pairs):
    """The rank release: an integer ranking per row (the classes best first) or pseudo-scores
    (higher is better; tied classes are left unordered). Each class is held below the
    classes of the next higher score level only (k - 1 one-sided rows without ties: the
    others follow). Returns (lo, hi, flags)."""
    R = np.asarray(released)
    if R.ndim != 2 or R.shape[1] != k:
        raise InvalidInputError(f"a rank release must have shape (N, {k}): a ranking or pseudo-scores per row; "
                                f"got shape {R.shape}")
    N = R.shape[0]
    flags = np.zeros(N, dtype=np.int64)
    if np.issubdtype(R.dtype, np.integer):   # R[n, r] = the class at rank r: scores k - r
        ok = np.all(np.sort(R, axis=1) == np.arange(k), axis=1)
        flags[~ok] |= int(ScoreFlag.IMPOSSIBLE)
        level = np.zeros((N, k))
        np.put_along_axis(level, np.where(ok[:, None], R, np.arange(k)), np.arange(k, 0, -1, dtype=float)[None, :]
                          * np.ones((N, 1)), axis=1)
    else:
        level = R.astype(float)
        if k > 2 and np.all(np.sort(level, axis=1) == np.arange(k)):
            raise InvalidInputError("a rank release given as floats that are each row's class indices 0..k-1: pass the "
                                    "ranking as an integer array (the classes best first), or pseudo-scores (higher "
                                    "ranked higher); the two read in opposite directions")
        flags[~np.all(np.isfinite(level), axis=1)] |= int(ScoreFlag.NONFINITE)
        level = np.where(np.isfinite(level), level, 0.0)
    # the next higher level of each class: the smallest level above its own
    bigger = level[:, None, :] > level[:, :, None]                       # [n, b, a]: a above b
    nxt = np.where(bigger, level[:, None, :], np.inf).min(axis=2)        # [n, b]
    above = bigger & (level[:, None, :] == nxt[:, :, None])              # a at b's next level
    lo, hi = np.full((N, len(pairs)), -np.inf), np.full((N, len(pairs)), np.inf)
    lo, hi = _order_rows(lo, hi, np.transpose(above, (0, 2, 1)), pairs)
    return lo, hi, flags


def _topk_bounds(S, release, k, pairs):
    """The top-K release: ``S`` (N, k) with the K published probabilities (rounded, half-width
    t) and NaN for the withheld classes. A published class lies in [s - t, s + t]; a withheld
    class is below every published one (so below the smallest published upper bound) and
    below what the published ones leave, 1 - sum(s - t); then the simplex tightens all, and
    the order (a published s_a > s_b, or a withheld b) gives one-sided rows."""
    N = S.shape[0]
    t = release.half_width_for(k)
    shown = np.isfinite(S)
    flags = np.zeros(N, dtype=np.int64)
    flags[shown.sum(axis=1) != min(release.top, k)] |= int(ScoreFlag.IMPOSSIBLE)
    Sf = np.where(shown, S, 0.0)
    flags[np.any(shown & ((Sf < -t - 1e-12) | (Sf > 1 + t + 1e-12)), axis=1)] |= int(ScoreFlag.IMPOSSIBLE)
    plo, phi = np.where(shown, Sf - t, 0.0), np.where(shown, Sf + t, 0.0)
    cap = np.minimum(np.where(shown, np.clip(phi, 0.0, 1.0), np.inf).min(axis=1),
                     1.0 - np.where(shown, np.clip(plo, 0.0, 1.0), 0.0).sum(axis=1))
    phi = np.where(shown, phi, np.maximum(cap, 0.0)[:, None])
    ell, ups, impossible = _simplex_tightened(plo, phi)
    flags[impossible] |= int(ScoreFlag.IMPOSSIBLE)
    lo, hi = _pair_log_bounds(ell, ups, pairs)
    level = np.where(shown, Sf, -1.0)                        # withheld: below every published class
    above = level[:, :, None] > level[:, None, :]            # [n, a, b]: c_a >= c_b
    return _order_rows(lo, hi, above, pairs) + (flags,)


def _roundnorm_bounds(S, release, k, pairs):
    """Round then renormalise: ``s = r / sigma`` with ``r`` the rounded vector and
    ``sigma = sum r`` in ``[1 - k t, 1 + k t]``. Per class, ``c_i`` lies in
    ``[s_i sigma - t, s_i sigma + t]`` for some sigma in that range (the union over sigma,
    then the simplex); and for one pair the *same* sigma serves both classes, so
    ``c_j / c_i`` lies in ``[(s_j sigma - t) / (s_i sigma + t), (s_j sigma + t) / (s_i sigma - t)]``,
    whose ends are monotone in sigma and both reached at the smallest sigma. The two bounds
    are intersected."""
    t = release.half_width_for(k)
    s_min, s_max = max(1.0 - k * t, 0.0), 1.0 + k * t
    ell, ups, impossible = _simplex_tightened(S * s_min - t, S * s_max + t)
    lo, hi = _pair_log_bounds(ell, ups, pairs)
    num_lo, num_hi = np.clip(S * s_min - t, 0.0, None), S * s_min + t
    with np.errstate(divide="ignore", invalid="ignore"):
        for q, (i, j) in enumerate(pairs):
            den_lo = S[:, i] * s_min - t
            r_lo = np.log(num_lo[:, j]) - np.log(num_hi[:, i])
            r_hi = np.where(den_lo > 0, np.log(num_hi[:, j]) - np.log(np.where(den_lo > 0, den_lo, 1.0)), np.inf)
            lo[:, q], hi[:, q] = np.maximum(lo[:, q], r_lo), np.minimum(hi[:, q], r_hi)
    return lo, hi, impossible


def _log_ratio_bounds(release, S, k):
    """Bounds on ``ln(c_j / c_i)`` for every pair ``i < j``: (lo, hi, impossible), each (N, P)."""
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    N = S.shape[0]
    if release.kind == "loground":
        t = release.half_width_for(k)
        lo = np.stack([S[:, j] - S[:, i] - 2 * t for i, j in pairs], axis=1)
        return pairs, lo, lo + 4 * t, np.zeros(N, dtype=bool)
    if release.kind == "roundnorm":
        lo, hi, impossible = _roundnorm_bounds(S, release, k, pairs)
        return pairs, lo, hi, impossible
    plo, phi = _prob_intervals(S, release, k)
    ell, ups, impossible = _simplex_tightened(plo, phi)
    lo, hi = _pair_log_bounds(ell, ups, pairs)   # ln 0 = -inf; impossible rows are flagged
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
    for ``loground``; for ``topk``, NaN where a class is withheld); for ``label``, the labels
    (N,) as class indices or one-hot (N, k) rows; for ``top1``, a pair ``(labels,
    probabilities)``; for ``rank``, an integer ranking per row (N, k), the classes best
    first, or pseudo-scores (N, k) floats, higher ranked higher. ``Y`` is (N, d_a).

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
    if model.link != "softmax":   # each output on its own: one row per output (vflattack.outputs)
        from .outputs import output_bounds

        return output_bounds(model, released, Y, release)
    k = model.n_classes
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if release.kind == "label":
        lab = np.asarray(released)
        labels = np.argmax(lab, axis=1) if lab.ndim == 2 else lab.astype(np.int64)
        N = labels.shape[0]
        flags = np.where((labels < 0) | (labels >= k), int(ScoreFlag.IMPOSSIBLE), 0).astype(np.int64)
        lo, hi = _label_bounds(np.where(flags == 0, labels, 0), k, pairs)
    elif release.kind == "rank":
        lo, hi, flags = _rank_bounds(released, k, pairs)
        N = flags.shape[0]
    elif release.kind == "topk":
        S = np.asarray(released, dtype=np.float64)
        if S.ndim != 2 or S.shape[1] != k:
            raise InvalidInputError(f"released scores must have shape (N, {k}) (NaN where withheld); got shape {S.shape}")
        N = S.shape[0]
        lo, hi, flags = _topk_bounds(S, release, k, pairs)
        flags[np.any(np.isinf(S), axis=1)] |= int(ScoreFlag.NONFINITE)
    elif release.kind == "top1":
        lo, hi, flags = _top1_bounds(released, release, k, pairs)
        N = flags.shape[0]
    else:
        pairs, lo, hi, flags = _score_bounds(released, release, k)
        N = flags.shape[0]
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
        # score, zero noise) comes out with L above U, or A x outside, by ~1e-15: reported empty.
        slack = 4.0 * (8 + model.n_passive + model.n_active) * np.finfo(float).eps * (
            1.0 + np.abs(shift) + np.abs(A).sum(axis=1) + np.where(np.isfinite(lo), np.abs(lo), 0.0)
            + np.where(np.isfinite(hi), np.abs(hi), 0.0))
        L, U = L - slack, U + slack
    L[flags != 0], U[flags != 0] = np.nan, np.nan
    return BoundedSystem(A, L, U, tuple(pairs), flags)


def _top1_bounds(released, release, k, pairs) -> tuple:
    """``(lo, hi, flags)`` of a top-1 release: the label and its rounded probability."""
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
    return lo, hi, flags


def _score_bounds(released, release, k) -> tuple:
    """``(pairs, lo, hi, flags)`` of a release of k scores per row (probabilities, rounded,
    noisy, log-probabilities, or PRIVEE's, recovered first and audited as bounded noise)."""
    S = np.asarray(released, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] != k:
        raise InvalidInputError(f"released scores must have shape (N, {k}); got shape {S.shape}")
    if release.kind in ("privee", "priveeplus"):   # recover the scores, audit them as bounded noise
        S, half, _ = recover_privee(S)
        release = _Recovered("noise", 0.0, half=half)
    N = S.shape[0]
    flags = np.zeros(N, dtype=np.int64)
    finite = np.all(np.isfinite(S), axis=1)
    flags[~finite] |= int(ScoreFlag.NONFINITE)
    Sf = np.where(finite[:, None], S, 0.5)
    if release.kind != "loground":
        t = release.half_widths(Sf)
        flags[finite & (np.any(Sf < -t - 1e-12, axis=1) | np.any(Sf > 1 + t + 1e-12, axis=1))] |= int(ScoreFlag.IMPOSSIBLE)
    pairs, lo, hi, impossible = _log_ratio_bounds(release, Sf, k)
    flags[finite & impossible] |= int(ScoreFlag.IMPOSSIBLE)
    return pairs, lo, hi, flags


def decimals_of(V: Any, most: int = 8) -> int | None:
    """The fewest decimals D <= ``most`` with every value a multiple of 10^-D (to a few ulps
    of the value: a multiple of 10^-D stored as a float, times 10^D, is that close to an
    integer), or None when more are needed (a full-precision value).

    Examples
    --------
    >>> decimals_of([[0.25, 1.5], [3.0, 0.75]]), decimals_of([[1 / 3]])
    (2, None)
    """
    V = np.asarray(V, dtype=float)
    for D in range(most + 1):
        Z = V * 10.0 ** D
        if np.all(np.abs(Z - np.round(Z)) <= 1e-9 + 8.0 * np.finfo(float).eps * np.abs(Z)):
            return D
    return None


def _digits_of(V, most: int = 8) -> int | None:
    """The fewest significant digits S <= ``most`` that write every value exactly."""
    V = np.asarray(V, dtype=float).ravel()
    for S in range(1, most + 1):
        if np.array_equal(_round_significant(V, S), V):
            return S
    return None


def fitting_kinds(published: Any, k: int, limit: int = 500) -> list[str]:
    """The release spellings that explain ``published`` data, judged on its first ``limit``
    rows: what :func:`verdict` suggests when the named release does not fit.

    * integers per row (N,), in [0, k): ``label``; a permutation of the classes per row
      (N, k): ``rank``;
    * (N, k) with the same number K < k of finite entries per row: ``topk:K:D``;
    * rows that sum to 1 up to their rounding: ``round:D`` (every value a multiple of
      10^-D), ``sig:S`` (S significant digits), ``float32``, ``roundnorm:D`` (a common
      factor puts the row on the 10^-D grid), or ``exact``;
    * log-probabilities (rows whose exp sums to 1): ``loground:D`` or ``exact`` with log scores;
    * rows that do not sum to 1, at least 2k of them, that a PRIVEE map recovers on at least
      99 % of the rows: ``priveeplus`` / ``privee:RHO`` (the audit does not depend on RHO);
    * values in [0, 1] whose rows do not sum to 1: ``ovr``, a model that publishes each
      class's sigmoid on its own (first when some row is more than 0.5 from 1);
    * otherwise rows within a band of the simplex: ``noise:DELTA`` with the band's width.

    Examples
    --------
    >>> fitting_kinds(np.array([[0.25, 0.75], [0.5, 0.5]]), 2)
    ['round:2']
    >>> fitting_kinds(np.array([[0, 1], [1, 0]]), 2)
    ['rank']
    """
    if isinstance(published, tuple) and len(published) == 2:
        lab, p = (np.asarray(v)[:limit] for v in published)
        D = decimals_of(p[np.isfinite(p)])
        return [f"top1:{D}"] if D is not None and np.all((lab >= 0) & (lab < k)) else []
    V = np.asarray(published)[:limit]
    if V.ndim == 1:
        ok = np.issubdtype(V.dtype, np.integer) or (np.all(np.isfinite(V)) and np.all(V == np.round(V)))
        return ["label"] if ok and np.all((V >= 0) & (V < k)) else []
    if V.ndim != 2 or V.shape[1] != k or V.shape[0] == 0:
        return []
    if np.issubdtype(V.dtype, np.integer):
        return ["rank"] if np.all(np.sort(V, axis=1) == np.arange(k)) else []
    V = V.astype(float)
    shown = np.isfinite(V)
    counts = shown.sum(axis=1)
    if np.any(np.isnan(V)):
        K = int(counts[0])
        D = decimals_of(V[shown])
        return [f"topk:{K}:{D}"] if 0 < K < k and np.all(counts == K) and D is not None else []
    if np.any(~shown):
        return []
    if np.all(V <= 1e-12):   # log-probabilities
        return _fitting_log_kinds(V, k)
    return _fitting_score_kinds(V, k)


def _fitting_log_kinds(V, k) -> list[str]:
    """:func:`fitting_kinds` of log-probabilities."""
    lse = np.log(np.exp(V).sum(axis=1))
    D = decimals_of(V, 6)
    if D is not None and np.all(np.abs(lse) <= 2 * k * 0.5 * 10.0 ** -D + 1e-9):
        return [f"loground:{D}"]
    return ["exact (log-probabilities)"] if np.all(np.abs(lse) <= 1e-9) else []


def _fitting_score_kinds(V, k) -> list[str]:
    """:func:`fitting_kinds` of k finite values per row that are not log-probabilities."""
    out = []
    sums = V.sum(axis=1)
    in_unit = np.all((V >= -1e-12) & (V <= 1 + 1e-12))
    D = decimals_of(V, 8)
    if in_unit and D is not None and D < 8 and np.all(np.abs(sums - 1.0) <= k * 0.5 * 10.0 ** -D + 1e-9):
        out.append(f"round:{D}")
    S = _digits_of(V, 8)
    if in_unit and S is not None and S < 8 and (D is None or S < D) and np.all(
            np.abs(sums - 1.0) <= k * 0.5 * 10.0 ** (1 - S) + 1e-9):
        out.append(f"sig:{S}")
    if in_unit and np.all(np.abs(sums - 1.0) <= 1e-9) and D is None:
        for Dn in range(1, 7):   # roundnorm: some sigma = sum(r) on the 10^-Dn grid puts the row on it
            # sigma = sum(r) lies within k half-steps of 1 and is itself on the grid
            steps = np.arange(-(k // 2) - 1, k // 2 + 2)
            sig = np.round((1.0 + steps * 10.0 ** -Dn) * 10.0 ** Dn) / 10.0 ** Dn
            sig = sig[sig > 0]
            Z = V[:, :, None] * sig[None, None, :] * 10.0 ** Dn
            if np.all(np.any(np.all(np.abs(Z - np.round(Z)) <= 1e-7, axis=1), axis=1)):
                out.append(f"roundnorm:{Dn}")
                break
    if in_unit and np.all(V.astype(np.float32).astype(float) == V) and np.all(np.abs(sums - 1.0) <= 1e-5) \
            and D is None:
        out.append("float32")
    if in_unit and np.all(np.abs(sums - 1.0) <= 1e-9) and D is None and not out:
        out.append("exact")
    if not np.all(np.abs(sums - 1.0) <= 1e-5) and V.shape[0] >= 2 * k:   # k rows always fit a map: ask for 2k
        try:
            Sr, half, _ = recover_privee(V)
            found = np.all(np.isfinite(Sr), axis=1)
            if found.mean() >= 0.99 and np.nanmedian(half) < 1e-3 and np.all(
                    (Sr[found] >= -1e-3) & (Sr[found] <= 1 + 1e-3)):
                out.append("priveeplus (or privee:RHO)")
        except InvalidInputError:
            pass
    if not out and np.all(np.abs(sums - 1.0) <= 0.5):
        band = float(np.abs(sums - 1.0).max()) / k
        out.append(f"noise:{max(band, 1e-12):.2g} (at least: the rows sum to 1 within {k * band:.2g})")
    if in_unit and not np.all(np.abs(sums - 1.0) <= 1e-5):   # each score its own sigmoid (one-vs-rest)
        ovr = "ovr (link: each score its own sigmoid, as FATE's one-vs-rest; the rows do not sum to 1)"
        out.insert(0 if np.any(np.abs(sums - 1.0) > 0.5) else len(out), ovr)
    return out


def verdict(release: Release | None, valid: np.ndarray, published: Any, k: int) -> str | None:
    """The first line of an audit whose rows are mostly not valid under ``release`` (None:
    exact scores): says the audit could not model the release, the share of rows refused,
    and the kinds that fit the data (:func:`fitting_kinds`). None when most rows are valid.

    Examples
    --------
    >>> line = verdict(None, np.array([False, False]), np.array([[0.25, 0.74], [0.5, 0.5]]), 2)
    >>> line.split("; ")[0]
    "the audit could not model this release: 2 of 2 rows (100%) are not valid under 'exact'"
    >>> line.split("; ")[1]
    'the data fit: round:2 (audit with --release round:2)'
    """
    valid = np.asarray(valid, dtype=bool)
    if valid.size == 0 or valid.mean() >= 0.5:
        return None
    return verdict_line(release, int((~valid).sum()), valid.size, fitting_kinds(published, k))


def verdict_line(release: Release | None, refused: int, rows: int, fits: list) -> str:
    """:func:`verdict`'s sentence from its counts (a log audit sums them over partitions)."""
    head = (f"the audit could not model this release: {refused} of {rows} rows ({refused / rows:.0%}) are not "
            f"valid under {(release or Release()).spec!r}")
    if not fits:
        return head + "; no known release kind fits the data (vflattack.release.KINDS)"
    first = fits[0].split(" ")[0]
    how = "--link ovr" if first == "ovr" else f"--release {first}"
    return head + f"; the data fit: {', '.join(fits)} (audit with {how})"
