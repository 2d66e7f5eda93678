"""Reproducible experiments behind ``vflattack known-input``."""

from __future__ import annotations

import time

import numpy as np
from scipy.stats import ortho_group

from . import datasets
from ._validate import InvalidInputError
from .known_input import attack_orthogonal_defence, known_input_attack


def perturb(X: np.ndarray, rng, translation: bool = False):
    """``Y[perm[i]] = M_T x_i (+ v)``: a Haar rotation, a secret permutation, an optional translation."""
    n = X.shape[1]
    M_T = ortho_group.rvs(n, random_state=rng)
    perm = rng.permutation(X.shape[0])
    v = rng.standard_normal(n) * X.std() * 3 if translation else np.zeros(n)
    Y = np.empty_like(X)
    Y[perm] = X @ M_T.T + v
    return Y, M_T, perm, v


def run_known_input(args) -> dict:
    """The paper's headline (or the VFL scenario with ``args.vfl``) over ``args.trials`` trials."""
    if args.known < 1 or args.trials < 1:
        raise InvalidInputError("--known and --trials must be >= 1")
    F, labels = datasets.load(args.dataset, args.data_dir, normalize=args.normalize or args.vfl)
    rng = np.random.default_rng(args.seed)
    if args.records:
        F, labels = F[: args.records], labels[: args.records]
    if args.vfl:
        return _vfl(F, labels, args, rng)
    if args.known > F.shape[0]:
        raise InvalidInputError(f"--known must be at most the number of records ({F.shape[0]}); got {args.known}")
    rows = []
    for t in range(args.trials):
        Y, M_T, perm, v = perturb(F, rng, args.translation)
        known = rng.choice(F.shape[0], args.known, replace=False)
        t0 = time.perf_counter()
        att = known_input_attack(F[known], Y, epsilon=args.epsilon, rng=rng, translation=args.translation)
        secs = time.perf_counter() - t0
        true = int(np.flatnonzero(perm == att.best)[0])
        ref = F[true] - (att.anchor[0] if att.anchor is not None else 0)
        err = float(np.linalg.norm(att.estimate - F[true]) / np.linalg.norm(ref))
        correct = bool(np.array_equal(att.link.perturbed, perm[known[att.link.known]]))
        rows.append({"trial": t, "linked": int(att.link.known.size), "link_correct": correct,
                     "rho_best": float(att.rho[att.best]), "relative_error": err,
                     "breach": err <= args.epsilon, "seconds": secs})
    rho = np.array([r["rho_best"] for r in rows])
    table = "\n".join(
        [f"known-input attack on {args.dataset}: {F.shape[0]} records x {F.shape[1]} features, {args.known} known, "
         f"epsilon = {args.epsilon}, {'rotation + translation' if args.translation else 'rotation'}, "
         f"{args.trials} trials"]
        + [f"  trial {r['trial']}: linked {r['linked']} ({'correct' if r['link_correct'] else 'WRONG'}), "
           f"rho(best) = {r['rho_best']:.3f}, realised relative error {r['relative_error']:.4f} "
           f"({'breach' if r['breach'] else 'no breach'}), {r['seconds']:.3f} s" for r in rows]
        + [f"  mean rho(best) = {rho.mean():.3f}, breaches {sum(r['breach'] for r in rows)}/{len(rows)}, "
           f"mean time {np.mean([r['seconds'] for r in rows]):.3f} s"])
    return {"table": table, "trials": rows, "mean_rho_best": float(rho.mean()),
            "breach_rate": float(np.mean([r["breach"] for r in rows]))}


def _vfl(F, labels, args, rng) -> dict:
    from .audit import split_columns, split_rows
    from .defence import orthogonal_defence
    from .model import train_vfl_model

    train, pred = split_rows(F.shape[0], 0.2, 2000, args.seed)
    active, passive = split_columns(F.shape[1], args.passive, args.seed)
    model = train_vfl_model(F[train][:, active], F[train][:, passive], labels[train], rng=args.seed)
    if model.n_classes - 1 < args.passive:
        raise InvalidInputError(f"--vfl needs d <= k - 1 = {model.n_classes - 1} passive features; got {args.passive}")
    Y, X = F[pred][:, active], F[pred][:, passive]
    if args.known > X.shape[0]:
        raise InvalidInputError(
            f"--known must be at most the number of prediction records ({X.shape[0]}); got {args.known}")
    dfn = orthogonal_defence(model, F[train][:, passive], 0.5 * np.linalg.norm(model.W_pas), rng=args.seed)
    known = rng.choice(X.shape[0], args.known, replace=False)
    t0 = time.perf_counter()
    br = attack_orthogonal_defence(dfn.disclosed, dfn.predict_proba(Y, X), Y, X[known], epsilon=args.epsilon,
                                   rng=args.seed, R_true=dfn.R)
    secs = time.perf_counter() - t0
    before = float(np.nanmean((br.before - X) ** 2))
    after = float(np.nanmean((br.after - X) ** 2))
    table = (f"known-input attack on the VFL orthogonal defence ({args.dataset}, d = {args.passive}, "
             f"k = {model.n_classes}, epsilon = 0.5 ||W_pas||_F, distortion {dfn.distortion:.3f}):\n"
             f"  {args.known} known passive records, {br.attack.link.known.size} linked, ||M - R^T||_F = "
             f"{br.rotation_error:.2e}\n"
             f"  white-box MSE under the defence {before:.5f} -> after undoing the rotation {after:.2e} "
             f"({X.shape[0]} predictions, {secs:.2f} s)")
    return {"table": table, "mse_defended": before, "mse_after_attack": after, "linked": int(br.attack.link.known.size),
            "rotation_error": br.rotation_error, "seconds": secs}
