"""FATE 2.x CoordinatedLR exports and prediction frames (vflattack.importers.fate), and the
framework log layouts (vflattack.importers.logs).

FATE cannot run here; the fixtures follow its source (tests/vflattack/fixtures/fate/README.md:
FederatedAI/FATE 5a06d9e, guest.py / host.py get_model, predict_tools.py; FATE-Flow v2.2.0 for
the CSV download). The reference logits in records.json were computed by the fixture maker with
FATE's formula, and the frames' scores with ``1 / (1 + exp(-z))``, not by this project."""

import json
import pathlib
import shutil

import numpy as np
import pandas as pd
import pytest

import vflattack as va
from vflattack._validate import InvalidInputError
from vflattack.cli import main
from vflattack.importers import read_model
from vflattack.importers.fate import SuspectInterceptWarning, from_fate, read_fate_predictions
from vflattack.importers.logs import canonical_logs

HERE = pathlib.Path(__file__).parent / "fixtures" / "fate"
RECORDS = json.loads((HERE / "records.json").read_text())["records"]
Y = np.array([r["guest"] for r in RECORDS])
X = np.array([r["host"] for r in RECORDS])


@pytest.mark.parametrize("kind, key, k", [("binary", "z_binary", 1), ("ovr3", "z_ovr", 3)])
def test_guest_and_host_exports_round_trip(kind, key, k):
    m = from_fate(HERE / f"{kind}_guest_model.json", HERE / f"{kind}_host_model.json")
    assert m.link == "ovr" and m.n_classes == k and m.party_names == ("host",) and m.precision == "float64"
    assert m.classes.tolist() == ([0, 1] if k == 1 else [0, 1, 2])
    # FATE's example names x0.. on both sides: the host's are prefixed
    assert m.feature_names == {"active": ("x0", "x1"), "passive": ("host.x0", "host.x1", "host.x2")}
    want = np.array([r["expected"][key] for r in RECORDS]).reshape(len(RECORDS), k)
    # dyadic weights and records: the logits are exact in double
    assert np.array_equal(m.logits(Y, X), want)
    # the frame's scores (FATE's sigmoid) are what the model publishes, to a few ulps
    P = read_fate_predictions(HERE / f"{kind}_test_output_data.csv", m)
    assert P["id"].tolist() == ["101", "102", "103", "104"]
    assert np.allclose(P[[f"p{j}" for j in range(k)]].to_numpy(), m.outputs(Y, X), rtol=0, atol=4e-16)
    assert read_model(f"fate:{HERE / f'{kind}_guest_model.json'},{HERE / f'{kind}_host_model.json'}").to_dict() \
        == m.to_dict()


def test_ovr_is_k_equations_not_a_softmax():
    """An OvR export gives k independent sigmoids: its scores do not sum to 1, and the model
    has k rows, one equation each (a softmax reading would keep k - 1 differences)."""
    m = from_fate(HERE / "ovr3_guest_model.json", HERE / "ovr3_host_model.json")
    P = m.outputs(Y, X)
    assert not np.allclose(P.sum(axis=1), 1.0)
    assert m.W_pas.shape == (3, 3) and np.linalg.matrix_rank(m.W_pas) == 3


def _edit(src, dst, fn):
    doc = json.loads(pathlib.Path(src).read_text())
    fn(doc)
    pathlib.Path(dst).write_text(json.dumps(doc))
    return dst


def test_wrapped_exports_and_several_hosts(tmp_path):
    g, h = HERE / "binary_guest_model.json", HERE / "binary_host_model.json"
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"code": 0, "message": "success",
                                   "data": {"output_model": json.loads(g.read_text())}}))
    h2 = _edit(h, tmp_path / "h2.json", lambda d: d["data"]["estimator"].update(
        param={"coef_": [[2.0]], "intercept_": None, "dtype": "float64"}, header=["z"]))
    m = from_fate(wrapped, [h, h2])
    assert m.party_names == ("host0", "host1") and [list(p) for p in m.parties] == [[0, 1, 2], [3]]
    assert m.feature_names["passive"] == ("host0.x0", "host0.x1", "host0.x2", "host1.z")
    assert np.array_equal(m.logits(Y, np.hstack([X, np.ones((4, 1))]))[:, 0],
                          np.array([r["expected"]["z_binary"] for r in RECORDS]) + 2.0)


