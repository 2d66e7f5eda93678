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

Every kind is one entry of :data:`TABLE` (a :class:`ReleaseKind`): its spelling and
parameter, what it publishes, the bounds a published value implies, its prediction-log
columns, its words in a report and the facts other modules read (``full_scores``,
``decimals``, ``noisy``, ``output_links``, ...); :data:`KINDS` is a view of it. Adding a
release is adding an entry. ``top1:D`` and ``topk:1:D`` publish the same thing and get one
set. A PRIVEE release is audited by recovering its scores first: the recovery is an attack
(:mod:`vflattack.attacks.privee`), registered with the table from there
(:func:`register_recovery`), so this layer never imports the attacks; ``privee`` is read
without the defender's rho (the recovery does not use it; publishing does).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from ._validate import InvalidInputError, as_active
from .model import VFLModel
from .system import ScoreFlag

__all__ = ["KINDS", "TABLE", "BoundedSystem", "LogColumns", "Param", "Release", "ReleaseKind", "decimals_of",
           "fitting_kinds", "gaussian_sigma", "privee_publish", "register_recovery", "release_to_bounds", "verdict",
           "verdict_line"]

#: float32's unit roundoff relative to the *rounded* value, u / (1 - u) with u = 2^-24, and
#: half the spacing of its subnormals (what a value below the smallest one rounds within)
_F32_REL = 2.0 ** -24 / (1.0 - 2.0 ** -24)
_F32_ABS = 2.0 ** -150


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
class Param:
    """A release kind's parameter: its name (what :data:`KINDS` lists and the errors say), and
    ``check(kind, value)``, the message of a value it refuses (None: accepted), run after
    the common check (a finite number >= 0); ``optional``: the kind is also read without it
    (``privee``: the audit does not need rho; publishing does)."""

    name: str
    check: Callable[[str, float], str | None] | None = None
    optional: bool = False


@dataclass(frozen=True)
class LogColumns:
    """How a release's published values sit in a prediction log (vflattack/audit/logs.py):
    ``names(k)`` the columns, ``write(published)`` them as ``{column: array}``, ``read(V)``
    the published value back from the columns' (N, c) float values (a missing cell is NaN);
    ``fallback``: a log may hold the probabilities ``p0..`` instead (labels and rankings are
    derived from them); ``needs``: the columns in an error message (``{last}``: k - 1)."""

    names: Callable[[int], list]
    write: Callable[[Any], dict]
    read: Callable[[np.ndarray], Any]
    needs: str
    fallback: bool = False
    log_scores: bool = False


def _int_cells(V):
    return np.where(np.isfinite(V), V, -1).astype(np.int64)


_LOG_P = LogColumns(lambda k: [f"p{i}" for i in range(k)],
                    lambda pub: {f"p{i}": np.asarray(pub[:, i], dtype=float) for i in range(pub.shape[1])},
                    lambda V: V, "p0..p{last}")
_LOG_LOGP = LogColumns(lambda k: [f"logp{i}" for i in range(k)],
                       lambda pub: {f"logp{i}": np.asarray(pub[:, i], dtype=float) for i in range(pub.shape[1])},
                       lambda V: V, "logp0..logp{last}", log_scores=True)
_LOG_LABEL = LogColumns(lambda k: ["label"], lambda pub: {"label": np.asarray(pub, dtype=np.int64)},
                        lambda V: _int_cells(V[:, 0]), "label (or one-hot p0..)", fallback=True)
_LOG_TOP1 = LogColumns(lambda k: ["label", "p_top"],
                       lambda pub: {"label": np.asarray(pub[0], dtype=np.int64), "p_top": np.asarray(pub[1], dtype=float)},
                       lambda V: (_int_cells(V[:, 0]), V[:, 1]), "label and p_top")
_LOG_RANK = LogColumns(lambda k: [f"rank{r}" for r in range(k)],
                       lambda pub: {f"rank{r}": np.asarray(pub[:, r], dtype=np.int64) for r in range(pub.shape[1])},
                       _int_cells, "p0..p{last}", fallback=True)   # a missing cell: not a permutation, refused


