"""The white-box audit: train a split model, score predictions, attack, measure.

``run_audit`` is the computation behind ``vflattack audit`` and ``vflattack sweep``; it
returns a :class:`~vflattack.audit.protocol.Result` of :class:`AuditRecord`, which
:class:`vflattack.report.AuditReport` formats. Protocol (:mod:`vflattack.audit.protocol`,
Luo et al.'s, as in the papers): features min-max scaled over the whole dataset; a seeded
shuffle of the columns, the **last d** of which are the passive party's; a seeded split of
the rows into training and prediction sets (80/20 by default, optionally capped at
``n_predictions`` predictions); the model trained by L-BFGS on the training rows; the
white-box attack on the scores of the prediction rows. The training-set mean of the
passive features is the ``mean`` baseline.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import chebcenter as cc

from .._errors import UnreadableReleaseWarning
from .._validate import InvalidInputError, keyword_only
from ..attacks import BASELINES, DEFAULT_METHODS, PRIOR_METHODS, Prior, whitebox_attack
from ..release import BoundedSystem, Release
from .privacy import exposure as _exposure
from .privacy import party_summary, privacy_summary
from .protocol import PREDICT_FRACTION, Result, build_scenario, load_data, resolve_columns

__all__ = ["AuditRecord", "run_audit"]


@dataclass
class AuditRecord:
    """One (dataset, seed, d) run: MSE per method beside the theory's bounds."""

    dataset: str
    seed: int
    n_passive: int
    n_features: int
    n_classes: int
    rank: int
    n_train: int
    n_predictions: int
    accuracy: float
    mse: dict
    mse_per_feature: dict
    mse_per_feature_se: dict
    status: dict
    seconds: dict
    bounds: dict = field(default_factory=dict)
    passive_columns: list = field(default_factory=list)
    privacy: dict = field(default_factory=dict)     # vflattack.audit.privacy.privacy_summary
    #: the share of predictions whose published top class is the exact scores' (1 for exact
    #: scores): the model accuracy a release keeps (Release.top_class)
    agreement: float = 1.0
    #: the saved arrays (true passive records, every reconstruction, radii, ranges): written
    #: as .npz beside the report, not into the JSON
    arrays: dict = field(default_factory=dict, repr=False)
    #: the model's link (what the deployment publishes of the logits)
    link: str = "softmax"
    #: each passive party on its own (vflattack.audit.privacy.party_summary): its columns, its
    #: MSE per method, its certified radius and its pinned features
    parties: dict = field(default_factory=dict)
    #: the passive parties the active party colludes with (their columns are on its side)
    colluding: list = field(default_factory=list)
    #: confidence intervals of the headline numbers (vflattack.audit.intervals): ``level``,
    #: ``resamples``, ``seed`` and ``[lo, hi]`` per number
    intervals: dict = field(default_factory=dict)
    #: the bootstrap replicates behind them (several seeds are combined from these; not in the JSON)
    replicates: dict = field(default_factory=dict, repr=False)


@keyword_only("n_passive", "methods", "seeds", "n_predictions", "data_dir", "predict_fraction", "l2",
              "method_options", "progress", "data", "passive_columns", "prior_data", "tau", "radius_threshold",
              "exposure", "release")
