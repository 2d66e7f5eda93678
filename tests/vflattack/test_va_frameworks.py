"""What real VFL frameworks deploy: link functions, several passive parties, collusion.

Every certificate is checked against the planted record (a certificate the record is not
inside is the worst bug this project can have); per-party radii against brute force
(vertices by exhaustive active sets, the smallest ball by a second-order cone program in
cvxpy/Clarabel, neither of which is the code under test)."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

import chebcenter as cc
import vflattack as va
from vflattack._errors import UnreadableReleaseWarning
from vflattack.links import LINKS
from vflattack.outputs import output_bounds, published_outputs

# The certificate check: ||x - c|| <= r, with r rounded as the library rounds its radii. A
# relative 1e-9 (and 1e-12 absolute on the unit box) is far above the float64 arithmetic of
# the norm (d ulps) and far below any real miss.
REL, ABS = 1e-9, 1e-12


def _inside(res, X, method, cols=None):
    """Rows where ``method`` answered OPTIMAL: the record is within its certified radius."""
    st = res.status[method]
    ok = np.array([s == cc.Status.OPTIMAL for s in st])
    C, R = res.reconstructions[method], res.radii[method]
    Xc = X if cols is None else X[:, cols]
    err = np.linalg.norm(C[ok] - Xc[ok], axis=1)
    return ok, err <= R[ok] * (1 + REL) + ABS


def _planted(rng, k, d, d_a=2, n=30, spread=3.0):
    W_act, W_pas = rng.standard_normal((k, d_a)), spread * rng.standard_normal((k, d))
    b = rng.standard_normal(k)
    return W_act, W_pas, b, rng.random((n, d_a)), rng.random((n, d))


# -- links on the model ----------------------------------------------------------------------

def test_binary_ovr_equals_binary_softmax():
    """One sigmoid output w, beta gives the same slice as the softmax model (0, w), (0, beta):
    ln(c1 / c0) = z, so both give w^T x = z - w_act^T y - beta; the centers agree to round-off
    (the OvR rows are intervals of outward-rounding width, a few hundred ulps)."""
    rng = np.random.default_rng(0)
    W_act, W_pas, b, Y, X = _planted(rng, 1, 4)
    ovr = va.VFLModel(W_act, W_pas, b, link="ovr")
    soft = va.VFLModel(np.vstack([0 * W_act, W_act]), np.vstack([0 * W_pas, W_pas]), np.r_[0.0, b])
    np.testing.assert_allclose(ovr.outputs(Y, X)[:, 0], soft.predict_proba(Y, X)[:, 1], rtol=1e-14)
    r1 = va.whitebox_attack(ovr, ovr.outputs(Y, X), Y, methods=("exact", "ls"))
    r2 = va.whitebox_attack(soft, soft.predict_proba(Y, X), Y, methods=("exact", "ls"))
    for m in ("exact", "ls"):
        np.testing.assert_allclose(r1.reconstructions[m], r2.reconstructions[m], atol=1e-7)
    np.testing.assert_allclose(r1.radii["exact"], r2.radii["exact"], rtol=1e-6, atol=1e-9)
    assert ovr.predict(Y, X).tolist() == soft.predict(Y, X).tolist()


@pytest.mark.parametrize("k", [2, 3, 6, 10])
def test_ovr_gives_k_rows_and_certificates_hold(k):
    rng = np.random.default_rng(k)
    W_act, W_pas, b, Y, X = _planted(rng, k, 5)
    m = va.VFLModel(W_act, W_pas, b, link="ovr")
    for rel in (va.Release(), va.Release.parse("round:3"), va.Release.parse("noise:0.01")):
        pub = rel.publish(m, Y, X, rng=1)
        sysb = va.release_to_bounds(m, pub, Y, rel)
        assert sysb.A.shape == (k, 5)                      # k rows, not k - 1 differences
        Ax = X @ sysb.A.T
        assert np.all((sysb.L <= Ax) & (Ax <= sysb.U))     # the record is in its set
        res = va.whitebox_attack(m, pub, Y, methods=("exact", "rcc2"), release=rel)
        for meth in ("exact", "rcc2"):
            ok, inside = _inside(res, X, meth)
            assert ok.any() and inside.all(), (k, rel.spec, meth)


def test_ovr_scores_read_as_softmax_name_ovr():
    rng = np.random.default_rng(3)
    W_act, W_pas, b, Y, X = _planted(rng, 4, 5, n=40)
    ovr = va.VFLModel(W_act, W_pas, b, link="ovr")
    as_softmax = va.VFLModel(W_act, W_pas, b)
    with pytest.warns(UnreadableReleaseWarning, match="ovr"):
        res = va.whitebox_attack(as_softmax, ovr.outputs(Y, X), Y, methods=("ls",))
    assert "--link ovr" in res.extras["verdict"]


@pytest.mark.parametrize("name", sorted(LINKS))
def test_each_link_with_each_release_holds_the_record(name):
    """Every link composed with every release it takes: the record lies in its set and inside
    every certified radius (exact and rcc2), the weights chosen so that the logits cross the
    saturations and turning points (|z| up to about 8)."""
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    W_act, W_pas, b, Y, X = _planted(rng, 2, 3, n=12, spread=2.5)
    for precision in ("float64", "float32") if name in ("identity", "sigmoid") else ("float64",):
        m = va.VFLModel(W_act, W_pas, b, link=name, precision=precision, yhat_scale=1.0 if name in ("identity", "sigmoid") else 2.0)
        for spec in ("exact", "round:2", "noise:0.05", "sig:3", "float32"):
            rel = va.Release.parse(spec)
            pub = rel.publish(m, Y, X, rng=2)
            sysb = output_bounds(m, pub, Y, rel)
            ok = sysb.valid
            Ax = X @ m.W_pas.T
            held = (sysb.L <= Ax) & (Ax <= sysb.U)
            assert np.all(held[ok]), (name, precision, spec)
            # rows refused are only those whose value the link cannot produce (NaN outside its domain)
            assert np.all(~np.isfinite(pub[~ok]).all(axis=1) | (sysb.flags[~ok] != 0))
            if ok.any():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UnreadableReleaseWarning)
                    res = va.whitebox_attack(m, pub, Y, methods=("exact",), release=rel)
                okr, inside = _inside(res, X, "exact")
                assert inside.all(), (name, precision, spec)


def test_float32_embeddings_need_float32_precision():
    """A linear bottom model in float32 (Flower's vertical example: 4 outputs of a client with
    fewer features): its embeddings taken as exact float64 values are 4 equations in 3
    unknowns that float32 rounding made inconsistent, INFEASIBLE, and the attack says float32
    is the cause; audited at float32 precision every certificate holds."""
    rng = np.random.default_rng(11)
    W_act, W_pas, b, Y, X = _planted(rng, 4, 3, n=60, spread=1.0)
    m32 = va.VFLModel(W_act, W_pas, b, link="identity", precision="float32")
    pub = published_outputs(m32, Y, X)
    assert np.array_equal(pub.astype(np.float32).astype(float), pub)
    m64 = va.VFLModel(W_act, W_pas, b, link="identity")
    with pytest.warns(UnreadableReleaseWarning, match="float32"):
        res64 = va.whitebox_attack(m64, pub, Y, methods=("exact",))
    assert "precision='float32'" in res64.extras["verdict"]
    res32 = va.whitebox_attack(m32, pub, Y, methods=("exact", "rcc1"))
    for meth in ("exact", "rcc1"):
        ok, inside = _inside(res32, X, meth)
        assert ok.all() and inside.all()


def test_float32_sigmoid_deployment_holds_the_record():
    """A torch-style ovr deployment: float32 weights, features, logits and sigmoid, computed
    here independently of the library (numpy float32, two summation orders); audited at
    precision float32, every record lies in its set and inside every OPTIMAL radius (the
    review that found the single-rounding widening too narrow measured misses of 2e-3)."""
    f32 = np.float32
    rng = np.random.default_rng(21)
    for _ in range(6):
        W, b = 6 * rng.standard_normal((2, 3)), 6 * rng.standard_normal(2)
        X = rng.random((40, 3))
        m = va.VFLModel(np.zeros((2, 0)), W, b, link="ovr", precision="float32")
        for z in (X.astype(f32) @ W.T.astype(f32) + b.astype(f32),
                  b.astype(f32) + sum(X[:, [i]].astype(f32) * W[:, i].astype(f32) for i in range(3))):
            pub = (f32(1) / (f32(1) + np.exp(-z.astype(f32)))).astype(float)
            sysb = va.release_to_bounds(m, pub, None, va.Release())
            Ax = X @ W.T
            assert np.all((sysb.L <= Ax) & (Ax <= sysb.U))
            res = va.whitebox_attack(m, pub, None, methods=("exact",))
            ok, inside = _inside(res, X, "exact")
            assert ok.any() and inside.all()


def test_model_file_keeps_link_and_parties(tmp_path):
    m = va.VFLModel(np.ones((3, 1)), np.arange(12.0).reshape(3, 4), np.zeros(3), link="t1", parties=[[0, 3], [1, 2]],
                    party_names=["bank", "shop"], yhat_scale=2.5)
    m.save(tmp_path / "m.json")
    back = va.VFLModel.load(tmp_path / "m.json")
    assert (back.link, back.parties, back.party_names, back.yhat_scale, back.precision) == \
        ("LF_SIGMOID_T1", ((0, 3), (1, 2)), ("bank", "shop"), 2.5, "float64")
    doc = json.loads((tmp_path / "m.json").read_text())
    for key in ("link", "parties", "party_names", "yhat_scale", "precision"):
        doc.pop(key)
    doc["schema_version"] = 1                                  # a file written before links
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = va.VFLModel.load(tmp_path / "old.json")
    assert old.link == "softmax" and old.parties == ((0, 1, 2, 3),)


@pytest.mark.parametrize("kwargs, word", [
    ({"link": "nope"}, "link"), ({"parties": [[0, 1], [1, 2, 3]]}, "parties"), ({"parties": 9}, "parties"),
    ({"party_names": ["a"], "parties": 2}, "party_names"), ({"link": "ovr", "yhat_scale": 2.0}, "yhat_scale"),
    ({"precision": "float16"}, "precision"), ({"precision": "float32"}, "release 'float32'"),
    ({"precision": "float32", "link": "t1"}, "in double")])
def test_bad_model_arguments_name_themselves(kwargs, word):
    with pytest.raises(va.InvalidInputError, match=word):
        va.VFLModel(np.zeros((2, 1)), np.ones((2, 4)), np.zeros(2), **kwargs)


def test_releases_that_read_softmax_pairs_are_refused_for_links():
    m = va.VFLModel(np.zeros((2, 0)), np.ones((2, 3)), np.zeros(2), link="ovr")
    with pytest.raises(va.InvalidInputError, match="release 'label' reads softmax"):
        va.release_to_bounds(m, np.array([0, 1]), None, va.Release("label"))


# -- several passive parties -----------------------------------------------------------------

def _brute_vertices(A, L, U, d):
    """Vertices of {x in [0,1]^d : L <= A x <= U} by every choice of d tight constraints."""
    rows, rhs = [], []
    for i in range(d):
        e = np.eye(d)[i]
        rows += [e, e]
        rhs += [0.0, 1.0]
    for j in range(A.shape[0]):
        for v in (L[j], U[j]):
            if np.isfinite(v):
                rows.append(A[j])
                rhs.append(v)
    rows, rhs = np.array(rows), np.array(rhs)
    out = []
    for idx in itertools.combinations(range(len(rows)), d):
        M = rows[list(idx)]
        if abs(np.linalg.det(M)) < 1e-10:
            continue
        x = np.linalg.solve(M, rhs[list(idx)])
        Ax = A @ x
        if np.all(x >= -1e-9) and np.all(x <= 1 + 1e-9) and np.all(Ax >= L - 1e-9) and np.all(Ax <= U + 1e-9):
            out.append(x)
    return np.array(out)


def _meb_radius(P):
    """The smallest enclosing ball's radius by a second-order cone program (cvxpy, Clarabel)."""
    import cvxpy as cp

    c, t = cp.Variable(P.shape[1]), cp.Variable()
    cp.Problem(cp.Minimize(t), [cp.norm(P[i] - c) <= t for i in range(P.shape[0])]).solve(solver="CLARABEL")
    return float(t.value)