@dataclass(frozen=True)
class ReleaseKind:
    """One kind of release: everything the package knows of it, in one entry of :data:`TABLE`
    (adding a release is adding an entry).

    ``name`` and ``param`` (a :class:`Param`, None for a kind without one) are how
    :meth:`Release.parse` reads it and :meth:`Release.spec` writes it (``kind:VALUE``, plus
    ``:CONFIDENCE`` for a ``noisy`` kind); ``parse`` / ``spell`` replace those for a kind
    with its own spelling (``topk:K:D``, ``gaussian:eps=..``). ``publish(release, P, log_P,
    gen)`` is what :meth:`Release.publish_scores` returns; ``bounds(released, release, k,
    pairs)`` the ``(lo, hi, flags)`` on ``ln(c_j / c_i)`` that :func:`release_to_bounds`
    turns into rows; ``half_width(release, k)`` the half-width of a published probability's
    interval (:meth:`Release.half_width_for`), ``half_widths(release, S)`` per entry where it
    is relative (:meth:`Release.half_widths`); ``top_class(published)`` the class each row
    ranks first where the row is not scores (labels, rankings; :meth:`Release.top_class`);
    ``log`` its prediction-log columns; ``words`` it in a report (a template with ``{v}``
    the value, ``{d}`` it as an integer, ``{w}`` 1 - v, ``{top}``; or a function of the
    release). The facts other modules read: ``full_scores`` (a full score vector per row,
    which a naive attack can take as exact), ``decimals`` (the value is a number of
    decimals), ``noisy`` (random noise, certified at a confidence), ``output_links`` (a
    link model may publish its outputs this way: ``"any"`` link, ``"ovr"`` only, None:
    it reads softmax scores; :data:`vflattack.outputs.OUTPUT_RELEASES`), ``takes_top``
    (``top=``), ``takes_dp`` (``dp=``), ``recovers`` (the scores are recovered first,
    through ``recover``, which the attacks layer registers: :func:`register_recovery`),
    ``clips`` (the values are clipped to ``[v, 1 - v]``: a value at an end stands for any
    beyond it), ``arithmetic`` (the kind is the deployment's own number format, not a
    protection: its width is the floor of the exposure's pinned rule,
    :mod:`vflattack.audit.privacy`)."""

    name: str
    param: Param | None
    publish: Callable[..., Any]
    bounds: Callable[..., tuple]
    words: str | Callable[[Any], str]
    log: LogColumns = _LOG_P
    half_width: Callable[[Any, int], float] = lambda r, k: 0.0
    half_widths: Callable[[Any, np.ndarray], Any] | None = None
    top_class: Callable[[Any], np.ndarray] | None = None
    parse: Callable[..., Any] | None = None
    spell: Callable[[Any], str] | None = None
    full_scores: bool = True
    decimals: bool = False
    noisy: bool = False
    output_links: str | None = None
    takes_top: bool = False
    takes_dp: bool = False
    recovers: bool = False
    recover: Callable[[Any], tuple] | None = None
    clips: bool = False
    arithmetic: bool = False


def register_recovery(kinds: Any, recover: Callable[[Any], tuple]) -> None:
    """Register ``recover(U) -> (S, half, extra)`` as the score recovery of the ``recovers``
    kinds named (the attacks layer does, for PRIVEE: :mod:`vflattack.attacks.privee`), so that
    the release layer reaches the recovery without importing the attacks."""
    for name in kinds:
        if not TABLE[name].recovers:
            raise InvalidInputError(f"release {name!r} recovers no scores")
        TABLE[name] = replace(TABLE[name], recover=recover)


def _recovery(kind: str) -> Callable[[Any], tuple]:
    fn = TABLE[kind].recover
    if fn is None:   # only if vflattack.attacks was never imported (importing vflattack imports it)
        raise InvalidInputError(f"release {kind!r}: its recovery is not registered (import vflattack.attacks)")
    return fn


