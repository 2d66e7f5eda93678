"""Prediction logs in the frameworks' own layouts, mapped onto the log audit's columns.

The log audit (:mod:`vflattack.audit.logs`) reads ``id``, ``y0 ..`` (the active party's
features) and ``p0 ..`` (the published values), and a passive log ``id``, ``x0 ..``. A
deployment's own files name their columns after the features and keep the scores where the
framework writes them. The CLI's ``--log`` and ``--passive-log`` take them by kind:

====================================  ====================================================
``--log``                             what it reads
====================================  ====================================================
``fate:PREDICTIONS,GUEST_DATA``       FATE's prediction frame (scores from
                                      ``predict_score`` / ``predict_detail``) and the
                                      guest's data table (``id`` and its header's columns)
``secretflow:LOG``                    a table of ``id``, the active party's features by
                                      their ``DOT_PRODUCT`` names and the score column
                                      ``pred_y`` (``MERGE_Y``'s output) or ``score``
``named:LOG``                         ``id``, the active features by name and ``p0 ..``
a plain path                          the audit's own columns; or, for a model with
                                      feature names, the features by name
====================================  ====================================================

``--passive-log tables:T1[,T2...]`` (also spelled ``fate:`` / ``secretflow:``) reads one
table per passive party, each with ``id`` and that party's own column names (its export's
header), in the model's party order; a plain path keeps ``id``, ``x0 ..`` (or the passive
names). :func:`canonical_logs` writes what it read as the audit's Parquet columns.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

from .._validate import InvalidInputError
from ..model import VFLModel

__all__ = ["canonical_logs", "read_active_log", "read_passive_tables"]

_KINDS = ("fate", "secretflow", "named", "tables")


def _split(spec: Any) -> tuple[str | None, list[str]]:
    spec = str(spec)
    kind, sep, rest = spec.partition(":")
    if sep and kind.lower() in _KINDS:
        return kind.lower(), [p for p in rest.split(",") if p]
    return None, [spec]


def _table(path: str, what: str):
    import pandas as pd

    p = pathlib.Path(path)
    try:
        if p.is_dir() or p.suffix in (".parquet", ".pq"):
            df = pd.read_parquet(p)
        else:
            df = pd.read_csv(p, dtype={"id": str})
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{what} {path!r} cannot be read: {exc}") from None
    if "id" not in df.columns:
        raise InvalidInputError(f"{what} {path!r} has no id column (its columns: {list(df.columns)[:12]})")
    df["id"] = df["id"].astype(str)
    dup = df["id"][df["id"].duplicated()]
    if len(dup):
        raise InvalidInputError(f"{what} {path!r} has {len(dup)} repeated id(s), e.g. {dup.iloc[:3].tolist()}: each "
                                f"record must appear once")
    return df


def _pick(df, names: list[str], path: str, what: str, side: str) -> np.ndarray:
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise InvalidInputError(f"{what} {path!r} lacks the model's {side} feature columns {missing[:8]}"
                                f"{' ...' if len(missing) > 8 else ''}: its columns are {list(df.columns)[:12]} (the "
                                f"model's feature names come from its export; rename the columns or write y0 .. / x0 ..)")
    return df[names].to_numpy(float)


def _active_names(model: VFLModel) -> list[str]:
    if model.n_active == 0:
        return []
    if model.feature_names is None:
        raise InvalidInputError("the model has no feature names (a vflattack model file, or an export without "
                                "headers): give the log the audit's own columns id, y0 .., p0 ..")
    return list(model.feature_names["active"])


def _frame(ids, Y: np.ndarray, P: np.ndarray):
    import pandas as pd

    cols = {"id": np.asarray(ids).astype(str)}
    cols.update({f"y{j}": Y[:, j] for j in range(Y.shape[1])})
    cols.update({f"p{j}": P[:, j] for j in range(P.shape[1])})
    return pd.DataFrame(cols)


def _join(pred, data, path_pred: str, path_data: str):
    merged = pred.merge(data, on="id", how="left", validate="one_to_one", indicator=True)
    lost = int((merged["_merge"] != "both").sum())
    if lost:
        raise InvalidInputError(f"{lost} of {len(pred)} predictions in {path_pred!r} have no row in {path_data!r} "
                                f"(joined on id)")
    return merged


def read_active_log(model: VFLModel, spec: Any):
    """The prediction log ``spec`` (module docstring) as a DataFrame of ``id``, ``y0 ..``,
    ``p0 ..``; None when ``spec`` is a plain path already in the audit's columns."""
    from ..audit.logfiles import columns_of

    kind, paths = _split(spec)
    k = model.n_classes
    if kind is None:
        have = columns_of(paths[0])
        canonical = all(f"y{j}" in have for j in range(model.n_active)) and (
            all(f"p{j}" in have for j in range(k)) or all(f"logp{j}" in have for j in range(k)))
        if canonical or model.feature_names is None:
            return None
        kind = "named"
    if kind == "fate":
        from .fate import read_fate_predictions

        if len(paths) not in (1, 2) or (len(paths) == 1 and model.n_active):
            raise InvalidInputError(f"--log fate: takes the prediction frame and the guest's data table "
                                    f"(fate:PREDICTIONS,GUEST_DATA); got {paths}")
        pred = read_fate_predictions(paths[0], model)
        if model.n_active:
            names = _active_names(model)
            data = _table(paths[1], "the guest's data table")
            merged = _join(pred, data[["id"] + [n for n in names if n in data.columns]], paths[0], paths[1])
            Y = _pick(merged, names, paths[1], "the guest's data table", "active")
        else:
            merged, Y = pred, np.zeros((len(pred), 0))
        return _frame(merged["id"], Y, merged[[f"p{j}" for j in range(k)]].to_numpy(float))
    if len(paths) != 1:
        raise InvalidInputError(f"--log {kind}: takes one table; got {paths}")
    df = _table(paths[0], "the prediction log")
    Y = _pick(df, _active_names(model), paths[0], "the prediction log", "active")
    if kind == "secretflow" or (k == 1 and "p0" not in df.columns):
        col = next((c for c in ("pred_y", "score", "p0") if c in df.columns), None)
        if col is None or k != 1:
            raise InvalidInputError(f"the prediction log {paths[0]!r} has no score column pred_y (SecretFlow-Serving's "
                                    f"MERGE_Y output), score or p0 for this {k}-output model")
        P = df[[col]].to_numpy(float)
    else:
        missing = [f"p{j}" for j in range(k) if f"p{j}" not in df.columns]
        if missing:
            raise InvalidInputError(f"the prediction log {paths[0]!r} lacks the score columns {missing}")
        P = df[[f"p{j}" for j in range(k)]].to_numpy(float)
    return _frame(df["id"], Y, P)


