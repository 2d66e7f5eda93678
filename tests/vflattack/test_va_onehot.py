"""One-hot groups and binary features (VFLModel(onehot=, binary=), docs/vflattack.md "Feature
domains"): each group is one more row ``sum_{j in g} x_j = 1`` of every set, certified like the
scores' rows.

References are independent of the attack code: a closed form (the probability simplex), the
containment of the planted record in every OPTIMAL ball, and the monotonicity of the exact
minimax radius under an added valid constraint (a subset's smallest enclosing ball is no
larger), checked per row against the same attack without the groups."""

import json

import numpy as np
import pytest

import chebcenter as cc
import vflattack as va
from vflattack._validate import InvalidInputError
from vflattack.outputs import published_outputs


def _records(rng, N, numeric, groups):
    """N records: ``numeric`` uniform columns, then each one-hot group of the given size."""
    blocks = [rng.random((N, numeric))] + [np.eye(g)[rng.integers(0, g, N)] for g in groups]
    cols, start = [], numeric
    for g in groups:
        cols.append(list(range(start, start + g)))
        start += g
    return np.hstack(blocks), cols


def test_the_simplex_closed_form():
    """No information from the output (a zero row) and one group over all 3 features: the set
    is the probability simplex, whose Chebyshev center is (1/3, 1/3, 1/3) with radius
    sqrt(2/3) (its distance to a vertex e_i: (2/3)^2 + 2 (1/3)^2 = 6/9)."""
    m = va.VFLModel(np.zeros((1, 0)), np.zeros((1, 3)), np.zeros(1), link="identity", onehot=[[0, 1, 2]])
    X = np.eye(3)
    r = va.whitebox_attack(m, np.zeros((3, 1)), None, methods=("exact", "rcc1"))
    assert np.allclose(r.reconstructions["exact"], 1 / 3, atol=1e-9)
    assert np.allclose(r.radii["exact"], np.sqrt(2 / 3), rtol=1e-9)
    # rcc1 is a relaxation: its radius is a bound, at least the minimax radius
    assert np.all(r.radii["rcc1"] >= np.sqrt(2 / 3) * (1 - 1e-9))
    assert np.all(np.linalg.norm(r.reconstructions["exact"] - X, axis=1) <= r.radii["exact"] * (1 + 1e-9))


CASES = [("softmax", 1e-6), ("softmax", 1.0),   # softmax scores of logits x 1e6 saturate: refused, not a case
         ("round", 1e-6), ("round", 1.0), ("round", 1e6), ("identity", 1e-6), ("identity", 1.0), ("identity", 1e6)]


@pytest.mark.parametrize("case, scale", CASES)
def test_optimal_rows_hold_the_record_and_never_grow(case, scale):
    rng = np.random.default_rng(7)
    X, groups = _records(rng, 60, 2, [3, 3])
    d = X.shape[1]
    k = 4 if case != "identity" else 3
    W = scale * rng.standard_normal((k, d))
    link = "identity" if case == "identity" else "softmax"
    release = va.Release("round", 3) if case == "round" else None
    plain = va.VFLModel(np.zeros((k, 0)), W, np.zeros(k), link=link)
    coded = plain.with_domain(onehot=groups)
    out = {}
    for name, m in (("plain", plain), ("coded", coded)):
        published = (release.publish(m, None, X, rng=0) if release else
                     m.predict_proba(None, X) if link == "softmax" else m.outputs(None, X))
        out[name] = va.whitebox_attack(m, published, None, methods=("exact", "rcc1", "auto"), release=release)
    res = out["coded"]
    for meth in ("exact", "rcc1", "auto"):
        ok = np.array([s == cc.Status.OPTIMAL for s in res.status[meth]])
        if meth != "rcc1" or (case, scale) == ("softmax", 1.0):
            assert ok.all(), (meth, res.status_counts()[meth])   # exact and auto certify every row
        # Elsewhere rcc1 may stop INACCURATE, and only its OPTIMAL rows' contract is checked:
        # * at scale 1e-6 the log-ratios carry a relative error of ~1e-10 (probabilities near
        #   1/k, absolute error 1e-16) and a one-hot record sits on a face of the box, so its set
        #   is thin and slightly off (with right-hand sides computed exactly from X: 60 of 60);
        # * on interval rows (a release, a link) rcc1's dual solver has no fallback when it does
        #   not converge (1 row of 60 here with the groups' rows; the issue "one body per method").
        dist = np.linalg.norm(res.reconstructions[meth][ok] - X[ok], axis=1)
        # the radius is a bound (a relative slack of 1e-9: the radii are computed in floating point)
        assert np.all(dist <= res.radii[meth][ok] * (1 + 1e-9) + 1e-12), meth
    both = np.array([a == cc.Status.OPTIMAL and b == cc.Status.OPTIMAL
                     for a, b in zip(res.status["exact"], out["plain"].status["exact"])])
    # a subset's minimax radius is at most the set's (same slack)
    assert np.all(res.radii["exact"][both] <= out["plain"].radii["exact"][both] * (1 + 1e-9) + 1e-12)
    assert res.mse(X)["exact"] < out["plain"].mse(X)["exact"]


