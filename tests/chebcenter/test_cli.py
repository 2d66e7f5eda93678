"""The main job: python -m chebcenter demo."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import chebcenter as cc
from chebcenter.cli import main


def test_demo_prints_every_method(capsys):
    assert main(["demo", "--d", "6", "--m", "2", "--n", "5"]) == 0
    out = capsys.readouterr().out
    for name in cc.METHODS:
        assert f"\n{name} " in out
    assert "OPTIMAL:5" in out


def test_module_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "chebcenter", "demo", "--n", "3", "--methods", "half_star", "exact"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "exact proves its radius minimax (radius_lower meets it) on 3 of 3 rows" in proc.stdout
    assert "rcc1" not in proc.stdout.split("\n", 3)[-1].split("exact proves")[0]


def test_bad_arguments_exit_with_usage():
    proc = subprocess.run([sys.executable, "-m", "chebcenter", "demo", "--d", "0"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "--d and --n must be >= 1" in proc.stderr


def test_bench_table_reports_medians_spreads_and_ratios_of_given_times():
    """The table's arithmetic on made-up times (not on the code's own measurements): the
    ratio of each repeat is baseline / ours, the cell is its median with (min-max)."""
    from chebcenter.bench import runner as _bench

    row = _bench.Row("thing", "row", ours_1=[1e-6, 2e-6, 1e-6], ours_all=[5e-7, 5e-7, 1e-6],
                     base=[2e-6, 8e-6, 6e-6], baseline="loop", agree="max dev. 1e-16")
    text = _bench.to_markdown([row], 3)
    line = [s for s in text.splitlines() if s.startswith("| thing")][0]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "1 µs (1–2) per row"
    assert cells[2] == "500 ns (500–1000) per row"
    assert cells[4] == "6 µs (2–8) per row"
    assert cells[5] == "**4×** (2–6)"          # 2/1, 8/2, 6/1
    assert cells[6] == "**6×** (4–16)"         # 4, 16, 6
    assert "cores" in text.splitlines()[0] and "numba" in text.splitlines()[0] and "NumPy" in text.splitlines()[0]


def test_bench_compare_widens_the_earlier_cells_by_their_stated_drift():
    """``--compare`` on made-up tables: the earlier run's cell (1-2 µs) widened by its
    stated drift of 10 % holds medians from 0.9 µs to 2.2 µs and no others."""
    from chebcenter.bench import runner as _bench

    def table(ours, drift):
        row = _bench.Row("thing", "row", ours_1=ours, ours_all=ours, base=[4e-6] * 3, baseline="loop")
        return _bench.to_markdown([row], 3, drift)

    before = table([1e-6, 1.5e-6, 2e-6], 0.10)
    assert "spread by 10.0 %" in before
    for ours, inside in (([2.1e-6] * 3, True), ([0.91e-6] * 3, True), ([2.3e-6] * 3, False), ([0.85e-6] * 3, False)):
        got, total, outside = _bench.compare(before, table(ours, 0.0))
        # 5 cells: ours per core and all cores, the baseline (4-4, always inside) and the two ratios
        assert total == 5 and (got == 5) is inside and len(outside) == 5 - got, (ours, got, outside)


def test_bench_runs_a_row_and_checks_its_arguments(capsys):
    assert main(["bench", "--only", "half_star", "--no-cold", "--no-progress", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    line = [s for s in out.splitlines() if s.startswith("| `half_star`")][0]
    assert "the baseline within" in line and line.count("×") == 2
    cands = [s for s in out.splitlines() if s.startswith("| `half_star`") and s != line]
    assert len(cands) == 2 and sum("**yes**" in c for c in cands) == 1
    proc = subprocess.run([sys.executable, "-m", "chebcenter", "bench", "--repeats", "2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "--repeats must be >= 3" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "chebcenter", "bench", "--only", "nope"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "unknown row 'nope'" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "chebcenter", "bench", "--compare", "/nonexistent/table.md"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "--compare: no such file" in proc.stderr


def test_the_baseline_is_the_fastest_candidate_within_the_matched_accuracy():
    """``choose`` on made-up candidates: the fastest by median among those whose error is
    within 1e-6 (or not measured); a faster one that misses the accuracy is passed over; with
    none matched the row has no baseline and says which was fastest and how far off."""
    from chebcenter.bench import runner as _bench

    row = _bench.Row("thing", "row", ours_1=[1e-6] * 3, ours_all=[1e-6] * 3,
                     cands={"slow": [5e-3] * 3, "fast but loose": [1e-4] * 3, "fast": [2e-3, 1e-3, 3e-3],
                            "unmeasured": [4e-3] * 3},
                     errors={"slow": 1e-9, "fast but loose": 1e-4, "fast": 5e-7, "unmeasured": None})
    _bench.choose(row)
    assert row.baseline == "fast" and row.base == [2e-3, 1e-3, 3e-3]
    assert np.allclose(row.ratios(row.ours_1), [2000.0, 1000.0, 3000.0], rtol=1e-12, atol=0)
    lonely = _bench.choose(_bench.Row("t", "row", cands={"a": [1.0] * 3, "b": [2.0] * 3}, errors={"a": 1e-3, "b": 1e-2}))
    assert lonely.base == [] and lonely.baseline.startswith("none within 1e-06") and "a, is 1.0e-03 off" in lonely.baseline
    text = _bench.to_markdown([row], 3)
    chosen = [s for s in text.splitlines() if "**yes**" in s]
    assert len(chosen) == 1 and "| fast |" in chosen[0]


def test_the_log_audit_row_reports_rows_per_second_for_1_and_2_workers_and_the_peak_memory(monkeypatch):
    """The row's assembly on given measurements (the measurement itself, vflattack's audit in a
    subprocess, is exercised by CI's run of benchmarks/log_audit.py): per core is 1 worker,
    all cores 2, the memory and the speed-up in the agreement column, as medians (min-max)."""
    from chebcenter.bench import runner as _bench

    rounds = iter([[[4e-5, 700.0], [2e-5, 1200.0]], [[5e-5, 710.0], [2e-5, 1250.0]], [[4e-5, 690.0], [1e-5, 1300.0]]])
    monkeypatch.setattr(_bench, "log_audit_available", lambda: True)
    monkeypatch.setattr(_bench, "_log_audit", lambda: next(rounds))
    rows, _ = _bench.run(repeats=3, only=["log_audit"], progress=False, cold=False)
    (row,) = rows
    assert row.ours_1 == [4e-5, 5e-5, 4e-5] and row.ours_all == [2e-5, 2e-5, 1e-5]
    assert "700 MB (690–710) with 1 worker, 1250 MB (1200–1300) with 2" in row.agree
    assert "2 workers 2.50× (2.00–4.00) the rows/s of 1" in row.agree
    line = _bench.to_markdown(rows, 3).splitlines()[-3]
    assert line.startswith("| log audit") and "40 µs (40–50) per row" in line