def read_passive_tables(model: VFLModel, spec: Any):
    """The passive log ``spec`` as a DataFrame of ``id``, ``x0 ..``; None for a plain path
    already in the audit's columns (module docstring)."""
    from ..audit.logfiles import columns_of

    kind, paths = _split(spec)
    d = model.n_passive
    if kind is None:
        have = columns_of(paths[0])
        if all(f"x{j}" in have for j in range(d)) or model.feature_names is None:
            return None
        kind, paths = "named", paths
    names = list(model.feature_names["passive"]) if model.feature_names is not None else None
    if names is None:
        raise InvalidInputError("the model has no feature names: give the passive log the columns id, x0 ..")
    import pandas as pd  # here: a log already in the audit's columns is read by the workers alone

    if kind == "named":
        df = _table(paths[0], "the passive log")
        X = _pick(df, names, paths[0], "the passive log", "passive")
        ids = df["id"]
    else:
        if len(paths) != model.n_parties:
            raise InvalidInputError(f"--passive-log {kind}: takes one table per passive party ({model.n_parties}: "
                                    f"{list(model.party_names)}, in that order); got {len(paths)}")
        merged = None
        for party, cols, path in zip(model.party_names, model.parties, paths):
            own = [names[c] for c in cols]
            prefix = f"{party}."
            own = [n[len(prefix):] if n.startswith(prefix) else n for n in own]   # the party's own header
            df = _table(path, f"party {party}'s table")
            block = pd.DataFrame({"id": df["id"]})
            vals = _pick(df, own, path, f"party {party}'s table", "passive")
            for c, j in enumerate(cols):
                block[f"x{j}"] = vals[:, c]
            merged = block if merged is None else merged.merge(block, on="id", how="inner", validate="one_to_one")
        X = merged[[f"x{j}" for j in range(d)]].to_numpy(float)
        ids = merged["id"]
    out = pd.DataFrame({"id": np.asarray(ids).astype(str)})
    for j in range(d):
        out[f"x{j}"] = X[:, j]
    return out


def canonical_logs(model: VFLModel, log: Any, passive_log: Any, directory: Any) -> tuple[str, str | None]:
    """The paths the log audit reads for ``log`` and ``passive_log`` (module docstring): the
    given ones when they are in the audit's columns already, else Parquet files written into
    ``directory`` (``log.parquet``, ``passive.parquet``)."""
    directory = pathlib.Path(directory)
    active = read_active_log(model, log)
    passive = None if passive_log is None else read_passive_tables(model, passive_log)
    if active is None and passive is not None:     # the converted passive ids are text: so must the log's be
        active = _table(str(log), "the prediction log")
    if active is not None:
        log = str(directory / "log.parquet")
        active.to_parquet(log, index=False)
    if passive_log is not None:
        if passive is None and active is not None:   # the converted log's ids are text: so must these be
            passive = _table(str(passive_log), "the passive log")
        if passive is not None:
            passive_log = str(directory / "passive.parquet")
            passive.to_parquet(passive_log, index=False)
    return str(log), None if passive_log is None else str(passive_log)