def test_a_free_direction_closed_by_a_group_float32_embeddings():
    """A Flower-style client: 5 features (2 numeric, a one-hot group of 3) behind a 4-dim float32
    embedding keeps one free direction; the group's row closes it."""
    rng = np.random.default_rng(0)
    X, groups = _records(rng, 200, 2, [3])
    W = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    m = va.VFLModel(np.zeros((4, 0)), W, b, link="identity", precision="float32")
    E = published_outputs(m, None, X)
    plain = va.whitebox_attack(m, E, None, methods=("exact",))
    coded_model = m.with_domain(onehot=groups)
    coded = va.whitebox_attack(coded_model, E, None, methods=("exact",))
    assert plain.mse(X)["exact"] > 1e-3
    # rank 5 with the group's row: the record is pinned to float32's rounding of the embeddings
    assert coded.mse(X)["exact"] < 1e-9 and np.nanmax(coded.radii["exact"]) < 1e-4
    read = coded_model.binary_reading(coded.reconstructions["exact"])
    assert np.array_equal(read[:, 2:], X[:, 2:])
    radii = va.party_radii(coded_model, E, None)["passive"]
    assert np.all(np.linalg.norm(coded.reconstructions["exact"] - X, axis=1) <= radii * (1 + 1e-9))


def test_the_encoding_is_checked_and_travels(tmp_path):
    W = np.ones((2, 5))
    names = {"active": [], "passive": ["age", "red", "green", "blue", "smoker"]}
    m = va.VFLModel(np.zeros((2, 0)), W, np.zeros(2), feature_names=names, onehot=[["red", "green", "blue"]],
                    binary=["smoker"])
    assert m.onehot == ((1, 2, 3),) and m.binary == (4,) and m.binary_columns == (1, 2, 3, 4)
    m.save(tmp_path / "m.json")
    back = va.VFLModel.load(tmp_path / "m.json")
    assert back.onehot == m.onehot and back.binary == m.binary
    assert json.loads((tmp_path / "m.json").read_text())["onehot"] == [[1, 2, 3]]
    for bad, says in ([[1]], "two or more"), ([[1, 2], [2, 3]], "disjoint.*\\[2\\]"), ([[1, 9]], "not a passive column"), \
                     ([["red", "purple"]], "'purple' is not a passive feature's name"), ("red,green", "list of groups"):
        with pytest.raises(InvalidInputError, match=says):
            va.VFLModel(np.zeros((2, 0)), W, np.zeros(2), feature_names=names, onehot=bad)
    # colluding: a group wholly kept stays; one that lost a member to the colluders is dropped
    m2 = va.VFLModel(np.zeros((2, 0)), W, np.zeros(2), parties=[[0, 1], [2, 3, 4]], onehot=[[0, 1], [2, 3]])
    small, _, _ = m2.colluding(["P1"])
    assert small.onehot == ((0, 1),)
    m3 = va.VFLModel(np.zeros((2, 0)), W, np.zeros(2), parties=[[0, 2], [1, 3, 4]], onehot=[[0, 1], [3, 4]])
    small3 = m3.colluding(["P1"])[0]
    assert small3.onehot == ((1, 2),)   # kept columns 1, 3, 4 are renumbered 0, 1, 2
    assert small3.binary == (0,)        # the dropped group's kept member (column 1) is still 0 or 1
    assert va.VFLModel(np.zeros((2, 0)), W, np.zeros(2), onehot=np.array([[0, 1], [2, 3]])).onehot == ((0, 1), (2, 3))


def test_bounds_keep_the_encoding_in_unit_coordinates():
    from vflattack.units import FeatureBounds

    m = va.VFLModel(np.zeros((1, 0)), np.ones((1, 4)), np.zeros(1), link="identity", onehot=[[1, 2, 3]])
    fb = FeatureBounds([-2.0, -0.05, -0.05, -0.05], [8.0, 1.05, 1.05, 1.05], "observed", 0.05)
    with pytest.raises(InvalidInputError, match="one-hot and binary columns.*\\[0, 1\\]"):
        fb.unit_model(m)
    unit = fb.with_binary(m.binary_columns).unit_model(m)
    assert unit.onehot == m.onehot and np.allclose(unit.W_pas, [[10.0, 1.0, 1.0, 1.0]])