def test_party_radius_matches_brute_force_and_theory():
    """P = 3 parties on d = 5: each party's certified radius (chebcenter's of=) against the
    brute-force projected vertices' smallest ball (Clarabel's tolerance ~1e-8 on unit data: 1e-6),
    and the bounds of docs/theory.md §13: r_p <= r(S) <= sqrt(sum r_p^2)."""
    rng = np.random.default_rng(5)
    W_act, W_pas, b, Y, X = _planted(rng, 2, 5, n=4, spread=1.5)
    m = va.VFLModel(W_act, W_pas, b, link="ovr", parties=[[0, 1], [2], [3, 4]])
    rel = va.Release.parse("round:2")
    pub = rel.publish(m, Y, X)
    sysb = va.release_to_bounds(m, pub, Y, rel)
    from vflattack.audit.privacy import _party_radii

    full = m.pair_box_slice.centers(method="exact", lower=sysb.L, upper=sysb.U)
    for p, cols in enumerate(m.parties):
        cols = np.array(cols)
        up, low = _party_radii(m, None, sysb.valid, sysb, cols)
        for n in range(X.shape[0]):
            V = _brute_vertices(m.W_pas, sysb.L[n], sysb.U[n], 5)
            want = _meb_radius(V[:, cols])
            assert abs(up[n] * np.sqrt(cols.size) - want) <= 1e-6, (p, n)
            assert up[n] * np.sqrt(cols.size) <= full.radii[n] * (1 + REL) + ABS
    per_party = [_party_radii(m, None, sysb.valid, sysb, np.array(c))[0] * np.sqrt(len(c)) for c in m.parties]
    assert np.all(full.radii <= np.sqrt(np.sum(np.square(per_party), axis=0)) * (1 + REL) + ABS)


