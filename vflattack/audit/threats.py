"""The threat audit: black-box, agnostic (AM/RAM) attacks and the defence trade-off.

``run_threat_audit`` uses the protocol of :mod:`vflattack.audit.protocol`, as
:func:`vflattack.audit.run_audit` does (seeded column shuffle, last d columns passive,
seeded 80/20 split); it returns a :class:`~vflattack.audit.protocol.Result` of
:class:`ThreatRecord`, which :class:`vflattack.report.ThreatReport` formats. The first
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import chebcenter as cc

from .._validate import InvalidInputError, keyword_only
from ..attacks import (
    agnostic_decomposition,
    blackbox_attack,
    default_estimator,
    orthogonal_defence,
    refine_adversary_model,
    train_adversary_model,
)
from ..system import scores_to_system
from .protocol import PREDICT_FRACTION, Result, build_scenario, load_data

__all__ = ["ThreatRecord", "run_threat_audit"]


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


def _mse_affine(model, scores_real, scores_est, Y, X, method, with_error=False):
    dec = agnostic_decomposition(model, scores_real, scores_est, Y, X, method=method)
    d = X.shape[1]
    out = (float(np.mean(dec["oracle"]) / d), float(np.mean(dec["agnostic"]) / d))
    return out + (float(np.mean(dec["score_error"]) / d),) if with_error else out


@keyword_only("n_passive", "seeds", "data_dir", "n_predictions", "n_observed", "lam", "epsilons", "defence_kinds",
              "relative", "blackbox", "defence_rows", "data", "predict_fraction")
def run_threat_audit(dataset: str = "breast_cancer", *, n_passive: int = 10, seeds: Sequence[int] = (0,),
                     data_dir: Any = None, n_predictions: int | None = None, n_observed: int = 100,
                     lam: float = 1.0, epsilons: Sequence[float] = (), defence_kinds: Sequence[str] = ("optimised",),
                     relative: bool = False, blackbox: bool = True, defence_rows: int = 2000,
                     data: tuple | None = None, predict_fraction: float = PREDICT_FRACTION) -> Result:
    """Black-box, agnostic and defence results for one dataset (module docstring).

    ``epsilons`` are distortion budgets ``||W_pas - W_pas R||_F``; with
    ``relative=True`` they are fractions of ``||W_pas||_F``.

    Examples
    --------
    >>> res = run_threat_audit("wine", n_passive=4, n_observed=10, epsilons=(0.5,))
    >>> r = res.records[0]; r.mse["whitebox"] <= r.mse["am"]
    True
    """
    F, labels, _ = load_data(dataset, data_dir, data, check_unit=False)
    if n_observed < 1:
        raise InvalidInputError(f"n_observed must be >= 1; got {n_observed}")
    records = []
    for seed in seeds:
        sc = build_scenario(F, labels, seed, n_passive=n_passive, predict_fraction=predict_fraction,
                            n_predictions=n_predictions)
        records.append(_threat_record(dataset, sc, n_observed, lam, epsilons, defence_kinds, relative, blackbox,
                                      defence_rows, predict_fraction, n_predictions))
    config = {"dataset": dataset, "n_passive": n_passive, "seeds": list(seeds), "n_observed": n_observed,
              "lam": lam, "epsilons": list(epsilons), "relative_epsilons": relative,
              "defence_kinds": list(defence_kinds), "predict_fraction": predict_fraction}
    return Result("threats", records, config)


def _threat_record(dataset, sc, n_observed, lam, epsilons, defence_kinds, relative, blackbox, defence_rows,
                   predict_fraction, n_predictions) -> ThreatRecord:
    """The white-box, AM/RAM, black-box and defence measurements of one scenario."""
    pred, model = sc.predict, sc.model
    n_obs = min(int(n_observed), pred.size // 2)  # small datasets: keep half the predictions to score
    obs, ev = pred[:n_obs], pred[n_obs:]
    Y, X = sc.features[ev][:, sc.active], sc.features[ev][:, sc.passive]
    Xtr = sc.X_train
    real = model.predict_proba(Y, X)
    est = default_estimator(model)
    am = train_adversary_model(sc.Y_train, sc.labels_train, classes=model, rng=sc.seed)
    ram = refine_adversary_model(am, sc.features[obs][:, sc.active], sc.scores(obs), lam=lam)
    wb, am_mse, am_err = _mse_affine(model, real, am.predict_proba(Y), Y, X, est, with_error=True)
    _, ram_mse, ram_err = _mse_affine(model, real, ram.predict_proba(Y), Y, X, est, with_error=True)
    # per-sample decomposition, averaged: am = whitebox + am_score_error (and the same for ram)
    mse = {"whitebox": wb, "am": am_mse, "ram": ram_mse, "am_score_error": am_err,
           "ram_score_error": ram_err, "mean": float(np.mean((X - Xtr.mean(axis=0)) ** 2))}
    curve = []
    if blackbox:  # one passive feature: the last column of the shuffle, the same rows
        one = build_scenario(sc.features, sc.labels, sc.seed, n_passive=1, predict_fraction=predict_fraction,
                             n_predictions=n_predictions)
        m1, Yb, Xb = one.model, one.Y, one.X
        signs = np.sign(m1.system_matrix[:, 0])
        scores = m1.predict_proba(Yb, Xb)
        for n in [10, 30, 100, 300, 1000, 3000, 10000]:
            if n > pred.size:
                break
            res = blackbox_attack(m1.W_act, scores[:n], Yb[:n], signs)
            curve.append((n, res.mse(Xb[:n])["blackbox"]))
        res = blackbox_attack(m1.W_act, scores, Yb, signs)
        curve.append((int(pred.size), res.mse(Xb)["blackbox"]))
    trade = []
    w_norm = float(np.linalg.norm(model.W_pas))
    for kind in defence_kinds:
        for eps in (e * w_norm if relative else e for e in epsilons):
            dfn = orthogonal_defence(model, Xtr[:defence_rows], eps, kind=kind, rng=sc.seed)
            wb_d, am_d = _mse_affine(dfn.disclosed, real, am.predict_proba(Y), Y, X, est)
            _, ram_d = _mse_affine(dfn.disclosed, real, ram.predict_proba(Y), Y, X, est)
            sysd = scores_to_system(dfn.disclosed, real, Y)
            st = cc.BoxSlice(sysd.A).centers(sysd.B, method="half_star", on_inconsistent="project").status_codes
            trade.append({"kind": kind, "epsilon": float(eps), "distortion": dfn.distortion, "whitebox": wb_d,
                          "am": am_d, "ram": ram_d, "detected": float(np.mean(st == cc.Status.INFEASIBLE))})
    am_acc = float(np.mean(np.argmax(am.predict_proba(Y), 1) == np.searchsorted(am.classes, sc.labels[ev])))
    return ThreatRecord(
        dataset=dataset, seed=sc.seed, n_passive=int(sc.passive.size), n_classes=model.n_classes,
        rank=model.box_slice.rank, estimator=est, n_eval=int(ev.size), n_observed=int(obs.size), lam=float(lam),
        mse=mse, am_accuracy=am_acc, w_norm=w_norm, blackbox=curve, tradeoff=trade)
