"""Confidence intervals on an audit's headline numbers: a percentile bootstrap over records.

An audit measures its numbers on a sample of records (the prediction split, a log). What an
auditor cites is the number *with its uncertainty*: each headline (every method's MSE, the
leakage beyond the prior, the median certified radius r*/sqrt(d), the share of records below
the radius threshold, the pinned share) gets an interval from ``resamples`` bootstrap samples
of the records, drawn with replacement by a generator seeded with ``seed`` (the same seed
gives the same interval), at ``level`` (default 0.95, percentile method: the
``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the resampled statistic). The leakage is
paired: each record's prior error minus its best-attack error, resampled together.

Several seeds (several splits and trainings of the same audit) are combined by a two-level
bootstrap: each replicate draws the seeds with replacement and, for each, that seed's own
record-level replicate, then averages: the interval holds the spread over seeds and over
records. The intervals are about the records' sampling, not the estimators' certificates:
a certified radius is a bound on each record, its median over records is an estimate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["LEVEL", "LOG_RESAMPLES", "LOG_SEED", "RESAMPLES", "bootstrap", "combine_groups", "combine_seeds", "interval",
           "poisson_sums", "poisson_replicates"]

LEVEL = 0.95
RESAMPLES = 1000
_CHUNK = 1 << 22      # indices drawn per chunk of replicates (memory: 8 bytes each)
#: replicates of the log audit's Poisson bootstrap (each partition draws rows x replicates weights;
#: at 200 the interval's ends carry a Monte Carlo error of a few per cent of its width)
LOG_RESAMPLES = 200
#: the log audit's bootstrap seed (with each record's position in the log: the same log gives the same interval)
LOG_SEED = 20241205
#: P(Poisson(1) <= k) for k = 0..12 as 32-bit thresholds: a weight is the number of thresholds a
#: uniform 32-bit integer reaches (inverse CDF; P(Poisson(1) > 13) = 3e-12 is cut to 13)
_POISSON_THRESHOLDS = None


def _poisson_weights(seed: int, start: int, n: int, resamples: int) -> np.ndarray:
    """(n, resamples) Poisson(1) weights of the records ``start .. start + n - 1`` of a log:
    a function of the record's position and the seed alone, whatever the partitions (Philox,
    a counter-based generator, moved to the record's counter: each record owns
    ``resamples / 2`` 64-bit draws), by the inverse CDF on 32-bit integers (3 times faster than
    ``Generator.poisson``, which would cost more than the attack)."""
    global _POISSON_THRESHOLDS
    if _POISSON_THRESHOLDS is None:
        import math

        cdf = np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(13)])
        _POISSON_THRESHOLDS = np.minimum(np.round(cdf * 2.0 ** 32), 2.0 ** 32 - 1).astype(np.uint32)
    bits = np.random.Philox(key=int(seed))
    bits.advance(int(start) * (resamples // 8))      # Philox steps in blocks of four 64-bit draws
    u = bits.random_raw(n * resamples // 2).view(np.uint32).reshape(n, resamples)
    w = np.zeros(u.shape, dtype=np.uint8)
    for t in _POISSON_THRESHOLDS:
        w += u >= t
    return w


def poisson_sums(values: dict, *, resamples: int = LOG_RESAMPLES, seed: int = LOG_SEED, start: int = 0,
                 keep: Any = None) -> dict:
    """One partition's share of a **Poisson bootstrap** (for a log too large to resample as a
    whole): each record gets an independent Poisson(1) weight per replicate, a function of the
    seed and of the record's position in the log (``start`` is the partition's first row), so
    the interval does not depend on how the log was cut. The partition returns, per replicate,
    the weights' sum and each value's weighted sum: ``{"weight": (R,), name: (R,)}``. Summed
    over partitions, ``sum / weight`` is a replicate of the mean over the whole log: as the
    multinomial bootstrap when the number of records is large (each record's count in a
    resample of n from n is Binomial(n, 1/n), which tends to Poisson(1)). ``values``:
    ``{name: (n,) per-record values}`` over the same records, the partition's rows in order;
    ``keep`` (n,) booleans, default all: the records that count (a refused row keeps its
    position, and so every other record's weights, but weighs nothing); ``resamples`` a
    multiple of 8.

    Examples
    --------
    >>> s = poisson_sums({"x": np.arange(1000.0)}, resamples=504, seed=1)
    >>> reps = s["x"] / s["weight"]
    >>> bool(abs(reps.mean() - 499.5) < 2), bool(8 < reps.std() < 10.5)   # sd 288.7/sqrt(1000) = 9.1
    (True, True)
    """
    if int(resamples) % 8 or int(resamples) < 8:
        raise ValueError(f"resamples must be a positive multiple of 8; got {resamples}")
    names = list(values)
    n = len(values[names[0]]) if names else 0
    out = {"weight": np.zeros(int(resamples))}
    for k in names:
        out[k] = np.zeros(int(resamples))
    if n == 0:
        return out
    keep = np.ones(n, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    V = np.column_stack([np.where(keep, np.asarray(values[k], dtype=float), 0.0) for k in names])
    step = max(1, _CHUNK // int(resamples))
    for lo in range(0, n, step):       # rows in chunks: memory rows x replicates, bounded
        w = _poisson_weights(seed, start + lo, min(step, n - lo), int(resamples)).astype(float)
        w *= keep[lo:lo + w.shape[0], None]
        out["weight"] += w.sum(axis=0)
        sums = w.T @ V[lo:lo + w.shape[0]]
        for j, k in enumerate(names):
            out[k] += sums[:, j]
    return out


def poisson_replicates(parts: list, name: str) -> np.ndarray:
    """The replicates of the mean of ``name`` over every partition's :func:`poisson_sums`."""
    parts = [p for p in parts if p is not None and name in p]
    if not parts:
        return np.array([])
    total = np.sum([p[name] for p in parts], axis=0)
    weight = np.sum([p["weight"] for p in parts], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, total / weight, np.nan)


def bootstrap(values: Any, stat: str = "mean", *, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """``resamples`` bootstrap replicates of ``stat`` (``mean`` or ``median``) of ``values``
    (one per record; NaN records are left out first). Empty: all NaN.

    Examples
    --------
    >>> reps = bootstrap(np.arange(100.0), resamples=2000, seed=0)
    >>> bool(abs(reps.mean() - 49.5) < 0.5), reps.shape
    (True, (2000,))
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    out = np.full(int(resamples), np.nan)
    n = v.size
    if n == 0:
        return out
    rng = np.random.default_rng(seed)
    step = max(1, _CHUNK // n)
    for start in range(0, out.size, step):
        k = min(step, out.size - start)
        sample = v[rng.integers(0, n, size=(k, n))]
        out[start:start + k] = sample.mean(axis=1) if stat == "mean" else np.median(sample, axis=1)
    return out


def interval(replicates: Any, level: float = LEVEL) -> list[float]:
    """``[lo, hi]``: the percentile interval of bootstrap ``replicates`` at ``level``."""
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if r.size == 0:
        return [float("nan"), float("nan")]
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(r, [a, 1.0 - a])
    return [float(lo), float(hi)]


def combine_seeds(replicates: list, *, seed: int = 0) -> np.ndarray:
    """The two-level bootstrap of the mean over seeds (module docstring): each replicate draws
    the seeds with replacement and averages their own replicates of the same index."""
    R = np.array(replicates, dtype=float)      # (seeds, resamples)
    if R.ndim != 2 or R.shape[0] == 0:
        return np.array([])
    if R.shape[0] == 1:
        return R[0]
    rng = np.random.default_rng(seed)
    S, n = R.shape
    pick = rng.integers(0, S, size=(n, S))
    return np.nanmean(R[pick, np.arange(n)[:, None]], axis=1)


def audit_replicates(X: np.ndarray, reconstructions: dict, rows: np.ndarray, prior_mean: Any, best: str | None,
                     radius_upper: Any = None, pinned_rows: Any = None, threshold: float = 0.1, *,
                     resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """The bootstrap replicates of one audit record's headline numbers (module docstring):
    ``{"mse": {method: reps}, "prior_mse", "leakage", "radius_median", "below_threshold",
    "pinned"}``, each an array of ``resamples`` values. ``rows``: the records every method
    reconstructed (the MSEs' rows); ``pinned_rows``: per record, the share of its features
    pinned (NaN where it has no ranges)."""
    per = {m: np.mean((Xh[rows] - X[rows]) ** 2, axis=1) for m, Xh in reconstructions.items()}
    reps: dict = {"mse": {m: bootstrap(v, resamples=resamples, seed=seed) for m, v in per.items()}}
    if prior_mean is not None:
        prior = np.mean((X[rows] - np.asarray(prior_mean)) ** 2, axis=1)
        reps["prior_mse"] = bootstrap(prior, resamples=resamples, seed=seed)
        if best is not None:
            reps["leakage"] = bootstrap(prior - per[best], resamples=resamples, seed=seed)
    if radius_upper is not None:
        r = np.asarray(radius_upper, dtype=float)
        r = r[np.isfinite(r)]
        reps["radius_median"] = bootstrap(r, "median", resamples=resamples, seed=seed)
        reps["below_threshold"] = bootstrap((r <= threshold).astype(float), resamples=resamples, seed=seed)
    if pinned_rows is not None:
        reps["pinned"] = bootstrap(pinned_rows, resamples=resamples, seed=seed)
    return reps


def summarise(reps: dict, level: float = LEVEL) -> dict:
    """``[lo, hi]`` of each replicate array in ``reps`` (nested by method for ``mse``)."""
    out: dict = {}
    for k, v in reps.items():
        out[k] = {m: interval(r, level) for m, r in v.items()} if isinstance(v, dict) else interval(v, level)
    return out


def combine_groups(records: list) -> None:
    """Set ``record.intervals["group"]`` on audit records: per (dataset, d), every headline's
    interval over the group's seeds (:func:`combine_seeds`; one seed: its own interval), so
    that the report reads intervals and computes none."""
    groups: dict = {}
    for r in records:
        groups.setdefault((r.dataset, r.n_passive), []).append(r)
    for recs in groups.values():
        if not all(getattr(r, "replicates", None) for r in recs):
            continue
        level, seed = recs[0].intervals.get("level", LEVEL), int(recs[0].seed)
        out: dict = {}
        for key, v in recs[0].replicates.items():
            if isinstance(v, dict):
                out[key] = {m: interval(combine_seeds([r.replicates[key][m] for r in recs], seed=seed), level)
                            for m in v if all(m in r.replicates.get(key, {}) for r in recs)}
            elif all(key in r.replicates for r in recs):
                out[key] = interval(combine_seeds([r.replicates[key] for r in recs], seed=seed), level)
        for r in recs:
            r.intervals["group"] = out