def test_cli_log_audit_with_onehot_groups(tmp_path, capsys):
    from vflattack.cli import main

    rng = np.random.default_rng(3)
    X, groups = _records(rng, 80, 2, [3])
    W = rng.standard_normal((4, 5))
    m = va.VFLModel(np.zeros((4, 0)), W, np.zeros(4), link="identity")
    m.save(tmp_path / "model.json")
    preds, passive = va.audit.write_log(m, np.zeros((80, 0)), X, tmp_path / "logs")
    code = main(["audit", "--model", str(tmp_path / "model.json"), "--log", str(preds), "--passive-log",
                 str(passive), "--onehot", "2,3,4", "--methods", "exact", "--workers", "1", "--no-progress",
                 "--out", str(tmp_path / "rep")])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "1 one-hot group(s)" in text and "exact 0/1" in text
    rec = json.loads((tmp_path / "rep" / "report.json").read_text())
    exact = next(r for r in rec["records"] if r["method"] == "exact")
    assert exact["binary_exact_share"] == 1.0 and exact["mse"] < 1e-12
    assert main(["audit", "--onehot", "2,3", "--no-progress"]) == 2
    assert "go with --model and --log" in capsys.readouterr().err


def test_release_design_counts_the_encoding_the_adversary_knows():
    """Without the groups, round:3 seems to keep every record's radius above 0.1 sqrt(d); an
    adversary who knows the encoding pins some records closer, which the exact attack with the
    groups confirms, and the design then chooses a coarser release."""
    rng = np.random.default_rng(2)
    X, groups = _records(rng, 40, 2, [3, 3])
    W = rng.standard_normal((3, 8))
    plain = va.VFLModel(np.zeros((3, 0)), W, np.zeros(3))
    coded = plain.with_domain(onehot=groups)
    kw = dict(target="radius=0.1", kinds=("round",), levels=(1, 2, 3))
    assert va.design_release(plain, None, X, **kw).release.spec == "round:3"
    chosen = va.design_release(coded, None, X, **kw).release
    assert chosen.spec in ("round:2", "round:1")
    rel = va.Release("round", 3)
    res = va.whitebox_attack(coded, rel.publish(coded, None, X, rng=0), None, methods=("exact",), release=rel)
    ok = np.array([s == cc.Status.OPTIMAL for s in res.status["exact"]])
    assert np.min(res.radii["exact"][ok]) / np.sqrt(8) < 0.1


def test_cli_flags_add_to_a_saved_encoding():
    from vflattack.cli import _with_encoding

    m = va.VFLModel(np.zeros((1, 0)), np.ones((1, 6)), np.zeros(1), link="identity", onehot=[[0, 1, 2]], binary=[4])
    got = _with_encoding(m, None, "3")
    assert got.onehot == ((0, 1, 2),) and got.binary == (3, 4)
    got = _with_encoding(m, ["3,5"], None)
    assert got.onehot == ((0, 1, 2), (3, 5)) and got.binary == (4,)
    with pytest.raises(InvalidInputError, match="disjoint"):
        _with_encoding(m, ["2,3"], None)


def test_equilibrated_group_rows_keep_rcc1_better_conditioned(monkeypatch):
    """Below score rows of norm 1e-6, the groups' rows at the scores' scale (domain_scale) leave
    rcc1 fewer INACCURATE rows than unit rows do (18 against 27 of 360 when written); the set is
    the same, so the OPTIMAL rows keep the record either way."""
    def inaccurate():
        bad = 0
        for seed in range(6):
            rng = np.random.default_rng(seed)
            X = np.hstack([rng.random((60, 2)), np.eye(3)[rng.integers(0, 3, 60)], np.eye(3)[rng.integers(0, 3, 60)]])
            m = va.VFLModel(np.zeros((4, 0)), 1e-6 * rng.standard_normal((4, 8)), np.zeros(4))
            m = m.with_domain(onehot=[[2, 3, 4], [5, 6, 7]])
            r = va.whitebox_attack(m, m.predict_proba(None, X), None, methods=("rcc1",))
            ok = np.array([s == cc.Status.OPTIMAL for s in r.status["rcc1"]])
            assert np.all(np.linalg.norm(r.reconstructions["rcc1"][ok] - X[ok], axis=1)
                          <= r.radii["rcc1"][ok] * (1 + 1e-9) + 1e-12)
            bad += int((~ok).sum())
        return bad

    scaled = inaccurate()
    monkeypatch.setattr(va.VFLModel, "domain_scale", lambda self, bounded: 1.0)
    assert scaled < inaccurate()
