"""SecretFlow-Serving packages (vflattack.importers.secretflow) against packages SecretFlow's own
builder wrote (tests/vflattack/fixtures/secretflow_serving/PROVENANCE.md: secretflow-serving-lib
0.10.0.dev20250414, GraphBuilder and build_serving_tar).

The reference values are the fixture maker's: the weights it fed in, and each sample's score
computed by it with the formula of secretflow_serving/ops/merge_y.cc (expected.json); the binary
bundles are checked against their protobuf-JSON rendering made by google.protobuf.json_format
(decoded/), not by this project's wire reader."""

import io
import json
import pathlib
import tarfile

import numpy as np
import pytest

from vflattack._validate import InvalidInputError
from vflattack.importers import read_model
from vflattack.importers.secretflow import _bundle_json, from_secretflow_serving, read_package

HERE = pathlib.Path(__file__).parent / "fixtures" / "secretflow_serving"
EXPECTED = json.loads((HERE / "expected.json").read_text())["packages"]


@pytest.mark.parametrize("pkg", EXPECTED, ids=[p["dir"] for p in EXPECTED])
def test_packages_round_trip(pkg):
    files = [HERE / pkg["parties"]["alice"]["file"], HERE / pkg["parties"]["bob"]["file"]]
    m = from_secretflow_serving(files)
    alice, bob = pkg["parties"]["alice"], pkg["parties"]["bob"]
    assert m.link == pkg["link_function"] and m.yhat_scale == pkg["yhat_scale"]
    assert m.party_names == ("bob",) and m.precision == "float64"
    assert m.feature_names == {"active": tuple(alice["feature_names"]), "passive": tuple(bob["feature_names"])}
    assert m.W_act.tolist() == [alice["feature_weights"]] and m.W_pas.tolist() == [bob["feature_weights"]]
    assert m.b.tolist() == [alice["intercept"] + bob["intercept"]]
    s = pkg["sample"]
    Y = np.array([[s["features"]["alice"][f] for f in alice["feature_names"]]])
    X = np.array([[s["features"]["bob"][f] for f in bob["feature_names"]]])
    # the same formula in the same order of operations: equal to a few ulps of the score
    assert m.outputs(Y, X)[0, 0] == pytest.approx(s["score"], rel=4e-16, abs=0)
    # the CLI's spelling reads the same model
    assert read_model(f"secretflow:{files[0]},{files[1]}").to_dict() == m.to_dict()


@pytest.mark.parametrize("party", ["alice", "bob"])
def test_binary_bundles_decode_as_protobufs_json_rendering(party):
    ref = _bundle_json((HERE / "decoded" / "lr_t1_pb" / f"{party}.model_file.json").read_bytes())
    got = read_package(HERE / "lr_t1_pb" / f"{party}.tar.gz")
    assert got == ref
    # and the JSON package of the same model holds the same graph
    assert read_package(HERE / "lr_t1_json" / f"{party}.tar.gz")["nodes"] == ref["nodes"]


def _rewrite(src, dst, edit=None, manifest=None, drop=()):
    """A copy of the package ``src`` whose JSON bundle went through ``edit`` (a dict -> None)."""
    with tarfile.open(src) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    if edit is not None:
        doc = json.loads(files["model_file"])
        edit(doc)
        files["model_file"] = json.dumps(doc).encode()
    if manifest is not None:
        files["MANIFEST"] = json.dumps(manifest).encode()
    with tarfile.open(dst, "w:gz") as tar:
        for name, data in files.items():
            if name in drop:
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return dst


def _merge(doc):
    return next(n for n in doc["graph"]["node_list"] if n["op"] == "MERGE_Y")


def test_malformed_packages_name_what_is_wrong(tmp_path):
    alice, bob = HERE / "lr_t1_json" / "alice.tar.gz", HERE / "lr_t1_json" / "bob.tar.gz"
    with pytest.raises(InvalidInputError, match="every party's package.*at least 2"):
        from_secretflow_serving([alice])
    with pytest.raises(InvalidInputError, match="not a package of the same model"):
        from_secretflow_serving([alice, HERE / "glm_exp_json" / "bob.tar.gz"])

    def unknown(doc):
        _merge(doc)["attr_values"]["link_function"] = {"s": "LF_LOGIT_V2"}

    bad = _rewrite(bob, tmp_path / "bob.tar.gz", unknown)
    with pytest.raises(InvalidInputError, match="unknown link_function 'LF_LOGIT_V2'.*LF_SIGMOID_T1"):
        from_secretflow_serving([alice, bad])
    data = bob.read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidInputError, match="is not a readable package"):
        from_secretflow_serving([alice, tmp_path / "cut.tar.gz"])
    with pytest.raises(InvalidInputError, match="has no member 'MANIFEST'"):
        from_secretflow_serving([alice, _rewrite(bob, tmp_path / "nomanifest.tar.gz", drop=("MANIFEST",))])
    with pytest.raises(InvalidInputError, match="bundle_format must be FF_JSON or FF_PB"):
        from_secretflow_serving([alice, _rewrite(bob, tmp_path / "xml.tar.gz",
                                                 manifest={"bundlePath": "model_file", "bundleFormat": "FF_XML"})])
    pb = HERE / "lr_t1_pb" / "bob.tar.gz"
    with tarfile.open(pb) as tar:
        body = tar.extractfile("model_file").read()
    with tarfile.open(tmp_path / "shortpb.tar.gz", "w:gz") as tar:
        for name, data in (("MANIFEST", b'{"bundle_path": "model_file", "bundle_format": "FF_PB"}'),
                           ("model_file", body[:-7])):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(InvalidInputError, match="FF_PB model bundle 'model_file' cannot be decoded"):
        from_secretflow_serving([alice, tmp_path / "shortpb.tar.gz"])

    def no_merge(doc):
        doc["graph"]["node_list"] = [n for n in doc["graph"]["node_list"] if n["op"] != "MERGE_Y"]

    with pytest.raises(InvalidInputError, match="one MERGE_Y node; found 0"):
        from_secretflow_serving([alice, _rewrite(bob, tmp_path / "nomerge.tar.gz", no_merge)])


