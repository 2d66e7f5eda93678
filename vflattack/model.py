r"""The split logistic regression of vertical federated learning (docs/theory.md §3).

Logits ``z = W_act y + W_pas x + b`` with the active party's features ``y``
(d_a) and the passive party's ``x`` (d, min-max scaled to [0, 1]); scores
``c = softmax(z)``. A binary scikit-learn model with one logit row ``w`` and
intercept ``beta`` is the k = 2 case with ``z = (0, w^T [y; x] + beta)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax

import chebcenter as cc

from ._validate import InvalidInputError, as_2d, as_active, as_array, as_labels
from ._validate import passive_columns as _passive_columns

__all__ = ["VFLModel", "fit_softmax", "train_vfl_model"]


@dataclass(frozen=True)
class VFLModel:
    """A k-class split logistic regression ``softmax(W_act y + W_pas x + b)``.

    Parameters
    ----------
    W_act : array_like, shape (k, d_a)
        Active party's weights (d_a may be 0).
    W_pas : array_like, shape (k, d)
        Passive party's weights.
    b : array_like, shape (k,)
        Intercepts.
    classes : array_like, optional
        The class labels in score-column order (default ``0..k-1``).

    Examples
    --------
    >>> import numpy as np
    >>> m = VFLModel(np.zeros((2, 1)), np.array([[0.0], [2.0]]), np.zeros(2))
    >>> m.predict_proba(np.zeros((1, 1)), np.ones((1, 1))).round(4).tolist()
    [[0.1192, 0.8808]]
    """

    W_act: np.ndarray
    W_pas: np.ndarray
    b: np.ndarray
    classes: Any = None

    def __post_init__(self) -> None:
        W_pas = as_2d("W_pas", self.W_pas)
        k = W_pas.shape[0]
        if k < 2:
            raise InvalidInputError(f"W_pas must have k >= 2 rows (one per class); got shape {W_pas.shape}")
        W_act = as_array("W_act", self.W_act)
        W_act = as_2d("W_act", W_act, n_rows=k, rows="one per class, like W_pas") if W_act.size else np.zeros((k, 0))
        b = as_array("b", self.b)
        if b.shape != (k,) or not np.all(np.isfinite(b)):
            raise InvalidInputError(f"b must be a finite array of shape ({k},); got shape {b.shape}")
        classes = np.arange(k) if self.classes is None else np.asarray(self.classes)
        if classes.shape != (k,):
            raise InvalidInputError(f"classes must have shape ({k},); got {classes.shape}")
        for name, val in (("W_act", W_act), ("W_pas", W_pas), ("b", b), ("classes", classes)):
            val = np.array(val)
            val.setflags(write=False)
            object.__setattr__(self, name, val)

    @property
    def n_classes(self) -> int:
        return self.W_pas.shape[0]

    @property
    def n_active(self) -> int:
        return self.W_act.shape[1]

    @property
    def n_passive(self) -> int:
        return self.W_pas.shape[1]

    @cached_property
    def system_matrix(self) -> np.ndarray:
        """``A = J W_pas``, shape (k-1, d): the scores give ``A x = b'`` (docs/theory.md, "The mapping").

        ``J`` is the difference matrix (:func:`vflattack.difference_matrix`), so ``J W_pas``
        is the differences of consecutive rows of ``W_pas``."""
        A = np.diff(self.W_pas, axis=0)
        A.setflags(write=False)
        return A

    @cached_property
    def pair_matrix(self) -> np.ndarray:
        """``(e_j - e_i)^T W_pas`` for every class pair ``i < j`` (in that order), shape
        (k(k-1)/2, d): the rows a release's bounds constrain (:mod:`vflattack.release`)."""
        k = self.n_classes
        A = np.array([self.W_pas[j] - self.W_pas[i] for i in range(k) for j in range(i + 1, k)])
        A.setflags(write=False)
        return A

    @cached_property
    def pair_box_slice(self) -> cc.BoxSlice:
        """``chebcenter.BoxSlice(pair_matrix, 0, 1)``, factored once: every attack and exposure
        on a release of this model's scores solves over it."""
        return cc.BoxSlice(self.pair_matrix, lo=0.0, hi=1.0)

    @cached_property
    def box_slice(self) -> cc.BoxSlice:
        """``chebcenter.BoxSlice(A, 0, 1)``: the factored system (rank, null space, A^+), built once.

        Every attack on this model's scores solves over this one object."""
        return cc.BoxSlice(self.system_matrix, lo=0.0, hi=1.0)

    def logits(self, Y: Any, X: Any) -> np.ndarray:
        """``z = Y W_act^T + X W_pas^T + b``, shape (N, k)."""
        X = as_2d("X", X, n_cols=self.n_passive, cols="one per passive feature")
        Y = as_active("Y", Y, X.shape[0], self.n_active)
        return Y @ self.W_act.T + X @ self.W_pas.T + self.b

    def predict_log_proba(self, Y: Any, X: Any) -> np.ndarray:
        """``log softmax(z)``, computed stably, shape (N, k)."""
        return log_softmax(self.logits(Y, X), axis=1)

    def predict_proba(self, Y: Any, X: Any) -> np.ndarray:
        """The confidence scores ``softmax(z)`` revealed to the active party, shape (N, k)."""
        return np.exp(self.predict_log_proba(Y, X))

    def predict(self, Y: Any, X: Any) -> np.ndarray:
        """The most likely class label per row."""
        return self.classes[np.argmax(self.logits(Y, X), axis=1)]

    #: the model file format (JSON): bump on any incompatible change
    SCHEMA_VERSION: ClassVar[int] = 1

    def to_dict(self) -> dict:
        """The model as plain JSON data (see :meth:`save`)."""
        classes = self.classes.tolist()
        return {"format": "vflattack.VFLModel", "schema_version": self.SCHEMA_VERSION,
                "n_classes": self.n_classes, "n_active": self.n_active, "n_passive": self.n_passive,
                "classes": classes, "W_act": self.W_act.tolist(), "W_pas": self.W_pas.tolist(), "b": self.b.tolist()}

    def save(self, path: Any) -> None:
        """Write the model as JSON: an open, documented format an auditor can be handed.

        Keys: ``format`` ("vflattack.VFLModel"), ``schema_version`` (1), ``n_classes``,
        ``n_active``, ``n_passive``, ``classes`` (labels in score-column order), ``W_act``
        (k x d_a), ``W_pas`` (k x d), ``b`` (k). Logits are ``W_act y + W_pas x + b`` and the
        scores their softmax (docs/theory.md §3). Floats are written with full precision
        (``repr``), so :meth:`load` gives back the same model bit for bit.

        Examples
        --------
        >>> import numpy as np, tempfile, pathlib
        >>> m = VFLModel(np.zeros((2, 1)), np.array([[0.0], [2.0]]), np.zeros(2))
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.json"
        >>> m.save(path)
        >>> VFLModel.load(path).predict_proba(np.zeros((1, 1)), np.ones((1, 1))).round(4).tolist()
        [[0.1192, 0.8808]]
        """
        import json
        import pathlib

        pathlib.Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: Any) -> VFLModel:
        """Read a model written by :meth:`save` (the schema version is checked)."""
        import json
        import pathlib

        try:
            doc = json.loads(pathlib.Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"path {str(path)!r} is not a readable model file: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != "vflattack.VFLModel":
            raise InvalidInputError(f"path {str(path)!r} is not a vflattack model file (no format "
                                    "'vflattack.VFLModel')")
        if doc.get("schema_version") != cls.SCHEMA_VERSION:
            raise InvalidInputError(f"model file {str(path)!r} has schema_version {doc.get('schema_version')!r}; "
                                    f"this vflattack reads version {cls.SCHEMA_VERSION}")
        k, d_a = int(doc["n_classes"]), int(doc["n_active"])
        W_act = np.asarray(doc["W_act"], dtype=float).reshape(k, d_a) if d_a else np.zeros((k, 0))
        return cls(W_act, doc["W_pas"], doc["b"], doc["classes"])

    @classmethod
    def from_sklearn(cls, clf: Any, passive_columns: Sequence[int]) -> VFLModel:
        """Split a fitted scikit-learn ``LogisticRegression`` into active and passive parts.

        ``clf`` was fitted on the full feature matrix F; ``passive_columns``
        are the column indices of F held by the passive party; the active
        features are the remaining columns in increasing order, so
        ``Y = F[:, active]``, ``X = F[:, passive_columns]``. Binary models (one
        coefficient row) become ``z = (0, w^T f + beta)``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import LogisticRegression
        >>> F = np.array([[0, 0.], [1, 0], [0, 1], [1, 1]]); lab = [0, 0, 1, 1]
        >>> clf = LogisticRegression().fit(F, lab)
        >>> m = VFLModel.from_sklearn(clf, passive_columns=[1])
        >>> np.allclose(m.predict_proba(F[:, [0]], F[:, [1]]), clf.predict_proba(F))
        True
        """
        name = type(clf).__name__
        classes = getattr(clf, "classes_", None)
        if not hasattr(clf, "coef_") or not hasattr(clf, "intercept_") or classes is None:
            raise InvalidInputError(
                f"clf must be a fitted linear classifier (coef_, intercept_ and classes_, e.g. a fitted "
                f"LogisticRegression); got {name} without {'coef_' if not hasattr(clf, 'coef_') else 'classes_'}")
        coef = as_array("clf.coef_", clf.coef_)
        intercept = as_array("clf.intercept_", clf.intercept_)
        classes = np.asarray(classes)
        k = classes.size
        if coef.ndim != 2 or intercept.ndim != 1 or k < 2 or coef.shape[0] != (1 if k == 2 else k) \
                or intercept.shape[0] != coef.shape[0]:
            raise InvalidInputError(
                f"clf must be a fitted logistic classifier: coef_ of shape (1, F) for 2 classes or (k, F) for k > 2, "
                f"intercept_ to match; got {name} with {k} classes, coef_ {coef.shape}, intercept_ {intercept.shape}")
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
            raise InvalidInputError(f"clf's coef_ and intercept_ must be finite; {name} has NaN or inf")
        n_feat = coef.shape[1]
        passive = _passive_columns("passive_columns", passive_columns, n_feat, keep_order=True)
        active = np.setdiff1d(np.arange(n_feat), passive)
        if coef.shape[0] == 1:  # binary: logits (0, w^T f + beta)
            coef = np.vstack([np.zeros(n_feat), coef[0]])
            intercept = np.array([0.0, intercept[0]])
        return cls(coef[:, active], coef[:, passive], intercept, classes)


def fit_softmax(F: np.ndarray, targets: np.ndarray, weights: np.ndarray, l2: float,
                theta0: np.ndarray, max_iter: int = 500, info: dict | None = None):
    r"""L-BFGS on the weighted soft-target softmax cross-entropy with L2 on W.

    Minimises ``sum_n w_n (-sum_j T_nj log softmax(W f_n + b)_j) + (l2/2) ||W||_F^2``
    (rows of ``targets`` sum to 1). Its gradient in the logits is
    ``w_n (p_n - T_n)``. Returns ``(W, b, loss)``; ``info``, if given, receives the
    iterations run (``n_iter``).
    """
    N, f = F.shape
    k = targets.shape[1]

    def loss(theta):
        W = theta[: k * f].reshape(k, f)
        b = theta[k * f:]
        logp = log_softmax(F @ W.T + b, axis=1)
        value = -np.sum(weights[:, None] * targets * logp) + 0.5 * l2 * np.sum(W * W)
        G = weights[:, None] * (np.exp(logp) - targets)
        grad_W = G.T @ F + l2 * W
        return value, np.concatenate([grad_W.ravel(), G.sum(axis=0)])

    sol = minimize(loss, theta0, jac=True, method="L-BFGS-B", options={"maxiter": int(max_iter), "gtol": 1e-9})
    if info is not None:
        info["n_iter"] = int(sol.nit)
    return sol.x[: k * f].reshape(k, f), sol.x[k * f:], float(sol.fun)


def train_vfl_model(Y: Any, X: Any, labels: Any, *, l2: float = 1e-3, max_iter: int = 500,
                    rng: Any = 0, info: dict | None = None) -> VFLModel:
    r"""Fit the split model by L-BFGS on the L2-regularised softmax cross-entropy.

    Minimises ``(1/N) sum_n -log softmax(W f_n + b)_{y_n} + (l2/2) ||W||_F^2``
    over ``W = [W_act, W_pas]`` and ``b`` (not regularised), with
    ``f = [y; x]``. Deterministic: the start is ``W = 0, b = 0`` plus a tiny
    jitter seeded by ``rng``, so the same arguments give the same model bit
    for bit. ``info``, if given, receives the L-BFGS iterations run (``n_iter``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Y, X = rng.random((200, 2)), rng.random((200, 3))
    >>> lab = (Y[:, 0] + X[:, 0] > 1).astype(int)
    >>> m = train_vfl_model(Y, X, lab)
    >>> float((m.predict(Y, X) == lab).mean()) > 0.9
    True
    """
    X = as_2d("X", X)
    N = X.shape[0]
    Y = as_active("Y", Y, N, None)
    codes, classes = as_labels("labels", labels, N)
    if not (np.isfinite(l2) and l2 >= 0):
        raise InvalidInputError(f"l2 must be a finite number >= 0; got {l2!r}")
    F = np.hstack([Y, X])
    k, f = classes.size, F.shape[1]
    onehot = np.zeros((N, k))
    onehot[np.arange(N), codes] = 1.0
    theta0 = 1e-6 * np.random.default_rng(rng).standard_normal(k * (f + 1))
    W, b, _ = fit_softmax(F, onehot, np.full(N, 1.0 / N), l2, theta0, max_iter, info)
    d_a = Y.shape[1]
    return VFLModel(W[:, :d_a], W[:, d_a:], b, classes)
