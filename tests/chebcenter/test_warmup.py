"""The warm-up: compile ahead of first use, on request only; an import does no work."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import chebcenter as cc
from chebcenter import _warmup


def test_warmup_runs_the_named_steps_and_names_a_bad_one():
    seen, secs = [], []
    total = cc.warmup(["half", "ranges"], progress=lambda step, s: (seen.append(step), secs.append(s)))
    assert seen == ["half", "ranges"]
    # the steps run one after the other inside the call: its time holds each step's
    assert all(s > 0 for s in secs) and total >= sum(secs)
    with pytest.raises(cc.InvalidInputError, match="steps: unknown warm-up step 'nope'"):
        cc.warmup(["half", "nope"])   # checked before any work
    seen.clear()
    cc.warmup("half", progress=lambda step, s: seen.append(step))   # one name, not its letters
    assert seen == ["half"]
    assert set(_warmup.ORDER) <= set(cc.METHODS) | {"ranges", "bnb"}   # the methods, in order of first use


def test_the_steps_of_methods_come_from_the_table():
    """Every step a method declares, by the kind of rows, and none of another method's; the log
    audit compiles these before its workers start (vflattack.audit.logs._compile_once)."""
    from chebcenter.methods import warmup_steps

    assert cc.warmup_steps_of("rcc1") == ("rcc1", "rcc1_segment")
    assert cc.warmup_steps_of(["rcc1", "exact"], rows=("equality", "interval")) == (
        "rcc1", "exact", "bnb", "rcc1_segment", "rcc1_intervals", "exact_intervals")
    every = cc.warmup_steps_of(sorted({spec.name for spec, _ in warmup_steps()}),
                               rows=("equality", "interval", "quadratic"))
    assert set(every) == set(_warmup.STEPS)
    with pytest.raises(cc.InvalidInputError, match="methods: 'nope' has no warm-up steps"):
        cc.warmup_steps_of(["half", "nope"])


def test_cli_warmup_compiles_and_reports():
    out = subprocess.run([sys.executable, "-m", "chebcenter", "warmup"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    for step in _warmup.STEPS:
        assert step in out.stdout
    assert "compiled in" in out.stdout


def test_warmup_jobs_split_the_steps_over_worker_processes_and_report_a_failure(monkeypatch):
    seen, secs = [], []
    total = cc.warmup(["half", "half_star", "ls"], progress=lambda step, s: (seen.append(step), secs.append(s)), jobs=2)
    assert sorted(seen) == ["half", "half_star+ls"]           # by compile time: half holds the closed forms
    # each worker's seconds run from the call's start (a worker starts a process and imports)
    assert all(s > 0 for s in secs) and total >= max(secs)
    with pytest.raises(cc.InvalidInputError, match="jobs must be an integer >= 1; got 0"):
        cc.warmup(["half"], jobs=0)
    monkeypatch.setattr(_warmup, "STEPS", _warmup.STEPS + ("nope",))   # a step the worker refuses
    with pytest.raises(RuntimeError, match="warm-up worker failed: nope: exit 1"):
        cc.warmup(["half", "nope"], jobs=2)


_HELPER_PROBE = r"""
import chebcenter._warmup as w
print("COLD", ",".join(w.cold_steps(["half", "rcc1"])))
h = w.start_helper(["half"])
print("STARTED", h is not None)
h.proc.wait(timeout=600)
h.stop()
print("AFTER", ",".join(w.cold_steps(["half", "rcc1"])) or "none")
print("AGAIN", w.start_helper(["half"]) is None)
"""


def test_the_helper_compiles_cold_steps_only_and_the_cache_is_per_cpu_target(tmp_path):
    """In an empty cache every step is cold; the helper process compiles the steps it is
    given (after it, 'half' is warm and rcc1 still cold) and is not started again once
    they are warm. A cache filled for another CPU target does not count as warm."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _HELPER_PROBE], capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines == {"COLD": "half,rcc1", "STARTED": "True", "AFTER": "rcc1", "AGAIN": "True"}
    other = subprocess.run([sys.executable, "-c", "import chebcenter._warmup as w; print(w.cold_steps(['half']))"],
                           capture_output=True, text=True, timeout=300, env=dict(env, NUMBA_CPU_NAME="generic"))
    assert other.stdout.strip() == "('half',)", other.stderr
    with pytest.raises(cc.InvalidInputError, match="unknown warm-up step 'nope'"):
        _warmup.start_helper(["nope"])


