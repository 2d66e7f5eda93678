"""VFLClassifier: the split model as a scikit-learn classifier.

scikit-learn's own estimator checks run on it (all of them apply but the array-API one,
which needs SCIPY_ARRAY_API set: the estimator computes in NumPy). Its fit is compared with
LogisticRegression's, an independent optimiser of the same objective.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import MinMaxScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import vflattack as va  # noqa: E402


@parametrize_with_checks([va.VFLClassifier()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("C", [0.1, 3.0])
def test_same_fit_as_logistic_regression(k, C):
    rng = np.random.default_rng(1)
    F = rng.random((300, 5))
    y = rng.integers(0, k, 300)
    y[F[:, 0] > 0.6] = 0
    ours = va.VFLClassifier(passive=[3, 4], C=C, max_iter=5000).fit(F, y)
    ref = LogisticRegression(C=C, tol=1e-12, max_iter=10000).fit(F, y)
    # both stop on a relative change of the objective near 1e-9, which leaves the parameters
    # about 1e-4.5 from the optimum; a penalty off by a factor 2 moves the probabilities by
    # more than 0.01 on these data
    assert np.abs(ours.predict_proba(F) - ref.predict_proba(F)).max() < 1e-3
    assert np.array_equal(ours.classes_, ref.classes_)
    m = ours.model_
    assert (m.n_active, m.n_passive) == (3, 2)
    assert np.allclose(m.predict_proba(F[:, :3], F[:, 3:]), ours.predict_proba(F))


def test_passive_by_name_and_the_attack_on_model_():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    F = pd.DataFrame(rng.random((120, 4)), columns=["a", "b", "c", "d"])
    y = (F["a"] + F["d"] > 1).astype(int)
    clf = va.VFLClassifier(passive=["d", "b"], C=10.0).fit(F, y)
    assert clf.passive_.tolist() == [1, 3] and clf.active_.tolist() == [0, 2]
    X = F[["b", "d"]].to_numpy()
    res = va.whitebox_attack(clf.model_, clf.predict_proba(F), F[["a", "c"]].to_numpy(), methods=("half_star",))
    assert np.isfinite(res.mse(X)["half_star"])
    assert va.from_sklearn(clf, passive=[3, 1]) is clf.model_


def test_from_sklearn_takes_a_pipeline_and_a_logistic_regression():
    F = np.array([[0, 0.0], [1, 0], [0, 1], [1, 1], [0.5, 0.2]])
    lab = [0, 0, 1, 1, 0]
    pipe = make_pipeline(MinMaxScaler(), LogisticRegression()).fit(F, lab)
    m = va.from_sklearn(pipe, passive=[1])
    Z = pipe[:-1].transform(F)
    assert np.allclose(m.predict_proba(Z[:, [0]], Z[:, [1]]), pipe.predict_proba(F))
    lr = LogisticRegression().fit(F, lab)
    assert np.allclose(va.from_sklearn(lr, passive=[0]).predict_proba(F[:, [1]], F[:, [0]]), lr.predict_proba(F))


@pytest.mark.parametrize(("passive", "words"), [
    ([5], "distinct indices in \\[0, 4\\)"),
    ([1, 1], "distinct"),
    ([], "non-empty"),
    (["x"], "no column names"),
])
def test_bad_passive_columns_name_the_argument(passive, words):
    F = np.random.default_rng(0).random((20, 4))
    with pytest.raises(va.InvalidInputError, match=words):
        va.VFLClassifier(passive=passive).fit(F, np.arange(20) % 2)


def test_unfitted_and_mismatched_classifiers_are_refused():
    with pytest.raises(va.InvalidInputError, match="not fitted"):
        va.from_sklearn(va.VFLClassifier(), passive=[0])
    F = np.random.default_rng(0).random((20, 3))
    clf = va.VFLClassifier(passive=[2]).fit(F, np.arange(20) % 2)
    with pytest.raises(va.InvalidInputError, match="classifier's passive columns \\[2\\]"):
        va.from_sklearn(clf, passive=[1])
    with pytest.raises(va.InvalidInputError, match="C must be"):
        va.VFLClassifier(C=0.0).fit(F, np.arange(20) % 2)


def test_importing_vflattack_does_not_import_sklearn():
    code = "import sys, vflattack; print('sklearn' in sys.modules); vflattack.VFLClassifier; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_importing_vflattack_loads_none_of_scipys_solvers():
    """A log-audit worker imports vflattack: scipy.special, scipy.linalg, scipy.optimize and
    scipy.stats (about 30 MB a worker) load where they are called, not at import."""
    code = "import sys, vflattack.audit.logs; print(sorted(m for m in ('scipy.special', 'scipy.linalg', " \
           "'scipy.optimize', 'scipy.stats', 'pandas', 'dask.dataframe') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_log_softmax_is_scipys():
    """vflattack's NumPy log_softmax against scipy.special.log_softmax (the reference it replaces),
    on ordinary logits and on the edge cases: +inf, a row of -inf, entries near the float limit."""
    from scipy.special import log_softmax as reference

    from vflattack.model import log_softmax

    rng = np.random.default_rng(3)
    cases = [30 * rng.normal(size=(40, 4)), rng.normal(size=(5, 1)),
             np.array([[np.inf, 1.0], [-np.inf, -np.inf], [1e308, 1e308], [-1e308, 0.0]])]
    with np.errstate(invalid="ignore"):
        for z in cases:
            np.testing.assert_array_equal(log_softmax(z), reference(z, axis=1))
