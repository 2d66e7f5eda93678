"""The precision sweep's report: one line per release, the verdict, ``sweep.csv`` and the plot."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .audit import _mean
from .base import Report, fmt_interval

__all__ = ["SweepReport", "release_dirname"]


def release_dirname(spec: str) -> str:
    """The subdirectory of a sweep's report that holds the audit of release ``spec``."""
    return f"release-{spec.replace(':', '-')}"


@dataclass
class SweepReport(Report, kind="release_sweep", json_name="sweep.json", csv_name="sweep.csv"):
    """The sweep's records (:class:`vflattack.audit.sweep.SweepRecord`), averaged over seeds per
    (dataset, d, release): the table, ``sweep.json``, ``sweep.csv`` and ``sweep_<dataset>_d<d>.png``."""

    csv_fields: ClassVar[tuple[str, ...]] = ("dataset", "n_passive", "release", "decimals", "seeds", "best_attack",
                                             "best_mse", "naive_mse", "naive_rows", "prior_mse", "leakage",
                                             "leakage_share", "radius_median", "below_threshold", "pinned_share", "agreement",
                                             "attacked", "n_predictions", "best_mse_lo", "best_mse_hi", "leakage_lo",
                                             "leakage_hi", "radius_median_lo", "radius_median_hi", "below_threshold_lo",
                                             "below_threshold_hi", "pinned_lo", "pinned_hi", "level")

    def summary(self) -> list[dict]:
        """Per (dataset, d, release), in the sweep's order: the mean over seeds of each number."""
        order = {rel: i for i, rel in enumerate(self.config.get("releases", []))}
        groups: dict = {}
        for r in self.records:
            groups.setdefault((r.dataset, r.n_passive, r.release), []).append(r)
        rows = []
        for (ds, d, rel), recs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], order.get(kv[0][2], 0))):
            row = {"dataset": ds, "n_passive": d, "release": rel, "decimals": recs[0].decimals, "seeds": len(recs),
                   "best_attack": ",".join(sorted({r.best_attack for r in recs if r.best_attack})) or None,
                   "release_words": recs[0].release_words}
            for key in ("best_mse", "naive_mse", "prior_mse", "leakage", "radius_median", "below_threshold",
                        "pinned_share", "agreement"):
                row[key] = _mean([getattr(r, key) for r in recs])
            for key in ("naive_rows", "attacked", "n_predictions"):
                row[key] = int(sum(getattr(r, key) for r in recs))
            row["leakage_share"] = row["leakage"] / row["prior_mse"] if row["prior_mse"] > 0 else float("nan")
            # the audit's intervals over the group's seeds and records (the same on every seed's record)
            iv = recs[0].intervals or {}
            best = row["best_attack"]
            pairs = {"best_mse": (iv.get("mse") or {}).get(best) if best and "," not in best else None,
                     "leakage": iv.get("leakage"), "radius_median": iv.get("radius_median"),
                     "below_threshold": iv.get("below_threshold"), "pinned": iv.get("pinned")}
            for key, v in pairs.items():
                lo, hi = (v if isinstance(v, (list, tuple)) and len(v) == 2 else (float("nan"), float("nan")))
                row[f"{key}_lo"], row[f"{key}_hi"] = float(lo), float(hi)
            row["level"] = 0.95 if iv else float("nan")
            rows.append(row)
        return rows

    def table(self) -> str:
        summary = self.summary()
        out, blocks = [], []
        for key in dict.fromkeys((s["dataset"], s["n_passive"]) for s in summary):
            rows = [s for s in summary if (s["dataset"], s["n_passive"]) == key]
            out.append(self.headline(rows))
            blocks.append(f"\n{key[0]}, d = {key[1]}: precision sweep ({rows[0]['seeds']} seed(s); MSE per feature; "
                          "r* is the certified radius / sqrt(d))")
            blocks.append(f"  {'release':<14} {'best attack':>12} {'MSE':>9} {'naive MSE':>10} {'naive rows':>11} "
                          f"{'prior MSE':>10} {'leakage':>9} {'95% interval':>22} {'median r*':>10} {'pinned':>7} "
                          f"{'top kept':>8}")
            for s in rows:
                lo, hi = s.get("leakage_lo", np.nan), s.get("leakage_hi", np.nan)
                ci = fmt_interval(lo, hi, spec="+.5f")
                blocks.append(f"  {s['release']:<14} {s['best_attack'] or '-':>12} {s['best_mse']:>9.5f} "
                              f"{s['naive_mse']:>10.5f} {s['naive_rows']:>5}/{s['n_predictions']:<5} "
                              f"{s['prior_mse']:>10.5f} {s['leakage']:>+9.5f} {ci:>22} {s['radius_median']:>10.4f} "
                              f"{s['pinned_share']:>7.1%} {s['agreement']:>8.1%}")
            blocks.append("  (95% intervals: percentile bootstrap over records and seeds; each release's audit "
                          "report has every headline's)")
        return "\n".join(out + blocks)

    @staticmethod
    def headline(rows) -> str:
        """How far below the prior alone the best attack gets, at the most and the least precise
        release, and which releases leak beyond the prior: one sentence per (dataset, d)."""
        r0, first, last = rows[0], rows[0], rows[-1]
        where = (f"{r0['dataset']}, d = {r0['n_passive']}, precision sweep over releases "
                 f"{', '.join(s['release'] for s in rows)}")
        if not all(np.isfinite(s["leakage"]) for s in (first, last)):
            return f"{where}: no score-based attack ran on some release, so leakage beyond the prior is not measured."
        # a release leaks when its leakage's interval lies above 0 and the leakage is at least half a
        # percent of the prior's MSE (below that it prints as 0%); without an interval, the latter alone
        def leaks(s):
            big = np.isfinite(s["leakage_share"]) and s["leakage_share"] >= NEGLIGIBLE_SHARE
            lo = s.get("leakage_lo", np.nan)
            return big and (lo > 0 if np.isfinite(lo) else True)

        quiet = [s["release"] for s in rows if not leaks(s)]
        verdict = ("every release audited leaks beyond the prior" if not quiet
                   else f"{', '.join(quiet)} {'does' if len(quiet) == 1 else 'do'} not leak measurably beyond the "
                        f"prior (the 95% interval of the leakage reaches 0, or it is under {NEGLIGIBLE_SHARE:.1%} of the "
                        "prior's MSE)")
        return (f"{where}: the best attack's MSE is {_below(first)} the prior alone ({first['prior_mse']:.5f}) on "
                f"{first['release']} and {_below(last)} it on {last['release']}; {verdict}.")

    def csv_rows(self) -> list[dict]:
        return self.summary()

    def html_links(self) -> list[tuple[str, str]]:
        """The audit of each release, in its subdirectory (:func:`release_dirname`)."""
        return [(f"the audit of release {spec}", f"{release_dirname(spec)}/report.html")
                for spec in self.config.get("releases", [])]

    def payload(self) -> dict:
        return dict(super().payload(), summary=self.summary(), negligible_leakage_share=NEGLIGIBLE_SHARE)

    def plots(self, out: pathlib.Path) -> dict:
        from .plots import plot_release_sweep

        summary = self.summary()
        paths = {}
        for ds, d in dict.fromkeys((s["dataset"], s["n_passive"]) for s in summary):
            rows = [s for s in summary if (s["dataset"], s["n_passive"]) == (ds, d)]
            paths[f"sweep_{ds}_d{d}"] = plot_release_sweep(rows, out / f"sweep_{ds}_d{d}.png")
        return paths


#: the share of the prior's MSE under which a release's leakage is not called a leak (it prints
#: as 0 %); the verdict names it, and the JSON carries it
NEGLIGIBLE_SHARE = 0.005


def _below(row) -> str:
    """'70% below' / '3% above' the prior, from the row's leakage (prior MSE - best MSE)."""
    share = row["leakage_share"]
    return f"{abs(share):.0%} {'below' if share >= 0 else 'above'}"