def test_malformed_exports_name_what_is_wrong(tmp_path):
    g, h = HERE / "binary_guest_model.json", HERE / "binary_host_model.json"
    with pytest.raises(InvalidInputError, match="not a guest's export.*host's file"):
        from_fate(h, g)
    with pytest.raises(InvalidInputError, match="at least one host"):
        from_fate(g, [])
    with pytest.raises(InvalidInputError, match="fate:GUEST,HOST"):
        read_model(f"fate:{g}")
    with pytest.raises(InvalidInputError, match="is a guest's export"):
        from_fate(g, g)
    with pytest.raises(InvalidInputError, match="not halves of one model"):
        from_fate(g, HERE / "ovr3_host_model.json")
    bad = _edit(h, tmp_path / "hi.json", lambda d: d["data"]["estimator"]["param"].update(intercept_=[0.5]))
    with pytest.raises(InvalidInputError, match="host's CoordinatedLR never fits one"):
        from_fate(g, bad)
    bad = _edit(g, tmp_path / "hd.json", lambda d: d["data"]["estimator"].update(header=["x0"]))
    with pytest.raises(InvalidInputError, match="header must name each of its 2 weights"):
        from_fate(bad, h)
    (tmp_path / "cut.json").write_text(g.read_text()[:200])
    with pytest.raises(InvalidInputError, match="not a readable JSON"):
        from_fate(tmp_path / "cut.json", h)
    (tmp_path / "other.json").write_text(json.dumps({"weights": [1, 2]}))
    with pytest.raises(InvalidInputError, match="not a CoordinatedLR export"):
        from_fate(tmp_path / "other.json", h)


def test_an_intercept_equal_to_the_last_weight_is_flagged(tmp_path):
    """The July 2023 development builds exported the last weight as the intercept."""
    g = _edit(HERE / "binary_guest_model.json", tmp_path / "g.json",
              lambda d: d["data"]["estimator"]["param"].update(intercept_=[-0.25]))
    with pytest.warns(SuspectInterceptWarning, match="equals its last weight"):
        from_fate(g, HERE / "binary_host_model.json")


def _tables(tmp_path, guest_names=("x0", "x1")):
    pd.DataFrame({"id": [r["id"] for r in RECORDS], **{n: Y[:, j] for j, n in enumerate(guest_names)}}) \
        .to_csv(tmp_path / "guest.csv", index=False)
    pd.DataFrame({"id": [r["id"] for r in RECORDS], **{f"x{j}": X[:, j] for j in range(3)}}) \
        .to_csv(tmp_path / "host.csv", index=False)


def test_fate_logs_map_onto_the_audits_columns(tmp_path):
    _tables(tmp_path)
    m = from_fate(HERE / "ovr3_guest_model.json", HERE / "ovr3_host_model.json")
    log, passive = canonical_logs(m, f"fate:{HERE / 'ovr3_test_output_data.csv'},{tmp_path / 'guest.csv'}",
                                  f"tables:{tmp_path / 'host.csv'}", tmp_path)
    L, Pv = pd.read_parquet(log), pd.read_parquet(passive)
    assert L.columns.tolist() == ["id", "y0", "y1", "p0", "p1", "p2"]
    assert np.array_equal(L[["y0", "y1"]].to_numpy(), Y) and np.array_equal(Pv[["x0", "x1", "x2"]].to_numpy(), X)
    assert np.allclose(L[["p0", "p1", "p2"]].to_numpy(), m.outputs(Y, X), rtol=0, atol=4e-16)
    # the log audit's own reader takes the converted files
    Yr, Pr, Xr = va.audit.read_log(m, log, passive_log=passive)
    assert np.array_equal(Yr, Y) and np.array_equal(Xr, X)


def test_log_columns_that_do_not_match_the_model_are_named(tmp_path):
    _tables(tmp_path, guest_names=("age", "income"))
    m = from_fate(HERE / "binary_guest_model.json", HERE / "binary_host_model.json")
    with pytest.raises(InvalidInputError, match=r"lacks the model's active feature columns \['x0', 'x1'\]"):
        canonical_logs(m, f"fate:{HERE / 'binary_test_output_data.csv'},{tmp_path / 'guest.csv'}", None, tmp_path)
    _tables(tmp_path)
    with pytest.raises(InvalidInputError, match="one table per passive party"):
        canonical_logs(m, f"fate:{HERE / 'binary_test_output_data.csv'},{tmp_path / 'guest.csv'}",
                       f"tables:{tmp_path / 'host.csv'},{tmp_path / 'host.csv'}", tmp_path)
    short = pd.read_csv(tmp_path / "guest.csv").iloc[:2]
    short.to_csv(tmp_path / "guest2.csv", index=False)
    with pytest.raises(InvalidInputError, match="2 of 4 predictions .* have no row"):
        canonical_logs(m, f"fate:{HERE / 'binary_test_output_data.csv'},{tmp_path / 'guest2.csv'}", None, tmp_path)
    pd.read_csv(HERE / "binary_test_output_data.csv").drop(columns="predict_detail").to_csv(tmp_path / "p.csv",
                                                                                            index=False)
    with pytest.raises(InvalidInputError, match=r"lacks \['predict_detail'\]"):
        canonical_logs(m, f"fate:{tmp_path / 'p.csv'},{tmp_path / 'guest.csv'}", None, tmp_path)


