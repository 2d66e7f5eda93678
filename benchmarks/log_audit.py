"""The prediction-log audit at scale: write a log, audit it per worker count, warm and cold.

Usage::

    python benchmarks/log_audit.py [--rows 1000000] [--classes 2] [--workers 1 2 4 ...] [--cold]
                                   [--release round:2] [--keep DIR]

Writes a split logistic regression (d = 10 passive and 10 active features, k classes, random
weights, seed 0), a prediction log of ``--rows`` rows as the deployment would (one Parquet
file, row groups of 100 000 rows, log-probabilities) and the passive party's log. Then, for
each worker count (default 1, 2, 4, ... up to the machine's cores), runs the README's command
``vflattack audit --model --log --passive-log --workers W --out [--release]`` in a fresh
process with the default methods and reports: the wall time; the partitions' own time (the
report's ``task_seconds``); the time outside them (the wall time less that: interpreter and
imports, the cluster's start, the calibration that compiles or loads the kernels once in the
CLI's process, the workers' warm-up, gathering, the report); the efficiency against 2
workers, ``(wall_2 / wall_W) / (W / 2)``; rows/s; and the peak resident memory of the whole
process tree and of the largest single process other than the CLI's (a worker), sampled every
0.2 s with psutil. With ``--cold`` each worker count runs once more with an empty
``NUMBA_CACHE_DIR`` (every kernel compiled), and the table gives the cold run's extra seconds.
The generated files are deleted unless ``--keep``. CI runs it at 10 000 rows with one worker
as a smoke test (``.ci/run``). Prints one markdown table.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys
import tempfile
import time

from vflattack.bench import run_audit, write_inputs


def main(argv=None) -> int:
    import os

    cores = os.cpu_count() or 1
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=2)
    ap.add_argument("--workers", type=int, nargs="+",
                    default=[w for w in (1, 2, 4, 8, 16, 32, 64) if w <= cores] or [1])
    ap.add_argument("--cold", action="store_true", help="also run each worker count from an empty kernel cache")
    ap.add_argument("--keep", default=None, metavar="DIR", help="write the files here and keep them")
    ap.add_argument("--release", default=None, metavar="KIND",
                    help="audit the log as this release (e.g. round:2: scores rounded to 2 decimals)")
    args = ap.parse_args(argv)
    root = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="vflattack-logbench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        write_inputs(root, args.rows, args.classes, release=args.release)
        size = (root / "predictions.parquet").stat().st_size / 2**20
        print(f"wrote {args.rows} rows (k = {args.classes}, d = 10 + 10) in {time.perf_counter() - t0:.1f} s; "
              f"predictions.parquet {size:.1f} MB; {cores} cores\n")
        print("| workers | partitions | wall [s] | partitions' time [s] | outside [s] | of which warm-up [s] | "
              "efficiency vs 2 | rows/s | peak RSS, tree [MB] | peak RSS, a worker [MB] |"
              + (" cold wall [s] | cold extra [s] |" if args.cold else ""))
        print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if args.cold else ""))
        base = None
        for w in args.workers:
            r = run_audit(root, w, args.release)
            if w == 2:
                base = r["wall_s"]
            eff = f"{(base / r['wall_s']) / (w / 2):.2f}" if base else "—"
            line = (f"| {w} | {r['partitions']} | {r['wall_s']:.1f} | {r['task_s']:.1f} | {r['outside_s']:.1f} | "
                    f"{r['compile_s'] + r['calibrate_s'] + r['warm_s']:.1f} | {eff} | {r['rows'] / r['wall_s']:,.0f} | "
                    f"{r['peak_rss_mb']:.0f} | {r['worker_rss_mb']:.0f} |")
            if args.cold:
                with tempfile.TemporaryDirectory(prefix="vflattack-cold-cache-") as cache:
                    c = run_audit(root, w, args.release, cache_dir=cache)
                line += f" {c['wall_s']:.1f} | {c['wall_s'] - r['wall_s']:+.1f} |"
            print(line, flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