_OWNED_PROBE = r"""
import numpy as np
import chebcenter as cc
import chebcenter._warmup as w
from chebcenter.kernels import jit as _jit
h = w.start_helper(["half"], shape=(1, 4), own=True)
print("STARTED", h is not None and _jit._OWNER is h)
cc.BoxSlice([[1.0, 2.0, 3.0, 4.0]]).centers(np.array([[2.5]]), "half")   # waits for the child's "half"
print("DONE", ",".join(sorted(h.done)))
h.wait_for("rcc1")                   # not the child's: returns at once
h.stop()
print("OWNER", _jit._OWNER is None)
print("COLD", ",".join(w.cold_steps(["half"])) or "none")
k = w.start_helper(["rcc1"], own=True)
k.proc.kill(); k.proc.wait()
k.wait_for("rcc1")                   # the child ended without it: no hang, compile here
print("ENDED", ",".join(sorted(k.done)))
k.stop()
"""


def test_an_owned_helper_is_waited_for_and_a_dead_one_is_not(tmp_path):
    """With ``own=True`` the dispatcher waits for the child's step before running its method
    (the line "done half" read from the child, the kernels then in the cache), a step the
    child was not given is not waited for, and a child that ended without its step releases
    the wait instead of hanging the program."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _OWNED_PROBE], capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines == {"STARTED": "True", "DONE": "half", "OWNER": "True", "COLD": "none", "ENDED": "rcc1"}, out.stdout


@pytest.mark.parametrize("shape", [(0, 3), (4, 3), (2.5, 3), "ab", (1, 2, 3)])
def test_a_helper_shape_is_checked_before_anything_starts(shape):
    with pytest.raises(cc.InvalidInputError, match="shape must be two integers"):
        _warmup.start_helper(["half"], shape=shape)
    with pytest.raises(cc.InvalidInputError, match="unknown warm-up step 'nope'"):
        _warmup.start_helper(["half"], meanwhile=["nope"])


_IMPORT_PROBE = r"""
import os, sys
def tasks():
    return len(os.listdir("/proc/self/task"))
def children():
    out = []
    for t in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{t}/children") as f:
            out += f.read().split()
    return out
# the dependencies first: OpenBLAS starts its own thread pool when numpy loads it
import numpy, scipy.linalg, scipy.optimize, scipy.special, numba, cvxpy, sklearn.linear_model, matplotlib, tqdm
before = tasks()
import chebcenter, vflattack, chebcenter.distributed, vflattack.cli
print("THREADS", before, tasks())
print("CHILDREN", ",".join(children()) or "none")
print("COMPILED", sum(len(getattr(obj, "signatures", ())) for mod in list(sys.modules.values())
                      if getattr(mod, "__name__", "").startswith("chebcenter") for obj in vars(mod).values()
                      if type(obj).__name__ == "CPUDispatcher"))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc (Linux)")
def test_import_starts_no_process_no_thread_and_compiles_nothing(tmp_path):
    """A library import does no work: in a fresh interpreter with an empty numba cache,
    importing chebcenter and vflattack (and their CLI and Dask modules) starts no child
    process, no thread beyond those the dependencies start themselves, and compiles no
    kernel. (The old import started a background warm-up process on a cold cache: this
    test failed on it.)"""
    out = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path)))
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    before, after = lines["THREADS"].split()
    assert after == before, lines
    assert lines["CHILDREN"] == "none", lines
    assert lines["COMPILED"] == "0", lines
    assert not list(tmp_path.rglob("*.nbi")), "an import wrote to the numba cache"


