"""exact on bounded-error sets, route by route, beside the equality case.

Usage::

    python benchmarks/interval_routes.py [--rows 200] [--repeats 5] [--lifted]

Cases (seeded, the first rows of each compile the kernels and are not timed):

* ``release_k8``: a k = 8 class release over d = 6 passive features, scores known to
  +-0.005 per class: 28 pair rows of rank 7 (the cuts of the box in x);
* ``slab_d10``: d = 10, one interval row 2 % of its reach wide (two slices and the corners
  between), beside the same rows as equations;
* ``intervals_d10_m3``: d = 10, three interval rows 2 % wide (the lifted edge walk), beside
  the same rows as equations.

Each is timed per core (numba and BLAS on one thread) and on all cores; the figure is the
median time per row over ``--repeats`` runs with its min-max. ``--lifted`` also times the
release on the lifted enumeration the cuts replace (about 20 s a row: 2 rows). Prints one
markdown table; docs/theory.md §8.7 quotes it.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from threadpoolctl import threadpool_limits

import chebcenter as cc
import chebcenter._core.lifting as lifting


def release(k, d, n, h, seed=3):
    rng = np.random.default_rng(seed)
    Wp = rng.standard_normal((k, d))
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    A = np.array([Wp[j] - Wp[i] for i, j in pairs])
    Z = rng.random((n, d)) @ Wp.T
    L = np.stack([(Z[:, j] - h) - (Z[:, i] + h) for i, j in pairs], axis=1)
    U = np.stack([(Z[:, j] + h) - (Z[:, i] - h) for i, j in pairs], axis=1)
    return A, L, U


def slab(d, m, n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    B = rng.random((n, d)) @ A.T
    w = 0.01 * np.abs(A).sum(axis=1)
    return A, B - w, B + w, B


def timed(fn, rows, repeats, threads):
    numba.set_num_threads(threads)
    with threadpool_limits(1 if threads == 1 else None):
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) / rows)
    return np.median(times), min(times), max(times)


def fmt(t):
    med, lo, hi = t
    unit, f = ("ms", 1e3) if med >= 1e-3 else ("us", 1e6)
    return f"{med * f:.3g} {unit} ({lo * f:.3g}-{hi * f:.3g})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--lifted", action="store_true", help="also time the lifted enumeration on the release (slow)")
    args = ap.parse_args(argv)
    n, cores = args.rows, numba.config.NUMBA_NUM_THREADS
    out = ["| case | route | per core | all cores (" + str(cores) + ") | equality case per core | ratio per core |",
           "|---|---|---|---|---|---|"]

    A, L, U = release(8, 6, n + 2, 0.005)
    sl = cc.BoxSlice(A)
    warm = sl.centers(method="exact", lower=L[:2], upper=U[:2])
    run = lambda: sl.centers(method="exact", lower=L[2:], upper=U[2:])  # noqa: E731
    one, alls = timed(run, n, args.repeats, 1), timed(run, n, args.repeats, cores)
    out.append(f"| release k = 8, d = 6, 28 pair rows | {warm.extras['route'][0]} | {fmt(one)} | {fmt(alls)} | - | - |")
    if args.lifted:
        saved = lifting._CUTS_MAX_D
        lifting._CUTS_MAX_D = 0
        try:
            lift = timed(lambda: cc.BoxSlice(A).centers(method="exact", lower=L[:2], upper=U[:2]), 2, 1, 1)
        finally:
            lifting._CUTS_MAX_D = saved
        out.append(f"| the same, lifted (forced) | {lifting.ROUTE_ENUMERATE} | {fmt(lift)} | - | - | - |")

    for m, label in ((1, "slab d = 10, one row 2 % wide"), (3, "d = 10, three rows 2 % wide")):
        A, L, U, B = slab(10, m, n + 2)
        sl = cc.BoxSlice(A)
        warm = sl.centers(method="exact", lower=L[:2], upper=U[:2])
        sl.centers(B[:2], method="exact")
        iv = timed(lambda: sl.centers(method="exact", lower=L[2:], upper=U[2:]), n, args.repeats, 1)  # noqa: B023
        iv_all = timed(lambda: sl.centers(method="exact", lower=L[2:], upper=U[2:]), n, args.repeats, cores)  # noqa: B023
        eq = timed(lambda: sl.centers(B[2:], method="exact"), n, args.repeats, 1)  # noqa: B023
        out.append(f"| {label} | {warm.extras['route'][0]} | {fmt(iv)} | {fmt(iv_all)} | {fmt(eq)} | "
                   f"{iv[0] / eq[0]:.1f}x |")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
