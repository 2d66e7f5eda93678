"""report.html: self-contained (no script, no fetched resource; every plot inline) and true to
the report's JSON file: each table cell is the JSON value its data-ref names, printed to six
significant digits, and every number of the prose (verdict, configuration, text report) is a
number of the JSON file at the precision printed. The checker is itself checked: a page with
one number changed fails it."""

from __future__ import annotations

import html.parser
import json
import pathlib
import re

import pytest

import vflattack as va
from vflattack.report import render, write_reports

# a printed number: not part of a word, a file name, a 'round:2' spec or a version
NUMBER = re.compile(r"(?<![\w.:])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?(?![\w.]\d)")


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells, self.text, self.imgs, self.tags, self._ref, self._skip = [], [], [], [], None, False
        self.links = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        self._skip = tag == "style"
        self._ref = a.get("data-ref") if tag == "td" else None
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        if tag == "a":
            self.links.append(a.get("href", ""))

    def handle_endtag(self, tag):
        self._skip, self._ref = False, None

    def handle_data(self, data):
        if self._skip:
            return
        if self._ref is not None:
            self.cells.append((self._ref, data))
        elif not data.strip().endswith(".png"):     # figure captions are file names
            self.text.append(data)


def _numbers(doc):
    if isinstance(doc, bool):
        return []
    if isinstance(doc, (int, float)):
        return [float(doc)]
    if isinstance(doc, dict):
        return [v for x in doc.values() for v in _numbers(x)]
    if isinstance(doc, list):
        return [v for x in doc for v in _numbers(x)]
    return []


def _resolve(doc, ref):
    for part in ref.split("/"):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def check_page(page: str, doc: dict) -> list[str]:
    """The problems of ``page`` against the JSON document ``doc`` (empty: none)."""
    p = _Page()
    p.feed(page)
    problems = [f"tag <{t}>" for t in p.tags if t in ("script", "link", "iframe", "object")]
    problems += [f"image not inline: {s[:40]}" for s in p.imgs if not s.startswith("data:image/png;base64,")]
    problems += ["remote address"] if re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", page) else []
    for ref, text in p.cells:
        value = _resolve(doc, ref)
        if not isinstance(value, (int, float)) or (f"{value:.6g}" if isinstance(value, float) else str(value)) != text:
            problems.append(f"cell {ref}: shows {text!r}, report has {value!r}")
    known = _numbers(doc)
    for token in NUMBER.findall(" ".join(p.text)):
        body = token.rstrip("%").lstrip("+")
        dec = len(body.split(".")[1].split("e")[0]) if "." in body else 0
        value, tol = float(body), 0.5 * 10.0 ** -dec
        if token.endswith("%"):
            value, tol = value / 100, tol / 100
        if "e" in body:                     # '%g' output: relative to its mantissa
            tol = abs(value) * 10.0 ** -(dec + 1) * 5
        if not any(abs(v - value) <= tol * (1 + 1e-9) + 1e-15 for v in known):
            problems.append(f"number {token} is not in the report's JSON file")
    return problems


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    res = va.run_release_sweep("wine", n_passive=(4,), releases=("exact", "round:2", "label"), methods=("ls", "half_star", "rcc2", "exact",
                                                                                   "mean", "gaussian"))
    out = tmp_path_factory.mktemp("html") / "rep"
    write_reports(out, [("", render(res))] + [(f"release-{p.config['release'].replace(':', '-')}", render(p))
                                              for p in res.parts])
    return out


@pytest.mark.parametrize("sub, json_name", [("", "sweep.json"), ("release-exact", "report.json"),
                                            ("release-round-2", "report.json"), ("release-label", "report.json")])
def test_every_number_of_the_page_is_in_the_json(sweep_dir, sub, json_name):
    root = sweep_dir / sub
    page = (root / "report.html").read_text(encoding="utf-8")
    doc = json.loads((root / json_name).read_text())
    assert check_page(page, doc) == []
    pngs = sorted(pathlib.Path(root).glob("*.png"))
    assert pngs and page.count("data:image/png;base64,") == len(pngs)
    p = _Page()
    p.feed(page)
    assert len(p.cells) >= 3 * len(doc["summary"])      # the summary's numbers are cells with their source
    assert va.verify_report(sweep_dir)


def test_the_sweep_page_links_each_release_audit(sweep_dir):
    p = _Page()
    p.feed((sweep_dir / "report.html").read_text(encoding="utf-8"))
    assert sorted(p.links) == sorted(f"release-{r}/report.html" for r in ("exact", "round-2", "label"))
    assert all((sweep_dir / href).is_file() for href in p.links)


def test_the_verdict_names_the_release(sweep_dir):
    page = (sweep_dir / "release-round-2" / "report.html").read_text(encoding="utf-8")
    assert "<p class='verdict'>wine, d = 4, release: probabilities rounded to 2 decimals:" in page
    top = (sweep_dir / "report.html").read_text(encoding="utf-8")
    assert "precision sweep over releases exact, round:2, label" in top


def test_the_checker_catches_a_changed_number(sweep_dir):
    root = sweep_dir / "release-exact"
    page = (root / "report.html").read_text(encoding="utf-8")
    doc = json.loads((root / "report.json").read_text())
    cell = re.search(r'data-ref="summary/0/mse">([0-9.e-]+)<', page)
    bad_cell = page.replace(cell.group(0), cell.group(0).replace(cell.group(1), "0.123457"))
    assert any("cell summary/0/mse" in p for p in check_page(bad_cell, doc))
    verdict = re.search(r"reaches MSE (\d\.\d{5})", page)
    bad_text = page.replace(verdict.group(0), "reaches MSE 0.98765")
    assert any("0.98765" in p for p in check_page(bad_text, doc))
    assert any("tag <script>" in p for p in check_page(page.replace("</body>", "<script></script></body>"), doc))
