"""The README's speed table and docs/benchmarks.md's candidates table are one run of
``python -m chebcenter bench``, and every baseline the README names is the fastest of its
row's candidates that reached the matched accuracy in that run.

The two tables are read from the pages (between the markers the bench's output is pasted
into); the times are the printed medians, so the test holds the committed numbers to the
rule, not the code that picked them (tests/chebcenter/test_cli.py checks ``choose`` itself on
made-up times)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MATCHED = 1e-6
_SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


def _section(text, name):
    m = re.search(rf"<!-- {name}: begin -->(.*?)<!-- {name}: end -->", text, re.S)
    assert m, f"the page has no {name} section between its markers"
    return m.group(1)


def _rows(section):
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(("| what", "| row |")) and not line.startswith("|---")]


def _seconds(cell):
    m = re.match(r"([\d.]+) (s|ms|µs|ns) \(", cell)
    assert m, cell
    return float(m.group(1)) * _SCALE[m.group(2)]


def _footer(section):
    m = re.search(r"`python -m chebcenter bench[^`]*` took \d+ s\.", section)
    assert m, "the table does not say which run it is"
    return m.group(0)


def test_the_readme_table_is_one_run_with_at_most_12_rows():
    table = _section((ROOT / "README.md").read_text(encoding="utf-8"), "speed table")
    rows = _rows(table)
    assert 1 <= len(rows) <= 12
    assert "Machine:" in table and "Drift:" in table
    candidates = _section((ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8"), "candidates")
    assert _footer(table) == _footer(candidates), "the README's table and the candidates come from different runs"


def test_every_readme_baseline_is_the_fastest_matched_candidate_of_its_run():
    rows = _rows(_section((ROOT / "README.md").read_text(encoding="utf-8"), "speed table"))
    cands: dict = {}
    for what, name, time, error, chosen in _rows(_section((ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8"),
                                                          "candidates")):
        cands.setdefault(what, []).append((name, _seconds(time), None if error == "—" else float(error), chosen))
    named = 0
    for row in rows:
        what, baseline = row[0], row[3]
        if baseline == "—":
            assert what not in cands, f"{what}: candidates were timed but no baseline is named"
            continue
        assert what in cands, f"{what}: the baseline {baseline!r} has no candidates in docs/benchmarks.md"
        matched = [(t, n) for n, t, e, _ in cands[what] if e is None or e <= MATCHED]
        if baseline.startswith("none within"):
            assert not matched
            continue
        assert matched, f"{what}: no candidate reached {MATCHED:g}, yet {baseline!r} is named"
        fastest = min(matched)
        mine = [t for n, t, _, _ in cands[what] if n == baseline]
        assert mine and mine[0] <= fastest[0], f"{what}: {baseline!r} ({mine}) is slower than {fastest[1]!r}"
        assert [n for n, _, _, c in cands[what] if c == "**yes**"] == [baseline]
        assert _seconds(row[4]) == mine[0], f"{what}: the README's baseline time is not the candidate's"
        named += 1
    assert named >= 8, "most rows of the table have a baseline"