@dataclass(frozen=True)
class Release:
    """How the scores were published (module docstring).

    Parameters
    ----------
    kind : str
        One of :data:`KINDS` (the entries of :data:`TABLE`).
    value : float, optional
        The kind's parameter: decimals for ``round``, ``loground``, ``top1``, ``topk`` and
        ``roundnorm``; epsilon for ``clip``; rho for ``privee`` (optional when auditing: the
        recovery does not use it; publishing needs it); the bound delta for ``noise``; the
        scale (sigma, or Laplace's b) for ``gaussian`` and ``laplace`` (derived from ``dp``
        when given); significant digits for ``sig``.
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
        if self.kind not in TABLE:
            raise InvalidInputError(f"release kind must be one of {tuple(TABLE)}; got {self.kind!r}")
        entry = TABLE[self.kind]
        if self.dp is not None:
            if not entry.takes_dp or self.value is not None:
                raise InvalidInputError("dp=(epsilon, delta, sensitivity) applies to a 'gaussian' release without "
                                        f"its sigma; got kind {self.kind!r}, value {self.value!r}")
            if len(tuple(self.dp)) != 3:
                raise InvalidInputError(f"dp must be (epsilon, delta, sensitivity); got {self.dp!r}")
            dp = tuple(float(v) for v in self.dp)
            object.__setattr__(self, "dp", dp)
            object.__setattr__(self, "value", gaussian_sigma(*dp))
        if entry.takes_top != (self.top is not None):
            raise InvalidInputError("a 'topk' release needs top (the number of classes published), and only it "
                                    f"takes one; got kind {self.kind!r}, top {self.top!r}")
        if self.top is not None:
            if isinstance(self.top, bool) or not float(self.top) == int(self.top) or int(self.top) < 1:
                raise InvalidInputError(f"release 'topk': top must be an integer >= 1; got {self.top!r}")
            object.__setattr__(self, "top", int(self.top))
        param = entry.param
        if param is None and self.value is not None:
            raise InvalidInputError(f"release {self.kind!r} takes no parameter; got {self.value!r}")
        if param is not None and not (param.optional and self.value is None):
            need = param.name
            if self.value is None or not np.isfinite(self.value) or self.value < 0:
                raise InvalidInputError(f"release {self.kind!r} needs {need} >= 0 (e.g. '{self.kind}:2'); got {self.value!r}")
            refused = param.check(self.kind, self.value) if param.check is not None else None
            if refused:
                raise InvalidInputError(refused)
            object.__setattr__(self, "value", float(self.value))
        if not 0.0 < self.confidence < 1.0:
            raise InvalidInputError(f"confidence must be in (0, 1); got {self.confidence!r}")

    @property
    def entry(self) -> ReleaseKind:
        """The kind's entry in :data:`TABLE`."""
        return TABLE[self.kind]

    @classmethod
    def parse(cls, text: str) -> Release:
        """``"exact"``, ``"round:K"``, ``"loground:K"``, ``"clip:EPS"``, ``"label"``,
        ``"top1:K"``, ``"noise:DELTA"``, ``"gaussian:SIGMA[:CONFIDENCE]"``,
        ``"gaussian:eps=E,delta=D,sens=S[:CONFIDENCE]"``, ``"laplace:B[:CONFIDENCE]"``,
        ``"rank"``, ``"topk:K:D"`` (K classes, D decimals), ``"roundnorm:D"``, ``"sig:S"``,
        ``"float32"``, ``"privee[:RHO]"``, ``"priveeplus"`` (:data:`TABLE`)."""
        parts = str(text).strip().split(":")
        entry = TABLE.get(parts[0])
        if entry is not None and entry.parse is not None:
            made = entry.parse(cls, text, parts)
            if made is not None:
                return made
        try:
            value = float(parts[1]) if len(parts) > 1 else None
            confidence = float(parts[2]) if len(parts) > 2 else 0.95
        except ValueError:
            raise InvalidInputError(f"release {text!r}: the parameter must be a number (e.g. round:2)") from None
        if len(parts) > 3 or (len(parts) > 2 and not (entry is not None and entry.noisy)):
            raise InvalidInputError(f"release {text!r} has too many fields")
        return cls(parts[0], value, confidence)

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
        return self.entry.publish(self, P, log_P, np.random.default_rng(rng))

    def describe(self) -> str:
        """The release in words, for the first line of a report (the entry's ``words``)."""
        words = self.entry.words
        if callable(words):
            return words(self)
        v = self.value
        return words.format(v=v, d=None if v is None else int(v), w=None if v is None else 1 - v, top=self.top)

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
        entry = self.entry
        if entry.spell is not None:
            return entry.spell(self)
        if self.value is None:
            return self.kind
        conf = f":{self.confidence:g}" if entry.noisy else ""
        return f"{self.kind}:{self.value:g}{conf}"

    @property
    def decimals(self) -> int | None:
        """The published precision in decimals (rounded kinds), ``None`` otherwise."""
        return int(self.value) if self.entry.decimals else None

    def top_class(self, published: Any) -> np.ndarray:
        """The class each published row ranks first (-1 where it says nothing): what a
        consumer of the release reads as the prediction, so ``top_class(published) ==
        argmax(exact scores)`` is the accuracy the release keeps.

        Examples
        --------
        >>> Release.parse("topk:1:2").top_class(np.array([[np.nan, 0.71], [0.5, np.nan]]))
        array([1, 0])
        """
        if self.entry.top_class is not None:
            return self.entry.top_class(published)
        return _top_of_scores(published)

    def half_width_for(self, k: int) -> float:
        """The half-width t of each published probability's interval, for k classes: the
        rounding half-width 0.5 10^-K, the noise bound delta, or the two-sided quantile of
        random noise at level beta / k (beta = 1 - confidence; the union bound over the k
        classes), ``sigma Phi^{-1}(1 - beta / (2k))`` or ``b ln(k / beta)``."""
        return self.entry.half_width(self, k)

    def half_widths(self, S: np.ndarray) -> Any:
        """The half-width of each published probability's interval: :meth:`half_width_for`
        (one number) for the absolute kinds, per entry for the relative ones: ``sig:S``,
        ``0.5 10^(1-S) |s|`` (the rounded value's leading digit is at least the true one's),
        and ``float32``, ``|s| 2^-24 / (1 - 2^-24)`` or half a subnormal spacing, whichever is
        larger; both widened by 4 ulps of s for the float64 arithmetic of the test itself."""
        if self.entry.half_widths is not None:
            return self.entry.half_widths(self, S)
        return self.half_width_for(S.shape[1])


