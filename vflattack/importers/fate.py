"""FATE 2.x ``CoordinatedLR`` exports (hetero logistic regression) as a :class:`VFLModel`, and
FATE's prediction frames as score columns.

Each FATE party exports only its own half of the model (FATE-Flow#567). What each file holds,
as FATE 2.x writes it (``python/fate/ml/glm/hetero/coordinated_lr/guest.py`` and ``host.py``,
``get_model``; the model artifact is ``json.dump`` of that dict):

* ``{"data": {"estimator": E}, "meta": M}``; the guest's ``M`` has ``labels`` (sorted),
  ``ovr`` and ``threshold``; the host's has ``label_count`` and ``ovr``.
* ``E`` is one estimator (binary: the score of label ``labels[1]``), or with ``ovr`` one per
  class, keyed by the class's **index** ``"0" .. "k-1"`` (``labels[i]`` is estimator ``i``'s).
* An estimator's ``param`` is ``{"coef_": [[w_1], ..., [w_d]], "intercept_": [b] or null,
  "dtype"}`` and its ``header`` the party's column names. The host never has an intercept.

The scores are ``sigmoid(X_guest w_g + b + sum_h X_host w_h)``, one independent sigmoid per
class (one-vs-rest: never a softmax), computed by torch in the model's ``dtype``. At
prediction each host sends its partial logit ``X_host w_h`` to the guest in plaintext.

The model file may also be wrapped as FATE-Flow's query returns it (``{"output_model": ...}``,
inside ``{"code", "message", "data"}`` over HTTP); both are unwrapped.
"""

from __future__ import annotations

import json
import pathlib
import warnings
from typing import Any

import numpy as np

from .._validate import InvalidInputError
from ..model import VFLModel

__all__ = ["SuspectInterceptWarning", "from_fate", "read_fate_predictions"]


class SuspectInterceptWarning(UserWarning):
    """A FATE export whose intercept equals its last weight (a July 2023 development build cut
    the weight vector before reading the intercept; no release did)."""


