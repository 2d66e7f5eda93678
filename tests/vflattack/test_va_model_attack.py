"""vflattack: model, mapping, white-box attack (docs/theory.md §3)."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import chebcenter as cc
import vflattack as va

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _model(k=3, d_a=2, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return va.VFLModel(rng.standard_normal((k, d_a)), rng.standard_normal((k, d)), rng.standard_normal(k))


def test_vflattack_uses_only_chebcenter_public_names():
    for path in (ROOT / "vflattack").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for a in node.names:
                    assert a.name == "chebcenter" or not a.name.startswith("chebcenter"), (path, a.name)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("chebcenter"):
                assert node.module == "chebcenter", (path, node.module)
                for a in node.names:
                    assert a.name in cc.__all__, (path, a.name)


@pytest.mark.parametrize("k,d", [(2, 4), (3, 5), (6, 3), (10, 16)])
def test_mapping_holds_for_the_true_x(k, d):
    rng = np.random.default_rng(k * d)
    m = _model(k, 3, d, seed=k)
    Y, X = rng.random((200, 3)), rng.random((200, d))
    s = va.scores_to_system(m, m.predict_proba(Y, X), Y)
    J = va.difference_matrix(k)
    np.testing.assert_allclose(s.A, J @ m.W_pas)
    np.testing.assert_allclose(X @ s.A.T, s.B, atol=1e-9)
    s_log = va.scores_to_system(m, m.predict_log_proba(Y, X), Y, log_scores=True)
    np.testing.assert_allclose(X @ s_log.A.T, s_log.B, atol=1e-9)
    assert np.all(s.valid)


def test_bad_scores_are_flagged_not_used():
    m = _model(3, 1, 2)
    Y, X = np.zeros((5, 1)), np.full((5, 2), 0.5)
    S = m.predict_proba(Y, X)
    S[1] = [np.nan, 0.5, 0.5]
    S[2] = [0.0, 0.5, 0.5]
    S[3] = [0.3, 0.3, 0.3]
    S[4] = [1.0, 0.0, 0.0]
    s = va.scores_to_system(m, S, Y)
    F = va.ScoreFlag
    assert s.flags.tolist() == [0, F.NONFINITE, F.SATURATED, F.NOT_NORMALISED, F.SATURATED]
    assert np.all(np.isnan(s.B[1:]))
    with pytest.warns(va.UnreadableReleaseWarning, match="4 of 5 rows"):   # most rows refused: said, not silent
        res = va.whitebox_attack(m, S, Y, methods=("half_star", "exact"))
    assert np.all(np.isfinite(res.reconstructions["half_star"][0]))
    assert np.all(np.isnan(res.reconstructions["half_star"][1:]))
    assert res.status["exact"][1] is None and res.status_counts()["exact"]["INVALID_SCORES"] == 4


def test_whitebox_equals_chebcenter_on_the_same_system_and_bounds_hold():
    rng = np.random.default_rng(1)
    m = _model(3, 2, 6, seed=1)
    Y, X = rng.random((60, 2)), rng.random((60, 6))
    res = va.whitebox_attack(m, m.predict_proba(Y, X), Y, methods=cc.METHODS)
    A, B = res.system.A, res.system.B
    P = cc.BoxSlice(A)
    for meth in cc.METHODS:
        ref = P.centers(B, method=meth)
        np.testing.assert_allclose(res.reconstructions[meth], ref.centers, atol=1e-7)
    mse = res.mse(X)
    # docs/theory.md §2 on the attack's own numbers
    assert mse["half_star"] <= mse["half"] + 1e-12
    assert mse["half"] - mse["half_star"] == pytest.approx(cc.theory.half_star_gain(A, X), abs=1e-10)
    assert mse["ls"] - mse["half_star"] == pytest.approx(cc.theory.ls_minus_half_star(A, X), abs=1e-10)
    low, up, _ = cc.theory.eigenvalue_bounds(A, X)
    assert low - 1e-12 <= mse["half_star"] <= up + 1e-12
    pf = res.mse(X, per_feature=True)
    assert pf["exact"].shape == (6,) and pf["exact"].mean() == pytest.approx(mse["exact"])


def test_baselines_and_their_arguments():
    rng = np.random.default_rng(2)
    m = _model(2, 1, 3)
    Y, X = rng.random((30, 1)), rng.random((30, 3))
    res = va.whitebox_attack(m, m.predict_proba(Y, X), Y, methods=("random", "mean"),
                             prior_mean=np.array([0.1, 0.2, 0.3]), rng=5)
    np.testing.assert_array_equal(res.reconstructions["mean"], np.tile([0.1, 0.2, 0.3], (30, 1)))
    R = res.reconstructions["random"]
    assert R.min() >= 0 and R.max() <= 1 and R.std() > 0.2
    again = va.whitebox_attack(m, m.predict_proba(Y, X), Y, methods=("random",), rng=5)
    np.testing.assert_array_equal(again.reconstructions["random"], R)
    with pytest.raises(cc.InvalidInputError, match="needs prior_mean"):
        va.whitebox_attack(m, m.predict_proba(Y, X), Y, methods=("mean",))
    with pytest.raises(cc.InvalidInputError, match="methods must be among"):
        va.whitebox_attack(m, m.predict_proba(Y, X), Y, methods=("chebyshev",))
    with pytest.raises(cc.InvalidInputError, match=r"scores must have shape \(N, 2\)"):
        va.whitebox_attack(m, np.ones((30, 3)) / 3, Y)
    with pytest.raises(cc.InvalidInputError, match="X_true must have shape"):
        res.mse(X[:, :2])


def test_unique_solution_regime_recovers_x_exactly():
    """d <= k - 1 with full column rank A: every estimator returns X (ESA is exact)."""
    rng = np.random.default_rng(3)
    m = _model(5, 2, 3, seed=3)
    Y, X = rng.random((20, 2)), rng.random((20, 3))
    res = va.whitebox_attack(m, m.predict_proba(Y, X), Y, methods=("ls", "half_star", "exact", "rcc1"))
    for name, Xh in res.reconstructions.items():
        np.testing.assert_allclose(Xh, X, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_from_sklearn_reproduces_predict_proba(n_classes):
    rng = np.random.default_rng(n_classes)
    F = rng.random((300, 6))
    lab = np.digitize(F[:, 0] + F[:, 4], np.linspace(0.4, 1.6, n_classes - 1)) if n_classes > 2 else (F[:, 0] > F[:, 4]).astype(int)
    clf = LogisticRegression(max_iter=1000).fit(F, lab)
    passive = [4, 1, 2]
    m = va.VFLModel.from_sklearn(clf, passive)
    active = [0, 3, 5]
    np.testing.assert_allclose(m.predict_proba(F[:, active], F[:, passive]), clf.predict_proba(F), atol=1e-12)
    assert m.n_classes == n_classes and m.n_passive == 3
    with pytest.raises(cc.InvalidInputError, match="passive_columns must be distinct indices"):
        va.VFLModel.from_sklearn(clf, [1, 1])


def test_training_is_deterministic_and_fits():
    rng = np.random.default_rng(4)
    Y, X = rng.random((400, 3)), rng.random((400, 4))
    lab = np.argmax(np.column_stack([Y[:, 0], X[:, 1], 0.5 * (Y[:, 1] + X[:, 2])]), axis=1)
    a = va.train_vfl_model(Y, X, lab, rng=0)
    b = va.train_vfl_model(Y, X, lab, rng=0)
    np.testing.assert_array_equal(a.W_pas, b.W_pas)
    assert np.mean(a.predict(Y, X) == lab) > 0.9
    with pytest.raises(cc.InvalidInputError, match="labels must contain at least 2 classes"):
        va.train_vfl_model(Y, X, np.zeros(400))


def test_model_validation():
    with pytest.raises(cc.InvalidInputError, match="W_pas must have k >= 2 rows"):
        va.VFLModel(np.zeros((1, 1)), np.zeros((1, 2)), np.zeros(1))
    with pytest.raises(cc.InvalidInputError, match=r"b must be a finite array of shape \(2,\)"):
        va.VFLModel(np.zeros((2, 1)), np.zeros((2, 2)), np.zeros(3))
    m = va.VFLModel(np.zeros((2, 0)), np.ones((2, 2)), np.zeros(2))
    assert m.predict_proba(np.zeros((3, 0)), np.zeros((3, 2))).shape == (3, 2)