def test_exp_taylor_and_several_passive_parties(tmp_path):
    """LF_EXP_TAYLOR carries its exp_iters; a third party's package becomes a second passive party."""
    alice, bob = HERE / "lr_t1_json" / "alice.tar.gz", HERE / "lr_t1_json" / "bob.tar.gz"

    def taylor(doc):
        _merge(doc)["attr_values"]["link_function"] = {"s": "LF_EXP_TAYLOR"}
        _merge(doc)["attr_values"]["exp_iters"] = {"i32": 8}

    files = [_rewrite(p, tmp_path / f"{p.name}", taylor) for p in (alice, bob)]

    def carol(doc):
        taylor(doc)
        dot = next(n for n in doc["graph"]["node_list"] if n["op"] == "DOT_PRODUCT")
        dot["attr_values"]["feature_names"] = {"ss": {"data": ["c0"]}}
        dot["attr_values"]["feature_weights"] = {"ds": {"data": [3.0]}}
        dot["attr_values"]["intercept"] = {"d": 0.5}

    files.append(_rewrite(bob, tmp_path / "carol.tar.gz", carol))
    m = from_secretflow_serving(files)
    assert m.link == "LF_EXP_TAYLOR:8" and m.party_names == ("bob", "carol")
    assert [list(p) for p in m.parties] == [[0, 1, 2], [3]]
    assert m.feature_names["passive"] == ("b0", "b1", "b2", "c0") and m.b.tolist() == [0.125 + 0.5]
    z = 0.5 * 0.8 - 0.25 * 0.4 + 0.125 + (0.2 - 0.6 - 0.3) + 3.0 * 0.1 + 0.5
    want = (1.0 + z / 256) ** 256          # merge_y.cc's LF_EXP_TAYLOR: pow(1 + z / 2^n, 2^n)
    got = m.outputs(np.array([[0.8, 0.4]]), np.array([[0.2, 0.3, -0.4, 0.1]]))[0, 0]
    # z summed in another order (|dz| ~ 1e-15) moves h by h'(z)/h(z) |dz| = |dz| / (1 + z/256): 1e-12 is ample
    assert got == pytest.approx(want, rel=1e-12)


def test_a_serving_log_maps_onto_the_audits_columns(tmp_path):
    """A log of id, the active party's features by their DOT_PRODUCT names and pred_y (MERGE_Y's
    output column); the passive party's table in its own names."""
    import pandas as pd

    from vflattack.audit import read_log
    from vflattack.importers.logs import canonical_logs

    m = from_secretflow_serving([HERE / "lr_t1_json" / "alice.tar.gz", HERE / "lr_t1_json" / "bob.tar.gz"])
    rng = np.random.default_rng(0)
    Y, X = rng.random((6, 2)), rng.random((6, 3))
    ids = [f"r{i}" for i in range(6)]
    pd.DataFrame({"id": ids, "a1": Y[:, 1], "a0": Y[:, 0], "pred_y": m.outputs(Y, X)[:, 0]}).to_csv(
        tmp_path / "log.csv", index=False)
    pd.DataFrame({"id": ids[::-1], "b2": X[::-1, 2], "b0": X[::-1, 0], "b1": X[::-1, 1]}).to_csv(
        tmp_path / "bob.csv", index=False)
    log, passive = canonical_logs(m, f"secretflow:{tmp_path / 'log.csv'}", f"tables:{tmp_path / 'bob.csv'}", tmp_path)
    Yr, P, Xr = read_log(m, log, passive_log=passive)
    assert np.array_equal(Yr, Y) and np.array_equal(Xr, X) and np.array_equal(P[:, 0], m.outputs(Y, X)[:, 0])
    pd.DataFrame({"id": ids, "a0": Y[:, 0], "pred_y": 0.5}).to_csv(tmp_path / "short.csv", index=False)
    with pytest.raises(InvalidInputError, match=r"lacks the model's active feature columns \['a1'\]"):
        canonical_logs(m, f"secretflow:{tmp_path / 'short.csv'}", None, tmp_path)


def test_a_graph_with_preprocessing_is_refused(tmp_path):
    """Review finding: an op before DOT_PRODUCT (binning, one-hot) transforms the features the
    weights apply to; reading the linear part alone would misread the model."""
    def preprocess(doc):
        doc["graph"]["node_list"].insert(0, {"name": "bin", "op": "ARROW_PROCESSING", "attr_values": {}})

    bob = _rewrite(HERE / "lr_t1_json" / "bob.tar.gz", tmp_path / "bob.tar.gz", preprocess)
    with pytest.raises(InvalidInputError, match=r"ops \['ARROW_PROCESSING'\] beside DOT_PRODUCT"):
        from_secretflow_serving([HERE / "lr_t1_json" / "alice.tar.gz", bob])


def test_same_named_packages_take_their_folders_names(tmp_path):
    import shutil

    for party in ("alice", "bob"):
        (tmp_path / party).mkdir()
        shutil.copy(HERE / "lr_t1_json" / f"{party}.tar.gz", tmp_path / party / "model.tar.gz")
    m = read_model(f"secretflow:{tmp_path / 'alice' / 'model.tar.gz'},{tmp_path / 'bob' / 'model.tar.gz'}")
    assert m.party_names == ("bob",)