def _top_of_scores(published) -> np.ndarray:
    """The class of each row's largest finite score (-1 where none is finite)."""
    V = np.asarray(published).astype(float)
    none = ~np.any(np.isfinite(V), axis=1)
    top = np.argmax(np.where(np.isfinite(V), V, -np.inf), axis=1)
    return np.where(none, -1, top).astype(np.int64)


def _top_of_labels(lab) -> np.ndarray:
    lab = np.asarray(lab)
    return (np.argmax(lab, axis=1) if lab.ndim == 2 else lab).astype(np.int64)


def _top_of_ranks(published) -> np.ndarray:
    V = np.asarray(published)
    if np.issubdtype(V.dtype, np.integer):
        return V[:, 0].astype(np.int64)
    return _top_of_scores(V)


def _parse_topk(cls, text, parts):
    if len(parts) != 3:
        raise InvalidInputError(f"release {text!r}: write topk:K:D (K classes published, D decimals; e.g. topk:3:2)")
    try:
        top, decimals = float(parts[1]), float(parts[2])
    except ValueError:
        raise InvalidInputError(f"release {text!r}: K and D must be integers (e.g. topk:3:2)") from None
    return cls("topk", decimals, top=top)


def _parse_gaussian(cls, text, parts):
    """``gaussian:eps=E,delta=D[,sens=S][:CONFIDENCE]``; None for ``gaussian:SIGMA`` (the common spelling)."""
    if not (len(parts) > 1 and "=" in parts[1]):
        return None
    given = {}
    for item in parts[1].split(","):
        key, _, val = item.partition("=")
        try:
            given[key.strip()] = float(val)
        except ValueError:
            raise InvalidInputError(f"release {text!r}: {key.strip()}= needs a number") from None
    if set(given) - {"eps", "delta", "sens"} or not {"eps", "delta"} <= set(given):
        raise InvalidInputError(f"release {text!r}: write gaussian:eps=E,delta=D[,sens=S] (sensitivity default 1)")
    try:
        confidence = float(parts[2]) if len(parts) > 2 else 0.95
    except ValueError:
        raise InvalidInputError(f"release {text!r}: the confidence must be a number") from None
    if len(parts) > 3:
        raise InvalidInputError(f"release {text!r} has too many fields")
    return cls("gaussian", None, confidence, dp=(given["eps"], given["delta"], given.get("sens", 1.0)))


def _spell_gaussian(r) -> str:
    if r.dp is None:
        return f"gaussian:{r.value:g}:{r.confidence:g}"
    e, d, sens = r.dp
    return f"gaussian:eps={e:g},delta={d:g},sens={sens:g}:{r.confidence:g}"


