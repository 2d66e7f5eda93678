"""Compile every kernel ahead of first use, in the foreground or in a background process.

numba compiles a kernel on its first call and caches the machine code on disk
(``cache=True``), so only the first use of each method on a fresh install pays the
compilation (docs/benchmarks.md, cold start). Two ways to take that cost out of the way:

* :func:`warmup` (``python -m chebcenter warmup``): compile everything now, for example in
  a Docker build or right after ``pip install``.
* On the first ``import chebcenter`` whose cache is cold, :func:`start_background` starts
  one detached process (``python -m chebcenter._warmup``) that compiles the methods in the
  *reverse* of their usual order of first use, on the other core. When the main process
  reaches a kernel that process has already cached, numba loads it from disk instead of
  compiling it; when both reach the same kernel, the main process compiles it as it would
  have anyway. The two meet in the middle, so the first use of every method costs about
  half the compile time on a 2-core machine (measured in ``benchmarks/test_cold_start.py``).

The background process is started only when: the cache of at least one kernel is missing
or stale, the machine has at least 2 cores, ``CHEBCENTER_WARMUP`` is not ``0``, and no
other warm-up holds the lock file next to the cache (one warm-up per install, a lock
older than 15 minutes is taken as stale). It never raises: a warm-up that cannot start
changes nothing but speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

__all__ = ["EXTRAS", "ORDER", "STEPS", "cache_is_cold", "start_background", "warmup"]

#: the order in which a typical session first uses the methods (the benchmark's order);
#: the background warm-up runs it backwards
ORDER = ("half", "half_star", "ls", "cls", "rcc2", "rcc1", "exact", "project", "auto", "ranges", "bnb")
#: kernels only some problems reach (a rank-deficient A in cls, d - rank = 1 in rcc1, the
#: general sets): compiled last
EXTRAS = ("rcc1_segment", "sets", "cls_gelsd")
STEPS = ORDER + EXTRAS

_LOCK = "chebcenter-warmup.lock"
_PROCESS = None


class _Detached(subprocess.Popen):
    """A child that may outlive this process: no "still running" warning when collected."""

    def __del__(self):  # noqa: D105
        pass

_STALE_LOCK_S = 900.0


def _kernels():
    """One compiled entry point per method (their caches decide whether the install is cold)."""
    from ._bnb import farthest_point_dfs
    from ._bvls_kernel import bvls_rows
    from ._exact_kernels import min_enclosing_ball, pivot_vertices
    from ._kernels import prepare_rows
    from ._qp_kernel import project_metric_rows
    from ._ranges_kernel import range_rows
    from ._rcc1_kernel import certify_rows, rcc1_barrier_rows

    return (prepare_rows, bvls_rows, rcc1_barrier_rows, certify_rows, pivot_vertices, min_enclosing_ball,
            project_metric_rows, range_rows, farthest_point_dfs)


def cache_is_cold() -> bool:
    """Whether some kernel has no valid on-disk cache yet (missing, or stale after an edit)."""
    try:
        return any(not k._cache._cache_file._load_index() for k in _kernels())
    except Exception:  # pragma: no cover - a numba without these internals: assume warm
        return False


def _cache_dir():
    from ._rcc1_kernel import rcc1_barrier_rows

    return rcc1_barrier_rows._cache._cache_path


def _run(step: str) -> None:
    """Use one method on a small fixed problem, so its kernels compile with the signatures
    production calls use."""
    from .problem import BoxSlice
    from .sets import Polytope

    rng = np.random.default_rng(0)
    d = 8
    A = rng.standard_normal((3, d))
    B = rng.random((4, d)) @ A.T
    P = BoxSlice(A)
    if step == "ranges":
        P.feature_ranges(B)
    elif step == "bnb":
        P.centers(B[:1], "exact", algorithm="bnb")
    elif step == "cls_gelsd":   # a repeated row: the subproblems need LAPACK's gelsd
        A2 = np.vstack([A, 2.0 * A[0]])
        BoxSlice(A2).centers(B @ np.vstack([np.eye(3), 2.0 * np.eye(3)[:1]]).T, "cls")
    elif step == "rcc1_segment":
        P1 = BoxSlice(A[:, :4])
        P1.centers(rng.random((2, 4)) @ A[:, :4].T, "rcc1", fast_path=False)
    elif step == "sets":
        Polytope(np.vstack([np.eye(2), -np.eye(2)]), np.ones(4)).center("rcc1")
    elif step == "rcc1":
        P.centers(B, "rcc1")
        P.centers(B, "rcc1", fast_path=False)
    else:
        P.centers(B, step)


def warmup(steps=None, progress=None) -> float:
    """Compile the kernels now instead of on their first use.

    Each step uses one method on a small fixed problem (d = 8, rank 3), so its kernels are
    compiled with the signatures production calls use and written to numba's on-disk
    cache; later processes load them in well under a second.

    Parameters
    ----------
    steps : str or sequence of str, optional
        Names from :data:`STEPS` (the methods, ``"ranges"``, ``"bnb"``, and the kernels
        only some problems reach: ``"rcc1_segment"``, ``"sets"``, ``"cls_gelsd"``).
        Default: all of them.
    progress : callable, optional
        Called as ``progress(step, seconds)`` after each step.

    Returns
    -------
    float
        Seconds taken (a fraction of a second when the cache is already warm).

    Raises
    ------
    InvalidInputError
        If a step is not one of :data:`STEPS` (checked before any work).

    Examples
    --------
    >>> import chebcenter
    >>> chebcenter.warmup(["half"]) >= 0.0
    True
    """
    from ._errors import InvalidInputError

    todo = STEPS if steps is None else ((steps,) if isinstance(steps, str) else tuple(steps))
    bad = [step for step in todo if step not in STEPS]
    if bad:
        raise InvalidInputError(f"steps: unknown warm-up step {bad[0]!r}; choose from {', '.join(STEPS)}")
    t0 = time.perf_counter()
    for step in todo:
        t = time.perf_counter()
        _run(step)
        if progress is not None:
            progress(step, time.perf_counter() - t)
    return time.perf_counter() - t0


def start_background():
    """Start the background warm-up if the cache is cold (see the module docstring);
    returns the process, or None when none was started."""
    try:
        if os.environ.get("CHEBCENTER_WARMUP", "1") == "0" or (os.cpu_count() or 1) < 2:
            return None
        if not cache_is_cold():
            return None
        lock = os.path.join(_cache_dir(), _LOCK)
        try:
            if time.time() - os.path.getmtime(lock) > _STALE_LOCK_S:
                os.unlink(lock)
        except OSError:
            pass
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except OSError:   # another warm-up runs, or the cache directory is not writable
            return None
        os.close(fd)
        env = dict(os.environ, CHEBCENTER_WARMUP="0")
        global _PROCESS
        _PROCESS = _Detached([sys.executable, "-m", "chebcenter._warmup", lock], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        return _PROCESS
    except Exception:  # pragma: no cover - never let the warm-up break an import
        return None


def _main(argv) -> int:
    lock = argv[0] if argv else None
    try:
        warmup(tuple(reversed(ORDER)) + EXTRAS)
    finally:
        if lock is not None:
            try:
                os.unlink(lock)
            except OSError:
                pass
    return 0


if __name__ == "__main__":  # pragma: no cover - the background process
    sys.exit(_main(sys.argv[1:]))
