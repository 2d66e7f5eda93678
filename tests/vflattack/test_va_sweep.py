"""The precision sweep: one audit per release on the same scenario, compared release by release."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import vflattack as va
from vflattack.cli import main

METHODS = ("ls", "half_star", "rcc2", "mean", "gaussian")


@pytest.fixture(scope="module")
def sweep():
    return va.run_release_sweep("wine", n_passive=(4,), releases=("exact", "round:3", "round:1", "label"), methods=METHODS, seeds=(0, 1))


def test_the_sweep_keeps_each_audits_numbers(sweep):
    assert [p.config["release"] for p in sweep.parts] == ["exact", "round:3", "round:1", "label"]
    assert len(sweep.records) == 4 * 2
    for part in sweep.parts:
        for rec in part.records:
            row = [s for s in sweep.records if s.release == part.config["release"] and s.seed == rec.seed][0]
            assert row.best_mse == rec.privacy["best_mse"] and row.prior_mse == rec.privacy["prior_mse"]
            assert row.radius_median == rec.privacy["radius"]["quantiles"]["median"]
            assert row.pinned_share == pytest.approx(np.mean(rec.privacy["pinned"]), abs=1e-15)
            naive = rec.mse["ls"] if part.config["release"] == "exact" else rec.mse["naive"]
            assert row.naive_mse == naive or (np.isnan(row.naive_mse) and np.isnan(naive))
    # the same scenario under every release: the prior does not change, the records do not change
    assert len({round(s.prior_mse, 15) for s in sweep.records if s.seed == 0}) == 1
    # label only: the naive attack has nothing to use
    assert all(s.naive_rows == 0 for s in sweep.records if s.release == "label")


def test_no_release_certifies_a_smaller_radius_than_the_exact_scores(sweep):
    """The exact scores' set of a record lies inside the set of any release of those scores (the
    exact score is inside its rounding interval; every x with that score publishes the same
    value), so per record r*(exact) <= r*(release): the exact release's certified lower bound
    is at most the release's certified upper bound. Both bounds are certified (lower <= r* <=
    upper), so the only slack is the floating-point rounding of the two numbers: 1e-9 relative."""
    base = sweep.parts[0].records[0].arrays
    for part in sweep.parts[1:]:
        arr = part.records[0].arrays
        both = np.isfinite(base["radius_lower"]) & np.isfinite(arr["radius_upper"])
        assert both.sum() >= 30
        assert np.all(base["radius_lower"][both] <= arr["radius_upper"][both] * (1 + 1e-9) + 1e-12)


def test_bad_sweeps_are_refused():
    with pytest.raises(va.InvalidInputError, match="distinct"):
        va.run_release_sweep("wine", n_passive=(3,), releases=("round:2", "round:2"), methods=METHODS)
    with pytest.raises(va.InvalidInputError, match="exposure"):
        va.run_release_sweep("wine", n_passive=(3,), releases=("exact", "round:2"), methods=METHODS, exposure=False)
    with pytest.raises(va.InvalidInputError, match="release kind"):
        va.run_release_sweep("wine", n_passive=(3,), releases=("exact", "rounded:2"), methods=METHODS)


def test_cli_sweep_writes_the_table_the_plot_and_one_audit_per_release(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["audit", "--dataset", "wine", "--passive", "3", "--release", "sweep", "--no-progress", "--methods",
                 *METHODS, "--out", str(out)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("wine, d = 3, precision sweep over releases exact, round:4, round:3, round:2, round:1, label:")
    with open(out / "sweep.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["release"] for r in rows] == ["exact", "round:4", "round:3", "round:2", "round:1", "label"]
    for r in rows:
        sub = out / f"release-{r['release'].replace(':', '-')}"
        assert (sub / "report.json").is_file() and (sub / "report.html").is_file()
    assert (out / "sweep_wine_d3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert va.verify_report(out)


def test_release_with_other_threat_models_is_refused_not_ignored(capsys):
    assert main(["audit", "--dataset", "wine", "--passive", "3", "--attacks", "whitebox", "blackbox", "--release",
                 "round:2", "--no-progress"]) == 2
    assert "--release applies to the white-box audit" in capsys.readouterr().err


def test_the_sweep_carries_each_audits_intervals(sweep, tmp_path):
    """Every row's interval is its audit's (combined over the two seeds), in the table, the JSON,
    the CSV and the HTML; the verdict calls a release quiet when its leakage interval reaches 0."""
    from vflattack.report import render

    rep = render(sweep)
    rows = rep.summary()
    for row, part in zip(rows, sweep.parts):
        g = part.records[0].intervals["group"]
        assert [row["leakage_lo"], row["leakage_hi"]] == g["leakage"]
        assert row["leakage_lo"] <= row["leakage"] <= row["leakage_hi"]
    assert "95% interval" in rep.table()
    rep.write_into(tmp_path)
    with open(tmp_path / "sweep.csv") as fh:
        got = list(csv.DictReader(fh))
    assert [float(r["leakage_lo"]) for r in got] == [r["leakage_lo"] for r in rows]
    assert "leakage_lo" in (tmp_path / "report.html").read_text()
    fake = [dict(rows[0], release="a", leakage=0.01, prior_mse=1.0, leakage_share=0.01, leakage_lo=-0.001),
            dict(rows[0], release="b", leakage=0.01, prior_mse=1.0, leakage_share=0.01, leakage_lo=0.002)]
    assert "a does not leak measurably" in rep.headline(fake)