def _gaussian_words(r) -> str:
    if r.dp is not None:
        e, d, sens = r.dp
        return (f"the Gaussian mechanism at epsilon {e:g}, delta {d:g}, sensitivity {sens:g} (sigma {r.value:.4g}); "
                f"certificates hold with probability {r.confidence:g} per record")
    return (f"probabilities with Gaussian noise (sigma {r.value:g}); certificates hold with probability "
            f"{r.confidence:g} per record")


def _laplace_words(r) -> str:
    return (f"probabilities with Laplace noise (b {r.value:g}); certificates hold with probability "
            f"{r.confidence:g} per record")


def _privee_words(r) -> str:
    rho = "rho not given" if r.value is None else f"rho {r.value:g}"
    return (f"PRIVEE at {rho} (sorted scores through A + diag(n), one draw of n per batch, float32)"
            if r.value is not None else
            f"PRIVEE ({rho}: the audit does not need it; sorted scores through A + diag(n), one draw of n per "
            "batch, float32)")


def _publish_privee(r, P, log_P, gen):
    if r.value is None:
        raise InvalidInputError("publishing a 'privee' release needs the defender's rho (privee:RHO, e.g. privee:1); "
                                "auditing one does not")
    return privee_publish(P, r.value, gen)


def _publish_topk(r, P, log_P, gen):
    """The top classes rounded, the others withheld (NaN)."""
    out = np.full(P.shape, np.nan)
    top = np.argsort(-log_P, axis=1, kind="stable")[:, :min(r.top, P.shape[1])]
    np.put_along_axis(out, top, np.round(np.take_along_axis(P, top, axis=1), int(r.value)), axis=1)
    return out


def _publish_roundnorm(r, P, log_P, gen):
    """A row that rounds to all zeros cannot be renormalised: NaN."""
    R = np.round(P, int(r.value))
    total = R.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, R / total, np.nan)


def _rounding_half_width(r, k) -> float:
    # np.round of a probability can land an ulp past the half step (at 11 decimals and
    # more, P * 10^D rounds to ...999.5 and then to even): 4 ulps of 1 more
    return float(0.5 * 10.0 ** (-r.value) + 4 * np.finfo(float).eps)


def _gaussian_half_width(r, k) -> float:
    from scipy.stats import norm

    beta = (1.0 - r.confidence) / k          # per class, so that all k hold together
    return r.value * float(norm.ppf(1.0 - beta / 2.0))


def _laplace_half_width(r, k) -> float:
    return r.value * math.log(1.0 / ((1.0 - r.confidence) / k))


def _sig_half_widths(r, S):
    # a published 0 is a float64 softmax that underflowed: below the smallest normal number
    return np.maximum((0.5 * 10.0 ** (1.0 - r.value) + 4 * np.finfo(float).eps) * np.abs(S), np.finfo(float).tiny)


def _float32_half_widths(r, S):
    return np.maximum((_F32_REL + 4 * np.finfo(float).eps) * np.abs(S), _F32_ABS)


def _integer(kind, v):
    name = TABLE[kind].param.name
    return None if float(v) == int(v) else f"release {kind!r}: {name} must be an integer; got {v!r}"


def _digits(kind, v):
    return _integer(kind, v) or (None if 1 <= v <= 17 else f"release 'sig': digits must be between 1 and 17; got {v!r}")


_DECIMALS = Param("decimals", _integer)


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


def _topk_bounds(S, release, k, pairs, top=None):
    """The top-K release: ``S`` (N, k) with the K published probabilities (rounded, half-width
    t) and NaN for the withheld classes. A published class lies in [s - t, s + t]; a withheld
    class is below every published one (so below the smallest published upper bound) and
    below what the published ones leave, 1 - sum(s - t); then the simplex tightens all, and
    the order (a published s_a > s_b, or a withheld b) gives one-sided rows."""
    N = S.shape[0]
    t = release.half_width_for(k)
    shown = np.isfinite(S)
    flags = np.zeros(N, dtype=np.int64)
    flags[shown.sum(axis=1) != min(release.top if top is None else top, k)] |= int(ScoreFlag.IMPOSSIBLE)
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


