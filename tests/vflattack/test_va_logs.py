"""vflattack's model files and prediction-log audits on Dask (a LocalCluster with 2
worker processes on loopback, started here: the ``client`` fixture of tests/conftest.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import chebcenter as cc

pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
import pandas as pd  # noqa: E402

import vflattack as va  # noqa: E402
from vflattack import audit_log  # noqa: E402
from vflattack.audit import write_log  # noqa: E402
from vflattack.cli import main as va_main  # noqa: E402


def _model_and_data(seed=0, N=400, d=5, k=4, d_a=2):
    rng = np.random.default_rng(seed)
    model = va.VFLModel(rng.standard_normal((k, d_a)), rng.standard_normal((k, d)), rng.standard_normal(k),
                        [f"c{i}" for i in range(k)])
    return model, rng.random((N, d_a)), rng.random((N, d))


def test_model_file_round_trip_is_bit_identical(tmp_path):
    model, Y, X = _model_and_data()
    model.save(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["format"] == "vflattack.VFLModel" and doc["schema_version"] == 2 and doc["link"] == "softmax"
    back = va.VFLModel.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict_proba(Y, X), model.predict_proba(Y, X))
    assert back.classes.tolist() == model.classes.tolist()
    doc["schema_version"] = 99
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(cc.InvalidInputError, match="schema_version 99"):
        va.VFLModel.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(cc.InvalidInputError, match="not a vflattack model file"):
        va.VFLModel.load(tmp_path / "other.json")


def test_log_audit_on_the_cluster_equals_the_in_memory_attack(client, tmp_path):
    model, Y, X = _model_and_data(seed=3)
    S = model.predict_log_proba(Y, X)
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=5)
    # corrupt two predictions: a NaN score and a saturated one (flagged, never used)
    log = pd.read_parquet(paths[0])
    log.loc[log["id"] == 5, "logp0"] = np.nan
    log.loc[log["id"] == 9, "logp1"] = 0.0
    log.to_parquet(tmp_path / "corrupt.parquet", index=False)
    S[5, 0] = np.nan
    S[9, 1] = 0.0
    methods = ("half", "half_star", "rcc2", "cls", "exact")
    rep = audit_log(model, tmp_path / "corrupt.parquet", tmp_path / "out", passive_log=paths[1], methods=methods,
                    client=client)
    ref = va.whitebox_attack(model, S, Y, methods, log_scores=True)
    got = pd.read_parquet(tmp_path / "out" / "reconstructions").sort_values("id")
    for m in methods:
        G = got[[f"{m}_x{j}" for j in range(X.shape[1])]].to_numpy()
        # the log is attacked partition by partition (one per row group), the reference in one
        # batch: the same rows through differently shaped BLAS calls, so not bit for bit; the
        # solvers stop at 1e-12 of the unit box, and 1e-9 leaves room for their conditioning
        np.testing.assert_allclose(G, ref.reconstructions[m], rtol=0, atol=1e-9)
        names = ["INVALID_SCORES" if s is None else s.name for s in ref.status[m]]
        assert got[f"{m}_status"].tolist() == names
    mse = ref.mse(X)
    for rec in rep.records:
        assert rec["mse"] == pytest.approx(mse[rec["method"]], rel=1e-12)
    assert rep.records[0]["status"].get("INVALID_SCORES") == 2
    assert (tmp_path / "out" / "manifest.json").exists()
    assert rep.config["task_seconds"] > 0 and rep.config["warm_seconds"] > 0


@pytest.mark.parametrize("spec", ["exact", "round:2"])
def test_attack_frame_on_each_partition_gives_the_dask_audits_rows(client, tmp_path, spec):
    """va.attack_frame, the engine-neutral step (Ray's map_batches and Spark's mapInPandas call
    it), on each partition as the Dask audit cuts the log, as pandas and as a pyarrow Table: the
    rows the Dask audit wrote for that partition, column for column, bit for bit (the same
    kernel on the same bytes)."""
    import pyarrow as pa

    from vflattack.audit.logfiles import partitions, read_part

    model, Y, X = _model_and_data(seed=5, N=120)
    rel = va.Release.parse(spec)
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=3, release=None if rel.exact else rel)
    methods = ("half_star", "exact")
    audit_log(model, paths[0], tmp_path / "out", methods=methods, client=client,
              release=None if rel.exact else rel)
    got = pd.read_parquet(tmp_path / "out" / "reconstructions")
    parts = partitions(paths[0])
    assert len(parts) == 3
    frames = []
    for i, part in enumerate(parts):
        batch = read_part(part, list(pd.read_parquet(paths[0]).columns))
        table = pa.Table.from_pandas(batch, preserve_index=False) if i % 2 else batch
        frames.append(va.attack_frame(model, table, methods=methods, release=None if rel.exact else rel))
    mine = pd.concat(frames, ignore_index=True)
    pd.testing.assert_frame_equal(mine, got.reset_index(drop=True), check_dtype=False, check_exact=True)


def test_attack_frame_names_a_missing_column():
    model, Y, X = _model_and_data(seed=5, N=4)
    with pytest.raises(cc.InvalidInputError, match=r"frame lacks the log's columns \['y1'"):
        va.attack_frame(model, pd.DataFrame({"y0": Y[:, 0], **{f"p{j}": 0.25 for j in range(4)}}))
    with pytest.raises(cc.InvalidInputError, match="frame must be a pandas DataFrame"):
        va.attack_frame(model, {"y0": [1.0]})


@pytest.mark.parametrize("spec", ["exact", "round:2", "label"])
def test_workers_load_their_kernels_on_a_small_attack_of_the_same_kind(monkeypatch, spec):
    """The warm-up runs the partitions' attack (same model, methods and release) on 4 rows;
    it must really run it, not fail silently into its except clause."""
    from vflattack.audit import logs
    from vflattack.release import Release

    model, _, _ = _model_and_data(seed=4)
    calls = []
    monkeypatch.setattr(logs, "whitebox_attack", lambda *a, **k: calls.append((a, k)))
    release = Release.parse(spec)
    logs._warm_worker(model, ("half", "exact"), None, {}, release)
    (args, kwargs), = calls
    assert args[0] is model and args[3] == ("half", "exact") and len(args[1]) == 4
    assert (kwargs["release"] is None) == release.exact


def test_cli_log_audit_attaches_to_a_scheduler(client, tmp_path, capsys):
    assert va_main(["export-log", "--dataset", "wine", "--passive", "4", "--out", str(tmp_path / "exp")]) == 0
    exp = tmp_path / "exp"
    argv = ["audit", "--model", str(exp / "model.json"), "--log", str(exp / "predictions.parquet"),
            "--passive-log", str(exp / "passive.parquet"), "--prior-file", str(exp / "prior.csv"),
            "--methods", "half_star", "rcc2", "mean", "gaussian", "--scheduler", client.scheduler.address,
            "--out", str(tmp_path / "rep"), "--no-progress"]
    assert va_main(argv) == 0
    out = capsys.readouterr().out
    assert "36 predictions in 4 partitions" in out and "gaussian" in out
    # the same numbers as the in-memory audit of the same split
    mem = va.audit.run_audit("wine", n_passive=(4,), methods=("half_star", "rcc2", "mean", "gaussian"),
                             exposure=False)
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    for rec in rep["records"]:
        assert rec["mse"] == pytest.approx(mem.records[0].mse[rec["method"]], rel=1e-9)
    assert va_main(["audit", "--model", str(exp / "model.json"), "--no-progress"]) == 2
    assert "--model and --log go together" in capsys.readouterr().err
    bad = tmp_path / "bad.parquet"
    pd.DataFrame({"id": [0], "y0": [0.1]}).to_parquet(bad)
    assert va_main(["audit", "--model", str(exp / "model.json"), "--log", str(bad), "--out", str(tmp_path / "r2"),
                    "--scheduler", client.scheduler.address, "--no-progress"]) == 2
    assert "lacks columns" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["round:2", "loground:1", "label", "top1:2", "clip:0.01", "noise:0.01", "rank",
                                  "topk:2:2", "roundnorm:2", "sig:3", "float32"])
def test_a_released_log_is_audited_not_refused_and_equals_the_in_memory_attack(client, tmp_path, spec):
    """A log written as the release publishes it (rounded p0.., rounded logp0.., label, label and
    p_top, ...) is audited on the release's sets: no row refused, every row reconstructed by every
    method, and the same reconstructions as the in-memory release attack on the same values."""
    rel = va.Release.parse(spec)
    model, Y, X = _model_and_data(seed=4, N=120, d=4, k=3)
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=3, release=rel, rng=7)
    methods = ("half_star", "rcc2", "exact")
    rep = audit_log(model, paths[0], tmp_path / "out", passive_log=paths[1], methods=methods, client=client,
                    release=rel)
    ref = va.whitebox_attack(model, rel.publish(model, Y, X, rng=7), Y, methods, release=rel)
    got = pd.read_parquet(tmp_path / "out" / "reconstructions").sort_values("id")
    for m in methods:
        np.testing.assert_allclose(got[[f"{m}_x{j}" for j in range(4)]].to_numpy(), ref.reconstructions[m],
                                   rtol=0, atol=1e-9)    # by partition against one batch: see above
    for rec in rep.records:
        assert "INVALID_SCORES" not in rec["status"] and rec["rows_scored"] == 120
    assert rep.config["release"] == rel.spec and rep.config["looks_rounded"] is None
    assert rep.table().startswith(f"prediction log {paths[0]}, release: {rel.describe()}:")


def test_a_rounded_log_audited_as_exact_says_which_release_to_use(client, tmp_path, capsys):
    model, Y, X = _model_and_data(seed=5, N=90, d=4, k=3)
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=3, release=va.Release.parse("round:3"))
    rep = audit_log(model, paths[0], tmp_path / "out", methods=("half_star",), client=client)
    assert rep.config["looks_rounded"] == 3 and "audit with --release round:3" in rep.table()
    exact = write_log(model, Y, X, tmp_path / "exact", partitions=3, log_scores=False)
    assert audit_log(model, exact[0], tmp_path / "out2", methods=("half_star",), client=client).config[
        "looks_rounded"] is None
    # a label release needs a label column (or one-hot p0..): the error names it
    with pytest.raises(cc.InvalidInputError, match="label"):
        audit_log(model, paths[0].parent / "passive.parquet", tmp_path / "out3", methods=("half_star",), client=client,
                  release=va.Release.parse("top1:2"))
    model.save(tmp_path / "m.json")
    assert va_main(["audit", "--model", str(tmp_path / "m.json"), "--log", str(paths[0]), "--release", "round:3",
                    "round:2", "--out", str(tmp_path / "r4"), "--scheduler", client.scheduler.address,
                    "--no-progress"]) == 2
    assert "one value with --log" in capsys.readouterr().err


def test_a_log_the_named_release_cannot_read_gets_the_verdict_first_and_a_nonzero_exit(client, tmp_path, capsys):
    """A PRIVEE log audited as exact scores: every row is refused. The report's first line
    says the audit could not model the release and names the kind that fits; the CLI exits 3.
    Audited as PRIVEE, the same log is read (one map per partition of 40 rows)."""
    model, Y, X = _model_and_data(seed=8, N=120, d=4, k=3)
    rel = va.Release.parse("privee:1")
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=3, release=rel)
    rep = audit_log(model, paths[0], tmp_path / "out", methods=("half_star",), client=client)
    first = rep.table().splitlines()[0]
    assert first.startswith("the audit could not model this release: 120 of 120 rows (100%) are not valid "
                            "under 'exact'; the data fit: priveeplus (or privee:RHO)"), first
    model.save(tmp_path / "m.json")
    argv = ["audit", "--model", str(tmp_path / "m.json"), "--log", str(paths[0]), "--methods", "half_star",
            "--scheduler", client.scheduler.address, "--no-progress"]
    assert va_main(argv + ["--out", str(tmp_path / "r1")]) == 3
    assert "could not model this release" in capsys.readouterr().err
    assert va_main(argv + ["--out", str(tmp_path / "r2"), "--release", "privee:1"]) == 0
    rep = json.loads((tmp_path / "r2" / "report.json").read_text())
    assert "INVALID_SCORES" not in rep["records"][0]["status"] and "verdict" not in rep["config"]


def test_one_parquet_file_is_audited_row_group_by_row_group(client, tmp_path):
    """The symptom of the 'audit at scale' issue: a single Parquet file went to one task. Now
    each row group is a partition (and a row group larger than block_rows is cut), and the MSE
    is the same as the in-memory attack's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    model, Y, X = _model_and_data(seed=6, N=300, d=4, k=2)
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=1)
    one = tmp_path / "one.parquet"
    pq.write_table(pa.Table.from_pandas(pd.read_parquet(paths[0]), preserve_index=False), one, row_group_size=60)
    rep = audit_log(model, one, tmp_path / "out", passive_log=paths[1], methods=("half_star", "rcc2"), client=client)
    assert rep.config["partitions"] == 5 and rep.config["rows"] == 300
    rep2 = va.audit.attack_log(model, one, _mkdir(tmp_path / "parts"), passive_log=paths[1], methods=("rcc2",),
                               client=client, block_rows=25)
    assert rep2.config["partitions"] == 5 * 3
    ref = va.whitebox_attack(model, model.predict_log_proba(Y, X), Y, ("half_star", "rcc2"), log_scores=True).mse(X)
    for rec in rep.records:
        assert rec["mse"] == pytest.approx(ref[rec["method"]], rel=1e-9)


