"""SecretFlow-Serving model packages (SS-LR / SS-GLM exports) as a :class:`VFLModel`.

What a SecretFlow deployment holds is one **package per party**: a ``.tar.gz`` with a
``MANIFEST`` (JSON: ``bundle_path``, ``bundle_format`` ``FF_JSON`` or ``FF_PB``) and the model
bundle it names (``model_file``), a ``ModelBundle`` message of SecretFlow-Serving's
``secretflow_serving/protos/bundle.proto``, as protobuf JSON or protobuf binary. Every party's
graph has the same nodes; each holds only its own attributes:

* ``DOT_PRODUCT`` (``secretflow_serving/ops/dot_product.cc``): ``feature_names``,
  ``feature_weights`` and ``intercept`` (non-zero only in the label holder's package); the
  party's partial logit is ``x . w + intercept``;
* ``MERGE_Y`` (``secretflow_serving/ops/merge_y.cc``): ``link_function`` (the enum's name,
  e.g. ``LF_SIGMOID_T1``), ``yhat_scale`` and ``exp_iters``; the published score is
  ``yhat_scale * link(sum of the partial logits)``.

Both encodings are read here without SecretFlow's libraries (``secretflow-serving-lib`` pins
numpy < 2): JSON with :mod:`json` (snake_case and lowerCamel field names, as protobuf's JSON
parser accepts), binary with a protobuf wire-format reader of the few messages above (field
numbers from the same ``.proto`` files). The tar is read in memory, never extracted.
"""

from __future__ import annotations

import json
import pathlib
import struct
import tarfile
from typing import Any

import numpy as np

from .._validate import InvalidInputError
from ..model import VFLModel

__all__ = ["from_secretflow_serving", "read_package"]

#: the largest member read from a package (a linear model's bundle is a few KB; a cap keeps a
#: crafted packed list from costing minutes to decode)
_MAX_MEMBER = 16 << 20


def _err(path: Any, what: str) -> InvalidInputError:
    return InvalidInputError(f"SecretFlow-Serving package {str(path)!r}: {what}")


# ---- protobuf wire format (https://protobuf.dev/programming-guides/encoding/) -------------