def _interval_ratio(release, S, k, pairs) -> tuple:
    """Each probability within its half-width of the published one, tightened by the simplex."""
    t = release.half_widths(S)
    ell, ups, impossible = _simplex_tightened(S - t, S + t)
    lo, hi = _pair_log_bounds(ell, ups, pairs)   # ln 0 = -inf; impossible rows are flagged
    return lo, hi, impossible


def _clip_ratio(release, S, k, pairs) -> tuple:
    """Clipped probabilities: exact inside, a value at a clip end anywhere beyond it."""
    eps = release.value
    plo, phi = S.copy(), S.copy()
    at_low, at_high = np.isclose(S, eps, rtol=0, atol=1e-12), np.isclose(S, 1.0 - eps, rtol=0, atol=1e-12)
    plo[at_low], phi[at_high] = 0.0, 1.0
    ell, ups, impossible = _simplex_tightened(plo, phi)
    lo, hi = _pair_log_bounds(ell, ups, pairs)
    return lo, hi, impossible


def _loground_ratio(release, S, k, pairs) -> tuple:
    """Rounded log-probabilities: ``ln(c_j / c_i)`` within 2t of the published difference."""
    t = release.half_width_for(k)
    lo = np.stack([S[:, j] - S[:, i] - 2 * t for i, j in pairs], axis=1)
    return lo, lo + 4 * t, np.zeros(S.shape[0], dtype=bool)


def _roundnorm_ratio(release, S, k, pairs) -> tuple:
    return _roundnorm_bounds(S, release, k, pairs)


def _label_bounds(labels, k, pairs):
    """``z_y - z_j >= 0`` for the released label y: one-sided pair rows."""
    N = labels.shape[0]
    lo, hi = np.full((N, len(pairs)), -np.inf), np.full((N, len(pairs)), np.inf)
    for p, (i, j) in enumerate(pairs):
        lo[labels == j, p] = 0.0     # ln(c_j / c_i) >= 0 when j is the argmax
        hi[labels == i, p] = 0.0     # ln(c_j / c_i) <= 0 when i is
    return lo, hi


def _label_release_bounds(released, release, k, pairs) -> tuple:
    """The label release: the labels (N,) as class indices or one-hot (N, k) rows."""
    lab = np.asarray(released)
    labels = np.argmax(lab, axis=1) if lab.ndim == 2 else lab.astype(np.int64)
    flags = np.where((labels < 0) | (labels >= k), int(ScoreFlag.IMPOSSIBLE), 0).astype(np.int64)
    lo, hi = _label_bounds(np.where(flags == 0, labels, 0), k, pairs)
    return lo, hi, flags


def _rank_release_bounds(released, release, k, pairs) -> tuple:
    return _rank_bounds(released, k, pairs)


def _topk_release_bounds(released, release, k, pairs) -> tuple:
    """The top-K release (:func:`_topk_bounds`); with K = 1, the top-1 release's set
    (:func:`_one_class_bounds`)."""
    S = np.asarray(released, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] != k:
        raise InvalidInputError(f"released scores must have shape (N, {k}) (NaN where withheld); got shape {S.shape}")
    if release.top == 1:
        shown = np.isfinite(S)
        labels = np.where(shown.sum(axis=1) == 1, np.argmax(shown, axis=1), -1)
        p = np.take_along_axis(np.where(shown, S, np.nan), np.maximum(labels, 0)[:, None], axis=1)[:, 0]
        lo, hi, f_top1, flags = _one_class_bounds(labels, p, release, k, pairs)
        flags = flags | np.where(flags == 0, f_top1, 0)
    else:
        lo, hi, flags = _topk_bounds(S, release, k, pairs)
    flags[np.any(np.isinf(S), axis=1)] |= int(ScoreFlag.NONFINITE)
    return lo, hi, flags


def _top1_release_bounds(released, release, k, pairs) -> tuple:
    """The top-1 release: a pair ``(labels, probabilities)`` (:func:`_one_class_bounds`)."""
    labels, p = (np.asarray(v) for v in released)
    labels, p = labels.astype(np.int64), p.astype(float)
    lo, hi, flags, f_topk = _one_class_bounds(labels, p, release, k, pairs)
    return lo, hi, flags | np.where(flags == 0, f_topk, 0)