def _load(path: Any) -> dict:
    try:
        doc = json.loads(pathlib.Path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidInputError(f"FATE model {str(path)!r} is not a readable JSON file: {what}") from None
    for _ in range(3):     # {"code", "message", "data": {"output_model": {...}}} -> {"output_model": ...} -> model
        if isinstance(doc, dict) and "code" in doc and isinstance(doc.get("data"), dict) and "estimator" not in doc["data"]:
            doc = doc["data"]
        if isinstance(doc, dict) and isinstance(doc.get("output_model"), dict):
            doc = doc["output_model"]
    if not (isinstance(doc, dict) and isinstance(doc.get("data"), dict) and isinstance(doc.get("meta"), dict)
            and isinstance(doc["data"].get("estimator"), dict)):
        raise InvalidInputError(f"FATE model {str(path)!r} is not a CoordinatedLR export: it needs "
                                f"{{'data': {{'estimator': ...}}, 'meta': ...}} (what get_model() returns)")
    return doc


def _flag(value: Any, path: Any, what: str) -> bool:
    """A JSON boolean (``"false"`` is text, and true to Python: refused, never guessed)."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"FATE model {str(path)!r}: {what} must be true or false; got {value!r}")
    return value


def _intercept(inter: Any, path: Any, where: str) -> float:
    """``intercept_``: null, a number, or a list of one number (torch's ``tolist()`` of a 1-vector)."""
    if inter is None:
        return 0.0
    vals = inter if isinstance(inter, list) else [inter]
    ok = len(vals) == 1 and not isinstance(vals[0], bool) and isinstance(vals[0], (int, float))
    try:
        b = float(vals[0]) if ok else float("nan")
    except OverflowError:     # a JSON integer beyond float's range
        b = float("nan")
    if not np.isfinite(b):
        raise InvalidInputError(f"FATE model {str(path)!r}: {where}'s intercept_ must be null or one finite number "
                                f"[b]; got {inter!r:.60}")
    return b


def _estimator(est: Any, path: Any, where: str, guest: bool) -> tuple[np.ndarray, float, list, str]:
    """``(weights, intercept, header, dtype)`` of one binary estimator."""
    param = est.get("param") if isinstance(est, dict) else None
    if not isinstance(param, dict) or "coef_" not in param:
        raise InvalidInputError(f"FATE model {str(path)!r}: {where} has no param.coef_")
    try:
        if not isinstance(param["coef_"], list) or any(isinstance(v, bool) for v in np.ravel(param["coef_"])):
            raise TypeError
        coef = np.asarray(param["coef_"], dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(f"FATE model {str(path)!r}: {where}'s coef_ is not a list of numbers") from None
    if coef.ndim == 2 and coef.shape[1] == 1:
        coef = coef[:, 0]
    if coef.ndim != 1 or not np.all(np.isfinite(coef)):
        raise InvalidInputError(f"FATE model {str(path)!r}: {where}'s coef_ must be a finite column [[w1], ..., [wd]]; "
                                f"got shape {np.shape(param['coef_'])}")
    inter = param.get("intercept_")
    if guest:
        fit = _flag(est.get("fit_intercept", True), path, f"{where}'s fit_intercept")
        b = _intercept(inter, path, where)
        if not fit and b != 0.0:
            raise InvalidInputError(f"FATE model {str(path)!r}: {where} has fit_intercept false and intercept {b}")
        if fit and coef.size and b != 0.0 and b == coef[-1]:
            warnings.warn(f"FATE model {str(path)!r}: {where}'s intercept equals its last weight ({b!r}). FATE builds "
                          "of 14-17 July 2023 (commits 10691e9, 50a2a79) cut the weight vector before reading the "
                          "intercept and exported the last weight in its place; no release did. If this model comes "
                          "from such a build its intercept is lost: audit with a corrected file.",
                          SuspectInterceptWarning, stacklevel=4)
    else:
        if _intercept(inter, path, where) != 0.0:
            raise InvalidInputError(f"FATE model {str(path)!r} has an intercept: a host's CoordinatedLR never fits one "
                                    f"(host.py: 'host never has fit intercept'); is it the guest's file?")
        b = 0.0
    header = est.get("header")
    if header is not None and (not isinstance(header, list) or len(header) != coef.size
                               or not all(isinstance(h, (str, int)) and not isinstance(h, bool) for h in header)):
        raise InvalidInputError(f"FATE model {str(path)!r}: {where}'s header must name each of its {coef.size} "
                                f"weights' columns; got {header!r:.80}")
    dtype = param.get("dtype", "float64")
    if not isinstance(dtype, str):
        raise InvalidInputError(f"FATE model {str(path)!r}: {where}'s dtype must be a dtype's name; got {dtype!r}")
    return coef, b, list(map(str, header)) if header is not None else None, str(dtype).replace("torch.", "")


def _estimators(doc: dict, path: Any, guest: bool, k: int | None) -> list:
    E, ovr = doc["data"]["estimator"], _flag(doc["meta"].get("ovr", False), path, "meta.ovr")
    if not ovr:
        if "param" not in E:
            raise InvalidInputError(f"FATE model {str(path)!r}: meta.ovr is false but the estimator is not one binary "
                                    f"estimator (keys {sorted(E)[:5]})")
        return [_estimator(E, path, "the estimator", guest)]
    keys = sorted(E, key=lambda s: int(s) if str(s).isdigit() else -1)
    if not keys or keys != [str(i) for i in range(len(keys))]:
        raise InvalidInputError(f"FATE model {str(path)!r}: a one-vs-rest estimator is keyed by class index "
                                f"'0'..'k-1'; got keys {sorted(E)}")
    if k is not None and len(keys) != k:
        raise InvalidInputError(f"FATE model {str(path)!r} has {len(keys)} one-vs-rest estimators; the guest has {k}")
    return [_estimator(E[key], path, f"estimator {key}", guest) for key in keys]


def from_fate(guest: Any, hosts: Any, *, host_names: Any = None) -> VFLModel:
    """A FATE 2.x ``CoordinatedLR`` model from the guest's export and every host's.

    Parameters
    ----------
    guest : path
        The guest's model file (the active party: it holds the labels and receives the scores).
    hosts : path or sequence of paths
        Each host's model file (the passive parties), in FATE's host order.
    host_names : sequence of str, optional
        The hosts' names (default ``host`` for one, ``host0``, ``host1``, ... for several, as
        FATE numbers them).

    Returns
    -------
    VFLModel
        Link ``ovr``: one output for a binary model (the score of ``labels[1]``), k for a
        one-vs-rest model; ``W_act`` the guest's weights, ``W_pas`` the hosts' (one party
        each), ``b`` the guest's intercepts; ``precision`` from the export's ``dtype``;
        ``feature_names`` from each estimator's ``header`` (every host's names prefixed
        ``HOST.`` when some name appears twice, as FATE's example data's ``x0 ..`` do on both
        sides).
    """
    hosts = [hosts] if isinstance(hosts, (str, pathlib.Path)) else list(hosts)
    if not hosts:
        raise InvalidInputError("hosts must hold at least one host's model file (FATE exports each party's half)")
    g = _load(guest)
    meta = g["meta"]
    if "labels" not in meta:
        hint = " (it has label_count: a host's file?)" if "label_count" in meta else ""
        raise InvalidInputError(f"FATE model {str(guest)!r} is not a guest's export: its meta has no labels{hint}; "
                                f"give the guest's file first")
    labels = meta["labels"]
    if not isinstance(labels, list) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                               for v in labels) or len(set(map(str, labels))) != len(labels):
        raise InvalidInputError(f"FATE model {str(guest)!r}: meta.labels must list the distinct class labels; "
                                f"got {labels!r:.80}")
    g_est = _estimators(g, guest, True, None)
    k = len(g_est)
    if bool(meta.get("ovr", False)) != (k > 1) or (k > 1 and len(labels) != k) or (k == 1 and len(labels) != 2):
        raise InvalidInputError(f"FATE model {str(guest)!r}: {len(labels)} labels with ovr={meta.get('ovr')} and "
                                f"{k} estimator(s) do not agree")
    if host_names is None:
        host_names = ["host"] if len(hosts) == 1 else [f"host{i}" for i in range(len(hosts))]
    host_names = [str(n) for n in host_names]
    if len(host_names) != len(hosts) or len(set(host_names)) != len(host_names):
        raise InvalidInputError(f"host_names must name each of the {len(hosts)} hosts once; got {host_names!r}")
    h_est = []
    for path in hosts:
        h = _load(path)
        if "labels" in h["meta"]:
            raise InvalidInputError(f"FATE model {str(path)!r} is a guest's export (its meta has labels); give the "
                                    f"guest's file first, then the hosts'")
        if _flag(h["meta"].get("ovr", False), path, "meta.ovr") != (k > 1):
            raise InvalidInputError(f"FATE model {str(path)!r} has ovr={h['meta'].get('ovr')}, the guest "
                                    f"{meta.get('ovr')}: not halves of one model")
        h_est.append(_estimators(h, path, False, k if k > 1 else None))
    W_act = np.vstack([w for w, _, _, _ in g_est])
    b = np.array([c for _, c, _, _ in g_est])
    blocks, cols, start = [], [], 0
    for est in h_est:
        sizes = {w.size for w, _, _, _ in est}
        if len(sizes) != 1:
            raise InvalidInputError("a host's one-vs-rest estimators must have one weight per host column each")
        cols.append(np.vstack([w for w, _, _, _ in est]))
        blocks.append(list(range(start, start + cols[-1].shape[1])))
        start += cols[-1].shape[1]
    W_pas = np.hstack(cols)
    dtypes = {dt for est in [g_est] + h_est for _, _, _, dt in est}
    precision = "float32" if dtypes == {"float32"} else "float64"
    feature_names = _names(g_est[0][2], [est[0][2] for est in h_est], host_names)
    return VFLModel(W_act, W_pas, b, classes=labels, link="ovr", parties=blocks, party_names=host_names,
                    precision=precision, feature_names=feature_names)


def _names(guest: list | None, hosts: list, host_names: list) -> dict | None:
    if guest is None or any(h is None for h in hosts):
        return None     # exports of FATE 2.0.0-beta have no header
    seen = list(guest) + [n for h in hosts for n in h]
    clash = len(set(seen)) < len(seen)
    passive = [f"{p}.{n}" if clash else n for p, h in zip(host_names, hosts) for n in h]
    return {"active": list(guest), "passive": passive}


def read_fate_predictions(path: Any, model: VFLModel):
    """A FATE prediction frame (CSV or Parquet) as ``id`` and the published scores ``p0 ..``.

    The frame's columns are ``sample_id`` (``extend_sid``), the match id (``id``), ``label``,
    ``predict_score``, ``predict_result``, ``predict_detail``, ``type``
    (``python/fate/ml/utils/predict_tools.py``). ``predict_detail`` holds every class's
    sigmoid, keyed by the label, written as ``"{'0': 0.56, '1': 0.43}"``; for a binary model
    the score published is ``predict_score`` (label ``labels[1]``'s), for a one-vs-rest model
    each label's own score, in the model's class order. Returns a pandas DataFrame with
    ``id`` (the match id) and ``p0 .. p{k-1}``.
    """
    import ast

    import pandas as pd

    p = str(path)
    try:
        df = pd.read_parquet(p) if p.endswith((".parquet", ".pq")) else pd.read_csv(p, dtype={"id": str})
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"FATE prediction frame {p!r} cannot be read: {exc}") from None
    need = {"predict_score", "predict_detail"}
    if not need <= set(df.columns):
        raise InvalidInputError(f"FATE prediction frame {p!r} lacks {sorted(need - set(df.columns))}: its columns are "
                                f"{list(df.columns)} (a FATE 2.x frame has sample_id, id, label, predict_score, "
                                f"predict_result, predict_detail, type)")
    idcol = "id" if "id" in df.columns else next((c for c in ("sample_id", "extend_sid") if c in df.columns), None)
    if idcol is None:
        raise InvalidInputError(f"FATE prediction frame {p!r} has no id column (id, sample_id or extend_sid)")
    labels = [str(c) for c in model.classes.tolist()]
    if model.n_classes == 1:
        scores = df["predict_score"].to_numpy(float)[:, None]
    else:
        def parse(text):
            try:
                d = ast.literal_eval(str(text).strip().strip('"'))
                return [float(d[lab] if lab in d else d[int(lab)]) for lab in labels]
            except (ValueError, SyntaxError, KeyError, TypeError):
                raise InvalidInputError(f"FATE prediction frame {p!r}: predict_detail {text!r} does not hold a score "
                                        f"for each of the model's labels {labels}") from None
        scores = np.array([parse(t) for t in df["predict_detail"]], dtype=float).reshape(len(df), -1)
    ids = df[idcol].astype(str)
    if ids.duplicated().any():
        raise InvalidInputError(f"FATE prediction frame {p!r} repeats ids in {idcol!r}, e.g. "
                                f"{ids[ids.duplicated()].iloc[:3].tolist()}: each prediction must appear once")
    out = pd.DataFrame({"id": ids.to_numpy()})
    for j in range(scores.shape[1]):
        out[f"p{j}"] = scores[:, j]
    return out
