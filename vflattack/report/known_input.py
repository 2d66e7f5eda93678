"""The known-input experiment's report: one line per trial and the breach rate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Report

__all__ = ["KnownInputReport"]


@dataclass
class KnownInputReport(Report, kind="known_input", json_name="known_input.json", csv_name="known_input.csv"):
    """The known-input experiment: one record per trial (or one for the VFL scenario)."""


    @property
    def csv_fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.records[0]) if self.records else ()

    def csv_rows(self) -> list[dict]:
        return list(self.records)

    def summary(self) -> dict:
        """Mean rho(best), breach rate and mean time over the trials (VFL: the one record)."""
        if self.config["vfl"]:
            return dict(self.records[0])
        rho = np.array([r["rho_best"] for r in self.records])
        return {"mean_rho_best": float(rho.mean()),
                "breach_rate": float(np.mean([r["breach"] for r in self.records])),
                "mean_seconds": float(np.mean([r["seconds"] for r in self.records]))}

    def payload(self) -> dict:
        return dict(super().payload(), summary=self.summary())

    def table(self) -> str:
        c = self.config
        if c["vfl"]:
            r = self.records[0]
            return (f"known-input attack on the VFL orthogonal defence ({c['dataset']}, d = {c['passive']}, "
                    f"k = {r['n_classes']}, epsilon = 0.5 ||W_pas||_F, distortion {r['distortion']:.3f}):\n"
                    f"  {c['known']} known passive records, {r['linked']} linked, ||M - R^T||_F = "
                    f"{r['rotation_error']:.2e}\n"
                    f"  white-box MSE under the defence {r['mse_defended']:.5f} -> after undoing the rotation "
                    f"{r['mse_after_attack']:.2e} ({r['n_predictions']} predictions, {r['seconds']:.2f} s)")
        s = self.summary()
        head = (f"known-input attack on {c['dataset']}: {c['n_records']} records x {c['n_features']} features, "
                f"{c['known']} known, epsilon = {c['epsilon']}, "
                f"{'rotation + translation' if c['translation'] else 'rotation'}, {len(self.records)} trials")
        lines = [f"  trial {r['trial']}: linked {r['linked']} ({'correct' if r['link_correct'] else 'WRONG'}), "
                 f"rho(best) = {r['rho_best']:.3f}, realised relative error {r['relative_error']:.4f} "
                 f"({'breach' if r['breach'] else 'no breach'}), {r['seconds']:.3f} s" for r in self.records]
        tail = (f"  mean rho(best) = {s['mean_rho_best']:.3f}, breaches {sum(r['breach'] for r in self.records)}/"
                f"{len(self.records)}, mean time {s['mean_seconds']:.3f} s")
        return "\n".join([head, *lines, tail])
