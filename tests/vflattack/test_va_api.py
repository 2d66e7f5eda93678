"""The typed audit: va.audit(va.AuditConfig(...)), and the keyword-only audit functions."""

from __future__ import annotations

import numpy as np
import pytest

import vflattack as va
from vflattack.audit import AuditRecord, SweepRecord

METHODS = ("half_star", "rcc2", "mean")


def test_audit_returns_typed_records_and_matches_run_audit():
    cfg = va.AuditConfig(dataset="wine", n_passive=(3,), methods=METHODS, seeds=(0, 1))
    res = va.audit(cfg)
    assert isinstance(res, va.AuditResult) and res.kind == "audit"
    assert [type(r) for r in res.records] == [AuditRecord, AuditRecord]
    ref = va.run_audit("wine", n_passive=(3,), methods=METHODS, seeds=(0, 1))
    for a, b in zip(res.records, ref.records):
        assert a.mse == pytest.approx(b.mse, rel=0, abs=0)


def test_several_releases_are_the_sweep_and_out_writes_the_report(tmp_path):
    cfg = va.AuditConfig(dataset="wine", n_passive=3, releases=("exact", "round:1"), methods=METHODS,
                         out=tmp_path / "rep")
    res = va.audit(cfg)
    assert res.kind == "release_sweep" and all(isinstance(r, SweepRecord) for r in res.records)
    assert [r.release for r in res.records] == ["exact", "round:1"]
    assert va.verify_report(tmp_path / "rep") and (tmp_path / "rep" / "release-round-1" / "report.html").exists()


def test_config_is_checked_and_normalised():
    cfg = va.AuditConfig(n_passive=4, releases="round:2", methods="half_star", seeds=3)
    assert cfg.n_passive == (4,) and cfg.methods == ("half_star",) and cfg.seeds == (3,)
    assert cfg.releases == (va.Release("round", 2),)
    with pytest.raises(va.InvalidInputError, match="release kind"):
        va.AuditConfig(releases=("rounded:2",))
    with pytest.raises(va.InvalidInputError, match="at least one release"):
        va.AuditConfig(releases=())
    with pytest.raises(va.InvalidInputError, match="config must be a vflattack.AuditConfig, ThreatConfig"):
        va.audit({"dataset": "wine"})


def test_the_audit_package_is_still_a_package():
    assert va.audit.run_audit is va.run_audit and va.audit.build_scenario is not None
    import vflattack.audit.design  # noqa: F401  (a submodule import keeps it callable)

    assert callable(va.audit)


def test_positional_arguments_after_the_dataset_warn_for_one_release():
    with pytest.warns(DeprecationWarning, match="pass n_passive, methods by name"):
        old = va.run_audit("wine", (3,), METHODS)
    new = va.run_audit("wine", n_passive=(3,), methods=METHODS)
    assert old.records[0].mse == new.records[0].mse
    with pytest.raises(TypeError, match="multiple values"):
        va.run_audit("wine", (3,), n_passive=(3,))
    with pytest.warns(DeprecationWarning):
        va.run_threat_audit("wine", 3, (0,), n_observed=5, blackbox=False)
    assert np.isfinite(new.records[0].mse["half_star"])


def test_the_log_audit_left_the_report_layer(tmp_path):
    pytest.importorskip("dask")
    import vflattack.api
    import vflattack.report

    assert va.audit_log is vflattack.api.audit_log
    rng = np.random.default_rng(0)
    model = va.VFLModel(rng.standard_normal((3, 1)), rng.standard_normal((3, 2)), np.zeros(3))
    preds, _ = va.audit.write_log(model, rng.random((10, 1)), rng.random((10, 2)), tmp_path / "logs", partitions=1)
    with pytest.warns(DeprecationWarning, match="vflattack.report.audit_log is now vflattack.audit_log"):
        rep = vflattack.report.audit_log(model, preds, tmp_path / "rep", methods=("ls",))
    assert rep.records[0]["method"] == "ls"


def test_every_audit_runs_from_its_config(tmp_path):
    threat = va.audit(va.ThreatConfig(dataset="wine", n_passive=3, n_observed=10, blackbox=False,
                                      out=tmp_path / "threat"))
    assert isinstance(threat, va.AuditResult) and threat.kind == "threats" and va.verify_report(tmp_path / "threat")
    ref = va.run_threat_audit("wine", n_passive=3, n_observed=10, blackbox=False)
    assert [type(r) for r in threat.records] == [type(r) for r in ref.records]
    m = va.VFLModel(np.zeros((2, 0)), np.array([[0.0], [4.0]]), np.array([0.0, -2.0]))
    design = va.audit(va.DesignConfig(model=m, Y=None, X=np.array([[0.7], [0.2]]), target="radius=0.05",
                                      kinds=("round",), out=tmp_path / "design"))
    assert isinstance(design, va.DesignResult) and (tmp_path / "design" / "design.json").exists()
    with pytest.raises(va.InvalidInputError, match="AuditConfig, ThreatConfig, KnownInputConfig"):
        va.audit(object())


def test_the_log_audit_runs_from_its_config(tmp_path):
    pytest.importorskip("dask")
    rng = np.random.default_rng(0)
    model = va.VFLModel(rng.standard_normal((3, 1)), rng.standard_normal((3, 2)), np.zeros(3))
    preds, passive = va.audit.write_log(model, rng.random((10, 1)), rng.random((10, 2)), tmp_path / "logs",
                                        partitions=1)
    rep = va.audit(va.LogConfig(model=model, log=preds, out=tmp_path / "rep", passive_log=passive, methods=("ls",)))
    assert rep.records[0]["rows_scored"] == 10 and va.verify_report(tmp_path / "rep")
