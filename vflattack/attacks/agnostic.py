r"""The agnostic attack: no score of the target sample is ever read (docs/theory.md §3).

The adversary (the active party) trains its own logistic regression, the
adversary model (AM), on its features and the labels; its scores ``chat(y)``
replace the real ``c`` in ``b' = J ln c - J W_act y - J b``. The refined model
(RAM) fine-tunes the AM with an extra loss ``lam * D(c_obs, chat)`` on a few real
scores observed earlier (D = cross-entropy or KL; same gradient). Estimator:
``ls`` when rank(A) = d, ``half_star`` otherwise (any chebcenter method allowed).

Per sample, with ``e = bhat' - b'`` and an estimator affine in b (ls, half*):
``||X - xhat_agn||^2 = ||X - xhat_oracle||^2 + ||A^+ e||^2`` (the two terms lie in
Null(A) and Row(A)); see :func:`agnostic_decomposition`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import InvalidInputError, as_2d, as_labels
from ..model import VFLModel, fit_softmax, log_softmax
from ..system import scores_to_system
from .whitebox import AttackResult, Prior, default_estimator, reconstruct

__all__ = ["AdversaryModel", "agnostic_attack", "agnostic_decomposition",
           "refine_adversary_model", "train_adversary_model"]


@dataclass(frozen=True)
class AdversaryModel:
    """The active party's own model ``chat(y) = softmax(V y + v0)`` (AM or RAM)."""

    V: np.ndarray
    v0: np.ndarray
    classes: np.ndarray
    l2: float
    loss: float
    refined: bool = False
    lam: float = 0.0
    n_observed: int = 0
    _train: tuple = field(default=(), repr=False, compare=False)

    def predict_log_proba(self, Y: Any) -> np.ndarray:
        Y = as_2d("Y", Y, n_cols=self.V.shape[1])
        return log_softmax(Y @ self.V.T + self.v0, axis=1)

    def predict_proba(self, Y: Any) -> np.ndarray:
        """Estimated scores ``chat(y)``, shape (N, k)."""
        return np.exp(self.predict_log_proba(Y))


def _targets(codes, k):
    T = np.zeros((codes.size, k))
    T[np.arange(codes.size), codes] = 1.0
    return T


