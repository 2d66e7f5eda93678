"""The CLI checks its numbers and its --out before any work, and writes reports atomically."""

from __future__ import annotations

import json
import pathlib

import pytest

import vflattack.cli as cli
from vflattack import verify_report
from vflattack.report import MANIFEST

FAST = ["audit", "--dataset", "wine", "--passive", "3", "--methods", "half", "half_star", "--no-progress"]


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the CLI starts computing."""
    def forbidden(*a, **k):
        raise AssertionError("the computation started before the arguments were checked")
    monkeypatch.setattr(cli, "run_audit", forbidden)
    import vflattack.audit.known_input as ex
    monkeypatch.setattr(ex, "known_input_attack", forbidden)


@pytest.mark.parametrize("flag,value", [("--predictions", "0"), ("--predictions", "-5"), ("--predictions", "2.5"),
                                        ("--passive", "0"), ("--observed", "0"), ("--lam", "-1"),
                                        ("--epsilons", "0"), ("--epsilons", "nan")])
def test_audit_numbers_are_checked(no_work, capsys, flag, value):
    with pytest.raises(SystemExit) as exc:
        cli.main(FAST + [flag, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and value in err


@pytest.mark.parametrize("argv", [["sweep", "--step", "0"], ["sweep", "--max-passive", "-1"],
                                  ["known-input", "--trials", "0"], ["known-input", "--epsilon", "0"],
                                  ["known-input", "--known", "-2"], ["known-input", "--records", "0"]])
def test_other_numbers_are_checked(no_work, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2 and f"argument {argv[1]}" in capsys.readouterr().err


def test_known_larger_than_the_data_is_an_error_not_a_traceback(capsys):
    assert cli.main(["known-input", "--dataset", "wine", "--known", "100000", "--trials", "1"]) == 2
    assert "known must be at most the number of records (178); got 100000" in capsys.readouterr().err


def test_bad_out_fails_before_any_work(no_work, tmp_path, capsys):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    full = tmp_path / "mine"
    full.mkdir()
    (full / "notes.txt").write_text("my notes")
    cases = {"": "must name a directory", str(a_file): "is a file",
             str(full): "non-empty directory that is not a vflattack report",
             "/proc/vflattack-report": "is not writable"}
    for value, message in cases.items():
        assert cli.main(FAST + ["--out", value]) == 2, value
        assert message in capsys.readouterr().err, value
        assert cli.main(["known-input", "--out", value]) == 2, value
        assert message in capsys.readouterr().err, value
    assert (full / "notes.txt").read_text() == "my notes"


def _siblings(path: pathlib.Path):
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def test_report_is_published_whole_with_a_manifest_and_replaces_a_previous_report(tmp_path, capsys):
    out = tmp_path / "report"
    assert cli.main(FAST + ["--out", str(out)]) == 0
    assert verify_report(out)
    manifest = json.loads((out / MANIFEST).read_text())
    names = {f["path"] for f in manifest["files"]}
    assert {"report.json", "mse.csv", "mse_vs_passive_wine.png", "mse_per_feature_wine.png"} <= names
    assert _siblings(out) == []       # no temporary directory left beside it
    first = (out / "report.json").read_text()
    assert cli.main(FAST + ["--seeds", "1", "--out", str(out)]) == 0   # a previous report is replaced
    assert verify_report(out) and (out / "report.json").read_text() != first
    assert _siblings(out) == []
    (out / "report.json").write_text("{}")                             # tampering is detected
    assert not verify_report(out)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, OSError])
def test_interrupted_write_leaves_no_report_that_looks_complete(tmp_path, monkeypatch, interrupt):
    import vflattack.report.plots as plots

    out = tmp_path / "report"
    assert cli.main(FAST + ["--out", str(out)]) == 0          # a previous, complete report
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def boom(*a, **k):
        raise interrupt("interrupted while writing the plots")
    monkeypatch.setattr(plots, "plot_mse_per_feature", boom)
    with pytest.raises(interrupt):
        cli.main(FAST + ["--seeds", "3", "--out", str(out)])
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before   # the previous report, untouched
    assert verify_report(out) and _siblings(out) == []
    fresh = tmp_path / "fresh"
    with pytest.raises(interrupt):
        cli.main(FAST + ["--out", str(fresh)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_sweep_runs_offline_by_default(capsys, monkeypatch, tmp_path):
    """The default datasets are the ones bundled with scikit-learn: nothing is fetched;
    'papers' names the papers' five UCI datasets."""
    from vflattack import datasets

    def no_download(*args, **kwargs):
        raise AssertionError("sweep tried to download a dataset")

    monkeypatch.setattr(datasets, "fetch", no_download)
    monkeypatch.setenv("VFLATTACK_DATA", str(tmp_path / "empty"))
    assert cli.main(["sweep", "--max-passive", "1", "--predictions", "20", "--methods", "half_star",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in datasets.SKLEARN)
    with pytest.raises(AssertionError, match="tried to download"):   # the UCI files are not there
        cli.main(["sweep", "--datasets", "papers", "--max-passive", "1", "--no-progress"])
