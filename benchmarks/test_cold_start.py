"""Cold start: the first use of every method in a fresh process with an empty numba cache.

Each round runs ``cold_start_script`` in a new interpreter with its own empty
``NUMBA_CACHE_DIR``, once with the background warm-up off (``CHEBCENTER_WARMUP=0``: this
process compiles everything itself) and once with it on (the default: a second process
compiles the methods in reverse order on the other core). Wall time from before
``import chebcenter`` to the end of the last method; per-method times in ``extra_info``.
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


@pytest.mark.parametrize("background", ["off", "on"])
def test_cold_start_every_method(benchmark, tmp_path, background):
    def run():
        cache = tmp_path / f"cache-{len(os.listdir(tmp_path))}"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        if background == "off":
            env["CHEBCENTER_WARMUP"] = "0"
        else:
            env.pop("CHEBCENTER_WARMUP", None)
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=900)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    times = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update({k: round(v, 2) for k, v in times.items()})
