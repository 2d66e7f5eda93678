"""A scikit-learn classifier that trains the split model: :class:`VFLClassifier`.

Auditors hold scikit-learn estimators and pipelines. ``VFLClassifier(passive=columns)`` is a
``BaseEstimator`` and ``ClassifierMixin`` that takes the full feature matrix F, as any
scikit-learn classifier does, and trains the split logistic regression
(:func:`vflattack.train_vfl_model`) on it: the passive party's columns are ``passive``,
the active party's the others, in increasing order. After ``fit`` it has ``classes_``,
``n_features_in_`` and ``model_``, the :class:`vflattack.VFLModel` every attack takes.

The penalty follows scikit-learn's ``LogisticRegression``: ``C`` is the inverse of the L2
strength, ``0.5 ||W||^2 + C sum_n loss_n``, so that the two fit the same model. That is
``train_vfl_model``'s ``(1/N) sum_n loss_n + (l2/2) ||W||^2`` with ``l2 = 1 / (C N)`` for
k > 2 classes, and ``l2 = 2 / (C N)`` for two (``LogisticRegression`` keeps one row
``w = W_1 - W_0``; at the softmax's optimum ``W_1 = -W_0``).

:meth:`vflattack.VFLModel.from_sklearn` still splits a fitted ``LogisticRegression``
(or the last step of a pipeline) the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ._validate import InvalidInputError, passive_columns
from .model import VFLModel, train_vfl_model

__all__ = ["VFLClassifier", "from_sklearn"]


def _validate(est, X, y=None, reset=True):
    """``sklearn.utils.validation.validate_data`` (scikit-learn >= 1.6), or the estimator's own
    ``_validate_data`` before it."""
    try:
        from sklearn.utils.validation import validate_data
    except ImportError:   # scikit-learn < 1.6
        return est._validate_data(X, y, reset=reset) if y is not None else est._validate_data(X, reset=reset)
    return validate_data(est, X, y, reset=reset) if y is not None else validate_data(est, X, reset=reset)


class VFLClassifier(ClassifierMixin, BaseEstimator):
    """The split logistic regression as a scikit-learn classifier (module docstring).

    Parameters
    ----------
    passive : sequence of int or str, optional
        The passive party's columns of F: indices, or names when F is a DataFrame
        (``feature_names_in_``). Default: the last column.
    C : float
        Inverse of the L2 regularisation strength, as in ``LogisticRegression``.
    max_iter : int
        L-BFGS iterations.
    random_state : int, RandomState or None
        Seeds the start's jitter (the fit is otherwise deterministic).

    Examples
    --------
    >>> import numpy as np, vflattack as va
    >>> rng = np.random.default_rng(0)
    >>> F = rng.random((200, 4)); y = (F[:, 0] + F[:, 3] > 1).astype(int)
    >>> clf = va.VFLClassifier(passive=[2, 3], C=100.0, random_state=0).fit(F, y)
    >>> clf.classes_.tolist(), clf.model_.n_passive, clf.score(F, y) > 0.9
    ([0, 1], 2, True)
    >>> res = va.whitebox_attack(clf.model_, clf.predict_proba(F), F[:, :2], methods=("half_star",))
    """

    def __init__(self, passive: Sequence[Any] | None = None, C: float = 1.0, max_iter: int = 500,
                 random_state: Any = 0):
        self.passive = passive
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _columns(self, n_features: int) -> tuple[np.ndarray, np.ndarray]:
        if self.passive is None:
            passive = np.array([n_features - 1])
        else:
            passive = passive_columns("passive", self.passive, n_features, getattr(self, "feature_names_in_", None))
        return np.setdiff1d(np.arange(n_features), passive), passive

    def fit(self, F: Any, y: Any) -> VFLClassifier:
        """Train the split model on the rows of F and their labels y."""
        from sklearn.utils import check_random_state
        from sklearn.utils.multiclass import check_classification_targets

        if y is None:
            raise InvalidInputError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        F, y = _validate(self, F, y)
        check_classification_targets(y)
        C = self.C
        if isinstance(C, bool) or not isinstance(C, (int, float, np.integer, np.floating)) or not (
                np.isfinite(C) and C > 0):
            raise InvalidInputError(f"C must be a finite number > 0; got {C!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1:
            raise InvalidInputError(f"max_iter must be an integer >= 1; got {self.max_iter!r}")
        active, passive = self._columns(F.shape[1])
        seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        info: dict = {}
        # LogisticRegression's penalty: k > 2 rows of W each penalised, l2 = 1 / (C N); for
        # k = 2 it has one row w = W_1 - W_0, and the softmax's optimum is W_1 = -W_0 = w / 2,
        # whose penalty ||W_0||^2 + ||W_1||^2 is ||w||^2 / 2, so l2 = 2 / (C N)
        k = np.unique(y).size
        self.model_ = train_vfl_model(F[:, active], F[:, passive], y, l2=(2.0 if k == 2 else 1.0) / (C * F.shape[0]),
                                      max_iter=int(self.max_iter), rng=seed, info=info)
        self.n_iter_ = np.array([info["n_iter"]])
        self.classes_ = np.asarray(self.model_.classes)
        self.active_, self.passive_ = active, passive
        return self

    def _split(self, F):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "model_")
        F = _validate(self, F, reset=False)
        return F[:, self.active_], F[:, self.passive_]

    def predict_proba(self, F: Any) -> np.ndarray:
        """The class probabilities, in the order of ``classes_``."""
        Y, X = self._split(F)
        return self.model_.predict_proba(Y, X)

    def predict_log_proba(self, F: Any) -> np.ndarray:
        Y, X = self._split(F)
        return self.model_.predict_log_proba(Y, X)

    def decision_function(self, F: Any) -> np.ndarray:
        """The logits (binary: the log-odds of ``classes_[1]``, as scikit-learn's)."""
        Y, X = self._split(F)
        Z = self.model_.logits(Y, X)
        return Z[:, 1] - Z[:, 0] if Z.shape[1] == 2 else Z

    def predict(self, F: Any) -> np.ndarray:
        logp = self.predict_log_proba(F)
        return self.classes_[np.argmax(logp, axis=1)]


def from_sklearn(estimator: Any, passive: Sequence[int]) -> VFLModel:
    """The split model of a fitted scikit-learn classifier: a :class:`VFLClassifier` (its
    ``model_``; ``passive`` must be its columns), a ``LogisticRegression``
    (:meth:`VFLModel.from_sklearn`), or a ``Pipeline`` ending in one, whose split model then
    acts on the features as the pipeline's earlier steps transform them (the columns of
    ``passive`` index those).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> F = np.array([[0, 0.], [1, 0], [0, 1], [1, 1]]); lab = [0, 0, 1, 1]
    >>> pipe = make_pipeline(MinMaxScaler(), LogisticRegression()).fit(F, lab)
    >>> from_sklearn(pipe, passive=[1]).n_passive
    1
    """
    last = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    if isinstance(last, VFLClassifier):
        if not hasattr(last, "model_"):
            raise InvalidInputError("the VFLClassifier is not fitted: call fit(F, y) first")
        if sorted(int(c) for c in np.atleast_1d(passive)) != last.passive_.tolist():
            raise InvalidInputError(f"passive must be the classifier's passive columns {last.passive_.tolist()}; "
                                    f"got {passive!r}")
        return last.model_
    return VFLModel.from_sklearn(last, passive)
