"""The privacy report's numbers, recomputed independently from the saved arrays."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import vflattack as va
from vflattack.cli import main


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("privacy") / "report"
    argv = ["audit", "--dataset", "wine", "--passive", "3", "5", "--no-progress", "--tau", "0.2",
            "--radius-threshold", "0.15", "--methods", "half", "half_star", "rcc2", "exact", "mean", "prior",
            "gaussian", "--out", str(out)]
    assert main(argv) == 0
    return out, json.loads((out / "report.json").read_text())


def test_report_numbers_match_the_saved_arrays(report):
    out, doc = report
    assert len(doc["records"]) == 2
    for rec in doc["records"]:
        z = np.load(out / "arrays" / f"wine_d{rec['n_passive']}_seed{rec['seed']}.npz")
        X, rows = z["X"], z["rows"]
        d = X.shape[1]
        p = rec["privacy"]
        mse = {}
        for m in rec["mse"]:
            E = z[f"recon_{m}"][rows] - X[rows]
            mse[m] = float(np.mean(E ** 2))
            assert rec["mse"][m] == pytest.approx(mse[m], rel=1e-12)
            assert p["worst_case"][m] == pytest.approx(np.max(np.sqrt(np.sum(E ** 2, axis=1) / d)), rel=1e-12)
        prior_mse = float(np.mean((X[rows] - z["prior_mean"]) ** 2))
        assert p["prior_mse"] == pytest.approx(prior_mse, rel=1e-12)
        attacks = {m: v for m, v in mse.items() if m not in ("mean", "random")}
        best = min(reversed(list(attacks)), key=attacks.get)   # ties: the method listed last
        assert p["best_attack"] == best
        assert p["leakage"] == pytest.approx(prior_mse - attacks[best], rel=1e-12)
        up, low = z["radius_upper"], z["radius_lower"]
        have = np.isfinite(up)
        assert have.mean() > 0.9
        assert np.all(low[have] <= up[have] + 1e-12)
        assert p["radius"]["quantiles"]["median"] == pytest.approx(np.median(up[have]), rel=1e-12)
        assert p["radius"]["below_threshold"] == pytest.approx(np.mean(up[have] <= 0.15))
        lo, hi = z["lower"], z["upper"]
        ok = np.all(np.isfinite(lo), axis=1)
        # the truth lies in its ranges, and half the widest range bounds r* from below
        assert np.all(lo[ok] <= X[ok] + 1e-9) and np.all(X[ok] <= hi[ok] + 1e-9)
        assert np.all(0.5 * np.max(hi[ok] - lo[ok], axis=1) / np.sqrt(d) <= up[ok] + 1e-9)
        pinned = np.mean((hi[ok] - lo[ok]) <= 0.2 + 1e-12, axis=0)
        np.testing.assert_allclose(p["pinned"], pinned)
        # the exact rows: r* is the exact radius, at least the distance from exact's center to the truth
        ex = z["radius_exact"]
        dist = np.linalg.norm(z["recon_exact"] - X, axis=1) / np.sqrt(d)
        assert np.all(dist[ex] <= up[ex] + 1e-9)


def test_privacy_csv_and_plots_carry_the_same_numbers(report):
    out, doc = report
    with open(out / "privacy.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2
    for row, rec in zip(rows, doc["records"]):
        assert float(row["leakage"]) == pytest.approx(rec["privacy"]["leakage"], rel=1e-9)
        assert float(row["radius_median"]) == pytest.approx(rec["privacy"]["radius"]["quantiles"]["median"], rel=1e-9)
    with open(out / "privacy_features.csv", newline="") as fh:
        feats = list(csv.DictReader(fh))
    assert len(feats) == 3 + 5
    for name in ("radius_wine.png", "feature_ranges_wine.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_first_screen_says_whether_scores_leak_beyond_the_prior(capsys):
    assert main(["audit", "--dataset", "wine", "--passive", "4", "--no-progress", "--methods", "half_star",
                 "mean", "gaussian"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("wine, d = 4, release: exact scores (full-precision probabilities): the scores ")
    assert ("leak beyond the prior" in first) and ("%" in first or "do not" in first)


def test_prior_file_and_bad_options(tmp_path, capsys):
    F, _ = va.datasets.load("wine")
    path = tmp_path / "aux.csv"
    np.savetxt(path, F[:50], delimiter=",", header=",".join(f"c{i}" for i in range(F.shape[1])), comments="")
    assert main(["audit", "--dataset", "wine", "--passive", "3", "--no-progress", "--methods", "mean", "gaussian",
                 "--prior-file", str(path)]) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\n3,4\n")
    assert main(["audit", "--dataset", "wine", "--passive", "3", "--no-progress", "--prior-file", str(bad)]) == 2
    assert "prior_data must have shape" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["audit", "--tau", "2"])
