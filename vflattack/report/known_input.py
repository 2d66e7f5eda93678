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
        rho = np.array([r["rho_best"] for r in self.records], dtype=float)
        breaches = int(sum(r["breach"] for r in self.records))
        return {"mean_rho_best": float(np.nanmean(rho)) if np.isfinite(rho).any() else float("nan"),
                "breach_rate": float(np.mean([r["breach"] for r in self.records])),
                "breaches": breaches,
                "breach_rate_ci": _clopper_pearson(breaches, len(self.records)),
                "linked_all": int(sum(r["linked"] == self.config["known"] and r["link_correct"] for r in self.records)),
                "linked_any": int(sum(r["linked"] > 0 for r in self.records)),
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
                f"{'rotation + translation' if c['translation'] else 'rotation'}, {len(self.records)} trials, "
                + ("released at full precision" if c.get("decimals") is None else
                   f"released rounded to {c['decimals']} decimals (linking allows for noise "
                   f"{0.5 * 10.0 ** -c['decimals']:g} per coordinate, read off the data)"))
        lines = [f"  trial {r['trial']}: nothing linked ({r['failure']})" if r.get("failure") else
                 f"  trial {r['trial']}: linked {r['linked']} ({'correct' if r['link_correct'] else 'WRONG'}), "
                 f"rho(best) = {r['rho_best']:.3f}, realised relative error {r['relative_error']:.4f} "
                 f"({'breach' if r['breach'] else 'no breach'}), {r['seconds']:.3f} s" for r in self.records]
        lo, hi = s["breach_rate_ci"]
        tail = (f"  all {c['known']} known records linked correctly in {s['linked_all']}/{len(self.records)} trials; "
                f"mean rho(best) = {s['mean_rho_best']:.3f}, breaches {s['breaches']}/"
                f"{len(self.records)} (breach rate 95% interval [{lo:.1%}, {hi:.1%}], Clopper-Pearson over the "
                f"trials), mean time {s['mean_seconds']:.3f} s")
        notes = sorted({r["rho_note"] for r in self.records if r.get("rho_note")})
        return "\n".join([head, *lines, tail] + [f"  rho is {n}" for n in notes])


def _clopper_pearson(k: int, n: int, level: float = 0.95) -> list[float]:
    """The exact (Clopper-Pearson) interval of a rate of ``k`` in ``n`` trials: the trials are
    few (a handful), where a bootstrap of 0/1 outcomes would give [0, 0] or [1, 1].

    Examples
    --------
    >>> [round(v, 4) for v in _clopper_pearson(10, 10)]
    [0.6915, 1.0]
    """
    from scipy.stats import beta

    if n == 0:
        return [float("nan"), float("nan")]
    a = (1.0 - level) / 2.0
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1.0 - a, k + 1, n - k))
    return [lo, hi]
