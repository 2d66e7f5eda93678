"""What the scores expose, record by record: minimax radii, feature ranges, leakage.

For each prediction the active party's view is ``A x = b'`` and ``x in [0, 1]^d``, the set
S_F. Two numbers bound what *any* adversary can guarantee about that record:

* the **minimax radius** r* of S_F (docs/theory.md §1): no estimate can promise a smaller
  worst-case error; computed exactly where vertex enumeration is cheap (chebcenter's
  ``auto``), otherwise bounded above by rcc1's certified radius and below by half the
  widest feature range (two points of S_F are that far apart);
* the **feature ranges** [min x_i, max x_i] over S_F (docs/theory.md §6.6): a feature whose
  range is at most tau of its side *beyond what the deployment's arithmetic leaves* is
  *pinned*, disclosed to within tau whatever the estimator. When the values are published
  exactly (no deliberate release), their only noise is the rounding of the deployment's
  arithmetic (float32 embeddings: about 1e-7 of each value), and the interval rows are that
  rounding; its part of the range is
  ``noise_j = sum_i |A^+_{ji}| min(U_i - L_i, sum_k |A_ik|)``: the width of x_j's range over
  the interval rows alone when the rows determine x_j, each row's width capped at the row's
  span over the unit box. By the triangle inequality it bounds that width above; it is the
  width itself (a linear program's closed form) when the rows are independent and determine
  x_j (a square invertible A, an identity or ovr model with W_pas of full row rank). With
  dependent rows it can exceed it: the audit then errs toward calling a feature pinned, the
  cautious side for a privacy audit. Rows that are the hull of a union (a link that turns), and
  rows the rounding left wider than 1e-3 of their magnitude (a saturated output, where the
  link is flat), are not rounding and add nothing. A deliberate release (rounding to decimals, labels, noise) is
  the protection being measured, not a floor: its pinned rule stays ``width <= tau``, as it is
  for exact softmax scores (float64: no floor worth the name).

Radii are reported per feature, r*/sqrt(d), on the same scale as the per-feature RMSE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import chebcenter as cc

from ..model import VFLModel

__all__ = ["Exposure", "exposure", "party_radii", "party_summary", "privacy_summary"]


@dataclass
class Exposure:
    """Per-record exposure of the valid rows of a batch (NaN elsewhere).

    ``radius_upper``/``radius_lower`` bound r*/sqrt(d); ``exact`` says where they are the
    exact radius (to the enumeration's certified gap); ``lower``/``upper`` are the feature
    ranges, shape (N, d)."""

    radius_upper: np.ndarray
    radius_lower: np.ndarray
    exact: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    noise: np.ndarray | None = None
    range_error: np.ndarray | None = None
    feas_tol: float = 1e-9

    def pinned(self, tau: float) -> np.ndarray:
        """(N, d) booleans: the feature's range is at most ``tau`` (of the unit side) plus the
        width the release's noise leaves (``noise``; module docstring). The ranges are widened
        by their forward error (``range_error``, per record, on each end: twice on the width)
        and solved to a relative feasibility tolerance ``feas_tol``, so the noise's part is
        allowed ``(1 + feas_tol)`` of itself, and 1e-12 for rounding. False where a range is
        unknown."""
        width = self.upper - self.lower
        floor = 0.0 if self.noise is None else self.noise * (1.0 + self.feas_tol)
        err = 0.0 if self.range_error is None else 2.0 * np.nan_to_num(self.range_error, nan=0.0)[:, None]
        with np.errstate(invalid="ignore"):
            return np.isfinite(width) & (width <= tau + floor + err + 1e-12)


def exposure(model: VFLModel, B: np.ndarray | None, valid: np.ndarray, system: Any = None, *,
             rounding_only: bool = False) -> Exposure:
    """Minimax radii and feature ranges of the rows ``B[valid]`` of ``A x = b'`` (A = J W_pas),
    or, with ``system`` a :class:`vflattack.release.BoundedSystem` (a release that is not
    exact; B None), of its sets ``L <= A x <= U``.

    ``radius_upper`` is r*/sqrt(d) (exact where enumeration is cheap, else rcc1's bound);
    ``radius_lower`` is the larger of exact's dual bound and ``max_i (u_i - l_i) / 2``.
    ``rounding_only``: the interval rows are the deployment's rounding of exactly published
    values (no deliberate release), so their width is the floor of the pinned rule (module
    docstring); otherwise the floor is 0.

    Examples
    --------
    >>> import numpy as np, vflattack as va
    >>> m = va.VFLModel(np.zeros((2, 0)), np.array([[0.0, 0.0], [1.0, 1.0]]), np.zeros(2))
    >>> e = exposure(m, np.array([[1.0], [0.2]]), np.array([True, True]))   # x1 + x2 = b'
    >>> (e.radius_upper * np.sqrt(2)).round(4).tolist(), e.lower.round(4).tolist()
    ([0.7071, 0.1414], [[0.0, 0.0], [0.0, 0.0]])
    """
    d = model.n_passive
    if system is None:
        sl, N = model.domain_slice(False), B.shape[0]

        def ask(fn, **kw):
            return fn(B[valid], on_inconsistent="project", **kw)
    else:
        sl, N = model.domain_slice(True), system.L.shape[0]

        def ask(fn, **kw):
            return fn(lower=system.L[valid], upper=system.U[valid], **kw)
    up, low = np.full(N, np.nan), np.full(N, np.nan)
    lo_r, hi_r = np.full((N, d), np.nan), np.full((N, d), np.nan)
    exact = np.zeros(N, dtype=bool)
    noise, range_error = np.zeros((N, d)), np.zeros(N)
    if valid.any() and system is not None and rounding_only:
        L, U = system.L, system.U if system.outer is None else np.where(system.outer, system.L, system.U)
        # A row that rounding alone left wider than 1e-3 of its magnitude is not rounding of a
        # value but a link made flat by saturation (a sigmoid published as 1.0 bounds its logit
        # by [33.5, 100]): it adds no floor. Float32's rounding is 6e-8 of a value, float64's
        # 1e-16, four and more orders below the cut, so every rounding row stays in.
        with np.errstate(invalid="ignore"):
            flat = (U - L) > 1e-3 * (1.0 + np.fmax(np.abs(L), np.abs(U)))
        U = np.where(flat, L, U)
        noise[valid] = noise_widths(sl, L[valid], U[valid])
    if valid.any():
        ranges = ask(sl.feature_ranges)
        lo_r[valid], hi_r[valid] = ranges.lower, ranges.upper
        if ranges.forward_error is not None:
            range_error[valid] = ranges.forward_error
        rad = ask(sl.centers, method="auto")
        half_width = 0.5 * np.nanmax(ranges.widths, axis=1, initial=0.0)
        lower = np.fmax(np.nan_to_num(rad.extras["radius_lower"], nan=0.0), half_width)
        ok = rad.ok
        up_v = np.where(ok, rad.radii, np.nan)
        up[valid] = up_v / np.sqrt(d)
        low[valid] = np.where(ok, np.minimum(lower, up_v), np.nan) / np.sqrt(d)
        exact[valid] = ok & (np.asarray(rad.extras["method"]) == "exact")
    return Exposure(up, low, exact, lo_r, hi_r, noise, range_error, float(sl.feas_tol))


def noise_widths(sl: cc.BoxSlice, L: np.ndarray, U: np.ndarray) -> np.ndarray:
    """(N, d): the width the interval rows' own noise leaves on each feature (module docstring),
    ``sum_i |A^+_{ji}| min(U_i - L_i, span_i)``, span_i the row's range over the box.

    Examples
    --------
    >>> sl = cc.BoxSlice(np.array([[2.0, 0.0], [1.0, 1.0]]))     # x0 = z0 / 2, x1 = z1 - z0 / 2
    >>> noise_widths(sl, np.array([[0.0, 0.0]]), np.array([[1e-6, 1e-6]])).round(12).tolist()
    [[5e-07, 1.5e-06]]
    """
    A = np.asarray(sl.A, dtype=float)
    side = float(np.max(np.asarray(sl.hi, dtype=float) - np.asarray(sl.lo, dtype=float)))
    span = np.abs(A).sum(axis=1) * side
    with np.errstate(invalid="ignore"):
        w = np.fmin(np.where(np.isfinite(U - L), U - L, np.inf), span)
    return np.nan_to_num(w, nan=0.0) @ np.abs(np.asarray(sl.A_pinv, dtype=float)).T


def privacy_summary(X: np.ndarray, reconstructions: dict, rows: np.ndarray, prior_mse: float,
                    expo: Exposure, baselines: tuple, tau: float, threshold: float) -> dict:
    """The privacy numbers of one audit record (rows: the predictions every method reconstructed).

    ``worst_case``: per method, the largest per-record RMS error ``max_n ||X_n - Xhat_n|| / sqrt(d)``.
    ``best_attack`` / ``leakage``: the score-based method of least MSE and ``prior_mse`` minus its
    MSE (positive: the scores tell an adversary more than the prior alone). ``radius``: quantiles
    of r*/sqrt(d) (upper bounds), the share of exact radii, and ``below_threshold``, the share of
    records whose certified upper bound is at most ``threshold``. ``pinned``: per feature, the
    share of records whose range is at most ``tau`` of the box side; ``width``: mean range width.
    """
    d = X.shape[1]
    err = {m: np.linalg.norm(Xh[rows] - X[rows], axis=1) / np.sqrt(d) for m, Xh in reconstructions.items()}
    worst = {m: float(e.max()) if e.size else float("nan") for m, e in err.items()}
    mse = {m: float(np.mean((Xh[rows] - X[rows]) ** 2)) if rows.any() else float("nan")
           for m, Xh in reconstructions.items()}
    attacks = {m: v for m, v in mse.items() if m not in baselines and np.isfinite(v)}
    # ties (e.g. rank A = d: every estimator returns the unique solution) go to the method
    # listed last, the most elaborate one (the prior-aware attacks, exact, the relaxations)
    best = min(reversed(list(attacks)), key=attacks.get) if attacks else None
    have = np.isfinite(expo.radius_upper)
    r_up = expo.radius_upper[have]
    q = [0.0, 0.1, 0.5, 0.9, 1.0]
    width = expo.upper - expo.lower
    ranged = np.all(np.isfinite(width), axis=1)
    pinned = expo.pinned(tau)
    return {
        "prior_mse": float(prior_mse),
        "best_attack": best,
        "best_mse": float(attacks[best]) if best else float("nan"),
        "leakage": float(prior_mse - attacks[best]) if best else float("nan"),
        "worst_case": worst,
        "radius": {"quantiles": dict(zip(["min", "p10", "median", "p90", "max"],
                                         (np.quantile(r_up, q).tolist() if r_up.size else [float("nan")] * 5))),
                   "lower_median": float(np.median(expo.radius_lower[have])) if r_up.size else float("nan"),
                   "exact_share": float(expo.exact[have].mean()) if r_up.size else float("nan"),
                   "threshold": float(threshold),
                   "below_threshold": float(np.mean(r_up <= threshold)) if r_up.size else float("nan")},
        "tau": float(tau),
        "pinned": (np.mean(pinned[ranged], axis=0) if ranged.any() else np.full(d, np.nan)).tolist(),
        "noise_width": float(np.median(expo.noise[ranged])) if expo.noise is not None and ranged.any() else 0.0,
        "width": (np.mean(width[ranged], axis=0) if ranged.any() else np.full(d, np.nan)).tolist(),
    }


def _separable_rows(A: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
    """The rows of ``A`` that touch the columns ``cols``, when none of them touches another
    column (the party's rows are its own: a block of a block-diagonal A, as a split bottom model
    has). Then S = S_p x S_rest and the projection of S onto the party is S_p itself, a smaller
    problem. None when the party shares a row with another (or has no row: the box)."""
    mask = np.zeros(A.shape[1], dtype=bool)
    mask[cols] = True
    touches = np.any(A[:, mask] != 0, axis=1)
    if not touches.any() or np.any(A[touches][:, ~mask] != 0):
        return None
    return np.flatnonzero(touches)


def _party_radii(model: VFLModel, B: np.ndarray | None, valid: np.ndarray, system: Any, cols: np.ndarray):
    """Per record, the certified minimax radius of one party's features, r*_p / sqrt(d_p): the
    Chebyshev center of the projection of S onto the party's columns (chebcenter's ``of=``,
    docs/theory.md §13), and its proven lower bound. NaN where no certificate was reached."""
    N = B.shape[0] if system is None else system.L.shape[0]
    up, low = np.full(N, np.nan), np.full(N, np.nan)
    if not valid.any():
        return up, low
    sl = model.domain_slice(system is not None)
    own = _separable_rows(sl.A, cols)
    if own is not None:   # S is the product of the party's set and the rest's: its projection is its own set
        sl = cc.BoxSlice(sl.A[np.ix_(own, cols)], lo=0.0, hi=1.0)
        of = None
    else:
        own, of = slice(None), cols
    if system is None:
        rad = sl.centers(B[valid][:, own], method="auto", on_inconsistent="project", of=of)
    else:
        rad = sl.centers(method="auto", lower=system.L[valid][:, own], upper=system.U[valid][:, own], of=of)
    ok = rad.ok
    scale = np.sqrt(cols.size)
    up[valid] = np.where(ok, rad.radii, np.nan) / scale
    lower = rad.extras.get("radius_lower")
    if lower is not None:
        low[valid] = np.where(ok, np.minimum(np.nan_to_num(lower, nan=0.0), rad.radii), np.nan) / scale
    return up, low


def party_summary(model: VFLModel, X: np.ndarray, reconstructions: dict, rows: np.ndarray, expo: Exposure | None,
                  B: np.ndarray | None, valid: np.ndarray, system: Any, tau: float, threshold: float,
                  columns: Any = None) -> tuple[dict, dict]:
    """Each passive party on its own: ``{name: {columns, n_features, mse (per method, over the
    party's features), radius (quantiles of the certified r*_p / sqrt(d_p), the projection's
    minimax radius), below_threshold, pinned (share of the party's features pinned within
    tau, over records)}}``, and the per-record arrays ``{name: (radius_upper, radius_lower)}``
    (r*_p / sqrt(d_p), saved beside the report). ``columns`` maps passive column indices to the
    dataset's (for the report); default the indices themselves."""
    out, arrays = {}, {}
    q = [0.0, 0.1, 0.5, 0.9, 1.0]
    for name, block in zip(model.party_names, model.parties):
        cols = np.asarray(block, dtype=np.int64)
        mse = {m: float(np.mean((Xh[rows][:, cols] - X[rows][:, cols]) ** 2)) if rows.any() else float("nan")
               for m, Xh in reconstructions.items()}
        up, low = _party_radii(model, B, valid, system, cols)
        have = np.isfinite(up)
        entry = {"columns": (cols if columns is None else np.asarray(columns)[cols]).tolist(),
                 "n_features": int(cols.size), "mse": mse,
                 "radius": dict(zip(["min", "p10", "median", "p90", "max"],
                                    np.quantile(up[have], q).tolist() if have.any() else [float("nan")] * 5)),
                 "radius_lower_median": float(np.median(low[have])) if have.any() else float("nan"),
                 "below_threshold": float(np.mean(up[have] <= threshold)) if have.any() else float("nan")}
        arrays[name] = (up, low)
        if expo is not None:
            width = (expo.upper - expo.lower)[:, cols]
            ranged = np.all(np.isfinite(width), axis=1)
            entry["pinned"] = float(np.mean(expo.pinned(tau)[:, cols][ranged])) if ranged.any() else float("nan")
        out[name] = entry
    return out, arrays


def party_radii(model: VFLModel, published: Any, Y: Any, release: Any = None) -> dict:
    """Each passive party's certified minimax radius r*_p per record: how closely the
    strongest adversary can be sure to estimate that party's features from what was published
    (the Chebyshev center of the projection of each record's set onto the party's columns,
    docs/theory.md §10). ``published`` and ``release`` as for
    :func:`vflattack.whitebox_attack`. Returns ``{party name: (N,) radii}`` (not divided by
    sqrt(d_p); NaN where the scores are refused or no certificate was reached).

    Examples
    --------
    >>> import numpy as np, vflattack as va
    >>> m = va.VFLModel(np.zeros((2, 0)), np.array([[1.0, 0, 0], [0, 1.0, 1.0]]), np.zeros(2), link="identity",
    ...                 parties=[[0], [1, 2]])
    >>> r = party_radii(m, np.array([[0.5, 1.0]]), None)    # x1 = 0.5 pinned; x2 + x3 = 1
    >>> round(float(r["P1"][0]), 9), round(float(r["P2"][0]), 6)
    (0.0, 0.707107)
    """
    from ..attacks.whitebox import with_domain_rows
    from ..release import Release, release_to_bounds
    from ..system import scores_to_system

    rel = Release() if release is None else release
    if model.link != "softmax" or not rel.exact:
        system = with_domain_rows(model, release_to_bounds(model, published, Y, rel))
        B, valid = None, system.valid
    else:
        lin = with_domain_rows(model, scores_to_system(model, published, Y))
        system, B, valid = None, np.nan_to_num(lin.B), lin.valid
    out = {}
    for name, block in zip(model.party_names, model.parties):
        cols = np.asarray(block, dtype=np.int64)
        out[name] = _party_radii(model, B, valid, system, cols)[0] * np.sqrt(cols.size)
    return out
