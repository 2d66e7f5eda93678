"""Reproducible experiments behind ``vflattack known-input``."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.stats import ortho_group

from . import datasets
from ._validate import InvalidInputError
from .known_input import attack_orthogonal_defence, known_input_attack
from .protocol import split_columns, split_rows
from .report import Report

__all__ = ["KnownInputReport", "perturb", "run_known_input"]


def perturb(X: np.ndarray, rng, translation: bool = False):
    """``Y[perm[i]] = M_T x_i (+ v)``: a Haar rotation, a secret permutation, an optional translation."""
    n = X.shape[1]
    M_T = ortho_group.rvs(n, random_state=rng)
    perm = rng.permutation(X.shape[0])
    v = rng.standard_normal(n) * X.std() * 3 if translation else np.zeros(n)
    Y = np.empty_like(X)
    Y[perm] = X @ M_T.T + v
    return Y, M_T, perm, v


@dataclass
class KnownInputReport(Report):
    """The known-input experiment: one record per trial (or one for the VFL scenario)."""

    kind: ClassVar[str] = "known_input"
    json_name: ClassVar[str] = "known_input.json"
    csv_name: ClassVar[str | None] = "known_input.csv"

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


def run_known_input(dataset: str = "pendigits", *, data_dir: Any = None, known: int = 4, epsilon: float = 0.07,
                    trials: int = 10, records: int | None = None, translation: bool = False,
                    normalize: bool = False, vfl: bool = False, passive: int = 8, seed: int = 0) -> KnownInputReport:
    """The known-input attack on distance-preserving perturbation, over ``trials`` trials.

    Each trial perturbs the records by a Haar rotation (plus a translation with
    ``translation``) and a secret permutation, gives the attacker ``known`` original
    records, and measures linking, the breach probability rho of the best record, the
    realised relative error (a breach when it is at most ``epsilon``) and the time.
    ``vfl=True`` attacks the orthogonal defence of a VFL model instead (``passive``
    passive features, which must be at most k - 1). ``records`` caps the records used.
    """
    for name, value in (("known", known), ("trials", trials), ("passive", passive)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidInputError(f"{name} must be a positive integer; got {value!r}")
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise InvalidInputError(f"epsilon must be a positive number; got {epsilon!r}")
    F, labels = datasets.load(dataset, data_dir, normalize=normalize or vfl)
    rng = np.random.default_rng(seed)
    if records:
        F, labels = F[:records], labels[:records]
    config = {"dataset": dataset, "known": known, "epsilon": epsilon, "trials": trials, "records": records,
              "translation": translation, "normalize": normalize, "vfl": vfl, "passive": passive, "seed": seed,
              "n_records": int(F.shape[0]), "n_features": int(F.shape[1])}
    if vfl:
        return KnownInputReport([_vfl_defence_trial(F, labels, known, epsilon, passive, seed, rng)], config)
    if known > F.shape[0]:
        raise InvalidInputError(f"known must be at most the number of records ({F.shape[0]}); got {known}")
    rows = []
    for t in range(trials):
        Y, M_T, perm, v = perturb(F, rng, translation)
        chosen = rng.choice(F.shape[0], known, replace=False)
        t0 = time.perf_counter()
        att = known_input_attack(F[chosen], Y, epsilon=epsilon, rng=rng, translation=translation)
        secs = time.perf_counter() - t0
        true = int(np.flatnonzero(perm == att.best)[0])
        ref = F[true] - (att.anchor[0] if att.anchor is not None else 0)
        err = float(np.linalg.norm(att.estimate - F[true]) / np.linalg.norm(ref))
        correct = bool(np.array_equal(att.link.perturbed, perm[chosen[att.link.known]]))
        rows.append({"trial": t, "linked": int(att.link.known.size), "link_correct": correct,
                     "rho_best": float(att.rho[att.best]), "relative_error": err,
                     "breach": err <= epsilon, "seconds": secs})
    return KnownInputReport(rows, config)


def _vfl_defence_trial(F, labels, known, epsilon, passive, seed, rng) -> dict:
    from .defence import orthogonal_defence
    from .model import train_vfl_model

    train, pred = split_rows(F.shape[0], 0.2, 2000, seed)
    active, pas = split_columns(F.shape[1], passive, seed)
    model = train_vfl_model(F[train][:, active], F[train][:, pas], labels[train], rng=seed)
    if model.n_classes - 1 < passive:
        raise InvalidInputError(f"vfl needs passive <= k - 1 = {model.n_classes - 1} passive features; got {passive}")
    Y, X = F[pred][:, active], F[pred][:, pas]
    if known > X.shape[0]:
        raise InvalidInputError(f"known must be at most the number of prediction records ({X.shape[0]}); got {known}")
    dfn = orthogonal_defence(model, F[train][:, pas], 0.5 * np.linalg.norm(model.W_pas), rng=seed)
    chosen = rng.choice(X.shape[0], known, replace=False)
    t0 = time.perf_counter()
    br = attack_orthogonal_defence(dfn.disclosed, dfn.predict_proba(Y, X), Y, X[chosen], epsilon=epsilon,
                                   rng=seed, R_true=dfn.R)
    secs = time.perf_counter() - t0
    return {"n_classes": model.n_classes, "distortion": float(dfn.distortion),
            "mse_defended": float(np.nanmean((br.before - X) ** 2)),
            "mse_after_attack": float(np.nanmean((br.after - X) ** 2)),
            "linked": int(br.attack.link.known.size), "rotation_error": float(br.rotation_error),
            "n_predictions": int(X.shape[0]), "seconds": secs}
