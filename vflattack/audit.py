"""The audit: train a split model, score predictions, attack, measure, report.

``run_audit`` is the pipeline behind ``vflattack audit`` and ``vflattack sweep``.
Protocol (Luo et al.'s, as in the papers): features min-max scaled over the
whole dataset; a seeded shuffle of the columns, the **last d** of which are the
passive party's; a seeded 80/20 split of the rows into training and
prediction sets (optionally capped at ``n_predictions`` predictions); the model
trained by L-BFGS on the training rows; the white-box attack on the scores of
the prediction rows. The training-set mean of the passive features is the
``mean`` baseline.
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

import chebcenter as cc

from . import datasets
from ._validate import InvalidInputError
from .attacks import BASELINES, DEFAULT_METHODS, PRIOR_METHODS, Prior, whitebox_attack
from .model import train_vfl_model
from .privacy import exposure as _exposure
from .privacy import privacy_summary
from .protocol import resolve_columns, split_columns, split_rows
from .report import Report

__all__ = ["AuditRecord", "AuditReport", "resolve_columns", "run_audit", "split_columns", "split_rows"]


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
    privacy: dict = field(default_factory=dict)     # vflattack.privacy.privacy_summary
    #: the saved arrays (true passive records, every reconstruction, radii, ranges): written
    #: as .npz beside the report, not into the JSON
    arrays: dict = field(default_factory=dict, repr=False)


@dataclass
class AuditReport(Report):
    """All records of an audit: the table, ``report.json``, ``mse.csv`` and the MSE plots."""

    kind: ClassVar[str] = "audit"
    json_name: ClassVar[str] = "report.json"
    csv_name: ClassVar[str | None] = "mse.csv"
    csv_fields: ClassVar[tuple[str, ...]] = ("dataset", "n_passive", "method", "mse", "mse_std", "worst_case",
                                             "seeds", "seconds")

    def methods(self) -> list[str]:
        return list(self.records[0].mse) if self.records else []

    def summary(self) -> list[dict]:
        """Mean (and std over seeds) of each method's MSE per (dataset, d)."""
        groups: dict = {}
        for r in self.records:
            groups.setdefault((r.dataset, r.n_passive), []).append(r)
        rows = []
        for (ds, d), recs in sorted(groups.items()):
            for m in self.methods():
                vals = np.array([r.mse[m] for r in recs], dtype=float)
                rows.append({"dataset": ds, "n_passive": d, "method": m,
                             "mse": float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan"),
                             "mse_std": float(np.nanstd(vals)) if np.isfinite(vals).sum() > 1 else 0.0,
                             "worst_case": _mean([r.privacy.get("worst_case", {}).get(m, np.nan) for r in recs]),
                             "seeds": len(recs), "status": _merge([r.status[m] for r in recs]),
                             "seconds": float(np.mean([r.seconds[m] for r in recs]))})
        return rows

    def table(self) -> str:
        """The human-readable table (what the CLI prints)."""
        out = []
        groups: dict = {}
        for r in self.records:
            groups.setdefault((r.dataset, r.n_passive), []).append(r)
        summary = self.summary()
        for _, recs in sorted(groups.items()):
            out.append(self.headline(recs))
        for (ds, d), recs in sorted(groups.items()):
            r0 = recs[0]
            out.append(f"\n{ds}: d = {d} passive of {r0.n_features} features, "
                       f"k = {r0.n_classes} classes, rank(A) = {r0.rank}, {r0.n_predictions} predictions, "
                       f"{len(recs)} seed(s), model accuracy {np.mean([r.accuracy for r in recs]):.3f}")
            several = len(recs) > 1  # a spread over seeds only when there are several
            out.append(f"  {'method':<10} {'MSE':>10} {'± std' if several else '':>9} {'worst':>8}  {'time [s]':>9}  status")
            for row in (s for s in summary if s["dataset"] == ds and s["n_passive"] == d):
                st = ", ".join(f"{k}:{v}" for k, v in row["status"].items())
                spread = f"{row['mse_std']:>9.5f}" if several else " " * 9
                out.append(f"  {row['method']:<10} {row['mse']:>10.5f} {spread} {row['worst_case']:>8.4f}  "
                           f"{row['seconds']:>9.3f}  {st}")
            out.extend(self._exposure_lines(recs))
            b = {k: np.mean([r.bounds[k] for r in recs], axis=0) for k in r0.bounds}
            if b:
                out.append(f"  theory (docs/theory.md): half* MSE in [{b['half_star'][0]:.5f}, {b['half_star'][1]:.5f}], "
                           f"ls MSE in [{b['ls'][0]:.5f}, {b['ls'][1]:.5f}]; "
                           f"MSE(half) - MSE(half*) = {b['half_star_gain']:.5f}")
        return "\n".join(out).lstrip("\n")

    @staticmethod
    def headline(recs) -> str:
        """One sentence: do the scores leak beyond the prior, and by how much (mean over seeds)."""
        r0 = recs[0]
        prior = _mean([r.privacy.get("prior_mse", np.nan) for r in recs])
        best = _mean([r.privacy.get("best_mse", np.nan) for r in recs])
        names = sorted({r.privacy.get("best_attack") for r in recs if r.privacy.get("best_attack")})
        where = f"{r0.dataset}, d = {r0.n_passive}"
        if not (np.isfinite(prior) and np.isfinite(best)):
            return f"{where}: no score-based attack ran, so leakage beyond the prior is not measured."
        if best < prior:
            return (f"{where}: the scores leak beyond the prior: the best attack ({', '.join(names)}) reaches MSE "
                    f"{best:.5f} against {prior:.5f} for the prior alone ({(prior - best) / prior:.0%} lower).")
        return (f"{where}: the scores do not leak beyond the prior on average: the best attack ({', '.join(names)}) "
                f"has MSE {best:.5f}, the prior alone {prior:.5f}; see the per-record radii below.")

    @staticmethod
    def _exposure_lines(recs) -> list[str]:
        p = [r.privacy for r in recs if r.privacy]
        if not p:
            return []
        q = {k: _mean([x["radius"]["quantiles"][k] for x in p]) for k in ("p10", "median", "p90")}
        thr, tau = p[0]["radius"]["threshold"], p[0]["tau"]
        below = _mean([x["radius"]["below_threshold"] for x in p])
        exact = _mean([x["radius"]["exact_share"] for x in p])
        pinned = np.nanmean(np.array([x["pinned"] for x in p], dtype=float), axis=0)
        cols = recs[0].passive_columns
        top = sorted(zip(pinned, cols), key=lambda t: -t[0])[:5]
        return [f"  leakage beyond the prior (prior-only MSE - best attack MSE): "
                f"{_mean([x['leakage'] for x in p]):+.5f}",
                f"  per-record minimax radius r*/sqrt(d): median {q['median']:.4f} (p10 {q['p10']:.4f}, "
                f"p90 {q['p90']:.4f}; exact on {exact:.0%} of records); {below:.1%} of records have r* <= {thr:g}",
                f"  features pinned within {tau:.0%} of their range (share of records): "
                + ", ".join(f"col {c}: {v:.1%}" for v, c in top)]

    def csv_rows(self) -> list[dict]:
        return self.summary()

    def payload(self) -> dict:
        doc = super().payload()
        for rec in doc["records"]:
            rec.pop("arrays", None)
        return dict(doc, summary=self.summary())

    def extra_files(self, out: pathlib.Path) -> dict:
        """``privacy.csv`` (one row per record), ``privacy_features.csv`` (one row per feature)
        and ``arrays/<dataset>_d<d>_seed<s>.npz`` (true records, reconstructions, radii, ranges)."""
        import csv

        paths = {}
        if not any(r.privacy for r in self.records):
            return paths
        paths["privacy_csv"] = out / "privacy.csv"
        with open(paths["privacy_csv"], "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["dataset", "n_passive", "seed", "prior_mse", "best_attack", "best_mse", "leakage",
                        "radius_min", "radius_p10", "radius_median", "radius_p90", "radius_max", "radius_lower_median",
                        "exact_share", "threshold", "below_threshold", "tau"])
            for r in self.records:
                p = r.privacy
                q = p["radius"]["quantiles"]
                w.writerow([r.dataset, r.n_passive, r.seed, p["prior_mse"], p["best_attack"], p["best_mse"],
                            p["leakage"], q["min"], q["p10"], q["median"], q["p90"], q["max"],
                            p["radius"]["lower_median"], p["radius"]["exact_share"], p["radius"]["threshold"],
                            p["radius"]["below_threshold"], p["tau"]])
        paths["privacy_features_csv"] = out / "privacy_features.csv"
        with open(paths["privacy_features_csv"], "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["dataset", "n_passive", "seed", "feature", "pinned", "mean_width", "tau"])
            for r in self.records:
                for c, pin, wd in zip(r.passive_columns, r.privacy["pinned"], r.privacy["width"]):
                    w.writerow([r.dataset, r.n_passive, r.seed, c, pin, wd, r.privacy["tau"]])
        if any(r.arrays for r in self.records):
            (out / "arrays").mkdir(exist_ok=True)
            for r in self.records:
                if r.arrays:
                    path = out / "arrays" / f"{r.dataset}_d{r.n_passive}_seed{r.seed}.npz"
                    np.savez_compressed(path, **r.arrays)
                    paths[f"arrays_{r.dataset}_d{r.n_passive}_seed{r.seed}"] = path
        return paths

    def plots(self, out: pathlib.Path) -> dict:
        from .plots import plot_feature_ranges, plot_mse_per_feature, plot_mse_vs_passive, plot_radius_histogram

        paths = {}
        for ds in sorted({r.dataset for r in self.records}):
            recs = [r for r in self.records if r.dataset == ds]
            paths[f"mse_vs_passive_{ds}"] = plot_mse_vs_passive(recs, out / f"mse_vs_passive_{ds}.png")
            paths[f"mse_per_feature_{ds}"] = plot_mse_per_feature(recs, out / f"mse_per_feature_{ds}.png")
            if any(r.arrays for r in recs):
                paths[f"radius_{ds}"] = plot_radius_histogram(recs, out / f"radius_{ds}.png")
                paths[f"feature_ranges_{ds}"] = plot_feature_ranges(recs, out / f"feature_ranges_{ds}.png")
        return paths


def _mean(values) -> float:
    vals = np.array([np.nan if v is None else v for v in values], dtype=float)
    return float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")


def _merge(dicts):
    total: dict = {}
    for d in dicts:
        for k, v in d.items():
            total[k] = total.get(k, 0) + v
    return total


def run_audit(dataset: str = "breast_cancer", n_passive: Sequence[int] = (10,),
              methods: Sequence[str] = DEFAULT_METHODS + BASELINES + PRIOR_METHODS, seeds: Sequence[int] = (0,),
              n_predictions: int | None = None, data_dir: Any = None, predict_fraction: float = 0.2,
              l2: float = 1e-3, method_options: dict | None = None, progress: bool = False,
              data: tuple | None = None, passive_columns: Sequence[Any] | None = None,
              prior_data: Any = None, tau: float = 0.1, radius_threshold: float = 0.1,
              exposure: bool = True) -> AuditReport:
    """Audit a VFL logistic regression on ``dataset`` for each passive count and seed.

    The passive party holds the last d columns after a seeded shuffle (one run
    per d in ``n_passive``), or exactly ``passive_columns`` (indices or feature
    names; then ``n_passive`` is ignored). ``data=(features, labels)`` audits
    your own data instead of a named dataset (features must lie in [0, 1]).

    The adversary's prior (the ``mean`` baseline and the prior-aware attacks ``prior`` and
    ``gaussian``) comes from the training split's passive features, or from ``prior_data``
    (auxiliary records with the dataset's columns, scaled to [0, 1]). With ``exposure``
    (default) every record also gets its minimax radius and feature ranges
    (:mod:`vflattack.privacy`), summarised with the leakage beyond the prior in
    ``record.privacy``: ``tau`` is the pinned-feature threshold (a share of the feature's
    range) and ``radius_threshold`` the r*/sqrt(d) below which a record counts as exposed.

    Examples
    --------
    >>> rep = run_audit("wine", n_passive=(3,), methods=("half", "half_star", "exact"))
    >>> m = rep.records[0].mse; m["half_star"] <= m["half"]
    True
    """
    from tqdm.auto import tqdm

    if data is None:
        F, labels, names = datasets.load(dataset, data_dir, return_names=True)
    else:
        F, labels = np.asarray(data[0], dtype=float), np.asarray(data[1])
        if F.min() < 0 or F.max() > 1:
            raise InvalidInputError("data features must lie in [0, 1] (min-max scale them first)")
        names = [str(j) for j in range(F.shape[1])]
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
        train, pred = split_rows(F.shape[0], predict_fraction, n_predictions, seed)
        for d in n_passive:
            if fixed is None:
                active, passive = split_columns(F.shape[1], d, seed)
            else:
                passive, active = fixed, np.setdiff1d(np.arange(F.shape[1]), fixed)
            t0 = time.perf_counter()
            model = train_vfl_model(F[train][:, active], F[train][:, passive], labels[train], l2=l2, rng=seed)
            Y, X = F[pred][:, active], F[pred][:, passive]
            scores = model.predict_proba(Y, X)
            aux = (F[train] if prior_data is None else prior_data)[:, passive]
            prior = Prior.from_data(aux)
            res = whitebox_attack(model, scores, Y, methods, prior=prior,
                                  rng=seed, method_options=method_options, progress=bar)
            rows = res.common_rows()
            A = res.system.A
            pf = res.mse(X, per_feature=True)
            se = {}
            for m, Xh in res.reconstructions.items():
                sq = (Xh[rows] - X[rows]) ** 2
                se[m] = sq.std(axis=0) / np.sqrt(max(rows.sum(), 1)) if np.all(np.isfinite(sq)) and sq.size else np.full(d, np.nan)
            bounds = {}
            if rows.any():
                bounds = {"half_star": cc.theory.eigenvalue_bounds(A, X[rows], "half_star"),
                          "ls": cc.theory.eigenvalue_bounds(A, X[rows], "ls"),
                          "half_star_gain": cc.theory.half_star_gain(A, X[rows])}
            acc = float(np.mean(model.predict(Y, X) == labels[pred]))
            privacy, arrays = {}, {}
            if exposure:
                expo = _exposure(model, np.nan_to_num(res.system.B), res.system.valid)
                prior_mse = float(np.mean((X[rows] - prior.mean) ** 2)) if rows.any() else float("nan")
                privacy = privacy_summary(X, res.reconstructions, rows, prior_mse, expo, BASELINES,
                                          float(tau), float(radius_threshold))
                arrays = {"X": X, "rows": rows, "radius_upper": expo.radius_upper, "radius_lower": expo.radius_lower,
                          "radius_exact": expo.exact, "lower": expo.lower, "upper": expo.upper,
                          "prior_mean": prior.mean, **{f"recon_{m}": v for m, v in res.reconstructions.items()}}
            records.append(AuditRecord(
                dataset=dataset, seed=int(seed), n_passive=d, n_features=int(F.shape[1]),
                n_classes=model.n_classes,
                rank=model.box_slice.rank, n_train=int(train.size), n_predictions=int(pred.size),
                accuracy=acc, mse=res.mse(X), mse_per_feature=pf, mse_per_feature_se=se,
                status=res.status_counts(), seconds=dict(res.times, train=time.perf_counter() - t0),
                bounds=bounds, passive_columns=passive.tolist(), privacy=privacy, arrays=arrays))
    bar.close()
    config = {"dataset": dataset, "n_passive": n_passive,
              "passive_columns": None if fixed is None else fixed.tolist(), "methods": list(methods), "seeds": list(seeds),
              "n_predictions": n_predictions, "predict_fraction": predict_fraction, "l2": l2,
              "prior": "training split" if prior_data is None else "prior_data", "tau": tau,
              "radius_threshold": radius_threshold}
    return AuditReport(records, config)