def test_colluding_equals_the_smaller_model():
    """The active party colluding with P1 attacks the model with P1's columns on its side:
    built by hand here, its attack gives the audit's numbers."""
    rng = np.random.default_rng(8)
    W_act, W_pas, b, Y, X = _planted(rng, 3, 6, n=25)
    m = va.VFLModel(W_act, W_pas, b, parties=[[0, 4], [1, 2], [3, 5]])
    small, moved, kept = m.colluding(["P1"])
    by_hand = va.VFLModel(np.hstack([W_act, W_pas[:, [0, 4]]]), W_pas[:, [1, 2, 3, 5]], b,
                          parties=[[0, 1], [2, 3]], party_names=["P2", "P3"])
    Y2, X2 = np.hstack([Y, X[:, [0, 4]]]), X[:, [1, 2, 3, 5]]
    assert moved.tolist() == [0, 4] and kept.tolist() == [1, 2, 3, 5]
    np.testing.assert_array_equal(small.W_act, by_hand.W_act)
    np.testing.assert_array_equal(small.W_pas, by_hand.W_pas)
    assert small.parties == by_hand.parties and small.party_names == by_hand.party_names
    np.testing.assert_allclose(small.logits(Y2, X2), m.logits(Y, X), rtol=1e-13, atol=1e-13)
    a = va.whitebox_attack(small, m.predict_proba(Y, X), Y2, methods=("exact",))
    bh = va.whitebox_attack(by_hand, by_hand.predict_proba(Y2, X2), Y2, methods=("exact",))
    np.testing.assert_allclose(a.mse(X2)["exact"], bh.mse(X2)["exact"], rtol=1e-9)


