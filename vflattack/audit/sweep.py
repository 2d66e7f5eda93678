"""The precision sweep: does rounding (or any release) protect the passive features?

:func:`run_release_sweep` runs the white-box audit (:func:`~vflattack.audit.whitebox.run_audit`)
once per release on the same scenarios (same seeds, so the same split, model and records) and
keeps, per (dataset, d, seed, release), the numbers an auditor compares across releases: the
best release-aware attack's MSE, the naive attack's (the published value taken as exact), the
prior alone, the leakage beyond the prior, the median certified radius r*/sqrt(d) and the share
of pinned features. Every one of them comes from the audit record; nothing is recomputed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import InvalidInputError, keyword_only
from ..release import Release
from .protocol import Result
from .whitebox import run_audit

__all__ = ["DEFAULT_SWEEP", "SweepRecord", "run_release_sweep"]

#: the releases of the precision sweep ``vflattack audit --release sweep``
DEFAULT_SWEEP = ("exact", "round:4", "round:3", "round:2", "round:1", "label")


@dataclass
class SweepRecord:
    """One (dataset, d, seed, release): the audit's headline numbers.

    ``pinned_share`` is the mean over the passive features of the share of records whose
    feature range is at most tau of the box side (the mean of the audit's ``pinned``);
    ``radius_median`` is the median certified upper bound on r*/sqrt(d); ``attacked`` the
    predictions every method reconstructed; ``naive_rows`` the predictions the naive attack
    could use (all of them for exact scores, where it is least squares on exact scores).
    """

    dataset: str
    n_passive: int
    seed: int
    release: str
    release_words: str
    decimals: int | None
    n_predictions: int
    attacked: int
    best_attack: str | None
    best_mse: float
    naive_mse: float
    naive_rows: int
    prior_mse: float
    leakage: float
    radius_median: float
    below_threshold: float
    pinned_share: float
    #: the share of predictions whose published top class is the exact scores' (AuditRecord.agreement)
    agreement: float = 1.0
    #: the 95 % intervals of the audit's headlines over its seeds and records (AuditRecord.intervals
    #: ["group"]: {"leakage": [lo, hi], "mse": {method: [lo, hi]}, ...}; docs/vflattack.md)
    intervals: dict = field(default_factory=dict)


@keyword_only("n_passive", "releases")
def run_release_sweep(dataset: str = "breast_cancer", *, n_passive: Sequence[int] = (10,),
                      releases: Sequence[Any] = DEFAULT_SWEEP, **audit_options: Any) -> Result:
    """Audit ``dataset`` once per release; return a ``"release_sweep"`` :class:`Result`.

    ``releases`` are :class:`~vflattack.Release` objects or their text (``"round:2"``);
    ``audit_options`` go to :func:`run_audit` (``methods``, ``seeds``, ``n_predictions``,
    ``tau``, ...; ``exposure`` must stay on, the sweep is built on it). The result's
    records are :class:`SweepRecord` rows in the order of ``releases``; its ``parts`` are
    the audits, one per release, each a full audit result.

    Examples
    --------
    >>> res = run_release_sweep("wine", n_passive=(3,), releases=("exact", "round:1"), methods=("half_star", "rcc2", "mean"))
    >>> [r.release for r in res.records], len(res.parts)
    (['exact', 'round:1'], 2)
    """
    rels = [r if isinstance(r, Release) else Release.parse(r) for r in releases]
    if not rels:
        raise InvalidInputError("releases must name at least one release (e.g. 'exact round:2 label')")
    if len({r.spec for r in rels}) != len(rels):
        raise InvalidInputError(f"releases must be distinct; got {[r.spec for r in rels]}")
    if audit_options.get("exposure") is False:
        raise InvalidInputError("exposure=False: the precision sweep reports the radii and pinned features, "
                                "which the exposure computes")
    parts, records = [], []
    for rel in rels:
        res = run_audit(dataset, n_passive=n_passive, release=None if rel.exact else rel, **audit_options)
        parts.append(res)
        records += [_sweep_record(rec, rel) for rec in res.records]
    config = dict(parts[0].config, releases=[r.spec for r in rels], release=None, release_words=None)
    return Result("release_sweep", records, config, parts=parts)


def _sweep_record(rec, rel: Release) -> SweepRecord:
    p = rec.privacy
    pinned = np.array(p.get("pinned", [np.nan]), dtype=float)
    if rel.exact:   # the naive attack is least squares on the exact scores
        naive = rec.mse.get("ls", float("nan"))
        naive_rows = rec.n_predictions if "ls" in rec.mse else 0
    else:
        naive, naive_rows = rec.mse["naive"], rec.status["naive"]["used"]
    return SweepRecord(
        dataset=rec.dataset, n_passive=rec.n_passive, seed=rec.seed, release=rel.spec, release_words=rel.describe(),
        decimals=rel.decimals, n_predictions=rec.n_predictions,
        attacked=int(np.sum(rec.arrays["rows"])) if "rows" in rec.arrays else 0,
        best_attack=p.get("best_attack"), best_mse=float(p.get("best_mse", np.nan)), naive_mse=float(naive),
        naive_rows=int(naive_rows), prior_mse=float(p.get("prior_mse", np.nan)), leakage=float(p.get("leakage", np.nan)),
        radius_median=float(p["radius"]["quantiles"]["median"]) if p else float("nan"),
        below_threshold=float(p["radius"]["below_threshold"]) if p else float("nan"),
        pinned_share=float(np.nanmean(pinned)) if np.isfinite(pinned).any() else float("nan"),
        agreement=float(rec.agreement), intervals=dict((rec.intervals or {}).get("group", {})))
