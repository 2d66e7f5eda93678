"""Release design: the finest release that meets a certified target (docs/vflattack.md,
"Privacy by design").

The audit answers "how much does this release leak?"; :func:`design_release` answers the
deployer's next question, "what is the most precise output I can publish so that no
adversary can estimate any record's passive features closer than tau?". It evaluates every
candidate release of the kinds asked for (decimals or significant digits 1 to 8, a grid of
noise scales), each on the same records, and returns the finest that meets the target.

Targets (:class:`Target`):

* ``radius=tau``: every record's **proven lower bound** on its minimax radius r*/sqrt(d)
  over the release's set is at least tau. No estimator, with any prior, has worst-case
  error below tau sqrt(d) on that record. The lower bound is the larger of half the widest
  feature range (two points of the set are that far apart: every range endpoint is attained)
  and the exact method's dual bound (the enclosing ball's), never an upper bound or a
  relaxation's value. Records the ranges already decide (certified, or refuted by the
  ranges' bounding box, whose half diagonal bounds r* from above) skip the exact method.
* ``leakage=eps``: the best prior-aware attack (``prior``, ``gaussian``) has an MSE per
  feature at most eps below the prior mean's. Measured on the records given (it needs their
  passive features and a prior), not certified; a release meets it when the whole 95 %
  interval of the leakage (a paired bootstrap over the records) is at most eps.
* ``pinned=p``: no feature of any record has a range over the release's set of width p or
  less (a share of the box side), from the feature ranges.

r* need not be monotone in the number of decimals (the grids of K and K - 1 decimals are not
nested; docs/vflattack.md has a record where it bites), so nothing is bisected: every
candidate is evaluated and the whole curve is returned.

Records the label alone does not protect (the target fails for them even when only the
predicted class is published) are *unreachable*: they are listed, and the target is judged
on the other records. Where the label's upper bound is below the target too, no release
that reveals the predicted class can protect them (its preimage lies inside the label's).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import chebcenter as cc

from .._validate import InvalidInputError
from ..attacks import Prior, whitebox_attack
from ..attacks.whitebox import with_domain_rows
from ..model import VFLModel
from ..release import TABLE, Release, release_to_bounds
from .protocol import Result

__all__ = ["DESIGN_KINDS", "LEVELS", "SIGMAS", "TARGETS", "Candidate", "DesignResult", "Target", "design_release"]

#: the targets a design can meet (module docstring)
TARGETS = ("radius", "leakage", "pinned")
#: the release kinds a design searches, and what each one's parameter is
DESIGN_KINDS = {"round": "decimals", "sig": "significant digits", "roundnorm": "decimals",
                "gaussian": "sigma", "laplace": "scale b"}
#: the decimals (or significant digits) tried
LEVELS = tuple(range(1, 9))
#: the noise scales tried (a 1-2-5 grid)
SIGMAS = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
_NOISE = tuple(name for name, e in TABLE.items() if e.noisy)   # ("gaussian", "laplace")


@dataclass(frozen=True)
class Target:
    """What the design must guarantee: ``kind`` one of :data:`TARGETS` and its threshold.

    Examples
    --------
    >>> Target.parse("radius=0.1")
    Target(kind='radius', value=0.1)
    """

    kind: str
    value: float

    def __post_init__(self) -> None:
        if self.kind not in TARGETS:
            raise InvalidInputError(f"target must be one of {TARGETS} (e.g. 'radius=0.1'); got {self.kind!r}")
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not np.isfinite(v) or v < 0:
            raise InvalidInputError(f"target {self.kind}: the threshold must be a finite number >= 0; got {v!r}")
        object.__setattr__(self, "value", float(v))

    @classmethod
    def parse(cls, text: Any) -> Target:
        """``"radius=TAU"``, ``"leakage=EPS"``, ``"pinned=P"``, or a :class:`Target`."""
        if isinstance(text, Target):
            return text
        kind, sep, val = str(text).strip().partition("=")
        if not sep:
            raise InvalidInputError(f"target {text!r}: write radius=TAU, leakage=EPS or pinned=P")
        try:
            value = float(val)
        except ValueError:
            raise InvalidInputError(f"target {text!r}: the threshold must be a number") from None
        return cls(kind.strip(), value)

    @property
    def spec(self) -> str:
        return f"{self.kind}={self.value:g}"

    def describe(self) -> str:
        v = self.value
        if self.kind == "radius":
            return (f"every record's certified minimax radius r*/sqrt(d) >= {v:g}: no estimator, whatever its "
                    f"prior, has worst-case error below {v:g} sqrt(d) on it")
        if self.kind == "leakage":
            return (f"the best prior-aware attack's MSE per feature is at most {v:g} below the prior's (measured on "
                    "these records, not certified)")
        return f"no feature of any record has a range narrower than {v:g} of its side over the release's set"


@dataclass
class Candidate:
    """One release evaluated by the design: a point of the curve.

    ``certified`` / ``failing`` count the reachable records that meet / miss the target
    (``radius``, ``pinned``; for ``leakage`` the target is one number and both are 0);
    ``refuted`` the failing ones proven to miss (their upper bound on r*/sqrt(d) is below
    tau); ``outside`` the rows a noise release published outside its confidence intervals
    (their sets are empty: the certificate's probability excludes them). ``worst`` and
    ``median`` are the smallest and median certified value over the reachable records (the
    lower bound on r*/sqrt(d), or the narrowest feature range), or the measured leakage.
    ``agreement`` is the share of records whose published top class is the exact scores',
    ``score_change`` the mean absolute change of a published probability and ``max_change``
    the largest.
    """

    release: str
    kind: str
    parameter: float
    meets: bool
    certified: int
    failing: int
    refuted: int
    outside: int
    worst: float
    median: float
    agreement: float
    score_change: float
    max_change: float
    leakage: float
    seconds: float
    #: the leakage's 95 % interval, a bootstrap over the records (paired: each record's prior
    #: error minus its best prior-aware attack's; vflattack.audit.intervals); NaN if not measured
    leakage_lo: float = float("nan")
    leakage_hi: float = float("nan")


@dataclass
class DesignResult:
    """What :func:`design_release` found.

    Attributes
    ----------
    target : Target
    release : Release or None
        The finest release that meets the target over the kinds asked for: the one of
        ``by_kind`` whose published probabilities move least, by the largest absolute change
        (then the mean), so that noise, whose largest change grows with the batch, is chosen
        over rounding only when it is finer for every record a consumer reads; None when no
        candidate meets it.
    by_kind : dict
        ``{kind: Release or None}``, the finest release of each kind that meets the target.
    curve : list of Candidate
        Every candidate, per kind from the finest to the coarsest (the label alone is :attr:`label`).
    records : dict
        Per record (arrays of length N): ``value``, the certified value under ``release``
        (lower bound on r*/sqrt(d), or narrowest range); ``upper``, the upper bound on
        r*/sqrt(d); ``reachable``; ``binding`` (fails one step finer); ``finer_value``, the
        certified value one step finer; ``label_value`` and ``label_upper``, the same under the
        label alone.
    unreachable, proven_unreachable : ndarray
        Indices of the records the label alone does not protect, and of those no release
        that reveals the predicted class can protect.
    binding : ndarray
        Indices of the records that fail at the next finer candidate of the chosen kind
        (what stops a finer release); empty when the chosen release is its kind's finest.
    """

    target: Target
    release: Release | None
    by_kind: dict
    curve: list
    records: dict
    unreachable: np.ndarray
    proven_unreachable: np.ndarray
    binding: np.ndarray
    label: Candidate
    config: dict = field(default_factory=dict)
    exact: Candidate | None = None

    @property
    def met(self) -> bool:
        return self.release is not None

    @property
    def chosen(self) -> Candidate | None:
        """The curve's row of :attr:`release`."""
        return _row(self.curve, self.release)

    @property
    def finer(self) -> Candidate | None:
        """The next finer candidate of the chosen kind (it fails), None if the chosen is its finest."""
        return _finer(self.curve, self.release)

    @property
    def binding_share(self) -> float:
        n = self.records["value"].shape[0]
        return self.binding.size / n if n else float("nan")

    def headline(self) -> str:
        """The design in one sentence."""
        t = self.target
        n = self.records["value"].shape[0]
        un = (f"; {self.unreachable.size} of {n} records are not protected even by the label alone and are "
              "judged apart" if self.unreachable.size else "")
        if self.release is None:
            label = "the label alone meets it" if self.label.meets else "the label alone does not meet it either"
            return (f"no release of kinds {', '.join(self.config.get('kinds', []))} meets {t.spec} on these "
                    f"{n} records ({label}){un}.")
        c, f = self.chosen, self.finer
        if self.exact is not None and self.exact.meets:
            return (f"the exact scores already meet {t.spec}: no rounding or noise is needed (every candidate of "
                    f"{', '.join(self.config.get('kinds', []))} meets it too; the finest is {c.release}){un}.")
        if f is None:
            step = "it is the finest candidate of its kind"
        elif t.kind == "leakage":
            step = (f"one step finer, {f.release} fails (leakage {f.leakage:.3g}, 95% interval up to "
                    f"{f.leakage_hi:.3g} > {t.value:g})")
        else:
            step = f"one step finer, {f.release} fails ({f.failing} record(s) below the target)"
        return (f"the finest release meeting {t.spec} is {c.release} ({self.release.describe()}): it keeps "
                f"{c.agreement:.1%} of the predicted classes and moves a probability by {c.score_change:.2g} on "
                f"average ({c.max_change:.2g} at most); {step}{un}.")

    def to_result(self) -> Result:
        """The design as a :class:`~vflattack.audit.protocol.Result` (kind ``"design"``) for
        :func:`vflattack.report.render`: the curve and the label as records, the rest in the
        configuration."""
        rec = self.records
        # the binding records first (smallest certificate one step finer), then the closest to the target
        order = sorted(np.flatnonzero(rec["reachable"]).tolist(),
                       key=lambda i: (not rec["binding"][i], rec["finer_value"][i] if rec["binding"][i] else 0.0,
                                      not np.isfinite(rec["value"][i]), rec["value"][i]))
        config = dict(self.config, target=self.target.spec, target_words=self.target.describe(),
                      release=None if self.release is None else self.release.spec,
                      release_words=None if self.release is None else self.release.describe(),
                      exact_meets=None if self.exact is None else bool(self.exact.meets),
                      finer=None if self.finer is None else self.finer.release,
                      headline=self.headline(), unreachable=int(self.unreachable.size),
                      proven_unreachable=int(self.proven_unreachable.size), binding=int(self.binding.size),
                      binding_share=self.binding_share,
                      by_kind={k: (None if r is None else r.spec) for k, r in self.by_kind.items()},
                      per_record=dict({k: v.tolist() for k, v in rec.items()},
                                      unreachable=self.unreachable.tolist(),
                                      proven_unreachable=self.proven_unreachable.tolist(),
                                      binding_records=self.binding.tolist()),
                      closest={"rows": [{"record": int(i), "binding": bool(rec["binding"][i]),
                                         "value": float(rec["value"][i]), "upper": float(rec["upper"][i]),
                                         "finer_value": float(rec["finer_value"][i]),
                                         "label_value": float(rec["label_value"][i])} for i in order[:20]]})
        return Result("design", list(self.curve) + [self.label], config)


def design_release(model: VFLModel, Y: Any, X: Any = None, *, target: Any, scores: Any = None,
                   kinds: Sequence[str] = ("round", "sig", "gaussian"), levels: Sequence[int] = LEVELS,
                   sigmas: Sequence[float] = SIGMAS, confidence: float = 0.95, prior: Prior | None = None,
                   rng: Any = 0, leakage_curve: bool = False, progress: bool = False) -> DesignResult:
    """The finest release of ``kinds`` that meets ``target`` on the records ``(Y, X)`` (module docstring).

    Parameters
    ----------
    model, Y : VFLModel, array (N, d_a)
        The split model, and the records' active features (None when the model has none).
    X, scores : arrays (N, d) and (N, k), one of them at least
        The passive features (the leakage needs them), or the exact probabilities (e.g. a log's).
    target : str or Target
        ``"radius=TAU"``, ``"leakage=EPS"`` or ``"pinned=P"``.
    kinds : sequence of str
        Release kinds to search, among :data:`DESIGN_KINDS`.
    levels, sigmas : sequences
        The decimals / significant digits tried (default 1..8), the noise scales (:data:`SIGMAS`).
    confidence : float
        The noise releases' certificates hold with this probability per record.
    prior : Prior, optional
        The adversary's prior for the prior-aware attacks (default: ``Prior.from_data(X)``).
    rng : seed
        The noise draws (one per candidate, each from this seed).
    leakage_curve, progress : bool
        Measure the leakage beyond the prior on every candidate (by default on the chosen
        release, one step finer and the label: the attacks cost more than the certificates;
        always for the ``leakage`` target); show a progress bar.

    Returns a :class:`DesignResult`.

    Examples
    --------
    >>> import numpy as np, vflattack as va
    >>> m = va.VFLModel(np.zeros((2, 0)), np.array([[0.0], [0.1188]]), np.array([0.0, -3.0527]))
    >>> X = np.array([[0.947]])                       # P(class 1) = 0.0502
    >>> res = design_release(m, None, X, target="radius=0.1", kinds=("round",))
    >>> res.release.spec, res.finer.release           # 2 decimals meet, 3 do not
    ('round:2', 'round:3')
    >>> [c.meets for c in res.curve if c.release in ("round:1", "round:2", "round:3")]   # nor does 1
    [False, True, False]
    """
    from tqdm.auto import tqdm

    tgt, kinds, levels, sig, X, P, logP, prior = _checked(model, Y, X, scores, target, kinds, levels, sigmas,
                                                          confidence, prior)
    N = P.shape[0]
    ctx = _Context(model, Y, X, P, logP, prior, tgt, rng)
    ctx.leakage_curve = bool(leakage_curve)
    grid = [Release(k, float(v), confidence) for k in kinds for v in (sig if k in _NOISE else levels)]
    specs = [r.spec for r in grid]
    if len(set(specs)) < len(specs):
        raise InvalidInputError("sigmas must differ in their first 6 significant digits (the releases' names); got "
                                f"{[s for s in specs if specs.count(s) > 1]}")
    bar = tqdm(total=len(grid) + 2, desc="design", unit="release", disable=not progress, leave=False)
    _, label_rec = ctx.evaluate(Release("label"), None)   # what the label alone protects: the reachable records
    bar.update(1)
    reachable = np.ones(N, dtype=bool) if tgt.kind == "leakage" else label_rec["ok"].copy()
    ctx.reachable = reachable
    # the label is judged on every record: it meets the target only if it protects them all
    label = ctx.summarise(Release("label"), label_rec, label_rec.pop("_seconds"), np.ones(N, dtype=bool))
    exact, _ = ctx.evaluate(Release("exact"), reachable)   # when the scores themselves meet it, say so first
    bar.update(1)
    curve, per = [], {}
    for rel, (cand, rec) in ((rel, ctx.evaluate(rel, reachable)) for rel in grid):
        curve.append(cand)
        per[cand.release] = rec | {"release": rel}
        bar.update(1)
    bar.close()
    by_kind, release = _choose(curve, kinds, per)
    finer = _finer(curve, release)
    if tgt.kind != "leakage" and not leakage_curve:   # the measured leakage of the rows a reader compares
        for c in (_row(curve, release), finer):
            if c is not None:
                c.leakage, c.leakage_lo, c.leakage_hi = ctx.leakage(per[c.release]["release"],
                                                                    per[c.release]["published"])
        label.leakage, label.leakage_lo, label.leakage_hi = ctx.leakage(Release("label"), label_rec["published"])
    records = _records(release, finer, per, label_rec, reachable, tgt.kind != "leakage")
    config = dict(kinds=list(kinds), levels=list(levels), sigmas=list(sig), confidence=confidence, records=N,
                  n_passive=model.n_passive, n_classes=model.n_classes, leakage_measured=prior is not None and X is not None,
                  leakage_curve=bool(leakage_curve) or tgt.kind == "leakage")
    return DesignResult(tgt, release, by_kind, curve, records, np.flatnonzero(~reachable),
                        np.flatnonzero(~reachable & label_rec["refuted"]), np.flatnonzero(records["binding"]), label, config,
                        exact)


def _checked(model, Y, X, scores, target, kinds, levels, sigmas, confidence, prior) -> tuple:
    """The design's arguments, checked: ``(target, kinds, levels finest first, sigmas finest
    first, X, P, log P, prior)``."""
    if not isinstance(model, VFLModel):
        raise InvalidInputError(f"model must be a VFLModel; got {type(model).__name__}")
    if model.link != "softmax":
        raise InvalidInputError(f"model's link is {model.link!r}: the design evaluates releases of softmax scores "
                                f"(rounded probabilities, their pairwise ratios); audit a {model.link} deployment's "
                                f"releases with vflattack audit --link {model.link} --release ...")
    tgt = Target.parse(target)
    kinds = tuple(kinds)
    bad = [k for k in kinds if k not in DESIGN_KINDS]
    if not kinds or bad:
        raise InvalidInputError(f"kinds must name release kinds among {tuple(DESIGN_KINDS)}; got {list(kinds)!r}")
    levels = sorted({_level(v) for v in levels}, reverse=True)
    sig = sorted({_sigma(v) for v in sigmas})
    if not levels or not sig:
        raise InvalidInputError("levels and sigmas must each give at least one candidate")
    if not 0.0 < confidence < 1.0:
        raise InvalidInputError(f"confidence must be in (0, 1); got {confidence!r}")
    if X is not None:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != model.n_passive:
            raise InvalidInputError(f"X must have shape (N, {model.n_passive}); got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise InvalidInputError("X must be finite")
    if scores is None:
        if X is None:
            raise InvalidInputError("give X (the passive features) or scores (the exact probabilities)")
        P, logP = model.predict_proba(Y, X), model.predict_log_proba(Y, X)
    else:
        P = np.asarray(scores, dtype=np.float64)
        if P.ndim != 2 or P.shape[1] != model.n_classes:
            raise InvalidInputError(f"scores must have shape (N, {model.n_classes}); got {P.shape}")
        if not (np.all(np.isfinite(P)) and np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0, atol=1e-6)):
            raise InvalidInputError("scores must be the exact probabilities: finite, >= 0, each row summing to 1")
        with np.errstate(divide="ignore"):
            logP = np.log(P)
    N = P.shape[0]
    if X is not None and X.shape[0] != N:
        raise InvalidInputError(f"X has {X.shape[0]} rows, the scores {N}")
    if N == 0:
        raise InvalidInputError("the design needs at least one record")
    if tgt.kind == "leakage" and X is None:
        raise InvalidInputError("target leakage= measures the attacks against the true passive features: give X")
    if prior is None and X is not None and N >= 2:
        prior = Prior.from_data(X)
    if tgt.kind == "leakage" and prior is None:
        raise InvalidInputError("target leakage= needs the adversary's prior: give prior= (Prior.from_data on "
                                "auxiliary records) or at least 2 records to estimate it from")
    if prior is not None and not isinstance(prior, Prior):
        raise InvalidInputError(f"prior must be a vflattack.Prior; got {type(prior).__name__}")
    return tgt, kinds, levels, sig, X, P, logP, prior


def _choose(curve, kinds, per) -> tuple:
    """``(by_kind, release)``: each kind's first candidate that meets the target (the curve
    runs from a kind's finest candidate to its coarsest), and among them the one whose
    published values move least at most, then on average."""
    firsts = {k: next((c for c in curve if c.kind == k and c.meets), None) for k in kinds}
    by_kind = {k: None if c is None else per[c.release]["release"] for k, c in firsts.items()}
    met = [(c.max_change, c.score_change, kinds.index(k), k) for k, c in firsts.items() if c is not None]
    return by_kind, (by_kind[min(met)[3]] if met else None)


def _row(curve, release):
    return None if release is None else next(c for c in curve if c.release == release.spec)


def _finer(curve, release):
    """The candidate one step finer than ``release`` in its kind, None at the finest."""
    if release is None:
        return None
    same = [c for c in curve if c.kind == release.kind]
    i = next(j for j, c in enumerate(same) if c.release == release.spec)
    return same[i - 1] if i > 0 else None


def _records(release, finer, per, label_rec, reachable, per_record: bool = True) -> dict:
    """The per-record arrays of :attr:`DesignResult.records`."""
    N = reachable.shape[0]
    nan = np.full(N, np.nan)
    rec = per[release.spec] if release is not None else {"value": nan, "upper": nan}
    binding = np.zeros(N, dtype=bool)
    finer_value = nan
    if finer is not None and per_record:   # the leakage target is one number: no record binds
        f = per[finer.release]
        binding = reachable & ~f["ok"]
        if release.entry.noisy:   # rows outside the finer draw's intervals claim nothing
            binding &= f["valid"] & ~f["empty"]
        finer_value = f["value"]
    return {"value": rec["value"], "upper": rec["upper"], "reachable": reachable, "binding": binding,
            "finer_value": finer_value, "label_value": label_rec["value"], "label_upper": label_rec["upper"]}


def _level(v) -> int:
    try:
        ok = not isinstance(v, bool) and np.isfinite(float(v)) and float(v) == int(v) and 1 <= int(v) <= 17
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InvalidInputError(f"levels must be integers from 1 to 17 (decimals or significant digits); got {v!r}")
    return int(v)


def _sigma(v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        x = float("nan")
    if isinstance(v, bool) or not (np.isfinite(x) and x > 0):
        raise InvalidInputError(f"sigmas must be finite numbers > 0; got {v!r}")
    return x


class _Context:
    """The records and the exact scores every candidate is evaluated on."""

    def __init__(self, model, Y, X, P, logP, prior, target, rng):
        self.model, self.Y, self.X, self.P, self.logP = model, Y, X, P, logP
        self.prior, self.target, self.rng = prior, target, rng
        self.top = np.argmax(logP, axis=1)
        self.reachable = None
        self.leakage_curve = False

    def evaluate(self, rel: Release, reachable) -> tuple:
        """``(Candidate or None, per-record dict)`` of one release (None for the label's first pass)."""
        t0 = time.perf_counter()
        N, d = self.P.shape[0], self.model.n_passive
        pub = rel.publish_scores(self.P, self.rng, log_scores=self.logP)
        # the adversary knows the passive features' encoding: the groups' rows are in every set
        system = with_domain_rows(self.model, release_to_bounds(self.model, pub, self.Y, rel))
        valid = system.valid
        rec = {"value": np.full(N, np.nan), "upper": np.full(N, np.nan), "ok": np.zeros(N, dtype=bool),
               "refuted": np.zeros(N, dtype=bool), "valid": valid, "empty": np.zeros(N, dtype=bool)}
        tgt = self.target
        if tgt.kind in ("radius", "pinned") and valid.any():
            sl = self.model.domain_slice(True)
            L, U = system.L[valid], system.U[valid]
            ranges = sl.feature_ranges(lower=L, upper=U)
            rec["empty"][valid] = ranges.status == cc.Status.INFEASIBLE
            w = (ranges.upper - ranges.lower) / (sl.hi - sl.lo)
            have = np.all(np.isfinite(w), axis=1)
            if tgt.kind == "pinned":
                value = np.where(have, np.min(w, axis=1, initial=np.inf), np.nan)
                # pinned means a width of at most p (vflattack.audit.privacy): meeting is strictly wider
                ok = have & (value > tgt.value + 1e-12)
                upper = value
                refuted = have & ~ok
            else:
                scale = np.sqrt(d)
                widths = ranges.upper - ranges.lower
                lower = np.where(have, 0.5 * np.max(widths, axis=1, initial=0.0), np.nan)
                upper = np.where(have, 0.5 * np.linalg.norm(widths, axis=1), np.nan)
                thr = tgt.value * scale
                undecided = have & (lower < thr) & (upper >= thr)
                if undecided.any():
                    rad = sl.centers(method="auto", lower=L[undecided], upper=U[undecided])
                    good = rad.ok
                    dual = np.where(good, np.nan_to_num(rad.extras["radius_lower"], nan=0.0), 0.0)
                    lo_u, up_u = lower[undecided], upper[undecided]
                    lower[undecided] = np.fmax(lo_u, np.minimum(dual, np.where(good, rad.radii, np.inf)))
                    upper[undecided] = np.where(good, np.minimum(up_u, rad.radii), up_u)
                value, upper = lower / scale, upper / scale
                ok = have & (value >= tgt.value)
                refuted = have & (upper < tgt.value)
            rec["value"][valid], rec["upper"][valid] = value, upper
            rec["ok"][valid], rec["refuted"][valid] = ok, refuted
        rec["published"] = pub
        if reachable is None:
            rec["_seconds"] = time.perf_counter() - t0
            return None, rec
        return self.summarise(rel, rec, time.perf_counter() - t0), rec

    def summarise(self, rel: Release, rec: dict, seconds: float, reach: Any = None) -> Candidate:
        """The curve's row of one release, judged on the records ``reach`` (default: the reachable ones)."""
        reach = self.reachable if reach is None else reach
        pub = rec["published"]
        leak = leak_lo = leak_hi = float("nan")
        if self.target.kind == "leakage" or self.leakage_curve:
            t1 = time.perf_counter()
            leak, leak_lo, leak_hi = self.leakage(rel, pub)
            seconds += time.perf_counter() - t1
        # a noise release's row refused, or whose set is empty, fell outside its confidence
        # intervals (the certificate's probability excludes it); a deterministic release's fails
        inside = rec["valid"] & ~rec["empty"]
        noisy = rel.entry.noisy
        outside = int(np.sum(~inside)) if noisy else 0
        judged = reach & inside if noisy else reach
        if self.target.kind == "leakage":   # the verdict reads the interval: its upper end is at most the target
            meets = bool(np.isfinite(leak_hi) and leak_hi <= self.target.value)
            certified = failing = refuted = 0
            worst = median = leak
        else:
            ok = rec["ok"]
            meets = bool(judged.any() and np.all(ok[judged]))   # no record to judge: nothing is met
            certified, failing = int(np.sum(ok[judged])), int(np.sum(judged & ~ok))
            refuted = int(np.sum(judged & rec["refuted"]))
            vals = rec["value"][judged]
            vals = vals[np.isfinite(vals)]
            worst = float(vals.min()) if vals.size else float("nan")
            median = float(np.median(vals)) if vals.size else float("nan")
        top = rel.top_class(pub)
        agreement = float(np.mean(top == self.top))
        if rel.kind == "label":
            shown = np.eye(self.P.shape[1])[self.top]
        else:
            shown = np.asarray(pub, dtype=float)
        moved = np.abs(shown - self.P)
        change, largest = float(np.nanmean(moved)), float(np.nanmax(moved))
        param = float("nan") if rel.value is None else float(rel.value)
        return Candidate(rel.spec, rel.kind, param, meets, certified, failing, refuted, outside, worst, median,
                         agreement, change, largest, leak, seconds, leak_lo, leak_hi)

    def leakage(self, rel: Release, pub) -> tuple[float, float, float]:
        """The prior's MSE minus the best prior-aware attack's, on the rows both reconstructed,
        and its 95 % interval (a paired bootstrap over those records, seeded by 0)."""
        nan = float("nan")
        if self.X is None or self.prior is None:
            return nan, nan, nan
        import warnings

        from .._errors import UnreadableReleaseWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnreadableReleaseWarning)
            res = whitebox_attack(self.model, pub, self.Y, ("mean", "prior", "gaussian"), prior=self.prior,
                                  release=rel)
        mse = res.mse(self.X)
        if not np.isfinite(mse["mean"]):
            return nan, nan, nan
        best_name = min(("prior", "gaussian"), key=lambda m: mse[m] if np.isfinite(mse[m]) else np.inf)
        best = mse[best_name]
        if not np.isfinite(best):
            return nan, nan, nan
        from .intervals import LEVEL, bootstrap, interval

        rows = res.common_rows()
        per = (np.mean((res.reconstructions["mean"][rows] - self.X[rows]) ** 2, axis=1)
               - np.mean((res.reconstructions[best_name][rows] - self.X[rows]) ** 2, axis=1))
        lo, hi = interval(bootstrap(per, seed=0), LEVEL)
        return float(mse["mean"] - best), lo, hi
