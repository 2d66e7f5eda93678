"""vflattack refuses what it cannot use, naming the argument, and never reshapes silently."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

import chebcenter as cc
import vflattack as va


def _data(seed=0, N=60, d_a=3, d=4, k=3):
    rng = np.random.default_rng(seed)
    Y, X = rng.random((N, d_a)), rng.random((N, d))
    labels = rng.integers(0, k, N)
    labels[:k] = np.arange(k)
    m = va.VFLModel(rng.standard_normal((k, d_a)), rng.standard_normal((k, d)), rng.standard_normal(k))
    return m, Y, X, labels


def test_predict_proba_refuses_transposed_active_features():
    m, Y, X, _ = _data()
    Yt = Y[:3].T.copy()              # (3, 3) -> same size as Y[:3] but features and rows swapped
    with pytest.raises(cc.InvalidInputError, match=r"Y must have shape \(60, 3\)"):
        m.predict_proba(Y.T, X)
    with pytest.raises(cc.InvalidInputError, match=r"Y must have shape"):
        m.predict_proba(Y[:, :2], X)
    with pytest.raises(cc.InvalidInputError, match=r"Y must have shape \(3, 3\)"):
        m.predict_proba(Yt.ravel(), X[:3])   # a flat array is not silently reshaped
    with pytest.raises(cc.InvalidInputError, match=r"X must have 4 columns \(one per passive feature\)"):
        m.predict_proba(Y, X[:, :3])


def test_train_vfl_model_refuses_rows_that_do_not_match():
    _, Y, X, labels = _data()
    with pytest.raises(cc.InvalidInputError, match=r"Y must have shape \(60, d_a\)"):
        va.train_vfl_model(Y[:3], X, labels)
    with pytest.raises(cc.InvalidInputError, match=r"labels must have shape \(60,\)"):
        va.train_vfl_model(Y, X, labels[:10])


def test_model_weights_are_real_and_shaped_per_class():
    m, *_ = _data()
    with pytest.raises(cc.InvalidInputError, match="W_pas must be real"):
        va.VFLModel(m.W_act, m.W_pas + 1j, m.b)
    with pytest.raises(cc.InvalidInputError, match=r"W_act must have 3 rows \(one per class, like W_pas\)"):
        va.VFLModel(m.W_act[:2], m.W_pas, m.b)
    with pytest.raises(cc.InvalidInputError, match="b must be real"):
        va.VFLModel(m.W_act, m.W_pas, m.b + 1j)
    with pytest.raises(cc.InvalidInputError, match="W_pas must be an array of real numbers"):
        va.VFLModel(m.W_act, "weights", m.b)


def test_from_sklearn_accepts_only_logistic_classifiers_and_integer_columns():
    rng = np.random.default_rng(1)
    F = rng.random((50, 5))
    lab = (F[:, 0] > 0.5).astype(int)
    with pytest.raises(cc.InvalidInputError, match="clf must be a fitted linear classifier.*LinearRegression"):
        va.VFLModel.from_sklearn(LinearRegression().fit(F, lab), passive_columns=[3, 4])
    clf = LogisticRegression().fit(F, lab)
    with pytest.raises(cc.InvalidInputError, match="passive_columns must be a 1-D list of integer"):
        va.VFLModel.from_sklearn(clf, passive_columns=[3, 4.7])
    with pytest.raises(cc.InvalidInputError, match="passive_columns must be distinct indices"):
        va.VFLModel.from_sklearn(clf, passive_columns=[3, 5])
    m = va.VFLModel.from_sklearn(clf, passive_columns=np.array([3.0, 4.0]))   # integral floats are indices
    np.testing.assert_allclose(m.predict_proba(F[:, :3], F[:, 3:]), clf.predict_proba(F), atol=1e-12)


class _Shuffled:
    """A fitted classifier whose columns come in another class order (as scikit-learn allows)."""

    def __init__(self, clf, order):
        self.clf, self.order = clf, order
        self.classes_ = clf.classes_[order]

    def predict_proba(self, Y):
        return self.clf.predict_proba(Y)[:, self.order]


def test_agnostic_attack_takes_any_fitted_classifier():
    m, Y, X, labels = _data(seed=3)
    clf = LogisticRegression(max_iter=1000).fit(Y, labels)
    got = va.agnostic_attack(m, clf, Y, methods=["half_star"])
    # independent route: the classifier's scores through the mapping, then chebcenter directly
    system = va.scores_to_system(m, clf.predict_proba(Y), Y)
    ref = cc.BoxSlice(system.A).centers(np.nan_to_num(system.B), "half_star")
    ok = system.valid
    np.testing.assert_allclose(got.reconstructions["half_star"][ok], ref.centers[ok], atol=1e-9)
    shuffled = va.agnostic_attack(m, _Shuffled(clf, [2, 0, 1]), Y, methods=["half_star"])
    np.testing.assert_allclose(shuffled.reconstructions["half_star"], got.reconstructions["half_star"],
                               atol=1e-9, equal_nan=True)


def test_agnostic_attack_names_what_is_wrong_with_the_adversary():
    m, Y, X, labels = _data(seed=3)
    with pytest.raises(cc.InvalidInputError, match="adversary must be a fitted model with predict_proba"):
        va.agnostic_attack(m, object(), Y)
    other = LogisticRegression(max_iter=1000).fit(Y, labels + 10)
    with pytest.raises(cc.InvalidInputError, match=r"adversary's classes must be the model's \[0, 1, 2\]"):
        va.agnostic_attack(m, other, Y)
    two = LogisticRegression(max_iter=1000).fit(Y, labels % 2)
    with pytest.raises(cc.InvalidInputError, match="adversary's classes"):
        va.agnostic_attack(m, two, Y)


def test_vflattack_has_its_own_errors():
    """vflattack's errors derive from its own base; bad input is still a ValueError (and
    a chebcenter.InvalidInputError, one except clause for both packages); a dataset
    problem is an OSError."""
    import chebcenter as cc
    import vflattack as va

    with pytest.raises(va.InvalidInputError) as info:
        va.train_vfl_model(np.zeros((4, 2)), np.zeros((4, 2)), np.array([0, 1, 0]))
    assert isinstance(info.value, va.VflattackError)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, cc.InvalidInputError)
    assert issubclass(va.DatasetError, va.VflattackError) and issubclass(va.DatasetError, OSError)
    assert not issubclass(va.DatasetError, cc.ChebcenterError)


def test_passive_columns_is_one_check_for_the_model_the_classifier_and_the_audit():
    """vflattack._validate.passive_columns: indices, integral floats, digit strings and names
    mixed; the same messages wherever passive columns are given."""
    from vflattack._validate import passive_columns

    names = ["a", "b", "c", "d"]
    assert passive_columns("p", ["c", 0, "1", 3.0], 4, names).tolist() == [0, 1, 2, 3]
    assert passive_columns("p", np.array([2, 1]), 4).tolist() == [1, 2]
    assert passive_columns("p", np.array([2, 1]), 4, keep_order=True).tolist() == [2, 1]
    with pytest.raises(va.InvalidInputError, match="at most 3 of them"):
        passive_columns("p", [0, 1, 2, 3], 4, names, leave_active=True)
    for bad, words in (([True], "1-D list of integer"), ([0.5], "1-D list of integer"), ([[0, 1]], "1-D list"),
                       ([], "non-empty"), (["e"], "'e' is not a feature name"), (["a"], None),
                       ([0, 0], "distinct"), ([-1], "distinct indices in \\[0, 4\\)")):
        if words is None:   # a name without names
            with pytest.raises(va.InvalidInputError, match="no column names"):
                passive_columns("p", bad, 4)
            continue
        with pytest.raises(va.InvalidInputError, match=words):
            passive_columns("p", bad, 4, names)
