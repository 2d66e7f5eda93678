"""The prediction-log audit's report (:func:`vflattack.audit_log` runs the attack on a log inside an
atomically written report directory and returns it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Report, fmt_interval

__all__ = ["LogAuditReport"]


@dataclass
class LogAuditReport(Report, kind="log_audit", csv_name="mse.csv"):
    """The audit of a prediction log: per method, statuses and (with the passive log) MSE."""

    csv_fields: ClassVar[tuple[str, ...]] = ("method", "mse", "mse_ci_lo", "mse_ci_hi", "rows_scored", "status",
                                             "binary_exact_share", "binary_exact_ci_lo", "binary_exact_ci_hi",
                                             "mse_data_units", "mse_data_units_ci_lo", "mse_data_units_ci_hi")

    def csv_rows(self) -> list[dict]:
        def ci(r, key, side):
            v = r.get(key)
            return v[side] if v else ""

        return [{"method": r["method"], "mse": r["mse"], "mse_ci_lo": ci(r, "mse_ci", 0), "mse_ci_hi": ci(r, "mse_ci", 1),
                 "rows_scored": r["rows_scored"], "status": json.dumps(r["status"]),
                 "binary_exact_share": r.get("binary_exact_share", ""),
                 "binary_exact_ci_lo": ci(r, "binary_exact_ci", 0), "binary_exact_ci_hi": ci(r, "binary_exact_ci", 1),
                 "mse_data_units": r.get("mse_data_units", ""), "mse_data_units_ci_lo": ci(r, "mse_data_units_ci", 0),
                 "mse_data_units_ci_hi": ci(r, "mse_data_units_ci", 1)}
                for r in self.records]

    def table(self) -> str:
        c = self.config
        link = c.get("link", "softmax")
        head = (f"prediction log {c['log']}, " + (f"link: {link}, " if link != "softmax" else "")
                + f"release: {c.get('release_words', 'exact scores')}: "
                f"{c['rows']} predictions in {c['partitions']} partitions, "
                f"d = {c['n_passive']} passive features, k = {c['n_classes']}, "
                + (f"MSE on {self.records[0]['rows_scored']} rows joined with the passive log"
                   if c["passive_log"] else "no passive log: statuses only"))
        lines = [head]
        if c.get("verdict"):   # most rows refused under the named release: that comes first
            lines = [c["verdict"], head]
        if c.get("looks_rounded") is not None:
            K = c["looks_rounded"]
            lines.append(f"  the logged scores look rounded to {K} decimals but were audited as exact: rows whose "
                         f"rounded scores are inconsistent are refused and the certificates may not hold; audit "
                         f"with --release round:{K}")
        units = c.get("bounds")
        if units:
            lines.append(f"  the passive features' ranges ({units['source']}"
                         + (f", widened by {units['margin']:g} of each range; not a guarantee" if units["source"] ==
                            "observed" else "") + "): MSE relative to each range, and in the data's units")
        groups, binary = c.get("onehot") or [], c.get("binary") or []
        read = any("binary_exact_share" in r for r in self.records)
        if groups or binary:
            lines.append(f"  the passive features' encoding: {len(groups)} one-hot group(s) (each a row sum = 1 of "
                         f"every set), {len(binary)} further binary column(s)"
                         + ("; 'exact 0/1' is the share of rows whose 0/1 features rounding reads off the "
                            "reconstruction exactly" if read else ""))
        iv = c.get("intervals")
        if iv:
            lines.append(f"  intervals: {iv['level']:.0%}, {iv['method']}, {iv['resamples']} replicates, seed "
                         f"{iv['seed']}")
        lines.append(f"  {'method':<10} {'MSE':>10}" + (f" {'interval':>21}" if iv else "")
                     + (f" {'MSE, units':>12}" + (f" {'interval, units':>21}" if iv else "") if units else "")
                     + (f" {'exact 0/1':>9}" + (f" {'interval':>16}" if iv else "") if read else "") + "  status")
        for r in self.records:
            st = ", ".join(f"{k}:{v}" for k, v in r["status"].items())
            mse = f"{r['mse']:>10.5f}" if r["mse"] is not None and np.isfinite(r["mse"]) else f"{'—':>10}"
            if iv:
                lo, hi = r.get("mse_ci") or [float("nan")] * 2
                mse += " " + fmt_interval(lo, hi, 21)
            if units:
                du = r.get("mse_data_units")
                mse += f" {du:>12.5g}" if du is not None and np.isfinite(du) else f" {'—':>12}"
                ulo, uhi = r.get("mse_data_units_ci") or [float("nan")] * 2
                if iv:
                    mse += " " + fmt_interval(ulo, uhi, 21, ".4g")
            if read:
                share = r.get("binary_exact_share")
                mse += f" {share:>9.1%}" if share is not None and np.isfinite(share) else f" {'—':>9}"
                if iv:
                    blo, bhi = r.get("binary_exact_ci") or [float("nan")] * 2
                    mse += " " + fmt_interval(blo, bhi, 16, ".1%")
            lines.append(f"  {r['method']:<10} {mse}  {st}")
        lines += self._party_lines()
        if c.get("skipped_without_prior"):
            lines.append(f"  not run (they need a prior: --prior-file): {', '.join(c['skipped_without_prior'])}")
        lines.append(f"  reconstructions and statuses: {c['reconstructions']}")
        return "\n".join(lines)


    def _party_lines(self) -> list[str]:
        """Each passive party's MSE per method (the mean of its features' MSE), when the model
        names several parties and the passive log was joined."""
        parties = self.config.get("parties") or {}
        if len(parties) < 2:
            return []
        out = []
        for name, cols in parties.items():
            cells = []
            for r in self.records:
                per = r.get("mse_per_feature")
                if per is not None:
                    cells.append(f"{r['method']} {float(np.mean(np.asarray(per, dtype=float)[cols])):.5f}")
            out.append(f"  party {name} (passive columns {', '.join(str(c) for c in cols)}): MSE "
                       + ("; ".join(cells) if cells else "— (no passive log)"))
        return out