def _varint(buf: bytes, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[i]
        i += 1
        out |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return out, i
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _fields(buf: bytes):
    """``(field number, wire type, value)`` of a message: an int for VARINT, bytes otherwise."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if num == 0:
            raise ValueError("field number 0")
        if wire == 0:
            val, i = _varint(buf, i)
        elif wire == 1:
            val, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            val, i = buf[i:i + n], i + n
        elif wire == 5:
            val, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if i > len(buf):
            raise ValueError("truncated field")
        yield num, wire, val


def _signed(v: int, bits: int) -> int:
    v &= (1 << 64) - 1
    if v >= 1 << 63:
        v -= 1 << 64
    if bits == 32:
        v = (v + (1 << 31)) % (1 << 32) - (1 << 31)
    return v


def _list(buf: bytes, kind: str) -> list:
    """A ``*List`` message (field 11: packed or not)."""
    out: list = []
    for num, wire, val in _fields(buf):
        if num != 11:
            continue
        if kind in ("ss", "bys"):
            out.append(val.decode("utf-8") if kind == "ss" else val)
        elif kind == "ds":
            out.extend(struct.unpack(f"<{len(val) // 8}d", val) if wire == 2 else struct.unpack("<d", val))
        elif kind == "fs":
            out.extend(struct.unpack(f"<{len(val) // 4}f", val) if wire == 2 else struct.unpack("<f", val))
        else:   # varints: i32s, i64s, bs
            vals = [val] if wire == 0 else []
            j = 0
            while wire == 2 and j < len(val):
                v, j = _varint(val, j)
                vals.append(v)
            conv = {"i32s": lambda v: _signed(v, 32), "i64s": lambda v: _signed(v, 64), "bs": bool}[kind]
            out.extend(conv(v) for v in vals)
    return out


_ATTR_SCALARS = {1: "i32", 2: "i64", 3: "f", 4: "d", 5: "s", 6: "b", 7: "by"}
_ATTR_LISTS = {11: "i32s", 12: "i64s", 13: "fs", 14: "ds", 15: "ss", 16: "bs", 17: "bys"}


def _attr_pb(buf: bytes) -> Any:
    """The value of an ``op.AttrValue`` (attr.proto: a oneof of scalars and lists)."""
    value: Any = None
    for num, _wire, val in _fields(buf):
        if num in _ATTR_SCALARS:
            kind = _ATTR_SCALARS[num]
            value = {"i32": lambda v: _signed(v, 32), "i64": lambda v: _signed(v, 64),
                     "f": lambda v: struct.unpack("<f", v)[0], "d": lambda v: struct.unpack("<d", v)[0],
                     "s": lambda v: v.decode("utf-8"), "b": bool, "by": bytes}[kind](val)
        elif num in _ATTR_LISTS:
            value = _list(val, _ATTR_LISTS[num])
    return value


def _node_pb(buf: bytes) -> dict:
    """``NodeDef``: name 1, op 2, parents 3, attr_values 4 (map entries: key 1, value 2)."""
    node: dict = {"name": "", "op": "", "parents": [], "attrs": {}}
    for num, _, val in _fields(buf):
        if num == 1:
            node["name"] = val.decode("utf-8")
        elif num == 2:
            node["op"] = val.decode("utf-8")
        elif num == 3:
            node["parents"].append(val.decode("utf-8"))
        elif num == 4:
            key, attr = "", None
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    key = v2.decode("utf-8")
                elif n2 == 2:
                    attr = _attr_pb(v2)
            node["attrs"][key] = attr
    return node


def _bundle_pb(buf: bytes) -> dict:
    """``ModelBundle``: name 1, desc 2, graph 3 (``GraphDef``: version 1, node_list 2)."""
    out: dict = {"name": "", "nodes": []}
    for num, _, val in _fields(buf):
        if num == 1:
            out["name"] = val.decode("utf-8")
        elif num == 3:
            for n2, _, v2 in _fields(val):
                if n2 == 2:
                    out["nodes"].append(_node_pb(v2))
    return out


# ---- protobuf JSON ----------------------------------------------------------------------

def _get(doc: dict, snake: str) -> Any:
    """A field by its proto name or its lowerCamel JSON name."""
    if snake in doc:
        return doc[snake]
    head, *rest = snake.split("_")
    return doc.get(head + "".join(w.title() for w in rest))


def _attr_json(doc: Any) -> Any:
    if not isinstance(doc, dict) or len(doc) != 1:
        raise ValueError(f"an AttrValue holds one value; got {doc!r}")
    (kind, val), = doc.items()
    if kind in _ATTR_LISTS.values():
        data = (val or {}).get("data", [])
        if not isinstance(data, list):
            raise ValueError(f"an {kind} attribute's data must be a list; got {data!r:.40}")
        return data
    if kind in ("i32", "i64"):
        if isinstance(val, bool) or not isinstance(val, (int, str)):
            raise ValueError(f"an {kind} attribute must be an integer; got {val!r:.40}")
        return int(val)         # protobuf JSON writes 64-bit integers as strings
    if kind in ("d", "f"):
        if isinstance(val, bool) or not isinstance(val, (int, float, str)):
            raise ValueError(f"a {kind} attribute must be a number; got {val!r:.40}")
        return float(val)       # protobuf JSON writes "NaN", "Infinity" as strings
    if kind == "s" and not isinstance(val, str):
        raise ValueError(f"an s attribute must be text; got {val!r:.40}")
    if kind == "b" and not isinstance(val, bool):
        raise ValueError(f"a b attribute must be true or false; got {val!r:.40}")
    return val


def _bundle_json(text: bytes) -> dict:
    doc = json.loads(text.decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("a ModelBundle is a JSON object")
    graph = _get(doc, "graph") or {}
    node_list = _get(graph, "node_list") or []
    if not isinstance(node_list, list) or not all(isinstance(n, dict) for n in node_list):
        raise ValueError("graph.node_list must be a list of nodes")
    nodes = []
    for n in node_list:
        attrs = {k: _attr_json(v) for k, v in (_get(n, "attr_values") or {}).items()}
        nodes.append({"name": n.get("name", ""), "op": n.get("op", ""), "parents": list(n.get("parents", [])),
                      "attrs": attrs})
    return {"name": doc.get("name", ""), "nodes": nodes}


# ---- the package ----------------------------------------------------------------------

def read_package(path: Any) -> dict:
    """One party's package: ``{"name", "nodes": [{"name", "op", "parents", "attrs"}]}``.

    The tar is read in memory (nothing is extracted); the bundle is the member the
    MANIFEST's ``bundle_path`` names, decoded as its ``bundle_format`` says.
    """
    try:
        with tarfile.open(path, "r:*") as tar:
            def member(name):
                try:
                    info = tar.getmember(name)
                except KeyError:
                    raise _err(path, f"has no member {name!r} (members: {tar.getnames()})") from None
                if not info.isfile() or info.size > _MAX_MEMBER:
                    raise _err(path, f"member {name!r} is not a regular file of at most {_MAX_MEMBER} bytes")
                return tar.extractfile(info).read()

            manifest = json.loads(member("MANIFEST").decode("utf-8"))
            if not isinstance(manifest, dict):
                raise _err(path, "MANIFEST is not a JSON object")
            bundle_path = _get(manifest, "bundle_path")
            fmt = _get(manifest, "bundle_format")
            if not isinstance(bundle_path, str) or not bundle_path:
                raise _err(path, f"MANIFEST has no bundle_path; got {manifest!r}")
            data = member(bundle_path)
    except (tarfile.TarError, EOFError, OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _err(path, f"is not a readable package (a .tar.gz with MANIFEST and the model bundle): "
                         f"{type(exc).__name__}: {exc}") from None
    fmt = {1: "FF_PB", 2: "FF_JSON"}.get(fmt, fmt) if isinstance(fmt, (int, str)) else fmt
    if fmt not in ("FF_JSON", "FF_PB"):
        raise _err(path, f"MANIFEST's bundle_format must be FF_JSON or FF_PB; got {fmt!r}")
    try:
        bundle = _bundle_json(data) if fmt == "FF_JSON" else _bundle_pb(data)
        _check_bundle(bundle)
    except (ValueError, UnicodeDecodeError, struct.error, AttributeError, TypeError, KeyError, OverflowError,
            RecursionError) as exc:
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise _err(path, f"its {fmt} model bundle {bundle_path!r} cannot be decoded: {what}") from None
    return bundle


def _check_bundle(bundle: dict) -> None:
    """The decoded graph's names are text and its attributes a map (a JSON bundle may hold anything)."""
    if not isinstance(bundle["name"], str):
        raise TypeError(f"the model's name must be text; got {bundle['name']!r:.60}")
    for n in bundle["nodes"]:
        if not (isinstance(n["name"], str) and isinstance(n["op"], str)
                and all(isinstance(p, str) for p in n["parents"])):
            raise TypeError(f"a node's name, op and parents must be text; got {n['name']!r:.40}, {n['op']!r:.40}")


def _one(nodes: list, op: str, path: Any) -> dict:
    found = [n for n in nodes if n["op"] == op]
    if len(found) != 1:
        ops = sorted({n["op"] for n in nodes})
        raise _err(path, f"a linear model's graph has one {op} node; found {len(found)} (ops: {ops}). vflattack "
                         f"reads SS-LR / SS-GLM exports (DOT_PRODUCT per party, MERGE_Y)")
    return found[0]


def _link_name(name: Any, exp_iters: Any, path: Any) -> str:
    from ..links import LINKS

    if not isinstance(name, str):
        raise _err(path, f"MERGE_Y's link_function must be a link's name; got {name!r}")
    if name == "LF_EXP_TAYLOR":
        return f"LF_EXP_TAYLOR:{int(exp_iters or 0)}"
    if name not in LINKS or not name.startswith("LF_"):
        known = sorted(k for k in LINKS if k.startswith("LF_")) + ["LF_EXP_TAYLOR"]
        raise _err(path, f"unknown link_function {name!r}; vflattack implements SecretFlow-Serving's "
                         f"link_function.proto: {', '.join(known)}")
    return name


def _typed(value: Any, what: str, kind: str, path: Any) -> Any:
    """``value`` if it is ``kind`` (one of the phrases below), else an error naming ``what``."""
    def num(v):     # a number float can hold (a JSON integer may be larger: 10**400)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return False
        try:
            float(v)
        except OverflowError:
            return False
        return True

    ok = {"a list of names": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
          "a list of numbers": lambda v: isinstance(v, list) and all(num(x) for x in v),
          "a number": num,
          "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1000}[kind](value)
    if not ok:
        raise _err(path, f"{what} must be {kind}; got {value!r:.60}")
    return float(value) if kind == "a number" else value


def _party_name(path: Any) -> str:
    name = pathlib.Path(str(path)).name
    for suffix in (".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def from_secretflow_serving(packages: Any, *, names: Any = None) -> VFLModel:
    """Every party's SecretFlow-Serving package, the active party's first, as one model.

    Parameters
    ----------
    packages : sequence of paths
        One ``.tar.gz`` per party (module docstring). The first is the **active** party's,
        the one that receives the score (the adversary: its features are known); each other
        is a passive party. All must be packages of one model: same model name, same nodes.
    names : sequence of str, optional
        The parties' names (default: each file's name without ``.tar.gz``; where those repeat,
        each file's folder; else ``party0``, ``party1``, ...).

    Returns
    -------
    VFLModel
        One output, ``yhat_scale * link(W_act y + W_pas x + b)``: the link and scale from
        ``MERGE_Y``, the weights from each party's ``DOT_PRODUCT`` (``b`` the sum of the
        parties' intercepts), one passive party per package after the first, and the
        ``DOT_PRODUCT`` feature names as :attr:`VFLModel.feature_names` (a log's columns are
        matched by them). Precision float64: SecretFlow-Serving computes in double.
    """
    if isinstance(packages, (str, pathlib.Path)):
        packages = [packages]
    packages = list(packages)
    if len(packages) < 2:
        raise InvalidInputError(f"packages must hold every party's package, the active party's first: at least 2 "
                                f"(SecretFlow exports one per party); got {len(packages)}")
    if names is None:
        names = [_party_name(p) for p in packages]
        if len(set(names)) < len(names):   # each party's export under one name (model.tar.gz): its folder's
            names = [pathlib.Path(str(p)).parent.name for p in packages]
        if len(set(names)) < len(names) or not all(names):
            names = [f"party{i}" for i in range(len(packages))]
    names = [str(n) for n in names]
    if len(names) != len(packages) or len(set(names)) != len(names):
        raise InvalidInputError(f"names must name each of the {len(packages)} packages once; got {names!r}")
    parts = []
    model_name = link = scale = None
    for path in packages:
        bundle = read_package(path)
        other = sorted({n["op"] for n in bundle["nodes"]} - {"DOT_PRODUCT", "MERGE_Y"})
        if other:
            raise _err(path, f"its graph has ops {other} beside DOT_PRODUCT and MERGE_Y (a preprocessing step, such "
                             f"as binning or one-hot, before the linear model); vflattack reads the linear model "
                             f"alone, on the features as the log holds them, and would misread this one")
        dot, merge = _one(bundle["nodes"], "DOT_PRODUCT", path), _one(bundle["nodes"], "MERGE_Y", path)
        a = dot["attrs"]
        feats = _typed(a.get("feature_names") or [], "DOT_PRODUCT's feature_names", "a list of names", path)
        weights = _typed(a.get("feature_weights") or [], "DOT_PRODUCT's feature_weights", "a list of numbers", path)
        if len(feats) != len(weights):
            raise _err(path, f"DOT_PRODUCT has {len(feats)} feature_names and {len(weights)} feature_weights")
        w = np.asarray(weights, dtype=float)
        intercept = _typed(a.get("intercept") or 0.0, "DOT_PRODUCT's intercept", "a number", path)
        if not (np.all(np.isfinite(w)) and np.isfinite(intercept)):
            raise _err(path, "DOT_PRODUCT's weights and intercept must be finite")
        m = merge["attrs"]
        iters = _typed(m.get("exp_iters") or 0, "MERGE_Y's exp_iters", "an integer", path)
        this_link = _link_name(m.get("link_function"), iters, path)
        this_scale = _typed(m.get("yhat_scale") if m.get("yhat_scale") is not None else 1.0, "MERGE_Y's yhat_scale",
                            "a number", path)
        if not (np.isfinite(this_scale) and this_scale != 0):
            raise _err(path, f"MERGE_Y's yhat_scale must be finite and non-zero; got {this_scale!r}")
        if model_name is None:
            model_name, link, scale = bundle["name"], this_link, this_scale
        elif (bundle["name"], this_link, this_scale) != (model_name, link, scale):
            raise _err(path, f"is not a package of the same model as {str(packages[0])!r}: model "
                             f"{bundle['name']!r}, link {this_link}, yhat_scale {this_scale:g} against "
                             f"{model_name!r}, {link}, {scale:g}")
        parts.append((list(map(str, feats)), w, intercept))
    (act_feats, w_act, b_act), passive = parts[0], parts[1:]
    if any(len(f) == 0 for f, _, _ in passive):
        empty = [f"{names[i + 1]} ({str(packages[i + 1])!r})" for i, (f, _, _) in enumerate(passive) if not f]
        raise InvalidInputError(f"passive parties {', '.join(empty)} hold no feature in their packages")
    W_pas = np.concatenate([w for _, w, _ in passive])[None, :]
    blocks, start = [], 0
    for f, _, _ in passive:
        blocks.append(list(range(start, start + len(f))))
        start += len(f)
    b = np.array([b_act + sum(c for _, _, c in passive)])
    feature_names = {"active": act_feats, "passive": [n for f, _, _ in passive for n in f]}
    return VFLModel(w_act[None, :], W_pas, b, link=link, yhat_scale=scale, precision="float64", parties=blocks,
                    party_names=names[1:], feature_names=feature_names)
