"""End to end: audit on an embedded dataset, report files, the CLI."""

from __future__ import annotations

import csv
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import vflattack as va
from vflattack.audit import run_audit, split_columns, split_rows
from vflattack.cli import main


def test_audit_end_to_end_writes_parsable_reports(tmp_path):
    rep = va.render(run_audit("wine", n_passive=(2, 4), seeds=(0, 1)))
    assert len(rep.records) == 4
    r = rep.records[0]
    assert set(r.mse) == set(va.DEFAULT_METHODS + va.BASELINES + va.PRIOR_METHODS)   # prior-aware attacks run by default
    # docs/theory.md §2 on the audit's measured numbers
    for rec in rep.records:
        assert rec.mse["half_star"] <= rec.mse["half"] + 1e-12
        lo, up, _ = rec.bounds["half_star"]
        assert lo - 1e-12 <= rec.mse["half_star"] <= up + 1e-12
        assert np.isfinite(rec.mse["exact"])
    paths = rep.write(tmp_path)
    payload = json.loads(pathlib.Path(paths["json"]).read_text())
    assert payload["config"]["dataset"] == "wine" and len(payload["records"]) == 4
    with open(paths["csv"], newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * len(r.mse) and {"dataset", "n_passive", "method", "mse"} <= set(rows[0])
    for key in ("mse_vs_passive_wine", "mse_per_feature_wine"):
        assert pathlib.Path(paths[key]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "theory (docs/theory.md)" in rep.table()


def test_splits_are_seeded_and_follow_the_protocol():
    a, p = split_columns(10, 3, 7)
    a2, p2 = split_columns(10, 3, 7)
    assert p.tolist() == p2.tolist() and len(p) == 3 and sorted(a.tolist() + p.tolist()) == list(range(10))
    tr, pr = split_rows(100, 0.2, None, 1)
    assert len(pr) == 20 and len(tr) == 80 and not set(tr) & set(pr)
    assert len(split_rows(100, 0.2, 5, 1)[1]) == 5
    with pytest.raises(ValueError, match="n_passive must be in"):
        split_columns(10, 10, 0)


def test_audit_on_user_data():
    rng = np.random.default_rng(0)
    F = rng.random((300, 6))
    lab = (F[:, 0] + F[:, 5] > 1).astype(int)
    rep = run_audit("mine", n_passive=(3,), methods=("half", "half_star"), data=(F, lab))
    assert rep.records[0].dataset == "mine"
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        run_audit("mine", data=(F * 2, lab))


def test_cli_default_audit_prints_the_table(capsys):
    assert main(["audit", "--no-progress", "--passive", "5", "--methods", "half", "half_star", "exact"]) == 0
    out = capsys.readouterr().out
    assert "breast_cancer: d = 5 passive of 30 features" in out
    for name in ("half", "half_star", "exact"):
        assert f"\n  {name} " in out


def test_cli_help_and_exit_codes(tmp_path):
    def run(*a):
        return subprocess.run([sys.executable, "-m", "vflattack", *a], capture_output=True, text=True, timeout=600)

    h = run("audit", "--help")
    assert h.returncode == 0 and "--passive" in h.stdout and "--out" in h.stdout and "--data-dir" in h.stdout
    assert run("audit", "--dataset", "iris").returncode == 2
    assert run("audit", "--passive", "0").returncode == 2
    bad = run("audit", "--dataset", "wine", "--passive", "50", "--no-progress")
    assert bad.returncode == 2 and "n_passive must be in [1, 12]" in bad.stderr
    missing = run("audit", "--dataset", "grid", "--data-dir", str(tmp_path), "--no-progress")
    assert missing.returncode == 1 and "could not download" in missing.stderr


def test_passive_columns_by_name_or_index(capsys):
    rep = run_audit("wine", methods=("half_star",), passive_columns=["alcohol", 3, "proline"])
    assert rep.records[0].passive_columns == [0, 3, 12] and rep.records[0].n_passive == 3
    with pytest.raises(ValueError, match="is not a feature name"):
        run_audit("wine", methods=("half_star",), passive_columns=["colour"])
    with pytest.raises(ValueError, match="distinct indices"):
        run_audit("wine", methods=("half_star",), passive_columns=[1, 1])
    assert main(["audit", "--dataset", "wine", "--passive-columns", "0", "magnesium",
                 "--methods", "half_star", "--no-progress"]) == 0
    assert "wine: d = 2 passive of 13 features" in capsys.readouterr().out
