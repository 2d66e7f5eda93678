"""The threat audit's report: black-box, agnostic and defence tables, ``tradeoff.csv`` and plots."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import ClassVar

from .base import Report

__all__ = ["ThreatReport"]


@dataclass
class ThreatReport(Report, kind="threats", json_name="threats.json", csv_name="tradeoff.csv"):
    """The black-box, agnostic and defence records of one d: table, ``threats.json``,
    ``tradeoff.csv`` and the trade-off and black-box plots."""

    csv_fields: ClassVar[tuple[str, ...]] = ("dataset", "seed", "kind", "epsilon", "distortion", "whitebox", "am",
                                             "ram", "detected")

    def table(self) -> str:
        out = []
        for r in self.records:
            out.append(f"{r.dataset}: d = {r.n_passive}, k = {r.n_classes}, rank(A) = {r.rank}, estimator {r.estimator}, "
                       f"{r.n_eval} predictions scored, RAM from {r.n_observed} observed scores (lambda = {r.lam:g}), "
                       f"AM accuracy {r.am_accuracy:.3f}")
            out.append("  attack        MSE")
            for k, v in r.mse.items():
                out.append(f"  {k:<12} {v:.5f}")
            if r.blackbox:
                out.append("  black-box, one passive feature: MSE vs number of predictions N: "
                           + ", ".join(f"N={n}: {m:.2e}" for n, m in r.blackbox))
            if r.tradeoff:
                out.append(f"  defence (||W_pas||_F = {r.w_norm:.3g})")
                out.append(f"  {'kind':<9} {'epsilon':>8} {'eps/||W||':>9} {'distortion':>10} {'white-box':>10} {'AM':>9} "
                           f"{'RAM':>9} {'detected':>9}")
                for t in r.tradeoff:
                    out.append(f"  {t['kind']:<9} {t['epsilon']:>8.3g} {t['epsilon'] / r.w_norm:>9.3g} {t['distortion']:>10.3f} "
                               f"{t['whitebox']:>10.5f} {t['am']:>9.5f} {t['ram']:>9.5f} {t['detected']:>9.1%}")
        return "\n".join(out)

    def csv_rows(self) -> list[dict]:
        return [{"dataset": r.dataset, "seed": r.seed, **t} for r in self.records for t in r.tradeoff]

    def plots(self, out: pathlib.Path) -> dict:
        from .plots import plot_blackbox, plot_tradeoff

        paths = {}
        for ds in sorted({r.dataset for r in self.records}):
            recs = [r for r in self.records if r.dataset == ds]
            if any(r.tradeoff for r in recs):
                paths[f"tradeoff_{ds}"] = plot_tradeoff(recs, out / f"tradeoff_{ds}.png")
            if any(r.blackbox for r in recs):
                paths[f"blackbox_{ds}"] = plot_blackbox(recs, out / f"blackbox_{ds}.png")
        return paths
