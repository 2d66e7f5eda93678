"""Command line: ``python -m chebcenter demo`` compares every method on a planted batch;
``methods`` prints the method table; ``warmup`` compiles the kernels ahead of use; ``bench``
regenerates the speed table.

The embedded default needs no download: a seeded random system with a planted
x in the unit box, every method of :data:`chebcenter.METHODS` on the whole
batch, and for each one the MSE against the planted x, the worst-case error
over the vertices of S_F (what the Chebyshev center minimises), the certified
radius and the time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from . import METHODS, BoxSlice
from .methods import REGISTRY, method_table


def _demo(args) -> int:
    rng = np.random.default_rng(args.seed)
    A = rng.standard_normal((args.m, args.d))
    X = rng.random((args.n, args.d))
    B = X @ A.T
    prob = BoxSlice(A)
    print(f"chebcenter demo: A is {args.m} x {args.d} (rank {prob.rank}), {args.n} planted x in [0,1]^{args.d}, "
          f"seed {args.seed}")
    print("worst = max over the vertices of S_F of ||vertex - estimate|| (the minimax criterion)\n")
    verts = [prob.vertices(b, 10**6) for b in B]
    header = (f"{'method':<10} {'lies in':<8} {'MSE':>10} {'mean worst':>11} {'mean radius':>12} {'status':<18} "
              f"{'time [s]':>9}")
    print(header)
    print("-" * len(header))
    methods = args.methods or METHODS
    certified = {}   # methods that certify their radius (radius_lower): rows where it is the minimax radius
    for name in methods:
        t0 = time.perf_counter()
        res = prob.centers(B, method=name)
        elapsed = time.perf_counter() - t0
        ok = res.ok
        worst = [np.max(np.linalg.norm(V - c, axis=1))
                 for V, c, k in zip(verts, res.centers, ok) if k and V is not None]
        mse = float(np.mean((X[ok] - res.centers[ok]) ** 2)) if ok.any() else float("nan")
        status = ",".join(f"{k}:{v}" for k, v in res.counts().items())
        lower = res.extras.get("radius_lower")
        if lower is not None:
            with np.errstate(invalid="ignore"):
                certified[name] = int(np.sum((res.status_codes == 0) & (res.radii <= lower * (1 + 1e-6) + 1e-12)))
        print(f"{name:<10} {REGISTRY[name].lies_in:<8} {mse:>10.5f} {np.mean(worst):>11.5f} "
              f"{np.nanmean(res.radii):>12.5f} {status:<18} {elapsed:>9.3f}")
    print()
    for name, rows in certified.items():
        print(f"{name} proves its radius minimax (radius_lower meets it) on {rows} of {args.n} rows: "
              "no estimate has a smaller worst-case error there.")
    print("'mean radius' is what each method certifies:")
    for name in methods:
        print(f"  {name:<10} {REGISTRY[name].certifies}")
    return 0


def main(argv=None) -> int:
    """Entry point of ``python -m chebcenter`` and the ``chebcenter`` script."""
    parser = argparse.ArgumentParser(prog="chebcenter", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compare every method on a seeded planted batch")
    demo.add_argument("--d", type=int, default=10, help="number of unknowns (default 10)")
    demo.add_argument("--m", type=int, default=2, help="number of equations (default 2)")
    demo.add_argument("--n", type=int, default=50, help="batch size (default 50)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--methods", nargs="*", choices=METHODS, help="subset of methods")
    sub.add_parser("methods", help="print the method table (Markdown): what each method serves, its solvers, "
                                   "what it certifies, its warm-up steps")
    warm = sub.add_parser("warmup", help="compile every kernel now (a fresh install compiles on first use)")
    warm.add_argument("--quiet", action="store_true", help="print nothing")
    warm.add_argument("--jobs", type=int, default=1,
                      help="worker processes to split the compilation over (default 1: this process)")
    bench = sub.add_parser("bench", help="regenerate the speed table on this machine (markdown; about 5 min, --full longer)")
    bench.add_argument("--repeats", type=int, default=5, help="rounds over the table, each in a fresh process (default 5, at least 3)")
    bench.add_argument("--only", nargs="*", metavar="ROW", help="a subset of the rows (names: see --list)")
    bench.add_argument("--list", action="store_true", help="list the row names and exit")
    bench.add_argument("--full", action="store_true",
                       help="also the long rows: d = 200 and 1000, the bounded-error rows beside the equality case, "
                            "the cold starts and the 200 000-row log audit")
    bench.add_argument("--no-cold", action="store_true", help="skip the cold-start rows (with --full)")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")
    bench.add_argument("--out", help="also write the table to this file")
    bench.add_argument("--compare", metavar="FILE",
                       help="a table an earlier run wrote (--out): say how many medians land inside its cells")
    args = parser.parse_args(argv)
    if args.command == "bench":
        from .bench import runner as _bench

        if args.list:
            print("\n".join(list(_bench.DEFAULT)) + "\n" + "\n".join(f"{n} (--full)" for n in
                                                                    list(_bench.FULL) + ["cold", "log_audit", "design"]))
            return 0
        if args.repeats < 3:
            parser.error("--repeats must be >= 3 (the table reports a spread)")
        unknown = sorted(set(args.only or ()) - set(_bench.CASES) - {"cold", "log_audit", "design"})
        if unknown:
            parser.error(f"--only: unknown row {unknown[0]!r}; see --list")
        if args.compare and not os.path.isfile(args.compare):
            parser.error(f"--compare: no such file: {args.compare!r}")
        return _bench.main(args.repeats, args.only, args.out, not args.no_progress, not args.no_cold, args.compare,
                           args.full)
    if args.command == "methods":
        print(method_table())
        return 0
    if args.command == "warmup":
        from ._warmup import warmup

        if args.jobs < 1:
            parser.error("--jobs must be >= 1")
        report = None if args.quiet else (lambda step, s: print(f"  {step:<17} {s:6.2f} s", flush=True))
        total = warmup(progress=report, jobs=args.jobs)
        if not args.quiet:
            print(f"compiled in {total:.1f} s; later runs load the kernels from the cache")
        return 0
    if args.d < 1 or args.m < 0 or args.n < 1:
        parser.error("--d and --n must be >= 1 and --m >= 0")
    return _demo(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
