"""The warm-up: compile ahead of first use, in the foreground or one background process."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

import chebcenter as cc
from chebcenter import _warmup


def test_warmup_runs_the_named_steps_and_names_a_bad_one():
    seen = []
    assert cc.warmup(["half", "ranges"], progress=lambda step, s: seen.append(step)) >= 0.0
    assert seen == ["half", "ranges"]
    with pytest.raises(cc.InvalidInputError, match="steps: unknown warm-up step 'nope'"):
        cc.warmup(["half", "nope"])   # checked before any work
    seen.clear()
    cc.warmup("half", progress=lambda step, s: seen.append(step))   # one name, not its letters
    assert seen == ["half"]
    assert set(_warmup.ORDER) <= set(cc.METHODS) | {"ranges", "bnb"}   # the methods, in order of first use


def test_cli_warmup_compiles_and_reports():
    out = subprocess.run([sys.executable, "-m", "chebcenter", "warmup"], capture_output=True, text=True,
                         timeout=600, env=dict(os.environ, CHEBCENTER_WARMUP="0"))
    assert out.returncode == 0, out.stderr
    for step in _warmup.STEPS:
        assert step in out.stdout
    assert "compiled in" in out.stdout


def test_background_start_needs_a_cold_cache_two_cores_no_opt_out_and_the_lock(tmp_path, monkeypatch):
    """One warm-up per install: the lock next to the cache admits one process, which removes
    it when done; a lock older than 15 minutes is stale; CHEBCENTER_WARMUP=0 and a warm
    cache start nothing."""
    monkeypatch.setattr(_warmup, "_cache_dir", lambda: str(tmp_path))
    monkeypatch.delenv("CHEBCENTER_WARMUP", raising=False)
    monkeypatch.setattr(_warmup, "cache_is_cold", lambda: False)
    assert _warmup.start_background() is None                  # warm: nothing to do
    monkeypatch.setattr(_warmup, "cache_is_cold", lambda: True)
    monkeypatch.setenv("CHEBCENTER_WARMUP", "0")
    assert _warmup.start_background() is None                  # opted out
    monkeypatch.delenv("CHEBCENTER_WARMUP")
    lock = tmp_path / _warmup._LOCK
    proc = _warmup.start_background()
    assert proc is not None and lock.exists()
    assert _warmup.start_background() is None                  # the lock is held
    assert proc.wait(timeout=600) == 0
    assert not lock.exists()                                   # released when done
    lock.write_text("")
    old = time.time() - 2 * _warmup._STALE_LOCK_S
    os.utime(lock, (old, old))
    proc = _warmup.start_background()                          # a stale lock is taken over
    assert proc is not None
    assert proc.wait(timeout=600) == 0


@pytest.mark.slow
def test_a_fresh_cache_is_warm_after_the_background_warmup(tmp_path):
    """In an empty numba cache, importing chebcenter starts the warm-up; once it has finished
    a new process finds every kernel cached."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop("CHEBCENTER_WARMUP", None)
    code = "import chebcenter, chebcenter._warmup as w; p = w._PROCESS; print(p is not None); p and p.wait()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr
    check = "import chebcenter._warmup as w; print(w.cache_is_cold())"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=300,
                         env=dict(env, CHEBCENTER_WARMUP="0"))
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
    specialisation (chebcenter/_jit.py). About 25 s: marked slow."""
    out = subprocess.run([sys.executable, "-c", _LITERAL_SCAN], capture_output=True, text=True, timeout=900,
                         env=dict(os.environ, CHEBCENTER_WARMUP="0", NUMBA_CACHE_DIR=str(tmp_path)))
    assert out.returncode == 0, out.stderr
    line = [s for s in out.stdout.splitlines() if s.startswith("LITERAL:")][-1]
    assert line == "LITERAL:", line