def _one_class_bounds(labels, p, release, k, pairs) -> tuple:
    """``top1:D`` and ``topk:1:D`` publish the same thing, the top class and its probability
    rounded to D decimals, and get one set: the intersection of two valid outer sets, the
    top-1 construction (:func:`_top1_bounds`) and the top-K one with K = 1
    (:func:`_topk_bounds`: the withheld classes' cap, the simplex and the order). Returns
    ``(lo, hi, top-1 flags, top-K flags)``; each kind keeps its own flags and adds the
    other's on the rows its own accept (a top-1 probability below 1/k is impossible)."""
    lo1, hi1, f1 = _top1_bounds(labels, p, release, k, pairs)
    S = np.full((labels.shape[0], k), np.nan)
    ok = (labels >= 0) & (labels < k)
    S[np.flatnonzero(ok), labels[ok]] = p[ok]
    lo2, hi2, f2 = _topk_bounds(S, release, k, pairs, top=1)
    with np.errstate(invalid="ignore"):
        return np.fmax(lo1, lo2), np.fmin(hi1, hi2), f1, f2


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
    lo, hi, flags = release.entry.bounds(released, release, k, pairs)
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


def _top1_bounds(labels, p, release, k, pairs) -> tuple:
    """``(lo, hi, flags)`` of a top-1 release: the label and its rounded probability."""
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


def _score_bounds(released, release, k, pairs, ratio=_interval_ratio, in_unit=True) -> tuple:
    """``(lo, hi, flags)`` of a release of k scores per row (probabilities, rounded, noisy or
    log-probabilities): the shared checks, then the kind's ``ratio`` bounds (``in_unit``: the
    published values are probabilities, refused past their half-width outside [0, 1])."""
    S = np.asarray(released, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] != k:
        raise InvalidInputError(f"released scores must have shape (N, {k}); got shape {S.shape}")
    N = S.shape[0]
    flags = np.zeros(N, dtype=np.int64)
    finite = np.all(np.isfinite(S), axis=1)
    flags[~finite] |= int(ScoreFlag.NONFINITE)
    Sf = np.where(finite[:, None], S, 0.5)
    if in_unit:
        t = release.half_widths(Sf)
        flags[finite & (np.any(Sf < -t - 1e-12, axis=1) | np.any(Sf > 1 + t + 1e-12, axis=1))] |= int(ScoreFlag.IMPOSSIBLE)
    lo, hi, impossible = ratio(release, Sf, k, pairs)
    flags[finite & impossible] |= int(ScoreFlag.IMPOSSIBLE)
    return lo, hi, flags


def _recovered_bounds(released, release, k, pairs) -> tuple:
    """A defence whose scores are recovered first (PRIVEE: the recovery the attacks layer
    registers), then audited as bounded noise of each recovered score's half-width."""
    S = np.asarray(released, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] != k:
        raise InvalidInputError(f"released scores must have shape (N, {k}); got shape {S.shape}")
    S, half, _ = _recovery(release.kind)(S)
    return _score_bounds(S, _Recovered("noise", 0.0, half=half), k, pairs)


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
            Sr, half, _ = _recovery("priveeplus")(V)
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
    >>> line = verdict(None, np.array([False, False]), np.array([[0.25, 0.75], [0.5, 0.5]]), 2)
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


def _clip_check(kind, v):
    return None if v < 0.5 else f"release 'clip': epsilon must be below 0.5; got {v!r}"


def _rho_check(kind, v):
    return None if v > 0 else f"release 'privee': rho must be > 0; got {v!r}"


_round = partial(_score_bounds, ratio=_interval_ratio)

