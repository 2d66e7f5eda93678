"""The release design's report: the verdict, the curve, the binding records, ``design.json``,
``curve.csv``, ``records.csv`` and the plot of the target against the precision."""

from __future__ import annotations

import csv
import pathlib
from dataclasses import asdict, dataclass, is_dataclass
from typing import ClassVar

from .base import Report, fmt_interval

__all__ = ["DesignReport"]

def _row(c) -> dict:
    return asdict(c) if is_dataclass(c) else dict(c)


@dataclass
class DesignReport(Report, kind="design", json_name="design.json", csv_name="curve.csv"):
    """:func:`vflattack.design_release`'s result (``DesignResult.to_result()``): one row per
    candidate release (the curve, then the label alone) and the design's configuration."""

    csv_fields: ClassVar[tuple[str, ...]] = ("release", "kind", "parameter", "meets", "certified", "failing",
                                             "refuted", "outside", "worst", "median", "agreement",
                                             "score_change", "max_change", "leakage", "leakage_lo", "leakage_hi",
                                             "seconds")

    def rows(self) -> list[dict]:
        return [_row(c) for c in self.records]

    def table(self) -> str:
        cfg, rows = self.config, self.rows()
        target = cfg["target"]
        what = {"radius": "min cert. r*/√d", "pinned": "min width", "leakage": "leakage"}[target.split("=")[0]]
        out = [f"design: {cfg['headline']}", "",
               f"target {target}: {cfg['target_words']}.",
               f"{cfg['records']} records, d = {cfg['n_passive']}, k = {cfg['n_classes']}; every candidate evaluated "
               "(the certified value need not be monotone in the precision, so nothing is bisected)."]
        if not target.startswith("leakage"):
            out.append("The certified values are proven lower bounds, each settled as soon as it decides the target "
                       "(the feature ranges first, the exact method only where they do not): read them against the "
                       "target, not as r* itself.")
        if cfg["unreachable"]:
            out.append(f"{cfg['unreachable']} record(s) are not protected even by the label alone ("
                       f"{cfg['proven_unreachable']} proven: no release that reveals the predicted class protects "
                       "them); the target is judged on the others. Their indices are in design.json.")
        if cfg.get("release") and cfg["binding"]:
            out.append(f"{cfg['binding']} record(s) ({cfg['binding_share']:.1%}) bind: they fail one step finer "
                       f"({cfg['finer']}).")
        out.append("")
        out.append(f"  {'release':<22} {'meets':>5} {'certified':>9} {'failing':>7} {'outside':>7} {what:>15} "
                   f"{'median':>8} {'top kept':>8} {'|change|':>9} {'max':>8} {'leakage':>9} {'95% interval':>19}")
        for r in rows:
            mark = " <" if r["release"] == cfg.get("release") else ""
            out.append(f"  {r['release']:<22} {'yes' if r['meets'] else 'no':>5} {r['certified']:>9} "
                       f"{r['failing']:>7} {r['outside']:>7} {r['worst']:>15.4g} {r['median']:>8.4g} "
                       f"{r['agreement']:>8.1%} {r['score_change']:>9.2g} {r['max_change']:>8.2g} {_leak(r['leakage']):>9} "
                       f"{fmt_interval(r.get('leakage_lo'), r.get('leakage_hi'), 19, '+.4f', '-')}{mark}")
        if cfg.get("leakage_measured") is False:
            out.append("  (leakage: no passive features given, not measured)")
        else:
            out.append("  leakage (prior's MSE minus the best prior-aware attack's, measured on these records): "
                       "on the chosen release, one step finer and the label" + (", and on every candidate"
                                                                                 if cfg.get("leakage_curve") else "")
                       + "; its 95% interval is a paired bootstrap over the records (1000 resamples, seed 0)"
                       + ("; a release meets the target when the whole interval is at most it"
                          if target.startswith("leakage") else ""))
        return "\n".join(out)

    def csv_rows(self) -> list[dict]:
        return self.rows()

    def extra_files(self, out: pathlib.Path) -> dict:
        """``records.csv``: per record, its certified value under the chosen release and under
        the label alone, whether it is reachable and whether it binds."""
        per = self.config.get("per_record", {})
        keys = ("value", "upper", "reachable", "binding", "finer_value", "label_value", "label_upper")
        if not per or "value" not in per:
            return {}
        path = out / "records.csv"
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(("record",) + keys)
            for i in range(len(per["value"])):
                w.writerow((i,) + tuple(per[k][i] for k in keys))
        return {"records": path}

    def html_tables(self, doc: dict) -> list:
        rows = doc.get("records", [])
        fields = ["release", "meets", "certified", "failing", "refuted", "outside", "worst", "median",
                  "agreement", "score_change", "max_change", "leakage", "leakage_lo", "leakage_hi"]
        chosen = doc["config"].get("release")
        picks = [r for r in rows if r["release"] in (chosen, doc["config"].get("finer")) or r["kind"] == "label"]
        out = [("The chosen release, one step finer, and the label alone", None, picks, fields),
               ("Every candidate (the curve)", "records", rows, fields)]
        closest = doc["config"].get("closest", {}).get("rows", [])
        if closest:
            out.append(("The binding records (they fail one step finer), then the closest to the target: "
                        "certified values under the chosen release, one step finer and the label alone", None,
                        closest, list(closest[0])))
        return out

    def plots(self, out: pathlib.Path) -> dict:
        from .plots import plot_design_curve

        rows = [r for r in self.rows() if r["kind"] != "label"]
        if not rows:
            return {}
        return {"design_curve": plot_design_curve(rows, self.config, out / "design_curve.png")}


def _leak(v) -> str:
    return "-" if v is None or v != v else f"{v:+.4f}"