def _codes_in(labels: Any, classes: Any, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels as positions in a given class list (a sequence, or a model's ``classes``)."""
    cls = np.asarray(classes.classes if isinstance(classes, VFLModel) else classes)
    if cls.ndim != 1 or cls.size < 2 or np.unique(cls).size != cls.size:
        raise InvalidInputError(f"classes must be a list of at least 2 distinct labels (or the target model); "
                                f"got {cls.tolist() if cls.ndim <= 1 else cls.shape}")
    lab = np.asarray(labels)
    if lab.shape != (n_rows,):
        raise InvalidInputError(f"labels_train must have shape ({n_rows},): one label per sample; got shape {lab.shape}")
    pos = {c: i for i, c in enumerate(cls.tolist())}
    unknown = sorted({v for v in lab.tolist() if v not in pos}, key=str)
    if unknown:
        raise InvalidInputError(f"labels_train holds labels not in classes {cls.tolist()}: {unknown[:5]}")
    return np.array([pos[v] for v in lab.tolist()], dtype=np.int64), cls


def train_adversary_model(Y_train: Any, labels_train: Any, *, classes: Any = None, l2: float = 1e-3,
                          rng: Any = 0, max_iter: int = 500) -> AdversaryModel:
    """AM: L2 logistic regression of the labels on the active features only (L-BFGS).

    Parameters
    ----------
    Y_train : array_like, shape (N, f)
        The active party's features of its training samples.
    labels_train : array_like, shape (N,)
        Their labels.
    classes : array_like or VFLModel, optional
        The class list, in the order of the target model's score columns: a sequence of
        labels, or the :class:`VFLModel` under attack (its ``classes``). Default: the
        classes that occur in ``labels_train``, sorted. Pass it whenever the adversary's
        labels may miss a class (a small or skewed sample): the adversary model must give
        a score for every column the target releases, or the attacks that compare the two
        refuse the scores. A class with no training label gets its score from the
        regularised fit (small, never zero).
    l2 : float, default 1e-3
        Weight of ``(l2/2) ||V||^2``.
    rng : seed or Generator, default 0
        The start point's tiny random perturbation.
    max_iter : int, default 500
        L-BFGS iterations.

    Raises
    ------
    InvalidInputError
        If a label is not in ``classes``, ``classes`` repeats a label or has fewer than 2,
        or (without ``classes``) the labels hold fewer than 2 classes.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Y = rng.random((300, 2)); lab = (Y[:, 0] > 0.5).astype(int)
    >>> am = train_adversary_model(Y, lab)
    >>> am.predict_proba(Y).shape
    (300, 2)
    """
    Y = as_2d("Y_train", Y_train)
    if classes is None:
        codes, classes = as_labels("labels_train", labels_train, Y.shape[0])
    else:
        codes, classes = _codes_in(labels_train, classes, Y.shape[0])
    k, f = classes.size, Y.shape[1]
    theta0 = 1e-6 * np.random.default_rng(rng).standard_normal(k * (f + 1))
    T = _targets(codes, k)
    V, v0, loss = fit_softmax(Y, T, np.full(Y.shape[0], 1.0 / Y.shape[0]), l2, theta0, max_iter)
    return AdversaryModel(V, v0, classes, l2, loss, _train=(Y, T))


def refine_adversary_model(am: AdversaryModel, Y_obs: Any, scores_obs: Any, *, lam: float = 1.0,
                           divergence: str = "cross_entropy", max_iter: int = 500) -> AdversaryModel:
    r"""RAM: fine-tune the AM on its training loss plus ``lam * D(c_obs, chat)`` on observed scores.

    Minimises ``(1/N_tr) sum CE(label_n, chat(y_n)) + lam (1/N_obs) sum_j D(c_j, chat(y_j))
    + (l2/2)||V||^2`` from the AM's weights, with D the cross-entropy
    ``-sum c log chat`` or the KL divergence (which differs by the constant
    entropy of c: same minimiser). ``lam = 0`` gives back the AM.
    """
    if not isinstance(am, AdversaryModel) or not am._train:
        raise InvalidInputError("am must come from train_adversary_model (it keeps its training data)")
    if divergence not in ("cross_entropy", "kl"):
        raise InvalidInputError(f"divergence must be 'cross_entropy' or 'kl'; got {divergence!r}")
    if not (np.isfinite(lam) and lam >= 0):
        raise InvalidInputError(f"lam must be a finite number >= 0; got {lam!r}")
    Y_tr, T_tr = am._train
    Y_obs = as_2d("Y_obs", Y_obs, n_cols=Y_tr.shape[1])
    C = as_2d("scores_obs", scores_obs, n_cols=T_tr.shape[1], n_rows=Y_obs.shape[0])
    if np.any(C < 0) or np.any(np.abs(C.sum(axis=1) - 1) > 1e-6):
        raise InvalidInputError("scores_obs must be probability rows (>= 0, summing to 1)")
    F = np.vstack([Y_tr, Y_obs])
    T = np.vstack([T_tr, C])
    w = np.concatenate([np.full(Y_tr.shape[0], 1.0 / Y_tr.shape[0]), np.full(Y_obs.shape[0], lam / Y_obs.shape[0])])
    theta0 = np.concatenate([am.V.ravel(), am.v0])
    V, v0, loss = fit_softmax(F, T, w, am.l2, theta0, max_iter)
    if divergence == "kl":
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.nansum(np.where(C > 0, C * np.log(C), 0.0)) / Y_obs.shape[0]
        loss -= lam * ent
    return AdversaryModel(V, v0, am.classes, am.l2, loss, True, float(lam), int(Y_obs.shape[0]), am._train)


def _adversary_scores(model: VFLModel, adversary: Any, Y: np.ndarray) -> tuple[np.ndarray, bool]:
    """The adversary's score estimates in the model's class order: ``(scores, are_log_scores)``.

    Any fitted object with ``predict_log_proba(Y)`` or ``predict_proba(Y)`` will do (an
    :class:`AdversaryModel`, a scikit-learn classifier, ...). Its class labels, read from
    ``classes_`` or ``classes`` when it has them, must be the model's; columns are put in
    the model's order.
    """
    name = type(adversary).__name__
    if hasattr(adversary, "predict_log_proba"):
        S, log = adversary.predict_log_proba(Y), True
    elif hasattr(adversary, "predict_proba"):
        S, log = adversary.predict_proba(Y), False
    else:
        raise InvalidInputError(
            f"adversary must be a fitted model with predict_proba(Y) or predict_log_proba(Y) on the active "
            f"features; got {name}")
    S = as_2d(f"{name}'s scores", S, n_rows=Y.shape[0], finite=False)
    k = model.n_classes
    classes = getattr(adversary, "classes_", getattr(adversary, "classes", None))
    if classes is not None:
        classes = np.asarray(classes)
        if classes.shape != (k,) or set(classes.tolist()) != set(np.asarray(model.classes).tolist()):
            raise InvalidInputError(
                f"adversary's classes must be the model's {np.asarray(model.classes).tolist()}; "
                f"got {classes.tolist()} from {name}")
        order = [int(np.flatnonzero(classes == c)[0]) for c in model.classes]
        S = S[:, order]
    elif S.shape[1] != k:
        raise InvalidInputError(f"adversary must give {k} scores per row (one per class); {name} gave {S.shape[1]}")
    return S, log


def agnostic_attack(model: VFLModel, adversary: Any, Y: Any, methods: Sequence[str] | None = None,
                    *, prior_mean: Any = None, prior: Prior | None = None, rng: Any = 0) -> AttackResult:
    """Reconstruct the passive features with the adversary's estimated scores only.

    ``model`` supplies ``W_act, W_pas, b`` (what the active party is told);
    the real scores are never read. ``adversary`` is any fitted model of the labels on
    the active features with ``predict_log_proba(Y)`` or ``predict_proba(Y)``: an
    :class:`AdversaryModel` from :func:`train_adversary_model`, or e.g. a scikit-learn
    classifier the adversary trained itself (its ``classes_`` must be the model's).
    ``methods=None`` uses ``ls`` when rank(A) = d and ``half_star`` otherwise.
    """
    methods = tuple(methods) if methods is not None else (default_estimator(model),)
    Y = as_2d("Y", Y, n_cols=model.n_active, cols="one per active feature")
    est, log = _adversary_scores(model, adversary, Y)
    from .whitebox import with_domain_rows

    system = with_domain_rows(model, scores_to_system(model, est, Y, log_scores=log))
    recon, status, radii, times, lowers = reconstruct(model.domain_slice(False), np.nan_to_num(system.B), system.valid,
                                                      methods, prior_mean=prior_mean, prior=prior, rng=rng)
    return AttackResult(recon, status, radii, system.flags, times, system, radius_lower=lowers)


def agnostic_decomposition(model: VFLModel, scores: Any, estimated_scores: Any, Y: Any, X_true: Any,
                           method: str = "half_star") -> dict:
    """Per-sample ``||X - xhat_agn||^2``, ``||X - xhat_oracle||^2`` and ``||A^+ e||^2``.

    For ``ls`` and ``half_star`` (affine in b) the first equals the sum of the
    other two exactly; ``e = bhat' - b'`` is the error the estimated scores put
    into the right-hand side.
    """
    if method not in ("ls", "half_star"):
        raise InvalidInputError(f"method must be 'ls' or 'half_star' (affine estimators); got {method!r}")
    X_true = np.asarray(X_true, dtype=float)
    real = scores_to_system(model, scores, Y)
    est = scores_to_system(model, estimated_scores, Y)
    ok = real.valid & est.valid
    # ls and half* as the affine maps b -> A^+ b (+ P m) of chebcenter's factored slice,
    # evaluated on every row: the identity holds for the unclipped maps, also on rows whose
    # estimated slice misses the box (where chebcenter's centers() reports INFEASIBLE)
    sl = model.box_slice
    pinv = sl.A_pinv
    shift = sl.null_projector @ sl.mid if method == "half_star" else 0.0
    oracle = real.B[ok] @ pinv.T + shift
    agn = est.B[ok] @ pinv.T + shift
    e = est.B[ok] - real.B[ok]
    return {"agnostic": np.sum((X_true[ok] - agn) ** 2, axis=1),
            "oracle": np.sum((X_true[ok] - oracle) ** 2, axis=1),
            "score_error": np.sum((e @ pinv.T) ** 2, axis=1), "rows": np.flatnonzero(ok)}
