"""Importers of what the frameworks export (vflattack.importers): linear bottom models as .npz,
scikit-learn one-vs-rest, the refusal of pickles and the CLI's --model spelling.

Each round trip compares the imported model's published values with the formula the format
defines, computed here independently (the nn.Linear forward pass ``x W^T + b`` per party; each
one-vs-rest estimator's own ``predict_proba``), not with the importer's output."""

import json
import pickle

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

import vflattack as va
from vflattack._validate import InvalidInputError
from vflattack.importers import from_linear_npz, read_model, refuse_pickle


def _bottoms(rng, dims=(3, 2, 4), m=4, dtype=np.float32):
    return {f"client{k + 1}": (rng.standard_normal((m, d)).astype(dtype), rng.standard_normal(m).astype(dtype))
            for k, d in enumerate(dims)}


def _save(path, bottoms):
    with open(path, "wb") as fh:   # a file object: savez adds no ".npz" to the name
        np.savez(fh, **{f"{p}.{n}": v for p, (W, b) in bottoms.items() for n, v in (("weight", W), ("bias", b))})


def test_npz_bottoms_publish_each_partys_embedding(tmp_path):
    rng = np.random.default_rng(0)
    bottoms = _bottoms(rng)
    _save(tmp_path / "b.npz", bottoms)
    m = from_linear_npz(tmp_path / "b.npz")
    assert (m.link, m.precision, m.party_names) == ("identity", "float32", ("client1", "client2", "client3"))
    assert m.n_active == 0 and m.n_passive == 9 and m.n_classes == 12
    X = rng.random((5, 9))
    blocks = np.split(X, [3, 5], axis=1)
    # nn.Linear's forward pass, party by party, in double: the exact embeddings of these weights
    want = np.hstack([x.astype(np.float64) @ W.astype(np.float64).T + b for (W, b), x in zip(bottoms.values(), blocks)])
    assert np.allclose(m.logits(np.zeros((5, 0)), X), want, rtol=0, atol=1e-12)
    assert [list(p) for p in m.parties] == [[0, 1, 2], [3, 4], [5, 6, 7, 8]]
    # the party named "active" is the adversary's own bottom model
    _save(tmp_path / "a.npz", {"active": bottoms["client1"], "client2": bottoms["client2"]})
    a = from_linear_npz(tmp_path / "a.npz")
    assert (a.n_active, a.n_passive, a.party_names) == (3, 2, ("client2",))
    assert np.allclose(a.logits(X[:, :3], X[:, 3:5]), want[:, :8], rtol=0, atol=1e-12)
    # float64 arrays: the embeddings were computed in double
    _save(tmp_path / "d.npz", _bottoms(rng, dtype=np.float64))
    assert from_linear_npz(tmp_path / "d.npz").precision == "float64"


@pytest.mark.parametrize("arrays, match", [
    ({"c1.weight": np.ones((2, 3))}, "no c1.bias"),
    ({"c1.weight": np.ones((2, 3)), "c1.bias": np.ones(3)}, r"weight \(m, d\) and bias \(m,\)"),
    ({"c1.kernel": np.ones((2, 3))}, "is not NAME.weight or NAME.bias"),
    ({"c1.weight": np.ones((2, 3), int), "c1.bias": np.ones(2, int)}, "floating-point"),
    ({"active.weight": np.ones((2, 3)), "active.bias": np.ones(2)}, "only the active party"),
])
def test_npz_malformed(tmp_path, arrays, match):
    np.savez(tmp_path / "m.npz", **arrays)
    with pytest.raises(InvalidInputError, match=match):
        from_linear_npz(tmp_path / "m.npz")


