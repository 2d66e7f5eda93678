"""Black-box, agnostic (AM/RAM) attacks and the orthogonal defences (docs/theory.md §3)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

import chebcenter as cc
import vflattack as va
from vflattack.attacks.defence import _closed_form, _Objective


def _model(k, d_a, d, seed):
    rng = np.random.default_rng(seed)
    return va.VFLModel(rng.standard_normal((k, d_a)), rng.standard_normal((k, d)), rng.standard_normal(k))


# -- black box -------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 6])
def test_blackbox_identity_on_random_data(k):
    rng = np.random.default_rng(k)
    m = _model(k, 3, 1, k)
    Y = rng.random((300, 3))
    X = rng.beta(2, 5, (300, 1))  # extremes not in the sample
    signs = np.sign(va.difference_matrix(k) @ m.W_pas[:, 0])
    res = va.blackbox_attack(m.W_act, m.predict_proba(Y, X), Y, signs)
    expected = (X - X.min()) / (X.max() - X.min())
    np.testing.assert_allclose(res.reconstructions["blackbox"], expected, atol=1e-9)
    err = np.abs(res.reconstructions["blackbox"] - X)
    assert np.all(err <= max(X.min(), 1 - X.max()) + 1e-9)
    assert res.mse(X)["blackbox"] > 0


def test_blackbox_exact_with_extremes_and_unknown_signs_skipped():
    rng = np.random.default_rng(1)
    m = _model(4, 2, 1, 1)
    Y, X = rng.random((50, 2)), rng.random((50, 1))
    X[3], X[7] = 0.0, 1.0
    signs = np.sign(va.difference_matrix(4) @ m.W_pas[:, 0])
    signs[1] = 0
    res = va.blackbox_attack(m.W_act, m.predict_proba(Y, X), Y, signs)
    np.testing.assert_allclose(res.reconstructions["blackbox"], X, atol=1e-9)


def test_blackbox_more_than_one_feature_is_explained():
    m = _model(3, 2, 2, 0)
    Y, X = np.random.default_rng(0).random((20, 2)), np.random.default_rng(1).random((20, 2))
    with pytest.raises(cc.InvalidInputError, match="reconstructs ONE passive feature.*blackbox_projections"):
        va.blackbox_attack(m.W_act, m.predict_proba(Y, X), Y, [1, 1], n_passive=2)
    Z = va.blackbox_projections(m.W_act, m.predict_proba(Y, X), Y)
    a = va.difference_matrix(3) @ m.W_pas
    proj = X @ a.T
    np.testing.assert_allclose(Z, (proj - proj.min(0)) / (proj.max(0) - proj.min(0)), atol=1e-9)
    with pytest.raises(cc.InvalidInputError, match="signs must have shape"):
        va.blackbox_attack(m.W_act, m.predict_proba(Y, X), Y, [1])


# -- agnostic --------------------------------------------------------------------------
def _correlated(n, seed):
    rng = np.random.default_rng(seed)
    Z = rng.random((n, 3))
    Y = np.clip(Z @ rng.random((3, 4)) / 2 + 0.1 * rng.random((n, 4)), 0, 1)
    X = np.clip(Z @ rng.random((3, 5)) / 2 + 0.1 * rng.random((n, 5)), 0, 1)
    lab = np.argmax(np.column_stack([Y[:, 0] + X[:, 0], Y[:, 1] + X[:, 1], 0.9 * np.ones(n)]), axis=1)
    return Y, X, lab


def test_agnostic_decomposition_identity_per_sample():
    Y, X, lab = _correlated(600, 0)
    model = va.train_vfl_model(Y[:400], X[:400], lab[:400])
    am = va.train_adversary_model(Y[:400], lab[:400])
    for method in ("half_star", "ls"):
        dec = va.agnostic_decomposition(model, model.predict_proba(Y[400:], X[400:]), am.predict_proba(Y[400:]),
                                        Y[400:], X[400:], method=method)
        np.testing.assert_allclose(dec["agnostic"], dec["oracle"] + dec["score_error"], rtol=1e-9, atol=1e-12)
    res = va.agnostic_attack(model, am, Y[400:], methods=("half_star",))
    dec = va.agnostic_decomposition(model, model.predict_proba(Y[400:], X[400:]), am.predict_proba(Y[400:]),
                                    Y[400:], X[400:])
    np.testing.assert_allclose(np.sum((res.reconstructions["half_star"] - X[400:]) ** 2, axis=1), dec["agnostic"],
                               rtol=1e-9)


def test_agnostic_attack_never_reads_scores_and_defaults_by_rank():
    Y, X, lab = _correlated(300, 1)
    model = va.train_vfl_model(Y, X, lab)
    am = va.train_adversary_model(Y, lab)
    res = va.agnostic_attack(model, am, Y)  # no scores argument exists
    assert res.methods == ("half_star",)  # rank A = 2 < d = 5
    full = _model(4, 4, 3, 9)  # rank A = 3 = d
    am4 = va.train_adversary_model(Y, np.arange(300) % 4)
    assert va.agnostic_attack(full, am4, Y).methods == ("ls",)


def test_the_adversary_model_takes_its_classes_from_the_target_model():
    """Labels that miss a class: with ``classes=model`` the AM scores every column the model
    releases, so refining and the agnostic attack accept k-column scores (without it they
    refused them: the AM knew 3 of 4 classes)."""
    model = _model(4, 4, 3, 9)
    rng = np.random.default_rng(1)
    Y = rng.random((300, 4))
    lab = np.arange(300) % 3                              # class 3 never seen by the adversary
    X = rng.random((300, 3))
    scores = model.predict_proba(Y, X)
    with pytest.raises(cc.InvalidInputError):               # the old behaviour, still the default
        va.refine_adversary_model(va.train_adversary_model(Y, lab), Y[:50], scores[:50])
    am = va.train_adversary_model(Y, lab, classes=model)
    assert am.classes.tolist() == list(model.classes) and am.predict_proba(Y).shape == (300, 4)
    assert np.all(am.predict_proba(Y)[:, 3] > 0)
    ram = va.refine_adversary_model(am, Y[:50], scores[:50])
    assert ram.predict_proba(Y).shape == (300, 4)
    assert va.agnostic_attack(model, ram, Y).reconstructions["ls"].shape == (300, 3)
    am2 = va.train_adversary_model(Y, lab, classes=list(model.classes))   # a plain list works too
    np.testing.assert_array_equal(am2.V, am.V)
    with pytest.raises(cc.InvalidInputError, match="labels not in classes"):
        va.train_adversary_model(Y, lab + 10, classes=model)
    with pytest.raises(cc.InvalidInputError, match="at least 2 distinct"):
        va.train_adversary_model(Y, lab, classes=[0, 0, 1])


def test_am_and_ram_losses_and_lambda_matters():
    Y, X, lab = _correlated(800, 2)
    model = va.train_vfl_model(Y, X, lab)
    am = va.train_adversary_model(Y[:600], lab[:600])
    obs = np.arange(600, 700)
    c_obs = model.predict_proba(Y[obs], X[obs])

    def disc(adv):  # cross-entropy of the adversary's scores against the observed real ones
        return float(-np.mean(np.sum(c_obs * adv.predict_log_proba(Y[obs]), axis=1)))

    # the losses decrease: AM below the loss log(k) of its zero start; RAM below the AM's
    # weights evaluated on the RAM objective
    k = am.V.shape[0]
    assert am.loss < np.log(k) - 0.05

    def ram_objective(adv, lam):
        Ytr, Ttr = am._train
        ce_tr = -np.mean(np.sum(Ttr * adv.predict_log_proba(Ytr), axis=1))
        return ce_tr + lam * disc(adv) + 0.5 * am.l2 * np.sum(adv.V ** 2)

    ram5 = va.refine_adversary_model(am, Y[obs], c_obs, lam=5.0)
    assert ram5.loss == pytest.approx(ram_objective(ram5, 5.0), rel=1e-6)
    assert ram5.loss < ram_objective(am, 5.0) - 1e-4
    zero = va.refine_adversary_model(am, Y[obs], c_obs, lam=0.0)
    # same strictly convex problem restarted at its optimum: equal up to L-BFGS's stopping rule
    assert zero.loss <= am.loss + 1e-12
    np.testing.assert_allclose(zero.predict_proba(Y), am.predict_proba(Y), atol=1e-4)
    ram = va.refine_adversary_model(am, Y[obs], c_obs, lam=5.0)
    assert disc(ram) < disc(am) - 1e-3  # fails if lam is ignored
    assert ram.refined and ram.n_observed == 100 and ram.lam == 5.0
    kl = va.refine_adversary_model(am, Y[obs], c_obs, lam=5.0, divergence="kl")
    np.testing.assert_allclose(kl.predict_proba(Y), ram.predict_proba(Y), atol=1e-6)
    assert kl.loss < ram.loss  # KL = CE - entropy
    with pytest.raises(cc.InvalidInputError, match="scores_obs must be probability rows"):
        va.refine_adversary_model(am, Y[obs], c_obs * 2, lam=1.0)


# -- defences --------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["optimised", "random"])
def test_defence_keeps_scores_bit_identical_and_respects_epsilon(kind):
    rng = np.random.default_rng(0)
    m = _model(3, 2, 4, 3)
    Y, X = rng.random((200, 2)), rng.random((200, 4))
    for eps in (0.0, 0.3, 1.5):
        dfn = va.orthogonal_defence(m, X, eps, kind=kind, rng=1)
        assert np.array_equal(dfn.predict_proba(Y, X), m.predict_proba(Y, X))
        np.testing.assert_allclose(dfn.R @ dfn.R.T, np.eye(4), atol=1e-10)
        assert dfn.distortion <= eps * (1 + 1e-9) + 1e-12
        np.testing.assert_allclose(dfn.disclosed.W_pas, m.W_pas @ dfn.R)
        # the adversary that is shown the disclosed model really gets the predicted MSE
        res = va.whitebox_attack(dfn.disclosed, dfn.predict_proba(Y, X), Y, methods=("half_star",))
        rows = res.common_rows()  # rows whose disclosed slice still meets the box
        assert rows.sum() >= 10  # the rest are detectably inconsistent (see the threat report)
        assert res.mse(X)["half_star"] == pytest.approx(va.adversary_mse(m, X[rows], dfn.R), rel=1e-9)


def test_closed_form_beats_random_rotations_at_equal_distortion():
    rng = np.random.default_rng(5)
    m = _model(6, 2, 3, 5)  # rank A = 3 = d: ls adversary, closed form applies
    X = rng.random((300, 3))
    obj = _Objective(m, X)
    assert obj.full_rank
    for mu in (0.01, 0.1, 0.5):
        R = _closed_form(obj, mu)
        dist = np.sqrt(obj.dist2(R))
        f_opt = obj.f(R)[0]
        for seed in range(200):
            Q = ortho_group.rvs(3, random_state=seed)
            if np.sqrt(obj.dist2(Q)) <= dist:
                assert obj.f(Q)[0] <= f_opt + 1e-12


def test_optimised_beats_random_and_raises_the_mse():
    rng = np.random.default_rng(6)
    m = _model(2, 2, 6, 6)
    X = rng.random((300, 6))
    base = va.adversary_mse(m, X, np.eye(6))
    opt = va.orthogonal_defence(m, X, 1.5)
    rand = [va.orthogonal_defence(m, X, 1.5, kind="random", rng=s).predicted_mse for s in range(5)]
    assert opt.predicted_mse >= max(rand) and opt.predicted_mse > base * 1.2
    with pytest.raises(cc.InvalidInputError, match="epsilon must be a finite number >= 0"):
        va.orthogonal_defence(m, X, -1)
    with pytest.raises(cc.InvalidInputError, match="kind must be"):
        va.orthogonal_defence(m, X, 1, kind="best")


# -- the threat audit and its CLI ---------------------------------------------------------
def test_threat_audit_end_to_end(tmp_path):
    import json

    from vflattack.audit import run_threat_audit
    from vflattack.cli import main

    rep = run_threat_audit("wine", n_passive=4, n_observed=20, epsilons=(0.1, 0.5), relative=True,
                           defence_kinds=("random", "optimised"))
    r = rep.records[0]
    # per-sample decomposition => the agnostic adversaries never beat the white-box one
    assert r.mse["whitebox"] <= r.mse["am"] + 1e-12 and r.mse["whitebox"] <= r.mse["ram"] + 1e-12
    assert r.mse["am"] == pytest.approx(r.mse["whitebox"] + r.mse["am_score_error"], rel=1e-9)
    assert r.mse["ram"] == pytest.approx(r.mse["whitebox"] + r.mse["ram_score_error"], rel=1e-9)
    assert [n for n, _ in r.blackbox][:2] == [10, 30]
    assert len(r.tradeoff) == 4
    for t in r.tradeoff:
        assert t["distortion"] <= t["epsilon"] * (1 + 1e-9)
    opt = {t["epsilon"]: t["whitebox"] for t in r.tradeoff if t["kind"] == "optimised"}
    assert all(v >= r.mse["whitebox"] - 1e-12 for v in opt.values())
    assert main(["audit", "--dataset", "wine", "--passive", "4", "--attacks", "agnostic", "blackbox",
                 "--defence", "optimised", "--epsilons", "0.5", "--observed", "10", "--no-progress",
                 "--out", str(tmp_path)]) == 0
    payload = json.loads((tmp_path / "threats.json").read_text())
    assert payload["records"][0]["tradeoff"][0]["kind"] == "optimised"
    for name in ("tradeoff_wine.png", "blackbox_wine.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "tradeoff.csv").read_text().startswith("dataset,seed,kind,epsilon")
