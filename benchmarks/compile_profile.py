"""Where a first call's time goes: numba's compile time per kernel, per method.

Usage: ``python benchmarks/compile_profile.py [method ...]`` (default: half_star rcc1 cls
exact ranges project). For each method, a fresh interpreter with an empty numba cache runs
the method's first batch (N = 1000, d = 20, m = 3, as the bench command's cold rows) and
records numba's compile events: the time of each kernel's compilation *excluding* the
kernels it compiled on the way (type inference of a caller compiles its callees first).
Prints one markdown table per method, largest first; docs/benchmarks.md quotes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

PROBE = r"""
import collections, json, sys, time
from numba.core import event as ev
own = collections.defaultdict(float)
stack = []

class Listener(ev.Listener):
    def on_start(self, event):
        f = event.data["dispatcher"].py_func
        stack.append((f.__module__.rsplit(".", 1)[-1] + "." + f.__qualname__.split(".<locals>")[0], time.perf_counter()))

    def on_end(self, event):
        name, t = stack.pop()
        dt = time.perf_counter() - t
        own[name] += dt
        if stack:
            own[stack[-1][0]] -= dt

ev.register("numba:compile", Listener())
import numpy as np
import chebcenter as cc
rng = np.random.default_rng(0)
A = rng.standard_normal((3, 20))
B = rng.random((1000, 20)) @ A.T
P = cc.BoxSlice(A)
t = time.perf_counter()
if sys.argv[1] == "ranges":
    P.feature_ranges(B)
else:
    P.centers(B, sys.argv[1])
total = time.perf_counter() - t
print(json.dumps({"total": total, "kernels": own}))
"""


def profile(method):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", PROBE, method], capture_output=True, text=True, timeout=900,
                             env=dict(os.environ, NUMBA_CACHE_DIR=tmp), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(methods):
    for method in methods:
        res = profile(method)
        kernels = sorted(res["kernels"].items(), key=lambda kv: -kv[1])
        compiled = sum(v for _, v in kernels)
        print(f"\n### first `{method}` batch: {res['total']:.2f} s, of which compilation {compiled:.2f} s "
              f"({len(kernels)} kernels and NumPy overloads)\n")
        print("| kernel | own compile time |\n|---|---|")
        for name, v in kernels:
            if v >= 0.1:
                print(f"| `{name}` | {v:.2f} s |")
        rest = [v for _, v in kernels if v < 0.1]
        print(f"| {len(rest)} more under 0.1 s each | {sum(rest):.2f} s |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["half_star", "rcc1", "cls", "exact", "ranges", "project"])
