"""The prediction-log audit at scale: write a log, audit it, time it, measure its memory.

Usage::

    python benchmarks/log_audit.py [--rows 1000000] [--classes 2] [--workers 1 2] [--keep DIR]

Writes a split logistic regression (d = 10 passive and 10 active features, k classes, random
weights, seed 0), a prediction log of ``--rows`` rows as the deployment would (one Parquet
file, row groups of 100 000 rows, log-probabilities) and the passive party's log (ids
shuffled, its own row groups). Then, for each worker count, runs the README's command
``vflattack audit --model --log --passive-log --workers W --out`` in a fresh process with
the default methods and reports the wall time, rows/s (per worker and in all), and the
peak resident memory of the whole process tree (the CLI, the scheduler, every worker),
sampled every 0.2 s with psutil. The generated files are deleted unless ``--keep``.
CI runs it at 10 000 rows as a smoke test (``.ci/run``). Prints one markdown table.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def write_inputs(root: pathlib.Path, rows: int, k: int, seed: int = 0) -> tuple[pathlib.Path, ...]:
    """model.json, predictions.parquet and passive.parquet under ``root``, written in blocks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import vflattack as va

    rng = np.random.default_rng(seed)
    d, d_a, group = 10, 10, 100_000
    model = va.VFLModel(rng.standard_normal((k, d_a)), rng.standard_normal((k, d)), rng.standard_normal(k))
    model.save(root / "model.json")
    ids = rng.permutation(rows)
    pred_w = pas_w = None
    try:
        for start in range(0, rows, group):
            n = min(group, rows - start)
            Y, X = rng.random((n, d_a)), rng.random((n, d))
            S = model.predict_log_proba(Y, X)
            pred = pa.table({"id": ids[start:start + n], **{f"y{j}": Y[:, j] for j in range(d_a)},
                             **{f"logp{i}": S[:, i] for i in range(k)}})
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


def run_audit(root: pathlib.Path, workers: int) -> dict:
    """The README's log-audit command in a fresh process: wall time and peak tree RSS."""
    import psutil

    out = root / f"report-w{workers}"
    cmd = [sys.executable, "-m", "vflattack", "audit", "--model", str(root / "model.json"),
           "--log", str(root / "predictions.parquet"), "--passive-log", str(root / "passive.parquet"),
           "--workers", str(workers), "--out", str(out), "--no-progress"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ps, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        try:
            tree = [ps] + ps.children(recursive=True)
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the audit failed ({proc.returncode}):\n{stderr.decode()[-2000:]}")
    rep = json.loads((out / "report.json").read_text())
    return {"workers": workers, "wall_s": wall, "rows": rep["config"]["rows"],
            "partitions": rep["config"]["partitions"], "peak_rss_mb": peak / 2**20,
            "statuses": {r["method"]: r["status"] for r in rep["records"]}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=2)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--keep", default=None, metavar="DIR", help="write the files here and keep them")
    args = ap.parse_args(argv)
    root = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="vflattack-logbench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        write_inputs(root, args.rows, args.classes)
        size = (root / "predictions.parquet").stat().st_size / 2**20
        print(f"wrote {args.rows} rows (k = {args.classes}, d = 10 + 10) in {time.perf_counter() - t0:.1f} s; "
              f"predictions.parquet {size:.1f} MB\n")
        print("| workers | partitions | wall [s] | rows/s | rows/s per worker | peak RSS, process tree [MB] |")
        print("|---|---|---|---|---|---|")
        for w in args.workers:
            r = run_audit(root, w)
            rate = r["rows"] / r["wall_s"]
            print(f"| {w} | {r['partitions']} | {r['wall_s']:.1f} | {rate:,.0f} | {rate / w:,.0f} | "
                  f"{r['peak_rss_mb']:.0f} |", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
