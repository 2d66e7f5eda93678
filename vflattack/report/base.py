"""One report type for every vflattack experiment, with one writer.

A :class:`Report` holds its records and its configuration. What differs between the
audit, the threat audit and the known-input experiment is data, not code: the names of
the JSON and CSV files, the CSV rows, and which plots to draw. :meth:`Report.write`
publishes a report directory atomically (:mod:`vflattack.report.directory`): the files are built
in a temporary sibling, ``manifest.json`` is written last, and the directory is renamed
into place.
"""

from __future__ import annotations

import csv
import json
import pathlib
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, ClassVar

import numpy as np

from .directory import report_dir
from .html import render_html

__all__ = ["Report", "fmt_interval", "to_jsonable"]


def fmt_interval(lo: Any, hi: Any, width: int = 0, spec: str = ".5f", empty: str = "—") -> str:
    """``[lo, hi]`` formatted with ``spec`` (``empty`` where either end is missing or not
    finite), right-aligned in ``width`` when given: every report's intervals.

    Examples
    --------
    >>> fmt_interval(0.01, 0.02, spec="+.3f"), fmt_interval(float("nan"), 1.0), fmt_interval(0.1, 0.25, 14, ".1%")
    ('[+0.010, +0.020]', '—', '[10.0%, 25.0%]')
    """
    ok = lo is not None and hi is not None and bool(np.isfinite(lo) and np.isfinite(hi))
    text = f"[{lo:{spec}}, {hi:{spec}}]" if ok else empty
    return f"{text:>{width}}" if width else text


@dataclass
class Report:
    """Records and configuration of one experiment.

    A subclass names its files in its class statement, ``class AuditReport(Report,
    kind="audit", json_name="report.json", csv_name="mse.csv")``, sets ``csv_fields`` and
    defines :meth:`table`, :meth:`csv_rows` and :meth:`plots`; :meth:`payload` adds anything
    else the JSON file should hold.
    """

    records: list
    config: dict
    kind: ClassVar[str] = "report"
    json_name: ClassVar[str] = "report.json"
    csv_name: ClassVar[str | None] = None
    csv_fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, *, kind: str, json_name: str = "report.json", csv_name: str | None = None,
                          **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls.kind, cls.json_name, cls.csv_name = kind, json_name, csv_name

    def table(self) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def csv_rows(self) -> list[dict]:
        """The rows of the CSV file (``csv_fields`` keys)."""
        return []

    def plots(self, out: pathlib.Path) -> dict:
        """Draw the report's PNG plots into ``out``; return ``{name: path}``."""
        return {}

    def extra_files(self, out: pathlib.Path) -> dict:
        """Any further files (more CSV tables, arrays); return ``{name: path}``."""
        return {}

    def html_tables(self, doc: dict) -> list[tuple[str, str | None, list[dict], list[str]]]:
        """The tables of ``report.html``: ``(title, key, rows, fields)``, where ``rows`` is
        ``doc[key]`` (the JSON document's list at ``key``, so each cell can name its source)
        or, with ``key`` None, rows that are not in the JSON document as such. Default: the
        document's ``summary`` if it has one, else the CSV rows."""
        if isinstance(doc.get("summary"), list) and doc["summary"]:
            return [("Summary", "summary", doc["summary"], [f for f in doc["summary"][0] if f != "release_words"])]
        rows = self.csv_rows()
        return [("Table", None, rows, list(self.csv_fields))] if rows else []

    def html_links(self) -> list[tuple[str, str]]:
        """``(text, relative address)`` of the reports this one is made of (none by default)."""
        return []

    def payload(self) -> dict:
        """The JSON document: kind, configuration and records."""
        return {"kind": self.kind, "config": self.config,
                "records": [asdict(r) if is_dataclass(r) else r for r in self.records]}

    def write_into(self, out: pathlib.Path) -> dict:
        """Write the JSON, the CSV, the plots and ``report.html`` (:mod:`.html`) into the
        existing directory ``out``."""
        out = pathlib.Path(out)
        paths: dict[str, Any] = {"json": out / self.json_name}
        doc = to_jsonable(self.payload())
        paths["json"].write_text(json.dumps(doc, indent=1))
        if self.csv_name:
            paths["csv"] = out / self.csv_name
            with open(paths["csv"], "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(self.csv_fields), extrasaction="ignore")
                w.writeheader()
                for row in self.csv_rows():
                    w.writerow(row)
        paths.update(self.extra_files(out))
        paths.update(self.plots(out))
        page = out / "report.html"
        page.write_text(render_html(self, paths, doc), encoding="utf-8")
        paths["html"] = page
        return {k: str(v) for k, v in paths.items()}

    def write(self, out_dir: Any) -> dict:
        """Write the report into ``out_dir`` atomically, with ``manifest.json`` last.

        ``out_dir`` must be new, empty, or a previous report (which is replaced). Returns
        the paths of the files written.
        """
        with report_dir(out_dir) as tmp:
            paths = self.write_into(tmp)
        final = pathlib.Path(out_dir)
        return {k: str(final / pathlib.Path(v).relative_to(tmp)) for k, v in paths.items()}


def to_jsonable(obj: Any) -> Any:
    """``obj`` with arrays as lists, NumPy scalars as Python numbers and NaN/inf as None."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    return obj
