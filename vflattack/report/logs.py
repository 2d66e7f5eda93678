"""The prediction-log audit's report, and ``audit_log``: the attack on a log inside an atomically
written report directory."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..attacks import BASELINES, DEFAULT_METHODS, Prior
from ..audit.logs import attack_log
from ..model import VFLModel
from .base import Report
from .directory import report_dir

__all__ = ["LogAuditReport", "audit_log"]


@dataclass
class LogAuditReport(Report, kind="log_audit", csv_name="mse.csv"):
    """The audit of a prediction log: per method, statuses and (with the passive log) MSE."""

    csv_fields: ClassVar[tuple[str, ...]] = ("method", "mse", "rows_scored", "status")

    def csv_rows(self) -> list[dict]:
        return [{"method": r["method"], "mse": r["mse"], "rows_scored": r["rows_scored"],
                 "status": json.dumps(r["status"])} for r in self.records]

    def table(self) -> str:
        c = self.config
        head = (f"prediction log {c['log']}, release: {c.get('release_words', 'exact scores')}: "
                f"{c['rows']} predictions in {c['partitions']} partitions, "
                f"d = {c['n_passive']} passive features, k = {c['n_classes']}, "
                + (f"MSE on {self.records[0]['rows_scored']} rows joined with the passive log"
                   if c["passive_log"] else "no passive log: statuses only"))
        lines = [head]
        if c.get("verdict"):   # most rows refused under the named release: that comes first
            lines = [c["verdict"], head]
        if c.get("looks_rounded") is not None:
            K = c["looks_rounded"]
            lines.append(f"  the logged scores look rounded to {K} decimals but were audited as exact: rows whose "
                         f"rounded scores are inconsistent are refused and the certificates may not hold; audit "
                         f"with --release round:{K}")
        lines.append(f"  {'method':<10} {'MSE':>10}  status")
        for r in self.records:
            st = ", ".join(f"{k}:{v}" for k, v in r["status"].items())
            mse = f"{r['mse']:>10.5f}" if r["mse"] is not None and np.isfinite(r["mse"]) else f"{'—':>10}"
            lines.append(f"  {r['method']:<10} {mse}  {st}")
        if c.get("skipped_without_prior"):
            lines.append(f"  not run (they need a prior: --prior-file): {', '.join(c['skipped_without_prior'])}")
        lines.append(f"  reconstructions and statuses: {c['reconstructions']}")
        return "\n".join(lines)


def audit_log(model: VFLModel, log: Any, out: Any, *, passive_log: Any = None,
              methods: Sequence[str] = DEFAULT_METHODS + BASELINES, prior: Prior | None = None,
              method_options: dict | None = None, client: Any = None, progress: bool = False,
              release: Any = None) -> LogAuditReport:
    """Audit the prediction log ``log`` (Parquet or CSV) of ``model``; write the report into ``out``.

    The report directory (written atomically, manifest last) holds ``report.json``,
    ``mse.csv`` and ``reconstructions/part.*.parquet`` (per prediction: id, score flags, every
    method's reconstruction ``<method>_x<j>`` and status ``<method>_status``). With
    ``passive_log`` the MSE per feature is computed on the rows joined on ``id``; the
    ``mean`` baseline and the prior-aware attacks need ``prior``. ``client``: a
    ``dask.distributed.Client`` (default: the active Dask scheduler). ``release`` (a
    :class:`vflattack.Release`) says how the logged scores were published (default exact).

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib, vflattack as va
    >>> rng = np.random.default_rng(0)
    >>> model = va.VFLModel(rng.standard_normal((3, 1)), rng.standard_normal((3, 2)), np.zeros(3))
    >>> Y, X = rng.random((40, 1)), rng.random((40, 2))
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> preds, passive = va.audit.write_log(model, Y, X, tmp / "logs", partitions=2)
    >>> rep = va.audit_log(model, preds, tmp / "report", passive_log=passive, methods=("ls",))
    >>> rep.records[0]["rows_scored"], rep.records[0]["mse"] < 1e-20    # rank A = d: exact
    (40, True)
    """
    with report_dir(out) as tmp:
        parts_dir = tmp / "reconstructions"
        parts_dir.mkdir()
        result = attack_log(model, log, parts_dir, passive_log=passive_log, methods=methods, prior=prior,
                            method_options=method_options, client=client, progress=progress, release=release)
        report = LogAuditReport(result.records, result.config)
        report.write_into(tmp)
    return report