def test_audit_reports_each_party_and_one_party_is_today():
    """The audit with three parties reports each on its own; with one party (the default, or
    parties=1) the numbers are today's, bit for bit."""
    methods = ("half_star", "exact")
    base = va.run_audit("wine", n_passive=(5,), methods=methods, n_predictions=15)
    one = va.run_audit("wine", n_passive=(5,), methods=methods, n_predictions=15, parties=1)
    assert base.records[0].mse == one.records[0].mse and one.records[0].parties == {}
    three = va.run_audit("wine", n_passive=(5,), methods=methods, n_predictions=15, parties=3)
    rec = three.records[0]
    assert list(rec.parties) == ["P1", "P2", "P3"]
    assert sorted(c for p in rec.parties.values() for c in p["columns"]) == sorted(rec.passive_columns)
    assert rec.mse == base.records[0].mse        # the parties split the report, not the attack
    text = va.render(three).table()
    assert "party P1" in text and "party P3" in text
    coll = va.run_audit("wine", n_passive=(5,), methods=methods, n_predictions=15, parties=3, colluding=["P1"])
    assert list(coll.records[0].parties) == ["P2", "P3"] and coll.records[0].n_passive == 5 - len(rec.parties["P1"]["columns"])


def test_cli_audit_with_link_parties_and_collusion(tmp_path, capsys):
    from vflattack.cli import main

    rc = main(["audit", "--dataset", "wine", "--passive", "6", "--link", "ovr", "--parties", "0,1;2,3;4,5",
               "--collude", "P2", "--methods", "half_star", "exact", "--predictions", "12", "--no-progress",
               "--out", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "link: ovr" in out and "party P1" in out and "party P3" in out and "party P2" not in out
    assert "colluding with P2" in out
    assert (tmp_path / "rep" / "parties.csv").exists()
    assert "Each passive party" in (tmp_path / "rep" / "report.html").read_text()
    assert main(["audit", "--dataset", "wine", "--parties", "0;0", "--no-progress"]) != 0


def test_log_audit_names_the_link_and_each_party(tmp_path):
    rng = np.random.default_rng(4)
    W_act, W_pas, b, Y, X = _planted(rng, 3, 4, n=30)
    model = va.VFLModel(W_act, W_pas, b, link="ovr", parties=[[0, 1], [2, 3]])
    preds, passive = va.audit.write_log(model, Y, X, tmp_path / "logs", partitions=2)
    rep = va.audit_log(model, preds, tmp_path / "report", passive_log=passive, methods=("exact",))
    text = rep.table()
    assert "link: ovr" in text and "party P1 (passive columns 0, 1)" in text and "party P2" in text
    per = np.asarray(rep.records[0]["mse_per_feature"])
    assert f"exact {per[[2, 3]].mean():.5f}" in text


def test_party_with_its_own_rows_is_solved_on_its_block():
    """A block-diagonal bottom model (each output reads one party): each party's radius from
    its own block equals the image radius of the whole set (chebcenter's of=, no shortcut),
    since S is then the product of the parties' sets."""
    rng = np.random.default_rng(13)
    clients = [[0, 1], [2, 3, 4]]
    W = np.zeros((3, 5))
    W[:1, clients[0]] = rng.standard_normal((1, 2))
    W[1:, clients[1]] = rng.standard_normal((2, 3))
    m = va.VFLModel(np.zeros((3, 0)), W, rng.standard_normal(3), link="identity", parties=clients)
    X = rng.random((8, 5))
    rel = va.Release.parse("round:2")
    pub = rel.publish(m, None, X)
    radii = va.party_radii(m, pub, None, rel)
    sysb = va.release_to_bounds(m, pub, None, rel)
    for name, cols in zip(m.party_names, clients):
        full = cc.BoxSlice(W).centers(method="exact", lower=sysb.L, upper=sysb.U, of=cols)
        np.testing.assert_allclose(radii[name], full.radii, rtol=1e-9, atol=1e-12)
