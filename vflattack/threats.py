"""The threat audit: black-box, agnostic (AM/RAM) attacks and the defence trade-off.

``run_threat_audit`` uses the protocol of :func:`vflattack.audit.run_audit`
(seeded column shuffle, last d columns passive, seeded 80/20 split). The first
``n_observed`` prediction rows (at most half of them) are the real scores the
adversary observed earlier (they refine the RAM); every MSE is measured on the
other prediction rows. Estimators: ``ls`` when rank(A) = d, ``half_star`` otherwise (docs/theory.md §3).

Defences: for each budget epsilon the passive party optimises R on its own
training rows; the white-box, AM and RAM adversaries are then scored with the
disclosed ``W_pas R``. ``detected`` is the fraction of rows whose disclosed
slice misses the box (chebcenter reports it INFEASIBLE): on those rows an
adversary can tell that the disclosed weights were altered.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

import chebcenter as cc

from . import datasets
from ._validate import InvalidInputError
from .agnostic import agnostic_decomposition, refine_adversary_model, train_adversary_model
from .attacks import default_estimator
from .blackbox import blackbox_attack
from .defence import orthogonal_defence
from .mapping import scores_to_system
from .model import train_vfl_model
from .protocol import split_columns, split_rows
from .report import Report

__all__ = ["ThreatRecord", "ThreatReport", "run_threat_audit"]


@dataclass
class ThreatRecord:
    dataset: str
    seed: int
    n_passive: int
    n_classes: int
    rank: int
    estimator: str
    n_eval: int
    n_observed: int
    lam: float
    mse: dict                       # whitebox / am / ram / mean baseline
    am_accuracy: float
    w_norm: float = float("nan")    # ||W_pas||_F: the scale of the distortion budget
    blackbox: list = field(default_factory=list)    # [(N predictions, MSE)]
    tradeoff: list = field(default_factory=list)    # [{kind, epsilon, distortion, whitebox, am, ram, detected}]


@dataclass
class ThreatReport(Report):
    """The black-box, agnostic and defence records of one d: table, ``threats.json``,
    ``tradeoff.csv`` and the trade-off and black-box plots."""

    kind: ClassVar[str] = "threats"
    json_name: ClassVar[str] = "threats.json"
    csv_name: ClassVar[str | None] = "tradeoff.csv"
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


def _mse_affine(model, scores_real, scores_est, Y, X, method, with_error=False):
    dec = agnostic_decomposition(model, scores_real, scores_est, Y, X, method=method)
    d = X.shape[1]
    out = (float(np.mean(dec["oracle"]) / d), float(np.mean(dec["agnostic"]) / d))
    return out + (float(np.mean(dec["score_error"]) / d),) if with_error else out


def run_threat_audit(dataset: str = "breast_cancer", n_passive: int = 10, seeds: Sequence[int] = (0,),
                     data_dir: Any = None, n_predictions: int | None = None, n_observed: int = 100,
                     lam: float = 1.0, epsilons: Sequence[float] = (), defence_kinds: Sequence[str] = ("optimised",),
                     relative: bool = False, blackbox: bool = True, defence_rows: int = 2000,
                     data: tuple | None = None) -> ThreatReport:
    """Black-box, agnostic and defence results for one dataset (module docstring).

    ``epsilons`` are distortion budgets ``||W_pas - W_pas R||_F``; with
    ``relative=True`` they are fractions of ``||W_pas||_F``.

    Examples
    --------
    >>> rep = run_threat_audit("wine", n_passive=4, n_observed=10, epsilons=(0.5,))
    >>> r = rep.records[0]; r.mse["whitebox"] <= r.mse["am"]
    True
    """
    if data is None:
        F, labels = datasets.load(dataset, data_dir)
    else:
        F, labels = np.asarray(data[0], dtype=float), np.asarray(data[1])
    records = []
    for seed in seeds:
        train, pred = split_rows(F.shape[0], 0.2, n_predictions, seed)
        if n_observed < 1:
            raise InvalidInputError(f"n_observed must be >= 1; got {n_observed}")
        n_obs = min(int(n_observed), pred.size // 2)  # small datasets: keep half the predictions to score
        obs, ev = pred[:n_obs], pred[n_obs:]
        active, passive = split_columns(F.shape[1], n_passive, seed)
        Ytr, Xtr, Ltr = F[train][:, active], F[train][:, passive], labels[train]
        model = train_vfl_model(Ytr, Xtr, Ltr, rng=seed)
        Y, X = F[ev][:, active], F[ev][:, passive]
        real = model.predict_proba(Y, X)
        rank = model.box_slice.rank
        est = default_estimator(model)
        am = train_adversary_model(Ytr, Ltr, classes=model, rng=seed)
        ram = refine_adversary_model(am, F[obs][:, active], model.predict_proba(F[obs][:, active], F[obs][:, passive]),
                                     lam=lam)
        wb, am_mse, am_err = _mse_affine(model, real, am.predict_proba(Y), Y, X, est, with_error=True)
        _, ram_mse, ram_err = _mse_affine(model, real, ram.predict_proba(Y), Y, X, est, with_error=True)
        # per-sample decomposition, averaged: am = whitebox + am_score_error (and the same for ram)
        mse = {"whitebox": wb, "am": am_mse, "ram": ram_mse, "am_score_error": am_err,
               "ram_score_error": ram_err, "mean": float(np.mean((X - Xtr.mean(axis=0)) ** 2))}
        curve = []
        if blackbox:  # one passive feature: the last column of the shuffle
            a1, p1 = split_columns(F.shape[1], 1, seed)
            m1 = train_vfl_model(F[train][:, a1], F[train][:, p1], Ltr, rng=seed)
            Yb, Xb = F[pred][:, a1], F[pred][:, p1]
            signs = np.sign(m1.system_matrix[:, 0])
            sc = m1.predict_proba(Yb, Xb)
            for n in [10, 30, 100, 300, 1000, 3000, 10000]:
                if n > pred.size:
                    break
                res = blackbox_attack(m1.W_act, sc[:n], Yb[:n], signs)
                curve.append((n, res.mse(Xb[:n])["blackbox"]))
            res = blackbox_attack(m1.W_act, sc, Yb, signs)
            curve.append((int(pred.size), res.mse(Xb)["blackbox"]))
        trade = []
        w_norm = float(np.linalg.norm(model.W_pas))
        for kind in defence_kinds:
            for eps in (e * w_norm if relative else e for e in epsilons):
                dfn = orthogonal_defence(model, Xtr[:defence_rows], eps, kind=kind, rng=seed)
                wb_d, am_d = _mse_affine(dfn.disclosed, real, am.predict_proba(Y), Y, X, est)
                _, ram_d = _mse_affine(dfn.disclosed, real, ram.predict_proba(Y), Y, X, est)
                sysd = scores_to_system(dfn.disclosed, real, Y)
                st = cc.BoxSlice(sysd.A).centers(sysd.B, method="half_star", on_inconsistent="project").status_codes
                trade.append({"kind": kind, "epsilon": float(eps), "distortion": dfn.distortion, "whitebox": wb_d,
                              "am": am_d, "ram": ram_d, "detected": float(np.mean(st == cc.Status.INFEASIBLE))})
        am_acc = float(np.mean(np.argmax(am.predict_proba(Y), 1) == np.searchsorted(am.classes, labels[ev])))
        records.append(ThreatRecord(
            dataset=dataset, seed=int(seed), n_passive=n_passive, n_classes=model.n_classes, rank=rank,
            estimator=est, n_eval=int(ev.size), n_observed=int(obs.size), lam=float(lam), mse=mse,
            am_accuracy=am_acc, w_norm=w_norm, blackbox=curve, tradeoff=trade))
    config = {"dataset": dataset, "n_passive": n_passive, "seeds": list(seeds), "n_observed": n_observed,
              "lam": lam, "epsilons": list(epsilons), "relative_epsilons": relative,
              "defence_kinds": list(defence_kinds)}
    return ThreatReport(records, config)