def _mkdir(path):
    path.mkdir()
    return path


def test_a_worker_killed_mid_run_leaves_the_report_unchanged(tmp_path):
    """A worker process killed (SIGKILL) while partitions run: the scheduler reruns its
    partitions elsewhere (its nanny restarts it), and the report equals the undisturbed run's."""
    import os
    import signal
    import threading
    import time

    distributed = pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
    model, Y, X = _model_and_data(seed=6, N=6000, d=6, k=2, d_a=2)
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=24)
    methods = ("half", "rcc1", "exact")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=50)
    try:
        with distributed.Client(cluster) as cl:
            ref = audit_log(model, paths[0], tmp_path / "ref", passive_log=paths[1], methods=methods, client=cl)
            out = {}
            run = threading.Thread(target=lambda: out.update(rep=audit_log(
                model, paths[0], tmp_path / "hit", passive_log=paths[1], methods=methods, client=cl)))
            run.start()
            deadline = time.monotonic() + 60
            while not any(cl.processing().values()) and time.monotonic() < deadline:
                time.sleep(0.01)
            busy = any(cl.processing().values())
            pids = cl.run(os.getpid)
            victim = next(iter(pids.values()))
            os.kill(victim, signal.SIGKILL)
            run.join(timeout=120)
            assert not run.is_alive()
            after = set(cl.run(os.getpid).values())
    finally:
        cluster.close()
    assert busy and victim not in after     # killed while partitions ran; its nanny started another
    rep = out["rep"]
    for a, b in zip(ref.records, rep.records):
        assert a["method"] == b["method"] and a["status"] == b["status"]
        assert a["mse"] == b["mse"]