def run_audit(dataset: str = "breast_cancer", *, n_passive: Sequence[int] = (10,),
              methods: Sequence[str] = DEFAULT_METHODS + BASELINES + PRIOR_METHODS, seeds: Sequence[int] = (0,),
              n_predictions: int | None = None, data_dir: Any = None, predict_fraction: float = PREDICT_FRACTION,
              l2: float = 1e-3, method_options: dict | None = None, progress: bool = False,
              data: tuple | None = None, passive_columns: Sequence[Any] | None = None,
              prior_data: Any = None, tau: float = 0.1, radius_threshold: float = 0.1,
              exposure: bool = True, release: Release | None = None, link: str = "softmax",
              parties: Any = None, colluding: Sequence[Any] = (), precision: str | None = None,
              yhat_scale: float = 1.0) -> Result:
    """Audit a VFL logistic regression on ``dataset`` for each passive count and seed.

    The passive party holds the last d columns after a seeded shuffle (one run
    per d in ``n_passive``), or exactly ``passive_columns`` (indices or feature
    names; then ``n_passive`` is ignored). ``data=(features, labels)`` audits
    your own data instead of a named dataset (features must lie in [0, 1]).

    The adversary's prior (the ``mean`` baseline and the prior-aware attacks ``prior`` and
    ``gaussian``) comes from the training split's passive features, or from ``prior_data``
    (auxiliary records with the dataset's columns, scaled to [0, 1]). With ``exposure``
    (default) every record also gets its minimax radius and feature ranges
    (:mod:`vflattack.audit.privacy`), summarised with the leakage beyond the prior in
    ``record.privacy``: ``tau`` is the pinned-feature threshold (a share of the feature's
    range) and ``radius_threshold`` the r*/sqrt(d) below which a record counts as exposed.

    ``release`` (a :class:`vflattack.Release`, default exact) says what the deployment
    published: the scores are published that way (:meth:`Release.publish`, seeded), every
    attack and the exposure run on the release's sets, and ``record.mse["naive"]`` is what
    treating the published value as exact costs (least squares on it; rows it cannot use
    are left out of that number only).

    ``link`` says what the deployment publishes of the logits (``softmax``, ``ovr``,
    ``identity``, a SecretFlow-Serving link: :class:`vflattack.VFLModel`), ``precision`` and
    ``yhat_scale`` how; ``parties`` splits the passive columns into parties (a number of
    equal blocks, or blocks of indices into the passive columns), each reported on its own in
    ``record.parties``; ``colluding`` names the parties whose features the active party also
    knows (the model is trained on every party, then attacked with theirs known).

    Returns a :class:`~vflattack.audit.protocol.Result` of :class:`AuditRecord`
    (``vflattack.report.render(result)`` formats it).

    Examples
    --------
    >>> res = run_audit("wine", n_passive=(3,), methods=("half", "half_star", "exact"))
    >>> m = res.records[0].mse; m["half_star"] <= m["half"]
    True
    """
    from tqdm.auto import tqdm

    F, labels, names = load_data(dataset, data_dir, data)
    fixed = None
    if passive_columns is not None:
        fixed = resolve_columns(passive_columns, names)
        n_passive = [fixed.size]
    n_passive = [int(d) for d in n_passive]
    methods = tuple(methods)
    for name, v in (("tau", tau), ("radius_threshold", radius_threshold)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
            raise InvalidInputError(f"{name} must be a finite number >= 0; got {v!r}")
    if prior_data is not None:
        prior_data = np.asarray(prior_data, dtype=float)
        if prior_data.ndim != 2 or prior_data.shape[1] != F.shape[1] or prior_data.shape[0] < 2:
            raise InvalidInputError(f"prior_data must have shape (n >= 2, {F.shape[1]}): auxiliary records with "
                                    f"the dataset's columns; got shape {prior_data.shape}")
    total = len(seeds) * len(n_passive) * len(methods)
    bar = tqdm(total=total, desc=f"audit {dataset}", unit="method", disable=not progress, leave=False)
    records = []
    for seed in seeds:
        for d in n_passive:
            t0 = time.perf_counter()
            sc = build_scenario(F, labels, seed, n_passive=d, passive_columns=fixed,
                                predict_fraction=predict_fraction, n_predictions=n_predictions, l2=l2, link=link,
                                parties=parties, precision=precision, yhat_scale=yhat_scale,
                                colluding=list(colluding))
            aux = (F[sc.train] if prior_data is None else prior_data)[:, sc.passive]
            records.append(_audit_record(dataset, sc, Prior.from_data(aux), methods, method_options, bar, t0,
                                         exposure, tau, radius_threshold, release))
    bar.close()
    from .intervals import combine_groups

    combine_groups(records)
    config = {"dataset": dataset, "n_passive": n_passive,
              "passive_columns": None if fixed is None else fixed.tolist(), "methods": list(methods), "seeds": list(seeds),
              "n_predictions": n_predictions, "predict_fraction": predict_fraction, "l2": l2,
              "prior": "training split" if prior_data is None else "prior_data", "tau": tau,
              "radius_threshold": radius_threshold,
              "release": (release or Release()).spec,
              "release_words": (release or Release()).describe(),
              "link": records[0].link if records else str(link),
              "parties": parties if parties is None or isinstance(parties, int) else [list(b) for b in parties],
              "colluding": list(colluding)}
    return Result("audit", records, config)


def _audit_record(dataset, sc, prior, methods, method_options, bar, t0, exposure, tau, radius_threshold, release):
    """Attack one scenario's predictions; measure the MSE, the bounds and the exposure."""
    model, Y, X, d = sc.model, sc.Y, sc.X, sc.passive.size
    released = release is not None and not release.exact
    linked = model.link != "softmax"
    scores = (release or Release()).publish(model, Y, X, rng=sc.seed) if released or linked \
        else model.predict_proba(Y, X)
    res = whitebox_attack(model, scores, Y, methods, prior=prior, rng=sc.seed, method_options=method_options,
                          progress=bar, release=release if released else None)
    bounded = isinstance(res.system, BoundedSystem)
    rows = res.common_rows()
    A = res.system.A
    se = {}
    for m, Xh in res.reconstructions.items():
        sq = (Xh[rows] - X[rows]) ** 2
        se[m] = sq.std(axis=0) / np.sqrt(max(rows.sum(), 1)) if np.all(np.isfinite(sq)) and sq.size else np.full(d, np.nan)
    bounds = {}
    if rows.any():
        bounds = {"half_star": cc.theory.eigenvalue_bounds(A, X[rows], "half_star"),
                  "ls": cc.theory.eigenvalue_bounds(A, X[rows], "ls"),
                  "half_star_gain": cc.theory.half_star_gain(A, X[rows])}
    acc = float(np.mean(model.predict(Y, X) == sc.labels[sc.predict]))
    privacy, arrays = {}, {}
    if released and not linked:   # the naive attack: the published value taken as exact (least squares, as ESA)
        t_naive = time.perf_counter()
        naive, naive_rows = _naive_mse(model, release, scores, Y, X)
        t_naive = time.perf_counter() - t_naive
    if exposure:
        # a release of the deployment's own number format (float32) is rounding, as an exact release is
        rounding = not released or release.entry.arithmetic
        expo = (_exposure(model, None, res.system.valid, system=res.system, rounding_only=rounding) if bounded
                else _exposure(model, np.nan_to_num(res.system.B), res.system.valid))
        prior_mse = float(np.mean((X[rows] - prior.mean) ** 2)) if rows.any() else float("nan")
        privacy = privacy_summary(X, res.reconstructions, rows, prior_mse, expo, BASELINES,
                                  float(tau), float(radius_threshold))
        arrays = {"X": X, "rows": rows, "radius_upper": expo.radius_upper, "radius_lower": expo.radius_lower,
                  "radius_exact": expo.exact, "lower": expo.lower, "upper": expo.upper,
                  "prior_mean": prior.mean, **{f"recon_{m}": v for m, v in res.reconstructions.items()}}
    parties = {}
    if exposure and model.n_parties > 1:
        parties, radii = party_summary(model, X, res.reconstructions, rows, expo,
                                       None if bounded else np.nan_to_num(res.system.B), res.system.valid,
                                       res.system if bounded else None, float(tau), float(radius_threshold), sc.passive)
        for name, (up, low) in radii.items():
            arrays[f"party_radius_{name}"], arrays[f"party_radius_lower_{name}"] = up, low
    from .intervals import LEVEL, RESAMPLES, audit_replicates, summarise

    pinned_rows = None
    if exposure:
        width = expo.upper - expo.lower
        pinned_rows = np.where(np.all(np.isfinite(width), axis=1), np.mean(expo.pinned(tau), axis=1), np.nan)
    replicates = audit_replicates(X, res.reconstructions, rows, prior.mean if exposure else None,
                                  privacy.get("best_attack"), expo.radius_upper if exposure else None, pinned_rows,
                                  float(radius_threshold), resamples=RESAMPLES, seed=sc.seed)
    intervals = {"level": LEVEL, "resamples": RESAMPLES, "seed": sc.seed,
                 "method": "percentile bootstrap over records", **summarise(replicates, LEVEL)}
    mse, status, seconds = res.mse(X), res.status_counts(), dict(res.times, train=time.perf_counter() - t0)
    agreement = float(np.mean(release.top_class(scores) == np.argmax(model.predict_proba(Y, X), axis=1))) \
        if released and not linked else 1.0
    if released and not linked:
        mse["naive"] = naive
        status["naive"] = {"used": naive_rows, "refused": int(X.shape[0] - naive_rows)}
        seconds["naive"] = t_naive
    return AuditRecord(
        dataset=dataset, seed=sc.seed, n_passive=d, n_features=int(sc.features.shape[1]),
        n_classes=model.n_classes, rank=model.box_slice.rank, n_train=int(sc.train.size),
        n_predictions=int(sc.predict.size), accuracy=acc, mse=mse, mse_per_feature=res.mse(X, per_feature=True),
        mse_per_feature_se=se, status=status, seconds=seconds,
        bounds=bounds, passive_columns=sc.passive.tolist(), privacy=privacy, arrays=arrays, agreement=agreement,
        link=model.link, parties=parties, colluding=list(sc.colluding), intervals=intervals, replicates=replicates)


def _naive_mse(model, release, published, Y, X):
    """MSE of least squares on the published value taken as exact (rows it cannot use, such
    as saturated, not normalised or label-only ones and slices that miss the box, are left
    out; NaN when it can use none), and the number of rows it used."""
    if not release.entry.full_scores:   # no full score vector to take as exact
        return float("nan"), 0
    log = release.entry.log.log_scores
    with warnings.catch_warnings():   # taking a release for exact scores refuses rows: that is the point here
        warnings.simplefilter("ignore", UnreadableReleaseWarning)
        res = whitebox_attack(model, published, Y, ("ls",), log_scores=log, rng=0)
    # the rows it could use: valid as exact scores, and a slice that meets the box (taken as
    # exact, a rounded score often gives a slice that misses it: INFEASIBLE, no estimate)
    rows = res.common_rows() & np.all(np.isfinite(res.reconstructions["ls"]), axis=1)
    mse = float(np.mean((res.reconstructions["ls"][rows] - X[rows]) ** 2)) if rows.any() else float("nan")
    return mse, int(rows.sum())
