"""``report.html``: one self-contained page per report directory, readable offline.

The page holds the verdict (the first lines of the text report), the configuration, the
report's tables as HTML tables, the full text report and every plot, inlined as base64 PNG:
no script, no stylesheet or image fetched from anywhere. Every number in a table cell comes
from the report's JSON file: the cell's ``data-ref`` attribute is its path there
(``summary/3/mse``), and the cell shows that value to six significant digits. The prose
(the verdict, the configuration, the text report) prints numbers the JSON file holds too,
rounded as the text report rounds them.
"""

from __future__ import annotations

import base64
import html
import math
import pathlib
from typing import Any

__all__ = ["render_html"]

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;
color:#1d1d1f;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem} h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
.verdict{font-size:1.05rem;background:#f3f6fb;border-left:4px solid #2f6db5;padding:.6rem .9rem;margin:.4rem 0}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0} th,td{padding:.2rem .55rem;border-bottom:1px solid #e4e4e4}
th{text-align:left;background:#fafafa} td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;background:#fafafa;border:1px solid #e4e4e4;padding:.7rem;overflow-x:auto;font-size:.78rem}
figure{margin:1rem 0} img{max-width:100%;border:1px solid #eee} figcaption{font-size:.8rem;color:#555}
dl{display:grid;grid-template-columns:max-content auto;gap:.1rem 1rem;font-size:.85rem} dt{color:#555}
"""


def _cell(value: Any) -> tuple[str, bool]:
    """The text of a table cell and whether it is a number."""
    if isinstance(value, bool) or value is None:
        return ("–" if value is None else str(value)), False
    if isinstance(value, int):
        return str(value), True
    if isinstance(value, float):
        return ("–", False) if not math.isfinite(value) else (f"{value:.6g}", True)
    if isinstance(value, dict):
        return ", ".join(f"{k}:{v}" for k, v in value.items()), False
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v)[0] for v in value), False
    return str(value), False


def _table(key: str | None, rows: list[dict], fields: list[str]) -> str:
    head = "".join(f"<th>{html.escape(f)}</th>" for f in fields)
    body = []
    for i, row in enumerate(rows):
        cells = []
        for f in fields:
            text, num = _cell(row.get(f))
            ref = f' data-ref="{html.escape(key)}/{i}/{html.escape(f)}"' if key is not None and num else ""
            cells.append(f'<td class="{"num" if num else "txt"}"{ref}>{html.escape(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div style='overflow-x:auto'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table></div>")


def render_html(report: Any, files: dict, json_doc: dict) -> str:
    """The page of ``report`` (a :class:`~vflattack.report.Report`) whose files are ``files``
    (``{name: path}``, the PNGs among them inlined) and whose JSON document is ``json_doc``
    (as written, NaN as null)."""
    text = report.table()
    verdict = text.split("\n\n", 1)[0].splitlines()
    cfg = json_doc.get("config", {})
    title = f"vflattack {report.kind.replace('_', ' ')} report" + (f": {cfg['dataset']}" if cfg.get("dataset") else "")
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p class='verdict'>{html.escape(line)}</p>" for line in verdict if line.strip()]
    parts.append("<h2>Configuration</h2><dl>")
    for k, v in cfg.items():
        if v is not None and not isinstance(v, dict):
            parts.append(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(_cell(v)[0])}</dd>")
    parts.append("</dl>")
    for title_t, key, rows, fields in report.html_tables(json_doc):
        parts.append(f"<h2>{html.escape(title_t)}</h2>{_table(key, rows, fields)}")
    parts.append(f"<h2>Full report</h2><pre>{html.escape(text)}</pre>")
    pngs = [(name, pathlib.Path(p)) for name, p in files.items() if str(p).endswith(".png")]
    if pngs:
        parts.append("<h2>Plots</h2>")
    for name, path in pngs:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append(f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>"
                     f"<figcaption>{html.escape(path.name)}</figcaption></figure>")
    links = report.html_links()
    if links:
        parts.append("<h2>Reports in this directory</h2><ul>" + "".join(
            f"<li><a href='{html.escape(href)}'>{html.escape(text)}</a></li>" for text, href in links) + "</ul>")
    others = sorted(pathlib.Path(p).name for p in files.values() if not str(p).endswith(".png"))
    if others:
        parts.append("<h2>Files in this directory</h2><ul>"
                     + "".join(f"<li>{html.escape(n)}</li>" for n in others) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)
