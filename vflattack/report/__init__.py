"""The reports: what an audit computed, as tables, JSON, CSV, plots, in one directory.

This layer formats and writes; it computes no attack. :func:`render` turns an audit's
:class:`~vflattack.audit.Result` into its :class:`Report`; :meth:`Report.table` is the text
the CLI prints and :meth:`Report.write` publishes a report directory atomically
(:mod:`.directory`: files built in a temporary sibling, ``manifest.json`` last, then a
rename), which :func:`verify_report` checks.

* :mod:`.base`: :class:`Report` and the JSON conversion;
* :mod:`.audit`, :mod:`.sweep`, :mod:`.threats`, :mod:`.known_input`, :mod:`.logs`, :mod:`.design`: one
  report per audit;
* :mod:`.plots`: the PNG plots;
* :mod:`.directory`: atomic report directories, the manifest, verification.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any

from .audit import AuditReport
from .base import Report, to_jsonable
from .design import DesignReport
from .directory import MANIFEST, check_out_dir, report_dir, verify_report, write_manifest
from .known_input import KnownInputReport
from .logs import LogAuditReport
from .sweep import SweepReport
from .threats import ThreatReport

__all__ = [
    "AuditReport", "DesignReport", "KnownInputReport", "LogAuditReport", "MANIFEST", "REPORTS", "Report", "SweepReport", "ThreatReport",
    "check_out_dir", "render", "report_dir", "to_jsonable", "verify_report", "write_manifest",
    "write_reports",
]

#: the report of each kind of audit result
REPORTS: dict[str, type[Report]] = {"audit": AuditReport, "threats": ThreatReport,
                                    "known_input": KnownInputReport, "log_audit": LogAuditReport,
                                    "release_sweep": SweepReport, "design": DesignReport}


def render(result: Any) -> Report:
    """The report of an audit's result (:func:`vflattack.audit.run_audit` and its siblings).

    Examples
    --------
    >>> import vflattack as va
    >>> rep = va.report.render(va.audit.run_audit("wine", n_passive=(3,), methods=("half_star",), exposure=False))
    >>> type(rep).__name__, rep.table().splitlines()[0].startswith("wine, d = 3")
    ('AuditReport', True)
    """
    if hasattr(result, "to_result"):   # a DesignResult
        result = result.to_result()
    try:
        cls = REPORTS[result.kind]
    except (AttributeError, KeyError):
        raise TypeError(f"render takes an audit result (kinds {sorted(REPORTS)}); got {type(result).__name__}") from None
    return cls(result.records, result.config)


def write_reports(out: Any, reports: Sequence[tuple[Any, Report]]) -> list[pathlib.Path]:
    """Write several reports into one atomically published directory ``out``.

    ``reports`` is ``[(subdirectory, report), ...]`` (``""`` for the top); returns the files
    written, as paths under ``out``, ``manifest.json`` last.

    Examples
    --------
    >>> import tempfile, pathlib, vflattack as va
    >>> res = va.run_audit("wine", n_passive=(3,), methods=("half_star",), exposure=False)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "rep"
    >>> paths = write_reports(out, [("", render(res))])
    >>> paths[-1].name, va.verify_report(out)
    ('manifest.json', True)
    """
    final = pathlib.Path(out)
    with report_dir(final) as tmp:
        written = []
        for sub, rep in reports:
            (tmp / sub).mkdir(parents=True, exist_ok=True)
            written += [pathlib.Path(p) for p in rep.write_into(tmp / sub).values()]
    return sorted(final / p.relative_to(tmp) for p in written) + [final / MANIFEST]
