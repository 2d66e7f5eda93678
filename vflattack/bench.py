"""A synthetic deployment for benchmarking the log audit: a split logistic regression, its
prediction log and the passive party's log, written the way a deployment writes them, and
the README's log-audit command timed in a fresh process with the peak memory of its whole
process tree. Used by ``benchmarks/log_audit.py`` and by the log-audit row of
``python -m chebcenter bench`` (which runs it in a subprocess: chebcenter does not import
vflattack). Nothing here runs on import.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time

import numpy as np

__all__ = ["run_audit", "write_inputs"]


def write_inputs(root: pathlib.Path, rows: int, k: int, seed: int = 0,
                 release: str | None = None) -> tuple[pathlib.Path, ...]:
    """model.json, predictions.parquet and passive.parquet under ``root``, written in blocks:
    d = 10 passive and 10 active features, ``k`` classes, random weights (``seed``), row
    groups of 100 000 rows, log-probabilities (or, with ``release`` such as ``round:2``, the
    probabilities that release publishes, columns p0..p{k-1}); both logs in the same (random)
    id order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .model import VFLModel
    from .release import Release

    rng = np.random.default_rng(seed)
    d, d_a, group = 10, 10, 100_000
    model = VFLModel(rng.standard_normal((k, d_a)), rng.standard_normal((k, d)), rng.standard_normal(k))
    model.save(root / "model.json")
    ids = rng.permutation(rows)
    pred_w = pas_w = None
    try:
        for start in range(0, rows, group):
            n = min(group, rows - start)
            Y, X = rng.random((n, d_a)), rng.random((n, d))
            if release is None:
                S, name = model.predict_log_proba(Y, X), "logp"
            else:
                S, name = Release.parse(release).publish(model, Y, X), "p"
            pred = pa.table({"id": ids[start:start + n], **{f"y{j}": Y[:, j] for j in range(d_a)},
                             **{f"{name}{i}": S[:, i] for i in range(k)}})
            pas = pa.table({"id": ids[start:start + n], **{f"x{j}": X[:, j] for j in range(d)}})
            pred_w = pred_w or pq.ParquetWriter(root / "predictions.parquet", pred.schema)
            pas_w = pas_w or pq.ParquetWriter(root / "passive.parquet", pas.schema)
            pred_w.write_table(pred, row_group_size=group)
            pas_w.write_table(pas, row_group_size=group)
    finally:
        for w in (pred_w, pas_w):
            if w is not None:
                w.close()
    return root / "model.json", root / "predictions.parquet", root / "passive.parquet"


def run_audit(root: pathlib.Path, workers: int, release: str | None = None, cache_dir: str | None = None) -> dict:
    """The README's log-audit command in a fresh process (with ``--release`` when given; with
    ``cache_dir``, numba's kernel cache there, ``NUMBA_CACHE_DIR``: an empty one is a cold
    start): wall time, the report's own times (the calibration that compiles or loads the
    kernels in the CLI's process, the workers' warm-up, the partitions), the peak RSS of the
    whole process tree and of the largest process other than the CLI's (a worker)."""
    import os

    import psutil

    out = root / f"report-w{workers}{'-cold' if cache_dir else ''}"
    cmd = [sys.executable, "-m", "vflattack", "audit", "--model", str(root / "model.json"),
           "--log", str(root / "predictions.parquet"), "--passive-log", str(root / "passive.parquet"),
           "--workers", str(workers), "--out", str(out), "--no-progress"] + (["--release", release] if release else [])
    env = dict(os.environ, **({"NUMBA_CACHE_DIR": str(cache_dir)} if cache_dir else {}))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    ps, peak, per_proc = psutil.Process(proc.pid), 0, {}
    while proc.poll() is None:
        try:
            tree = [ps] + ps.children(recursive=True)
            rss = {p.pid: p.memory_info().rss for p in tree if p.is_running()}
            peak = max(peak, sum(rss.values()))
            for pid, r in rss.items():
                per_proc[pid] = max(per_proc.get(pid, 0), r)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the audit failed ({proc.returncode}):\n{stderr.decode()[-2000:]}")
    rep = json.loads((out / "report.json").read_text())
    c = rep["config"]
    others = [r for pid, r in per_proc.items() if pid != proc.pid]
    return {"workers": workers, "wall_s": wall, "rows": c["rows"], "task_s": c["task_seconds"],
            "warm_s": c.get("warm_seconds", 0.0), "calibrate_s": c.get("calibrate_seconds", 0.0),
            "compile_s": c.get("compile_seconds", 0.0),
            "outside_s": wall - c["task_seconds"], "partitions": c["partitions"], "block_rule": c.get("block_rule"),
            "peak_rss_mb": peak / 2**20, "worker_rss_mb": (max(others) if others else 0) / 2**20,
            "statuses": {r["method"]: r["status"] for r in rep["records"]}}
