"""Cold start: first uses in a fresh process with an empty numba cache.

Each round runs in a new interpreter with its own empty ``NUMBA_CACHE_DIR``:

* ``SCRIPT``: the first use of every method, one after the other, in one process (an import
  compiles nothing, so each method's first call compiles what it needs); wall time from
  before ``import chebcenter`` to the end of the last method, per-method times in
  ``extra_info``;
* the default ``vflattack audit`` with its compile helper (``--compile-jobs 2``, the
  default: a second process compiles what the audit reaches last) and without it
  (``--compile-jobs 1``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import chebcenter as cc
from chebcenter._warmup import ORDER
times = {"import": time.perf_counter() - t0}
rng = np.random.default_rng(1)
A = rng.standard_normal((3, 8))
B = rng.random((4, 8)) @ A.T
P = cc.BoxSlice(A)
for m in ORDER:
    t = time.perf_counter()
    if m == "ranges":
        P.feature_ranges(B)
    elif m == "bnb":
        P.centers(B[:1], "exact", algorithm="bnb")
    else:
        P.centers(B, m)
    times[m] = time.perf_counter() - t
times["total"] = time.perf_counter() - t0
print(json.dumps(times))
"""


def test_cold_start_every_method(benchmark, tmp_path):
    def run():
        cache = tmp_path / f"cache-{len(os.listdir(tmp_path))}"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=900)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    times = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update({k: round(v, 2) for k, v in times.items()})


@pytest.mark.parametrize("jobs", [1, 2])
def test_cold_start_default_audit(benchmark, tmp_path, jobs):
    def run():
        cache = tmp_path / f"cache-{len(os.listdir(tmp_path))}"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        out = subprocess.run([sys.executable, "-m", "vflattack", "audit", "--no-progress", "--compile-jobs", str(jobs)],
                             capture_output=True, text=True, env=env, timeout=900)
        assert out.returncode == 0, out.stderr

    benchmark.pedantic(run, rounds=1, iterations=1)
