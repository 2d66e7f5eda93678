"""The protocol every vflattack experiment follows, in one place.

* Data: a named dataset, min-max scaled to [0, 1] (:func:`load_data`), or the caller's own
  features and labels.
* Rows: a seeded split of the records into training and prediction rows
  (:func:`split_rows`), the prediction rows optionally capped; the prediction fraction is
  an option of every experiment (default 0.2, Luo et al.'s 80/20 split).
* Columns: a seeded shuffle whose **last d** columns are the passive party's
  (:func:`split_columns`), or the passive columns named by index or feature name
  (:func:`resolve_columns`). This is Luo et al.'s protocol, as in the papers.
* Training: the split model, trained by L-BFGS on the training rows.

:func:`build_scenario` does the last three, the one place they are written; every
experiment (the audit, the threat audit, the known-input attack on the defence, the log
export) starts from its :class:`Scenario`. Each experiment returns a :class:`Result`:
records and the configuration, which :mod:`vflattack.report` turns into tables, files and
plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import datasets
from .._validate import InvalidInputError, passive_columns
from ..model import VFLModel, train_vfl_model

__all__ = ["PREDICT_FRACTION", "Result", "Scenario", "build_scenario", "load_data", "resolve_columns",
           "split_columns", "split_rows"]

#: the share of the records held out as predictions (Luo et al.'s 80/20 split)
PREDICT_FRACTION = 0.2


@dataclass
class Result:
    """What an experiment computed: its records and its configuration.

    ``kind`` names the experiment (``"audit"``, ``"threats"``, ``"known_input"``,
    ``"log_audit"``, ``"release_sweep"``); :func:`vflattack.report.render` picks the report
    that formats it. ``parts`` holds the results a composite experiment is made of (the
    precision sweep's one audit per release).
    """

    kind: str
    records: list
    config: dict = field(default_factory=dict)
    parts: list = field(default_factory=list)


def split_columns(n_features: int, n_passive: int, rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """Seeded column shuffle; the last ``n_passive`` columns are passive. Returns (active, passive)."""
    if not 1 <= n_passive <= n_features - 1:
        raise InvalidInputError(f"n_passive must be in [1, {n_features - 1}] for this dataset; got {n_passive}")
    perm = np.random.default_rng(rng).permutation(n_features)
    return np.sort(perm[:-n_passive]), np.sort(perm[-n_passive:])


def resolve_columns(columns: Sequence[Any], names: Sequence[str]) -> np.ndarray:
    """Passive columns given by index or by name -> sorted distinct indices, leaving the
    active party at least one column."""
    return passive_columns("passive_columns", columns, len(names), names, leave_active=True)


def split_rows(n: int, predict_fraction: float, n_predictions: int | None, rng: Any):
    """Seeded split into (train, predict) row indices; predictions capped at ``n_predictions``."""
    if not 0 < predict_fraction < 1:
        raise InvalidInputError(f"predict_fraction must be in (0, 1); got {predict_fraction}")
    perm = np.random.default_rng(rng).permutation(n)
    n_pred = int(round(predict_fraction * n))
    pred, train = perm[:n_pred], perm[n_pred:]
    if n_predictions is not None:
        if isinstance(n_predictions, bool) or not isinstance(n_predictions, (int, np.integer)) or n_predictions < 1:
            raise InvalidInputError(f"n_predictions must be a positive integer or None; got {n_predictions!r}")
        pred = pred[: int(n_predictions)]
    return np.sort(train), np.sort(pred)


def load_data(dataset: str, data_dir: Any = None, data: tuple | None = None, *, normalize: bool = True,
              check_unit: bool = True) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(features, labels, feature names)`` of a named dataset, or of ``data=(features, labels)``.

    The caller's own features must lie in [0, 1] when ``check_unit`` (min-max scale them
    first); their names are the column indices.
    """
    if data is None:
        return datasets.load(dataset, data_dir, normalize=normalize, return_names=True)
    F, labels = np.asarray(data[0], dtype=float), np.asarray(data[1])
    if check_unit and (F.min() < 0 or F.max() > 1):
        raise InvalidInputError("data features must lie in [0, 1] (min-max scale them first)")
    return F, labels, [str(j) for j in range(F.shape[1])]


@dataclass(frozen=True)
class Scenario:
    """One split of one dataset: the parties' columns, the training and prediction rows, the model.

    ``Y``/``X`` are the prediction rows' active and passive features, ``Y_train``/``X_train``
    the training rows'; :meth:`scores` is what the active party sees.
    """

    features: np.ndarray
    labels: np.ndarray
    train: np.ndarray
    predict: np.ndarray
    active: np.ndarray
    passive: np.ndarray
    model: VFLModel
    seed: int
    Y: np.ndarray
    X: np.ndarray
    Y_train: np.ndarray
    X_train: np.ndarray
    #: the passive parties whose columns moved to the active side (build_scenario's colluding)
    colluding: tuple = ()

    @property
    def labels_train(self) -> np.ndarray:
        return self.labels[self.train]

    def scores(self, rows: Any = None) -> np.ndarray:
        """The model's probabilities on the prediction rows (or on ``rows`` of the dataset)."""
        F = self.features[self.predict if rows is None else rows]
        return self.model.predict_proba(F[:, self.active], F[:, self.passive])


def build_scenario(features: np.ndarray, labels: np.ndarray, seed: int, *, n_passive: int | None = None,
                   passive_columns: np.ndarray | None = None, predict_fraction: float = PREDICT_FRACTION,
                   n_predictions: int | None = None, l2: float = 1e-3, link: str = "softmax",
                   parties: Any = None, precision: str | None = None, yhat_scale: float = 1.0,
                   colluding: Any = None) -> Scenario:
    """Split ``features`` by ``seed`` (rows, then columns) and train the split model.

    The passive party holds the last ``n_passive`` columns of the seeded shuffle, or
    exactly ``passive_columns`` (sorted indices, from :func:`resolve_columns`). ``link``,
    ``parties``, ``precision`` and ``yhat_scale`` describe the deployment
    (:func:`vflattack.train_vfl_model`); ``colluding`` names passive parties whose features the
    active party knows: the model is trained on every party, then the colluders' columns move
    to the active side (:meth:`vflattack.VFLModel.colluding`).

    Examples
    --------
    >>> F, labels, _ = load_data("wine")
    >>> sc = build_scenario(F, labels, 0, n_passive=4)
    >>> sc.X.shape, sc.Y_train.shape, sc.model.n_classes       # 20 % of 178 rows predicted
    ((36, 4), (142, 9), 3)
    """
    F = features
    train, pred = split_rows(F.shape[0], predict_fraction, n_predictions, seed)
    if passive_columns is None:
        active, passive = split_columns(F.shape[1], int(n_passive), seed)
    else:
        passive = np.asarray(passive_columns, dtype=np.int64)
        active = np.setdiff1d(np.arange(F.shape[1]), passive)
    Y_train, X_train = F[train][:, active], F[train][:, passive]
    model = train_vfl_model(Y_train, X_train, labels[train], l2=l2, rng=seed, link=link, parties=parties,
                            precision=precision, yhat_scale=yhat_scale)
    if colluding:
        model, moved, kept = model.colluding(colluding)
        active, passive = np.concatenate([active, passive[moved]]), passive[kept]
        Y_train, X_train = F[train][:, active], F[train][:, passive]
    return Scenario(F, labels, train, pred, active, passive, model, int(seed), F[pred][:, active], F[pred][:, passive],
                    Y_train, X_train, tuple(str(c) for c in (colluding or ())))