@pytest.mark.slow
def test_a_fresh_cache_is_warm_after_warmup_with_two_jobs(tmp_path):
    """``python -m chebcenter warmup --jobs 2`` in an empty numba cache: afterwards a new
    process finds every kernel cached."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "chebcenter", "warmup", "--jobs", "2"], capture_output=True,
                         text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stderr
    check = "import chebcenter._warmup as w; print(w.cache_is_cold())"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=300, env=env)
    assert out.stdout.strip() == "False", out.stderr


_LITERAL_SCAN = r"""
import importlib, pkgutil
import chebcenter
from chebcenter import warmup
from numba.core.registry import CPUDispatcher
warmup()
found = []
for info in pkgutil.iter_modules(chebcenter.__path__):
    if not info.name.startswith("_") or info.name == "__main__":
        continue
    mod = importlib.import_module("chebcenter." + info.name)
    for name, obj in vars(mod).items():
        if isinstance(obj, CPUDispatcher) and obj.__module__ == mod.__name__:
            for sig in obj.signatures:
                if any("Literal" in str(t) for t in sig):
                    found.append(f"{info.name}.{name}{tuple(str(t) for t in sig)}")
print("LITERAL:" + ";".join(found))
"""


@pytest.mark.slow
def test_every_kernel_is_compiled_for_runtime_types_only(tmp_path):
    """Compile time is a target (the cold start), and numba silently compiles a callee again
    for a literal argument type (a variable initialised to ``-1`` reaching another kernel:
    the simplex pivot was compiled three times). After every warm-up step, in a fresh
    process with an empty cache (a kernel loaded from the cache does not retype its
    callees, so only a fresh compilation shows them), no kernel may hold a Literal-typed
    specialisation (chebcenter/kernels/jit.py). About 25 s: marked slow."""
    out = subprocess.run([sys.executable, "-c", _LITERAL_SCAN], capture_output=True, text=True, timeout=900,
                         env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path)))
    assert out.returncode == 0, out.stderr
    line = [s for s in out.stdout.splitlines() if s.startswith("LITERAL:")][-1]
    assert line == "LITERAL:", line


def test_a_general_set_step_reaches_its_kernels(tmp_path):
    """The step of rcc1 on general sets once solved the default problem, a box slice, so its
    kernel never compiled and the step stayed cold after any warm-up: a step on a general set
    must name that set's problem, and on an empty cache it is warm once run."""
    with pytest.raises(ValueError, match="must solve the 'quadratic' problem"):
        cc.methods.WarmupStep("x", ("rcc1_certificate.certify_quadratics",), rows="quadratic")
    code = ("import chebcenter as cc; cc.warmup(['rcc1_quadratic']); "
            "print(cc.cold_warmup_steps(['rcc1_quadratic']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "()"


@pytest.mark.parametrize("jobs", [2, 3, 4])
def test_the_jobs_split_the_steps_by_compile_time_keeping_shared_kernels_together(jobs):
    """warmup(jobs=N) gives every step to one process; a method's steps, and auto with exact
    (the same kernels), to the same one (else two processes compile them side by side); and the
    largest load is at most the largest group's cost plus the average load (the bound of
    placing the longest group first on the least loaded process). Round-robin broke the last:
    exact, rcc1 and cls's rare route in one process of two (46 s against 36 s measured)."""
    from chebcenter._warmup import _STEPS, COST, STEPS, _split

    assert set(COST) == set(STEPS), "every warm-up step has a measured compile cost"
    audit = ("half", "ls", "half_star", "cls", "rcc1", "rcc2", "exact", "bnb", "cls_gelsd", "rcc1_segment")
    for todo in (STEPS, audit):
        parts = _split(todo, jobs)
        flat = [s for p in parts for s in p]
        assert sorted(flat) == sorted(todo) and len(parts) <= jobs
        where = {s: i for i, p in enumerate(parts) for s in p}
        for a in todo:
            for b in todo:
                if _STEPS[a][0].name == _STEPS[b][0].name:
                    assert where[a] == where[b], (a, b)
        if "auto" in todo:
            assert where["auto"] == where["exact"]
        for p in parts:
            assert p == [s for s in todo if s in p]   # the table's order within a process
        loads = [sum(COST[s] for s in p) for p in parts]
        biggest = max(sum(COST[s] for s in todo if _STEPS[s][0].name == m) for m in {_STEPS[s][0].name for s in todo})
        assert max(loads) <= biggest + sum(loads) / jobs + 1e-9, loads
    two = _split(audit, 2)
    assert max(sum(COST[s] for s in p) for p in two) < 0.6 * sum(COST[s] for s in audit)
