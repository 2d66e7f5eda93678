"""The white-box audit's report: the MSE table with the theory's bounds, the leakage headline,
the privacy CSVs, the saved arrays and the plots."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Report, fmt_interval

__all__ = ["AuditReport"]


@dataclass
class AuditReport(Report, kind="audit", csv_name="mse.csv"):
    """All records of an audit: the table, ``report.json``, ``mse.csv`` and the MSE plots."""

    csv_fields: ClassVar[tuple[str, ...]] = ("dataset", "n_passive", "method", "mse", "mse_lo", "mse_hi", "mse_std",
                                             "worst_case", "seeds", "seconds")

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
                lo, hi = _ci(recs, ("mse", m))
                rows.append({"dataset": ds, "n_passive": d, "method": m,
                             "mse": float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan"),
                             "mse_lo": lo, "mse_hi": hi,
                             "mse_std": float(np.nanstd(vals)) if np.isfinite(vals).sum() > 1 else 0.0,
                             "worst_case": _mean([r.privacy.get("worst_case", {}).get(m, np.nan) for r in recs]),
                             "seeds": len(recs), "status": _merge([r.status[m] for r in recs]),
                             "seconds": float(np.mean([r.seconds[m] for r in recs]))})
        return rows

    def groups(self) -> list[dict]:
        """Per (dataset, d), every number the text prints outside the MSE table, averaged over
        seeds: the headline's prior and best-attack MSE and their relative gap, the exposure
        (radius quantiles, exact share, share below the threshold, the five most pinned
        features) and the theory's bounds. ``report.json`` holds them, so each printed number
        can be found there."""
        by: dict = {}
        for r in self.records:
            by.setdefault((r.dataset, r.n_passive), []).append(r)
        out = []
        for (ds, d), recs in sorted(by.items()):
            r0, p = recs[0], [r.privacy for r in recs if r.privacy]
            prior = _mean([r.privacy.get("prior_mse", np.nan) for r in recs])
            best = _mean([r.privacy.get("best_mse", np.nan) for r in recs])
            g = {"dataset": ds, "n_passive": d, "n_features": r0.n_features, "n_classes": r0.n_classes,
                 "rank": r0.rank, "n_predictions": r0.n_predictions, "seeds": len(recs),
                 "accuracy": float(np.mean([r.accuracy for r in recs])), "prior_mse": prior, "best_mse": best,
                 "best_attacks": sorted({r.privacy.get("best_attack") for r in recs if r.privacy.get("best_attack")}),
                 "lower_share": (prior - best) / prior if prior > 0 and np.isfinite(best) else float("nan")}
            if p:
                pinned = np.nanmean(np.array([x["pinned"] for x in p], dtype=float), axis=0)
                g["exposure"] = {
                    "leakage": _mean([x["leakage"] for x in p]),
                    **{k: _mean([x["radius"]["quantiles"][k] for x in p]) for k in ("p10", "median", "p90")},
                    "exact_share": _mean([x["radius"]["exact_share"] for x in p]),
                    "below_threshold": _mean([x["radius"]["below_threshold"] for x in p]),
                    "threshold": p[0]["radius"]["threshold"], "tau": p[0]["tau"],
                    "noise_width": _mean([x.get("noise_width", 0.0) for x in p]),
                    "pinned_top": [[c, float(v)] for v, c in sorted(zip(pinned, r0.passive_columns),
                                                                     key=lambda t: -t[0])[:5]],
                    "pinned_share": _mean([float(np.nanmean(np.asarray(x["pinned"], dtype=float))) for x in p]),
                    "ci": {k: _ci(recs, (k,)) for k in ("leakage", "prior_mse", "radius_median", "below_threshold",
                                                        "pinned")}}
                g["best_mse_ci"] = _ci(recs, ("mse", g["best_attacks"][0])) if len(g["best_attacks"]) == 1 \
                    else [float("nan"), float("nan")]
            if r0.bounds:
                g["bounds"] = {k: np.mean([r.bounds[k] for r in recs], axis=0).tolist() for k in r0.bounds}
            g["link"], g["colluding"] = getattr(r0, "link", "softmax"), list(getattr(r0, "colluding", []))
            g["ci_level"] = (getattr(r0, "intervals", None) or {}).get("level", 0.95)
            if getattr(r0, "parties", None):
                g["parties"] = _party_rows(ds, d, recs)
            out.append(g)
        return out

    def party_rows(self) -> list[dict]:
        """One row per (dataset, d, passive party), averaged over seeds (``parties.csv``, the
        HTML page's "Each party" table)."""
        return [row for g in self.groups() for row in g.get("parties", [])]

    def html_tables(self, doc: dict) -> list:
        tables = super().html_tables(doc)
        if doc.get("parties"):
            tables.append(("Each passive party", "parties", doc["parties"], list(doc["parties"][0])))
        return tables

    def table(self) -> str:
        """The human-readable table (what the CLI prints)."""
        groups, summary = self.groups(), self.summary()
        out = [self.headline(g, self.config.get("release_words")) for g in groups]
        for g in groups:
            ds, d = g["dataset"], g["n_passive"]
            link = g.get("link", "softmax")
            outputs = "classes" if link == "softmax" else f"outputs of link {link}"
            colluding = f", colluding with {', '.join(g['colluding'])}" if g.get("colluding") else ""
            out.append(f"\n{ds}: d = {d} passive of {g['n_features']} features, "
                       f"k = {g['n_classes']} {outputs}, rank(A) = {g['rank']}, {g['n_predictions']} predictions, "
                       f"{g['seeds']} seed(s), model accuracy {g['accuracy']:.3f}{colluding}")
            several = g["seeds"] > 1  # a spread over seeds only when there are several
            level = self._level()
            ci_head = f"{level:.0%} interval"
            out.append(f"  {'method':<10} {'MSE':>10} {ci_head:>21} {'± std' if several else '':>9} {'worst':>8}  "
                       f"{'time [s]':>9}  status")
            for row in (s for s in summary if s["dataset"] == ds and s["n_passive"] == d):
                st = ", ".join(f"{k}:{v}" for k, v in row["status"].items())
                spread = f"{row['mse_std']:>9.5f}" if several else " " * 9
                out.append(f"  {row['method']:<10} {row['mse']:>10.5f} {fmt_interval(row['mse_lo'], row['mse_hi'], 21)} "
                           f"{spread} {row['worst_case']:>8.4f}  {row['seconds']:>9.3f}  {st}")
            if "exposure" in g:
                e = g["exposure"]
                ci = e.get("ci", {})
                out += [f"  leakage beyond the prior (prior-only MSE - best attack MSE): {e['leakage']:+.5f} "
                        f"({level:.0%} interval {fmt_interval(*ci.get('leakage', [np.nan, np.nan]), spec='+.5f')})",
                        f"  per-record minimax radius r*/sqrt(d): median {e['median']:.4f} "
                        f"({level:.0%} interval {fmt_interval(*ci.get('radius_median', [np.nan, np.nan]))}; p10 {e['p10']:.4f}, "
                        f"p90 {e['p90']:.4f}; exact on {e['exact_share']:.0%} of records); {e['below_threshold']:.1%} "
                        f"of records have r* <= {e['threshold']:g} ({fmt_interval(*ci.get('below_threshold', [np.nan] * 2), spec='.1%')})",
                        f"  features pinned within {e['tau']:.0%} of their range"
                        + (f" beyond the deployment's rounding (median {e['noise_width']:.1e})"
                           if e.get("noise_width", 0.0) > 0 else "")
                        + f": {e['pinned_share']:.1%} of a record's "
                        f"features on average ({fmt_interval(*ci.get('pinned', [np.nan] * 2), spec='.1%')}); most pinned: "
                        + ", ".join(f"col {c}: {v:.1%}" for c, v in e["pinned_top"])]
            for row in g.get("parties", []):
                out.append(f"  party {row['party']} ({row['n_features']} features: cols {row['columns']}): best attack "
                           f"{row['best_attack']} MSE {row['best_mse']:.5f}; certified r*_p/sqrt(d_p) median "
                           f"{row['radius_median']:.4f} (p90 {row['radius_p90']:.4f}), {row['below_threshold']:.1%} of "
                           f"records <= {g.get('exposure', {}).get('threshold', float('nan')):g}; "
                           f"{row['pinned']:.1%} of its features pinned")
            if "bounds" in g:
                b = g["bounds"]
                out.append(f"  theory (docs/theory.md): half* MSE in [{b['half_star'][0]:.5f}, {b['half_star'][1]:.5f}], "
                           f"ls MSE in [{b['ls'][0]:.5f}, {b['ls'][1]:.5f}]; "
                           f"MSE(half) - MSE(half*) = {b['half_star_gain']:.5f}")
        out.append(f"\n{self._level():.0%} intervals: {self._ci_words()}")
        return "\n".join(out).lstrip("\n")

    def _level(self) -> float:
        return next((r.intervals["level"] for r in self.records if getattr(r, "intervals", None)), 0.95)

    def _ci_words(self) -> str:
        r = next((r.intervals for r in self.records if getattr(r, "intervals", None)), None)
        if r is None:
            return "none"
        return (f"{r['method']}, {r['resamples']} resamples, seeded by the audit's seed (several seeds: "
                f"resampled too); docs/vflattack.md, 'Confidence intervals'")

    @staticmethod
    def headline(group: dict, release: str | None = None) -> str:
        """One sentence from a :meth:`groups` entry: do the scores leak beyond the prior, and by
        how much (means over seeds); with ``release`` (in words) it says which release was audited."""
        prior, best, names = group["prior_mse"], group["best_mse"], group["best_attacks"]
        link = group.get("link", "softmax")
        where = (f"{group['dataset']}, d = {group['n_passive']}" + (f", link: {link}" if link != "softmax" else "")
                 + (f", release: {release}" if release else ""))
        if not (np.isfinite(prior) and np.isfinite(best)):
            return f"{where}: no score-based attack ran, so leakage beyond the prior is not measured."
        lo, hi = group.get("exposure", {}).get("ci", {}).get("leakage", [float("nan")] * 2)
        if np.isfinite(lo) and np.isfinite(hi):   # the verdict reads the interval, not the point value
            ci = f" (leakage {prior - best:+.5f}, {group.get('ci_level', 0.95):.0%} interval {fmt_interval(lo, hi, spec='+.5f')})"
            if lo > 0:
                return (f"{where}: the scores leak beyond the prior: the best attack ({', '.join(names)}) reaches MSE "
                        f"{best:.5f} against {prior:.5f} for the prior alone ({group['lower_share']:.0%} lower){ci}.")
            if hi < 0:
                return (f"{where}: the scores do not leak beyond the prior on average: the best attack "
                        f"({', '.join(names)}) has MSE {best:.5f}, the prior alone {prior:.5f}{ci}; see the per-record "
                        f"radii below.")
            return (f"{where}: these records cannot tell whether the scores leak beyond the prior: the best attack "
                    f"({', '.join(names)}) has MSE {best:.5f}, the prior alone {prior:.5f}, and the interval holds 0"
                    f"{ci}; audit more records, and see the per-record radii below.")
        if best < prior:
            return (f"{where}: the scores leak beyond the prior: the best attack ({', '.join(names)}) reaches MSE "
                    f"{best:.5f} against {prior:.5f} for the prior alone ({group['lower_share']:.0%} lower).")
        return (f"{where}: the scores do not leak beyond the prior on average: the best attack ({', '.join(names)}) "
                f"has MSE {best:.5f}, the prior alone {prior:.5f}; see the per-record radii below.")

    def csv_rows(self) -> list[dict]:
        return self.summary()

    def payload(self) -> dict:
        doc = super().payload()
        for rec in doc["records"]:
            rec.pop("arrays", None)
            rec.pop("replicates", None)
        out = dict(doc, summary=self.summary(), groups=self.groups())
        if any(getattr(r, "parties", None) for r in self.records):
            out["parties"] = self.party_rows()
        return out

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
                        "leakage_lo", "leakage_hi", "radius_min", "radius_p10", "radius_median", "radius_median_lo",
                        "radius_median_hi", "radius_p90", "radius_max", "radius_lower_median", "exact_share",
                        "threshold", "below_threshold", "below_threshold_lo", "below_threshold_hi", "tau",
                        "ci_level", "ci_resamples"])
            for r in self.records:
                p = r.privacy
                q = p["radius"]["quantiles"]
                ci = getattr(r, "intervals", {}) or {}
                nan2 = [float("nan")] * 2
                w.writerow([r.dataset, r.n_passive, r.seed, p["prior_mse"], p["best_attack"], p["best_mse"],
                            p["leakage"], *ci.get("leakage", nan2), q["min"], q["p10"], q["median"],
                            *ci.get("radius_median", nan2), q["p90"], q["max"],
                            p["radius"]["lower_median"], p["radius"]["exact_share"], p["radius"]["threshold"],
                            p["radius"]["below_threshold"], *ci.get("below_threshold", nan2), p["tau"],
                            ci.get("level"), ci.get("resamples")])
        paths["privacy_features_csv"] = out / "privacy_features.csv"
        with open(paths["privacy_features_csv"], "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["dataset", "n_passive", "seed", "feature", "pinned", "mean_width", "tau"])
            for r in self.records:
                for c, pin, wd in zip(r.passive_columns, r.privacy["pinned"], r.privacy["width"]):
                    w.writerow([r.dataset, r.n_passive, r.seed, c, pin, wd, r.privacy["tau"]])
        rows = self.party_rows()
        if rows:
            paths["parties_csv"] = out / "parties.csv"
            with open(paths["parties_csv"], "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
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


def _party_rows(ds, d, recs) -> list[dict]:
    """Each passive party of one (dataset, d) group, its numbers averaged over the seeds."""
    rows = []
    for name, first in recs[0].parties.items():
        entries = [r.parties[name] for r in recs if name in r.parties]
        mse = {m: _mean([e["mse"].get(m, np.nan) for e in entries]) for m in first["mse"]}
        scored = {m: v for m, v in mse.items() if m not in ("random", "mean") and np.isfinite(v)}
        best = min(scored, key=scored.get) if scored else None
        rows.append({"dataset": ds, "n_passive": d, "party": name, "n_features": first["n_features"],
                     "columns": " ".join(str(c) for c in first["columns"]), "best_attack": best,
                     "best_mse": scored[best] if best else float("nan"),
                     "radius_median": _mean([e["radius"]["median"] for e in entries]),
                     "radius_p90": _mean([e["radius"]["p90"] for e in entries]),
                     "radius_lower_median": _mean([e["radius_lower_median"] for e in entries]),
                     "below_threshold": _mean([e["below_threshold"] for e in entries]),
                     "pinned": _mean([e.get("pinned", np.nan) for e in entries])})
    return rows


def _ci(records: list, path: tuple) -> list[float]:
    """``[lo, hi]`` of the headline at ``path``: the group's interval the audit computed over its
    seeds (vflattack.audit.intervals.combine_groups); NaN where there is none."""
    v = (getattr(records[0], "intervals", None) or {}).get("group", {})
    for key in path:
        v = v.get(key) if isinstance(v, dict) else None
    return [float(v[0]), float(v[1])] if isinstance(v, (list, tuple)) and len(v) == 2 else [float("nan")] * 2
