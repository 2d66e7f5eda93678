"""The known-input experiment behind ``vflattack known-input``.

``run_known_input`` returns a :class:`~vflattack.audit.protocol.Result` of one dict per
trial (one for the VFL scenario), which :class:`vflattack.report.KnownInputReport`
formats.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .._validate import InvalidInputError
from ..attacks import attack_orthogonal_defence, known_input_attack, orthogonal_defence
from .protocol import PREDICT_FRACTION, Result, build_scenario, load_data

__all__ = ["perturb", "run_known_input"]


def perturb(X: np.ndarray, rng, translation: bool = False):
    """``Y[perm[i]] = M_T x_i (+ v)``: a Haar rotation, a secret permutation, an optional translation."""
    # imported here: scipy.stats is about 20 MB that every log-audit worker would otherwise hold
    from scipy.stats import ortho_group

    n = X.shape[1]
    M_T = ortho_group.rvs(n, random_state=rng)
    perm = rng.permutation(X.shape[0])
    v = rng.standard_normal(n) * X.std() * 3 if translation else np.zeros(n)
    Y = np.empty_like(X)
    Y[perm] = X @ M_T.T + v
    return Y, M_T, perm, v


def run_known_input(dataset: str = "digits", *, data_dir: Any = None, known: int = 4, epsilon: float = 0.07,
                    trials: int = 10, records: int | None = None, translation: bool = False,
                    normalize: bool = False, vfl: bool = False, passive: int = 8, seed: int = 0,
                    predict_fraction: float = PREDICT_FRACTION, decimals: int | None = None,
                    progress: bool = False) -> Result:
    """The known-input attack on distance-preserving perturbation, over ``trials`` trials.

    Each trial perturbs the records by a Haar rotation (plus a translation with
    ``translation``) and a secret permutation, gives the attacker ``known`` original
    records, and measures linking, the breach probability rho of the best record, the
    realised relative error (a breach when it is at most ``epsilon``) and the time.
    ``vfl=True`` attacks the orthogonal defence of a VFL model instead (``passive``
    passive features, which must be at most k - 1; the model is trained on the other
    ``1 - predict_fraction`` of the records). ``records`` caps the records used.

    ``decimals`` rounds the perturbed release to that many decimals, as a real release is
    rounded; the attacker reads the precision off the released values
    (:func:`~vflattack.attacks.known_input.infer_decimals`) and links within the tolerance it
    implies. Each trial draws the same rotation, permutation and known records whatever the
    decimals, so trials at different precisions compare one to one.

    The default dataset is scikit-learn's bundled ``digits`` (1 797 records, 64 features), so
    the run is offline; the papers' ``pendigits`` (16 features) needs its UCI files.
    ``progress`` shows a bar over the trials.
    """
    for name, value in (("known", known), ("trials", trials), ("passive", passive)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidInputError(f"{name} must be a positive integer; got {value!r}")
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise InvalidInputError(f"epsilon must be a positive number; got {epsilon!r}")
    if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer))
                                 or not 0 <= decimals <= 15):
        raise InvalidInputError(f"decimals must be an integer in [0, 15] (or None: full precision); got {decimals!r}")
    if decimals is not None and vfl:
        raise InvalidInputError("decimals applies to the perturbed data release, not to vfl=True (the defence's "
                                "scores: audit them with vflattack audit --release)")
    F, labels, _ = load_data(dataset, data_dir, normalize=normalize or vfl)
    rng = np.random.default_rng(seed)
    if records:
        F, labels = F[:records], labels[:records]
    config = {"dataset": dataset, "known": known, "epsilon": epsilon, "trials": trials, "records": records,
              "translation": translation, "normalize": normalize, "vfl": vfl, "passive": passive, "seed": seed,
              "predict_fraction": predict_fraction, "n_records": int(F.shape[0]), "n_features": int(F.shape[1]),
              "decimals": decimals}
    if vfl:
        return Result("known_input", [_vfl_defence_trial(F, labels, known, epsilon, passive, seed, rng,
                                                             predict_fraction)], config)
    if known > F.shape[0]:
        raise InvalidInputError(f"known must be at most the number of records ({F.shape[0]}); got {known}")
    from tqdm.auto import tqdm

    rows = []
    for t in tqdm(range(trials), desc=f"known-input {dataset}", unit="trial", disable=not progress, leave=False):
        rng = np.random.default_rng([seed, t])    # one stream per trial: the same draws at every precision
        Y, M_T, perm, v = perturb(F, rng, translation)
        if decimals is not None:
            Y = np.round(Y, decimals)
        chosen = rng.choice(F.shape[0], known, replace=False)
        t0 = time.perf_counter()
        try:
            att = known_input_attack(F[chosen], Y, epsilon=epsilon, rng=rng, translation=translation,
                                     noise="infer" if decimals is not None else None)
        except InvalidInputError as exc:   # nothing linked: the trial is a failure, not the end of the run
            rows.append({"trial": t, "linked": 0, "link_correct": False, "rho_best": float("nan"),
                         "relative_error": float("nan"), "breach": False, "seconds": time.perf_counter() - t0,
                         "noise": float("nan"), "rho_note": "", "failure": str(exc)})
            continue
        secs = time.perf_counter() - t0
        true = int(np.flatnonzero(perm == att.best)[0])
        ref = F[true] - (att.anchor[0] if att.anchor is not None else 0)
        err = float(np.linalg.norm(att.estimate - F[true]) / np.linalg.norm(ref))
        correct = bool(np.array_equal(att.link.perturbed, perm[chosen[att.link.known]]))
        rows.append({"trial": t, "linked": int(att.link.known.size), "link_correct": correct,
                     "rho_best": float(att.rho[att.best]), "relative_error": err,
                     "breach": err <= epsilon, "seconds": secs, "noise": att.link.noise, "rho_note": att.rho_note,
                     "failure": ""})
    return Result("known_input", rows, config)


def _vfl_defence_trial(F, labels, known, epsilon, passive, seed, rng, predict_fraction) -> dict:
    sc = build_scenario(F, labels, seed, n_passive=passive, predict_fraction=predict_fraction, n_predictions=2000)
    model, Y, X = sc.model, sc.Y, sc.X
    if model.n_classes - 1 < passive:
        raise InvalidInputError(f"vfl needs passive <= k - 1 = {model.n_classes - 1} passive features; got {passive}")
    if known > X.shape[0]:
        raise InvalidInputError(f"known must be at most the number of prediction records ({X.shape[0]}); got {known}")
    dfn = orthogonal_defence(model, sc.X_train, 0.5 * np.linalg.norm(model.W_pas), rng=seed)
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