def test_npz_truncated_and_object_arrays(tmp_path):
    _save(tmp_path / "b.npz", _bottoms(np.random.default_rng(1)))
    data = (tmp_path / "b.npz").read_bytes()
    (tmp_path / "t.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidInputError, match="not a readable .npz"):
        from_linear_npz(tmp_path / "t.npz")
    (tmp_path / "j.npz").write_text("{}")
    with pytest.raises(InvalidInputError, match="is not an .npz file"):
        from_linear_npz(tmp_path / "j.npz")
    np.savez(tmp_path / "o.npz", **{"c.weight": np.array([{"a": 1}], dtype=object), "c.bias": np.ones(1)})
    with pytest.raises(InvalidInputError, match="never unpickles"):
        from_linear_npz(tmp_path / "o.npz")


class _Tripwire:
    """Unpickling this writes a file: the test sees whether anything was unpickled."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickles_are_refused_and_never_loaded(tmp_path):
    wire = tmp_path / "unpickled"
    # every protocol: 0 and 1 (text and early binary, FATE 1.x's Python 2 era) have no header byte
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        for obj in (_Tripwire(wire), {"coef_": [[1.0, 2.0]]}, [1.5]):
            for name in ("clf.pkl", "model.bin"):
                (tmp_path / name).write_bytes(pickle.dumps(obj, protocol=protocol))
                for call in (refuse_pickle, read_model, lambda p: read_model(f"npz:{p}"),
                             lambda p: read_model(f"fate:{p},{p}"), from_linear_npz):
                    with pytest.raises(InvalidInputError, match="never unpickles.*load it yourself.*from_sklearn"):
                        call(tmp_path / name)
    (tmp_path / "model.joblib").write_bytes(b"x\x9c compressed")
    with pytest.raises(InvalidInputError, match="never unpickles"):
        read_model(tmp_path / "model.joblib")
    assert not wire.exists()
    # text that merely opens like an old pickle is not one
    (tmp_path / "notes.txt").write_text("(a note, not a model)\n")
    refuse_pickle(tmp_path / "notes.txt")
    with pytest.raises(InvalidInputError, match="is not a model file vflattack reads"):
        read_model(tmp_path / "notes.txt")


def test_read_model_detects_the_kind_from_content(tmp_path):
    m = va.VFLModel(np.ones((2, 1)), np.array([[0.5, 1.0], [2.0, -1.0]]), np.zeros(2))
    m.save(tmp_path / "saved.data")
    assert read_model(tmp_path / "saved.data").to_dict() == m.to_dict()
    _save(tmp_path / "bottoms.dat", _bottoms(np.random.default_rng(2)))
    assert read_model(str(tmp_path / "bottoms.dat")).link == "identity"
    (tmp_path / "guest.json").write_text(json.dumps({"data": {}, "meta": {}}))
    with pytest.raises(InvalidInputError, match="fate:GUEST.json,HOST.json"):
        read_model(tmp_path / "guest.json")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InvalidInputError, match="name its kind"):
        read_model(tmp_path / "notes.txt")
    with pytest.raises(InvalidInputError, match="cannot be read"):
        read_model(tmp_path / "missing.json")
    with pytest.raises(InvalidInputError, match="one file holding every party"):
        read_model(f"npz:{tmp_path / 'bottoms.dat'},{tmp_path / 'bottoms.dat'}")


def test_sklearn_one_vs_rest_is_read_as_ovr():
    rng = np.random.default_rng(3)
    F = rng.random((120, 5))
    lab = np.digitize(F[:, 0] + F[:, 3], [0.7, 1.3])      # three classes
    clf = OneVsRestClassifier(LogisticRegression()).fit(F, lab)
    m = va.VFLModel.from_sklearn(clf, passive_columns=[3, 4])
    assert m.link == "ovr" and m.n_classes == 3
    Y, X = F[:, [0, 1, 2]], F[:, [3, 4]]
    # each class's published score is its own binary estimator's probability (not renormalised)
    want = np.column_stack([e.predict_proba(F)[:, 1] for e in clf.estimators_])
    assert np.allclose(m.outputs(Y, X), want, rtol=0, atol=1e-12)
    with pytest.raises(InvalidInputError, match="link must be 'ovr'.*OneVsRestClassifier.*understate"):
        va.VFLModel.from_sklearn(clf, passive_columns=[3, 4], link="softmax")
    # a multinomial model stays softmax
    assert va.VFLModel.from_sklearn(LogisticRegression().fit(F, lab), passive_columns=[3, 4]).link == "softmax"


def test_sklearn_multi_class_ovr_on_older_versions():
    """scikit-learn < 1.8 LogisticRegression(multi_class="ovr"), and "auto" with liblinear: the
    attributes such a fitted model carries (no fit here: this scikit-learn refuses the parameter)."""
    clf = LogisticRegression().fit(np.random.default_rng(4).random((60, 3)), np.arange(60) % 3)
    for multi, solver, link in (("ovr", "lbfgs", "ovr"), ("auto", "liblinear", "ovr"),
                                ("auto", "lbfgs", "softmax"), ("multinomial", "lbfgs", "softmax"),
                                # scikit-learn 1.5 to 1.7 store the default as "deprecated", meaning "auto"
                                ("deprecated", "liblinear", "ovr"), ("deprecated", "lbfgs", "softmax")):
        clf.multi_class, clf.solver = multi, solver
        assert va.VFLModel.from_sklearn(clf, passive_columns=[2]).link == link, (multi, solver)


@pytest.mark.parametrize("version, link", [("1.5.2", "ovr"), ("1.6.0", "softmax"), ("1.7.1", "softmax")])
def test_sklearn_newton_cholesky_was_one_vs_rest_before_1_6(monkeypatch, version, link):
    """multi_class "auto" with newton-cholesky fitted one-vs-rest until scikit-learn 1.6 gave that
    solver the multinomial loss (scikit-learn PR 28840); the installed version runs predict_proba."""
    import sklearn

    clf = LogisticRegression().fit(np.random.default_rng(4).random((60, 3)), np.arange(60) % 3)
    clf.multi_class, clf.solver = "deprecated", "newton-cholesky"
    monkeypatch.setattr(sklearn, "__version__", version)
    assert va.VFLModel.from_sklearn(clf, passive_columns=[2]).link == link


def test_sklearn_feature_names_travel():
    import pandas as pd

    rng = np.random.default_rng(5)
    F = pd.DataFrame(rng.random((40, 3)), columns=["age", "income", "debt"])
    clf = LogisticRegression().fit(F, (F["debt"] > 0.5).astype(int))
    m = va.VFLModel.from_sklearn(clf, passive_columns=[2, 0])
    assert m.feature_names == {"active": ("income",), "passive": ("debt", "age")}
    small, _, _ = va.VFLModel(m.W_act, m.W_pas, m.b, link="ovr" if m.n_classes == 1 else "softmax",
                              parties=[[0], [1]], feature_names=m.feature_names).colluding(["P1"])
    assert small.feature_names == {"active": ("income", "debt"), "passive": ("age",)}
    with pytest.raises(InvalidInputError, match="name every column once"):
        va.VFLModel(m.W_act, m.W_pas, m.b, feature_names={"active": ["a"], "passive": ["a", "b"]})


def test_a_sequential_state_dict_is_not_read_as_several_parties(tmp_path):
    """Keys c1.0.weight and c1.2.weight are two layers of party c1, not parties c1.0 and c1.2."""
    f = tmp_path / "seq.npz"
    np.savez(f, **{"c1.0.weight": np.ones((4, 3)), "c1.0.bias": np.zeros(4), "c1.2.weight": np.ones((2, 4)),
                   "c1.2.bias": np.zeros(2), "c2.weight": np.ones((2, 2)), "c2.bias": np.zeros(2)})
    with pytest.raises(InvalidInputError, match=r"several layers of one bottom model \(c1.0, c1.2.*W = W2 @ W1"):
        from_linear_npz(f)
    # a ModuleList of per-party bottom models (shapes that do not chain) is read as parties
    np.savez(f, **{"bottoms.0.weight": np.ones((2, 3)), "bottoms.0.bias": np.zeros(2),
                   "bottoms.1.weight": np.ones((2, 4)), "bottoms.1.bias": np.zeros(2)})
    assert from_linear_npz(f).party_names == ("bottoms.0", "bottoms.1")
    # one layer inside a Sequential is one party's linear bottom model
    np.savez(f, **{"c1.0.weight": np.ones((2, 3)), "c1.0.bias": np.zeros(2), "c2.weight": np.ones((2, 2)),
                   "c2.bias": np.zeros(2)})
    assert from_linear_npz(f).party_names == ("c1.0", "c2")
