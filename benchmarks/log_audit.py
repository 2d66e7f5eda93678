"""The prediction-log audit at scale: write a log, audit it, time it, measure its memory.

Usage::

    python benchmarks/log_audit.py [--rows 1000000] [--classes 2] [--workers 1 2] [--release round:2] [--keep DIR]

Writes a split logistic regression (d = 10 passive and 10 active features, k classes, random
weights, seed 0), a prediction log of ``--rows`` rows as the deployment would (one Parquet
file, row groups of 100 000 rows, log-probabilities) and the passive party's log (ids
shuffled, its own row groups). Then, for each worker count, runs the README's command
``vflattack audit --model --log --passive-log --workers W --out [--release]`` in a fresh process with
the default methods and reports the wall time, the partitions' own time (the report's
``task_seconds``), rows/s over the wall time (per worker and in all), and the
peak resident memory of the whole process tree (the CLI, the scheduler, every worker),
sampled every 0.2 s with psutil. The generated files are deleted unless ``--keep``.
CI runs it at 10 000 rows as a smoke test (``.ci/run``). Prints one markdown table.
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=2)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
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
              f"predictions.parquet {size:.1f} MB\n")
        print("| workers | partitions | wall [s] | partitions' time [s] | rows/s | rows/s per worker | "
              "peak RSS, process tree [MB] |")
        print("|---|---|---|---|---|---|---|")
        for w in args.workers:
            r = run_audit(root, w, args.release)
            rate = r["rows"] / r["wall_s"]
            print(f"| {w} | {r['partitions']} | {r['wall_s']:.1f} | {r['task_s']:.1f} | {rate:,.0f} | {rate / w:,.0f} | "
                  f"{r['peak_rss_mb']:.0f} |", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