@pytest.mark.parametrize("total, threads, per_row, want", [
    (1_000_000, 16, 1e-4, (10_000, "1 s of work")),          # 10 000 rows a second: a second's work each
    (1_000_000, 16, 1e-6, (15_625, "4 per worker")),         # fast rows: four partitions per worker
    (10_000_000, 2, 1e-6, (25_000, "memory")),               # the memory bound caps a partition
    (400, 2, 1e-5, (1_000, "smallest partition")),           # a tiny log: one small partition
])
def test_partitions_are_sized_to_the_cluster(total, threads, per_row, want):
    from vflattack.audit.logs import _block_size

    assert _block_size(total, threads, per_row) == want


def test_the_log_is_cut_four_partitions_per_worker_and_the_times_are_reported(client, tmp_path):
    model, Y, X = _model_and_data(seed=6, N=12_000, d=3, k=2, d_a=1)
    paths = write_log(model, Y, X, tmp_path / "logs", partitions=2)
    rep = audit_log(model, paths[0], tmp_path / "out", passive_log=paths[1], methods=("half_star",), client=client)
    threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
    assert rep.config["partitions"] >= 4 * threads
    assert rep.config["block_rule"] in ("4 per worker", "1 s of work")
    for key in ("calibrate_seconds", "kernel_load_seconds", "warm_seconds", "task_seconds", "seconds_per_row"):
        assert rep.config[key] > 0, key
    # the partitions' bootstrap does not depend on the cut: cut by hand, the same interval
    again = audit_log(model, paths[0], tmp_path / "out2", passive_log=paths[1], methods=("half_star",),
                      client=client, block_rows=5_000)
    assert again.config["block_rule"] == "given" and again.config["partitions"] != rep.config["partitions"]
    np.testing.assert_allclose(again.records[0]["mse_ci"], rep.records[0]["mse_ci"], rtol=1e-9)


def test_a_future_of_a_client_is_waited_for_and_a_failed_start_is_raised(client):
    """The CLI starts its local cluster in the background (a Future of the client) while the
    log is read and checked; the audit waits for it, and a cluster that failed to start fails
    the audit with its own error, not with a missing client."""
    import concurrent.futures

    from vflattack.audit.logs import _active_client

    started: concurrent.futures.Future = concurrent.futures.Future()
    started.set_result(client)
    assert _active_client(started) is client
    failed: concurrent.futures.Future = concurrent.futures.Future()
    failed.set_exception(OSError("no port"))
    with pytest.raises(OSError, match="no port"):
        _active_client(failed)
