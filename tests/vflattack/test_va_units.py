"""The passive features' box in the data's units (vflattack.units): bounds from a JSON file or
observed, the change of coordinates to the unit box, and the log audit with --bounds."""

import json

import numpy as np
import pandas as pd
import pytest

import vflattack as va
from vflattack._validate import InvalidInputError
from vflattack.units import FeatureBounds, ObservedBoundsWarning


def _scenario(n=60, seed=0):
    F, labels = va.datasets.load("wine")             # min-max scaled to [0, 1]
    rng = np.random.default_rng(seed)
    idx = rng.choice(F.shape[0], n, replace=False)
    Y, X = F[:, :10], F[:, 10:]
    m = va.train_vfl_model(Y, X, labels)
    # the same data in other units: x_z = a + s * x_mm (z-scoring is such a map), and the model
    # that publishes the same scores on them: W_z = W / s, b_z = b - W (a / s)
    a, s = np.array([-1.7, 0.3, -2.2]), np.array([3.9, 0.05, 250.0])
    mz = va.VFLModel(m.W_act, m.W_pas / s, m.b - m.W_pas @ (a / s), m.classes)
    return m, mz, Y[idx], X[idx], a, s


def test_unit_model_publishes_the_same_values():
    m, mz, Y, X, a, s = _scenario()
    Xz = a + s * X
    fb = FeatureBounds(a, a + s)
    # the scores agree to the rounding of the two parametrisations (logits of size ~10: 1e-13)
    assert np.allclose(fb.unit_model(mz).predict_proba(Y, fb.to_unit(Xz)), m.predict_proba(Y, X), rtol=0, atol=1e-12)
    assert np.allclose(fb.from_unit(fb.to_unit(Xz)), Xz, rtol=1e-15, atol=0)
    # (a + s) - a is s to an ulp of a + s
    assert np.allclose(fb.mse_in_units([1.0, 1.0, 1.0]), s ** 2, rtol=1e-13, atol=0)


def test_bounds_from_json_and_observed(tmp_path):
    m, mz, Y, X, a, s = _scenario()
    (tmp_path / "b.json").write_text(json.dumps({"lo": a.tolist(), "hi": (a + s).tolist()}))
    fb = FeatureBounds.from_json(tmp_path / "b.json")
    assert np.array_equal(fb.lo, a) and fb.source == "given"
    named = va.VFLModel(mz.W_act, mz.W_pas, mz.b, mz.classes,
                        feature_names={"active": [f"a{j}" for j in range(10)], "passive": ["p", "q", "r"]})
    (tmp_path / "n.json").write_text(json.dumps({"features": {"q": [0, 2], "p": [-1, 1], "r": [5, 6]}}))
    assert FeatureBounds.from_json(tmp_path / "n.json", named).lo.tolist() == [-1.0, 0.0, 5.0]
    (tmp_path / "bad.json").write_text(json.dumps({"features": {"q": [0, 2], "p": [-1, 1]}}))
    with pytest.raises(InvalidInputError, match=r"missing \['r'\]"):
        FeatureBounds.from_json(tmp_path / "bad.json", named)
    with pytest.raises(InvalidInputError, match="finite lo < hi"):
        FeatureBounds([0.0, 1.0], [1.0, 1.0])
    with pytest.warns(ObservedBoundsWarning, match="not a guarantee"):
        ob = FeatureBounds.observed(a + s * X, margin=0.1)
    span = (a + s * X).max(axis=0) - (a + s * X).min(axis=0)
    assert np.allclose(ob.hi - ob.lo, 1.2 * span, rtol=1e-12) and ob.source == "observed"
    with pytest.raises(InvalidInputError, match="float32 deployment"):
        fb.unit_model(va.VFLModel(np.zeros((1, 0)), np.ones((1, 3)), np.zeros(1), link="identity",
                                  precision="float32"))


