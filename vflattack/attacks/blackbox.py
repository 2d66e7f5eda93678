r"""Black-box attack with one passive feature (docs/theory.md §3).

The adversary knows ``W_act`` and the signs of ``a = J w_pas`` only. With
``s_n = c'_n - J W_act y_n = a x_n + beta`` (beta = J b unknown), each
coordinate m with ``a_m > 0`` gives

    xhat_n = (s_{n,m} - min_j s_{j,m}) / (max_j s_{j,m} - min_j s_{j,m})

(min and max swapped for ``a_m < 0``), which equals
``(x_n - x_min) / (x_max - x_min)`` over the N predictions: exact as soon as the
predictions contain the feature's extremes 0 and 1, and with error at most
``max(x_min, 1 - x_max)`` otherwise. We average the estimates of all
coordinates with a known sign.

With d > 1 passive features each coordinate of ``s_n`` is ``a_m^T x_n + beta_m``:
min-max scaling then recovers only the k - 1 normalised linear combinations
``(a_m^T x_n - min) / (max - min)`` (returned by :func:`blackbox_projections`),
not the individual features, whose weights ``a_m`` stay unknown.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import chebcenter as cc

from .._validate import InvalidInputError, as_active
from ..system import checked_log_scores, difference_matrix
from .whitebox import AttackResult

__all__ = ["blackbox_attack", "blackbox_projections"]


def _shifted_scores(W_act, scores, Y, log_scores):
    W_act = np.asarray(W_act, dtype=float)
    if W_act.ndim != 2 or W_act.shape[0] < 2:
        raise InvalidInputError(f"W_act must have shape (k, d_a) with k >= 2; got {W_act.shape}")
    k = W_act.shape[0]
    S = np.asarray(scores, dtype=float)
    L, flags = checked_log_scores(S, k, log_scores=log_scores)
    Y = as_active("Y", Y, S.shape[0] if S.ndim == 2 else 0, W_act.shape[1])
    J = difference_matrix(k)
    return L @ J.T - Y @ (J @ W_act).T, flags


def blackbox_projections(W_act: Any, scores: Any, Y: Any, *, log_scores: bool = False) -> np.ndarray:
    """``(s_{n,m} - min_j s_{j,m}) / (max_j - min_j)`` for every coordinate m, shape (N, k-1).

    For one passive feature each column is ``x_n`` (or ``1 - x_n``) min-max
    scaled over the predictions; for d > 1 it is the scaled combination
    ``a_m^T x_n`` (see the module docstring). Invalid score rows are NaN.
    """
    s, flags = _shifted_scores(W_act, scores, Y, log_scores)
    s[flags != 0] = np.nan
    lo, hi = np.nanmin(s, axis=0), np.nanmax(s, axis=0)
    span = np.where(hi > lo, hi - lo, np.nan)
    return (s - lo) / span


def blackbox_attack(W_act: Any, scores: Any, Y: Any, signs: Any, *, n_passive: int = 1,
                    log_scores: bool = False) -> AttackResult:
    """Reconstruct one passive feature from scores knowing ``W_act`` and ``sign(J w_pas)``.

    Parameters
    ----------
    W_act : array_like, shape (k, d_a)
    scores : array_like, shape (N, k)
    Y : array_like, shape (N, d_a)
    signs : array_like, shape (k-1,)
        Signs of ``a = J w_pas`` (+1, -1, or 0 where unknown or zero).
    n_passive : int
        Must be 1; larger values raise an error that explains what can be recovered.

    Examples
    --------
    >>> import numpy as np
    >>> from vflattack import VFLModel
    >>> rng = np.random.default_rng(0)
    >>> m = VFLModel(rng.standard_normal((3, 2)), np.array([[0.0], [1.5], [-0.5]]), np.zeros(3))
    >>> Y, X = rng.random((100, 2)), rng.random((100, 1))
    >>> X[0], X[1] = 0.0, 1.0                      # the extremes are among the predictions
    >>> signs = np.sign(np.diff(m.W_pas[:, 0]))
    >>> res = blackbox_attack(m.W_act, m.predict_proba(Y, X), Y, signs)
    >>> bool(np.allclose(res.reconstructions["blackbox"], X, atol=1e-9))
    True
    """
    if n_passive != 1:
        raise InvalidInputError(
            f"the black-box attack reconstructs ONE passive feature; with n_passive = {n_passive} the scores "
            "determine only the k - 1 min-max scaled combinations a_m^T x (unknown weights a_m), not the "
            "features themselves: use blackbox_projections() to obtain those combinations")
    t0 = time.perf_counter()
    s, flags = _shifted_scores(W_act, scores, Y, log_scores)
    signs = np.sign(np.asarray(signs, dtype=float)).ravel()
    if signs.shape != (s.shape[1],):
        raise InvalidInputError(f"signs must have shape ({s.shape[1]},) (one per row of J w_pas); got {signs.shape}")
    if not np.any(signs != 0):
        raise InvalidInputError("signs must contain at least one nonzero entry (a coordinate with a known sign)")
    valid = flags == 0
    if valid.sum() < 2:
        raise InvalidInputError("the black-box attack needs at least 2 predictions with valid scores")
    est = []
    for m in np.flatnonzero(signs):
        col = s[valid, m]
        lo, hi = col.min(), col.max()
        if hi <= lo:
            continue  # a_m = 0 in fact, or a single distinct value: no information
        z = (col - lo) / (hi - lo)
        est.append(z if signs[m] > 0 else 1.0 - z)
    X = np.full((s.shape[0], 1), np.nan)
    status = np.full(s.shape[0], None, dtype=object)
    if est:
        X[valid, 0] = np.clip(np.mean(est, axis=0), 0.0, 1.0)
        status[valid] = cc.Status.OPTIMAL
    return AttackResult({"blackbox": X}, {"blackbox": status}, {"blackbox": np.full(s.shape[0], np.nan)},
                        flags, {"blackbox": time.perf_counter() - t0}, None)