def test_cli_audits_a_fate_deployment_from_its_files(tmp_path, capsys):
    """vflattack audit --model fate:... --log fate:... --passive-log tables:..., end to end, on
    records inside the unit box (the audit's default box): a frame written by FATE's formula."""
    pytest.importorskip("distributed")
    rng = np.random.default_rng(0)
    n = 30
    Yn, Xn = rng.random((n, 2)), rng.random((n, 3))
    m = from_fate(HERE / "ovr3_guest_model.json", HERE / "ovr3_host_model.json")
    z = Yn @ m.W_act.T + Xn @ m.W_pas.T + m.b
    s = 1.0 / (1.0 + np.exp(-z))
    ids = [str(1000 + i) for i in range(n)]
    detail = ['"' + json.dumps({str(j): float(v[j]) for j in range(3)}).replace('"', "'") + '"' for v in s]
    lines = ["extend_sid,id,label,predict_score,predict_result,predict_detail,type"]
    lines += [f"sid{i},{ids[i]},0,{s[i].max()!r},{int(s[i].argmax())},{detail[i]},test_set" for i in range(n)]
    (tmp_path / "pred.csv").write_text("\n".join(lines) + "\n")
    pd.DataFrame({"id": ids, "x0": Yn[:, 0], "x1": Yn[:, 1]}).to_csv(tmp_path / "guest.csv", index=False)
    pd.DataFrame({"id": ids, **{f"x{j}": Xn[:, j] for j in range(3)}}).to_csv(tmp_path / "host.csv", index=False)
    for name in ("ovr3_guest_model.json", "ovr3_host_model.json"):
        shutil.copy(HERE / name, tmp_path / name)
    out = tmp_path / "report"
    rc = main(["audit", "--model", f"fate:{tmp_path / 'ovr3_guest_model.json'},{tmp_path / 'ovr3_host_model.json'}",
                      "--log", f"fate:{tmp_path / 'pred.csv'},{tmp_path / 'guest.csv'}",
                      "--passive-log", f"tables:{tmp_path / 'host.csv'}", "--out", str(out), "--workers", "1",
                      "--methods", "ls", "exact", "--no-progress"])
    assert rc == 0, capsys.readouterr()
    rep = json.loads((out / "report.json").read_text())
    assert rep["config"]["log"].startswith("fate:") and rep["config"]["model"].startswith("fate:")
    exact = next(r for r in rep["records"] if r["method"] == "exact")
    # 3 independent sigmoids on 3 host features: every record is recovered (rank 3 = d)
    assert exact["rows_scored"] == n and exact["mse"] < 1e-12


def test_repeated_ids_and_a_plain_log_beside_converted_tables(tmp_path):
    """Review findings: a repeated id is an error naming the file; a plain log beside a converted
    passive table gets text ids too, so the join works."""
    _tables(tmp_path)
    m = from_fate(HERE / "binary_guest_model.json", HERE / "binary_host_model.json")
    host = pd.read_csv(tmp_path / "host.csv")
    pd.concat([host, host.iloc[:1]]).to_csv(tmp_path / "dup.csv", index=False)
    with pytest.raises(InvalidInputError, match="repeated id"):
        canonical_logs(m, f"fate:{HERE / 'binary_test_output_data.csv'},{tmp_path / 'guest.csv'}",
                       f"tables:{tmp_path / 'dup.csv'}", tmp_path)
    P = m.outputs(Y, X)
    pd.DataFrame({"id": [int(r["id"]) for r in RECORDS], "y0": Y[:, 0], "y1": Y[:, 1], "p0": P[:, 0]}).to_csv(
        tmp_path / "canon.csv", index=False)
    log, passive = canonical_logs(m, tmp_path / "canon.csv", f"tables:{tmp_path / 'host.csv'}", tmp_path)
    Yr, _, Xr = va.audit.read_log(m, log, passive_log=passive)
    assert np.array_equal(Yr, Y) and np.array_equal(Xr, X)