def test_log_audit_in_data_units_equals_the_min_max_audit(client, tmp_path):
    """The issue's test: the audit of data in other units with bounds= equals the audit of the
    same data min-max scaled, once the MSE is mapped back (times s_j^2 per feature)."""
    m, mz, Y, X, a, s = _scenario()
    ids = np.arange(X.shape[0])
    P = m.predict_proba(Y, X)
    log = pd.DataFrame({"id": ids, **{f"y{j}": Y[:, j] for j in range(Y.shape[1])},
                        **{f"p{j}": P[:, j] for j in range(P.shape[1])}})
    log.to_parquet(tmp_path / "log.parquet", index=False)
    pd.DataFrame({"id": ids, **{f"x{j}": X[:, j] for j in range(3)}}).to_parquet(tmp_path / "mm.parquet", index=False)
    Xz = a + s * X
    pd.DataFrame({"id": ids, **{f"x{j}": Xz[:, j] for j in range(3)}}).to_parquet(tmp_path / "z.parquet", index=False)
    methods = ("ls", "exact")
    ref = va.audit_log(m, tmp_path / "log.parquet", tmp_path / "r1", passive_log=tmp_path / "mm.parquet",
                       methods=methods, client=client)
    got = va.audit_log(mz, tmp_path / "log.parquet", tmp_path / "r2", passive_log=tmp_path / "z.parquet",
                       methods=methods, client=client, bounds=FeatureBounds(a, a + s))
    for r1, r2 in zip(ref.records, got.records):
        assert r1["status"] == r2["status"]
        # the two models are the same up to the rounding of W / s * s and b + W a: 1e-9 of the unit box
        assert np.allclose(r2["mse_per_feature"], r1["mse_per_feature"], rtol=1e-6, atol=1e-12)
        assert np.allclose(r2["mse_per_feature_data_units"], np.asarray(r1["mse_per_feature"]) * s ** 2, rtol=1e-6,
                           atol=1e-12)
    assert got.config["bounds"]["lo"] == a.tolist() and "MSE, units" in got.table()
    # the interval in the data's units holds the MSE in the data's units, and with every feature
    # in [0, 1] the unit-coordinate interval scaled by the widths brackets it from both sides
    for r in got.records:
        lo, hi = r["mse_data_units_ci"]
        assert lo < r["mse_data_units"] < hi
        ulo, uhi = r["mse_ci"]
        assert lo >= ulo * np.min(s) ** 2 * (1 - 1e-9) and hi <= uhi * np.max(s) ** 2 * (1 + 1e-9)


def test_cli_bounds_observed_on_the_passive_log(client, tmp_path, capsys):
    """--bounds observed:0 on data in other units: the ranges are the passive log's own, the
    warning says they are no guarantee, and the table gives MSE in the data's units."""
    from vflattack.cli import main

    m, mz, Y, X, a, s = _scenario(n=30)
    ids = np.arange(X.shape[0])
    P = mz.predict_proba(Y, a + s * X)
    pd.DataFrame({"id": ids, **{f"y{j}": Y[:, j] for j in range(Y.shape[1])},
                  **{f"p{j}": P[:, j] for j in range(P.shape[1])}}).to_parquet(tmp_path / "log.parquet", index=False)
    Xz = a + s * X
    pd.DataFrame({"id": ids, **{f"x{j}": Xz[:, j] for j in range(3)}}).to_parquet(tmp_path / "z.parquet", index=False)
    mz.save(tmp_path / "model.json")
    argv = ["audit", "--model", str(tmp_path / "model.json"), "--log", str(tmp_path / "log.parquet"),
            "--passive-log", str(tmp_path / "z.parquet"), "--bounds", "observed:0", "--methods", "ls",
            "--scheduler", client.scheduler.address, "--out", str(tmp_path / "rep"), "--no-progress"]
    with pytest.warns(ObservedBoundsWarning):
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "MSE, units" in out and "not a guarantee" in out
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert rep["config"]["bounds"]["lo"] == pytest.approx(Xz.min(axis=0).tolist(), rel=0, abs=0)
    assert main(argv[:5] + ["--bounds", "observed", "--scheduler", client.scheduler.address, "--out",
                            str(tmp_path / "rep2"), "--no-progress"]) == 2
    assert "give --passive-log" in capsys.readouterr().err
