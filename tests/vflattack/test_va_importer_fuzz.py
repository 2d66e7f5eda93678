"""Malformed exports: every importer either reads a model or raises InvalidInputError naming the
file, whatever a field holds.

Each leaf (and each container) of the committed fixtures (tests/vflattack/fixtures/fate, made
after FATE 5a06d9e's source; tests/vflattack/fixtures/secretflow_serving, made by
secretflow-serving-lib 0.10.0.dev20250414) is replaced in turn by a value of the wrong type.
No TypeError, ValueError, IndexError, KeyError, AttributeError or RecursionError may escape:
those reach a user as a traceback into the importer instead of a sentence about their file.
Where a replaced value is read as something else without complaint (the string "false" as a
true flag), the model would be silently wrong; those cases are pinned by name below.
"""

import copy
import io
import json
import pathlib
import tarfile

import numpy as np
import pytest

from vflattack._validate import InvalidInputError
from vflattack.importers import from_fate, from_linear_npz
from vflattack.importers.secretflow import from_secretflow_serving

FATE = pathlib.Path(__file__).parent / "fixtures" / "fate"
SF = pathlib.Path(__file__).parent / "fixtures" / "secretflow_serving"

#: wrong-typed stand-ins: none, text, an empty and a nested container, a bool, a non-finite
#: number (JSON writes 1e400 as Infinity), an integer beyond float's range, a deep list
BAD = [None, "x", "false", [], {}, [[1.0, "a"]], True, 1e400, 10 ** 400, [[10 ** 400]], -3, {"a": {"b": None}},
       [[[[0.5]]]]]


def _paths(doc, prefix=()):
    """Every path to a value in a JSON document (containers included), skipping FATE's optimizer
    and scheduler states, which are never read."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("optimizer", "lr_scheduler"):
                continue
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield from _paths(v, prefix + (i,))


def _set(doc, path, value):
    doc = copy.deepcopy(doc)
    if not path:
        return value
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return doc


def _read_or_refuse(where, call, *args):
    try:
        call(*args)
    except InvalidInputError as exc:
        assert where in str(exc), f"{exc} does not name {where}"


@pytest.mark.parametrize("side", ["guest", "host"])
@pytest.mark.parametrize("kind", ["binary", "ovr3"])
def test_fate_exports_with_any_field_replaced_are_read_or_refused(tmp_path, kind, side):
    src = FATE / f"{kind}_{side}_model.json"
    doc = json.loads(src.read_text())
    other = FATE / f"{kind}_{'host' if side == 'guest' else 'guest'}_model.json"
    target = tmp_path / f"{side}.json"
    for path in _paths(doc):
        for value in BAD:
            target.write_text(json.dumps(_set(doc, path, value)))
            guest, host = (target, other) if side == "guest" else (other, target)
            _read_or_refuse(str(target), from_fate, guest, [host])


def test_fate_flags_are_booleans_not_truthy_text(tmp_path):
    """``"ovr": "false"`` or ``"fit_intercept": "no"`` would read as true; they are refused."""
    g = json.loads((FATE / "binary_guest_model.json").read_text())
    g["meta"]["ovr"] = "false"
    (tmp_path / "g.json").write_text(json.dumps(g))
    with pytest.raises(InvalidInputError, match="meta.ovr must be true or false; got 'false'"):
        from_fate(tmp_path / "g.json", FATE / "binary_host_model.json")
    g = json.loads((FATE / "binary_guest_model.json").read_text())
    g["data"]["estimator"]["fit_intercept"] = "no"
    (tmp_path / "g.json").write_text(json.dumps(g))
    with pytest.raises(InvalidInputError, match="fit_intercept must be true or false; got 'no'"):
        from_fate(tmp_path / "g.json", FATE / "binary_host_model.json")


def test_deeply_nested_json_is_refused_not_a_recursion_error(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(InvalidInputError, match="deep.json"):
        from_fate(tmp_path / "deep.json", FATE / "binary_host_model.json")


def _package(dst, model_file: bytes, fmt="FF_JSON"):
    with tarfile.open(dst, "w:gz") as tar:
        for name, data in (("MANIFEST", json.dumps({"bundle_path": "model_file", "bundle_format": fmt}).encode()),
                           ("model_file", model_file)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return dst


@pytest.mark.parametrize("party", ["alice", "bob"])
def test_serving_bundles_with_any_field_replaced_are_read_or_refused(tmp_path, party):
    src = SF / "lr_t1_json" / f"{party}.tar.gz"
    with tarfile.open(src) as tar:
        doc = json.loads(tar.extractfile("model_file").read())
    other = SF / "lr_t1_json" / f"{'bob' if party == 'alice' else 'alice'}.tar.gz"
    target = tmp_path / f"{party}.tar.gz"
    for path in _paths(doc):
        for value in BAD:
            _package(target, json.dumps(_set(doc, path, value)).encode())
            pkgs = [target, other] if party == "alice" else [other, target]
            _read_or_refuse(str(target), from_secretflow_serving, pkgs)


def test_serving_attributes_of_the_wrong_kind_are_refused(tmp_path):
    """A weight list given as text, an intercept given as a list, a scale given as text."""
    with tarfile.open(SF / "lr_t1_json" / "bob.tar.gz") as tar:
        doc = json.loads(tar.extractfile("model_file").read())
    dot = next(n for n in doc["graph"]["node_list"] if n["op"] == "DOT_PRODUCT")
    merge = next(n for n in doc["graph"]["node_list"] if n["op"] == "MERGE_Y")
    alice = SF / "lr_t1_json" / "alice.tar.gz"
    for node, attr, value, says in [(dot, "feature_weights", {"s": "1,2,3"}, "feature_weights"),
                                    (dot, "intercept", {"ds": {"data": [1.0, 2.0]}}, "intercept"),
                                    (merge, "yhat_scale", {"s": "big"}, "yhat_scale"),
                                    (merge, "exp_iters", {"s": "many"}, "exp_iters")]:
        bad = copy.deepcopy(doc)
        n = next(x for x in bad["graph"]["node_list"] if x["name"] == node["name"])
        n["attr_values"][attr] = value
        with pytest.raises(InvalidInputError, match=says):
            from_secretflow_serving([alice, _package(tmp_path / "bob.tar.gz", json.dumps(bad).encode())])


def test_protobuf_bundles_with_flipped_bytes_are_read_or_refused(tmp_path):
    with tarfile.open(SF / "lr_t1_pb" / "bob.tar.gz") as tar:
        body = tar.extractfile("model_file").read()
    alice = SF / "lr_t1_pb" / "alice.tar.gz"
    rng = np.random.default_rng(49)
    for i in range(300):
        buf = bytearray(body)
        for j in rng.integers(0, len(buf), size=1 + i % 3):
            buf[j] = int(rng.integers(0, 256))
        target = _package(tmp_path / "bob.tar.gz", bytes(buf), "FF_PB")
        _read_or_refuse(str(target), from_secretflow_serving, [alice, target])


def test_npz_with_arrays_of_any_shape_are_read_or_refused(tmp_path):
    shapes = [(), (0,), (3,), (1, 3), (2, 3), (3, 1), (2, 3, 1)]
    for ws in shapes:
        for bs in shapes:
            f = tmp_path / "m.npz"
            np.savez(f, **{"top.weight": np.ones((1, 4)), "top.bias": np.zeros(1),
                           "alice.weight": np.ones(ws), "alice.bias": np.zeros(bs)})
            _read_or_refuse(str(f), from_linear_npz, f)