#: the release kinds, one entry each (:class:`ReleaseKind`), in the order :data:`KINDS`
#: lists them; the one place a kind is defined
TABLE: dict[str, ReleaseKind] = {e.name: e for e in (
    ReleaseKind("exact", None, lambda r, P, log_P, gen: P, _round, "exact scores (full-precision probabilities)",
                output_links="any"),
    ReleaseKind("round", _DECIMALS, lambda r, P, log_P, gen: np.round(P, int(r.value)), _round,
                "probabilities rounded to {d} decimals", half_width=_rounding_half_width, decimals=True,
                output_links="any"),
    ReleaseKind("loground", _DECIMALS, lambda r, P, log_P, gen: np.round(log_P, int(r.value)),
                partial(_score_bounds, ratio=_loground_ratio, in_unit=False),
                "log-probabilities rounded to {d} decimals", log=_LOG_LOGP,
                half_width=lambda r, k: 0.5 * 10.0 ** (-r.value), decimals=True),
    ReleaseKind("clip", Param("epsilon", _clip_check), lambda r, P, log_P, gen: np.clip(P, r.value, 1.0 - r.value),
                partial(_score_bounds, ratio=_clip_ratio), "probabilities clipped to [{v:g}, {w:g}]",
                output_links="ovr", clips=True),
    # by log-probability, as rank and top-k: no ties where P underflows
    ReleaseKind("label", None, lambda r, P, log_P, gen: np.argmax(log_P, axis=1), _label_release_bounds,
                "the label only (argmax)", log=_LOG_LABEL, top_class=_top_of_labels, full_scores=False),
    ReleaseKind("top1", _DECIMALS, lambda r, P, log_P, gen: (np.argmax(P, axis=1), np.round(P.max(axis=1), int(r.value))),
                _top1_release_bounds, "the top-1 label with its probability rounded to {d} decimals", log=_LOG_TOP1,
                half_width=_rounding_half_width, top_class=lambda pub: _top_of_labels(pub[0]), full_scores=False,
                decimals=True),
    ReleaseKind("noise", Param("delta"), lambda r, P, log_P, gen: P + gen.uniform(-r.value, r.value, P.shape), _round,
                "probabilities with bounded noise |w| <= {v:g}", half_width=lambda r, k: r.value, output_links="any"),
    ReleaseKind("gaussian", Param("scale"), lambda r, P, log_P, gen: P + gen.normal(0.0, r.value, P.shape), _round,
                _gaussian_words, half_width=_gaussian_half_width, parse=_parse_gaussian, spell=_spell_gaussian,
                noisy=True, output_links="any", takes_dp=True),
    ReleaseKind("laplace", Param("scale"), lambda r, P, log_P, gen: P + gen.laplace(0.0, r.value, P.shape), _round,
                _laplace_words, half_width=_laplace_half_width, noisy=True, output_links="any"),
    # the classes best first (by log-probability: no ties where P underflows)
    ReleaseKind("rank", None, lambda r, P, log_P, gen: np.argsort(-log_P, axis=1, kind="stable"), _rank_release_bounds,
                "the order of the classes only (FH-OPE)", log=_LOG_RANK, top_class=_top_of_ranks, full_scores=False),
    ReleaseKind("topk", _DECIMALS, _publish_topk, _topk_release_bounds,
                "the top {top} classes with probabilities rounded to {d} decimals, the rest withheld",
                half_width=_rounding_half_width, parse=_parse_topk,
                spell=lambda r: f"topk:{r.top}:{r.value:g}", full_scores=False, decimals=True, takes_top=True),
    ReleaseKind("roundnorm", _DECIMALS, _publish_roundnorm, partial(_score_bounds, ratio=_roundnorm_ratio),
                "probabilities rounded to {d} decimals, then renormalised to sum 1", half_width=_rounding_half_width,
                decimals=True),
    ReleaseKind("sig", Param("digits", _digits), lambda r, P, log_P, gen: _round_significant(P, int(r.value)), _round,
                "probabilities to {d} significant digits", half_widths=_sig_half_widths, output_links="any"),
    ReleaseKind("float32", None, lambda r, P, log_P, gen: P.astype(np.float32), _round,
                "probabilities as float32 (relative precision 2^-24, subnormals below 2^-126)",
                half_widths=_float32_half_widths, output_links="any", arithmetic=True),
    ReleaseKind("privee", Param("rho", _rho_check, optional=True), _publish_privee, _recovered_bounds, _privee_words,
                recovers=True),
    ReleaseKind("priveeplus", None, lambda r, P, log_P, gen: privee_publish(P, None, gen), _recovered_bounds,
                "PRIVEE++ (sorted scores through A + diag(n), per-class scales, one draw per batch, float32)",
                recovers=True),
)}

#: the release kinds and the parameter each takes (a view of :data:`TABLE`)
KINDS = {name: None if e.param is None else e.param.name for name, e in TABLE.items()}
#: each kind's words, where they are a template (a view of :data:`TABLE`; Release.describe)
_WORDS = {name: e.words for name, e in TABLE.items() if isinstance(e.words, str)}
