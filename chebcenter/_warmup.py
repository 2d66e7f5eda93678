"""Compile the kernels ahead of first use, on request only.

numba compiles a kernel on its first call and caches the machine code on disk
(``cache=True``), so only the first use of each method on a fresh install (or on a new CPU:
numba's cache is per CPU name) pays the compilation (docs/benchmarks.md, cold start).
Importing chebcenter does no work: no process, no thread, no compilation. To take the
compilation out of the way ahead of time, ask for it:

* :func:`warmup` compiles the named steps (default: all) in this process, or, with
  ``jobs=2``, split over two processes (a Docker build, a CI image);
* ``python -m chebcenter warmup [--jobs N]`` does the same from the command line;
* a command-line program about to use several methods on a cold cache may call
  :func:`start_helper`, one child process compiling the methods it will reach last while
  it works through the first ones (``vflattack audit`` does, and says so).
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from .methods import warmup_steps

__all__ = ["EXTRAS", "ORDER", "STEPS", "Helper", "cache_is_cold", "cold_steps", "start_helper", "steps_of", "warmup"]

#: the steps, each owned by one method of the table (``MethodSpec.warmup``), by name
_STEPS = {step.name: (spec, step) for spec, step in warmup_steps()}
#: the steps a method's first use reaches, in the table's order (a typical session's)
ORDER = tuple(name for name, (_, step) in _STEPS.items() if step.always)
#: the steps only some problems reach (a rank-deficient A in cls, d - rank = 1 in rcc1, the
#: general sets, the bounded-error rows' per-row boxes): compiled last
EXTRAS = tuple(name for name, (_, step) in _STEPS.items() if not step.always)
STEPS = ORDER + EXTRAS


#: each step's compile seconds on a cold cache after the closed forms every step reaches (the
#: ``half`` step), measured in one process on the reference machine (docs/benchmarks.md, "Cold
#: start", 2026-12-06); only to balance ``warmup(jobs=N)``'s processes (:func:`_split`). A step
#: not listed counts 1 s
COST = {"half": 4.2, "ls": 0.1, "half_star": 0.1, "auto": 0.1, "cls": 6.7, "cls_gelsd": 7.7, "cls_intervals": 0.9,
        "rcc1": 12.6, "rcc1_segment": 0.8, "rcc1_intervals": 0.1, "rcc1_quadratic": 2.4, "rcc2": 0.1,
        "rcc2_intervals": 4.9, "exact": 20.3, "bnb": 7.4, "exact_intervals": 8.6, "project": 1.8,
        "project_intervals": 0.5, "ranges": 2.7, "ranges_intervals": 1.2}


def _split(todo: tuple, jobs: int) -> list:
    """``todo`` in at most ``jobs`` lists of about equal compile time, each in the table's order.

    Steps that share kernels go to one process, or both would compile them: a method's own
    steps, and steps declaring a common kernel that fewer than three methods declare
    (``auto`` and ``exact``; the closed forms and the interval rows' boxes, which most methods
    reach, are compiled by every process that needs them). The groups are then placed longest first, each on the least loaded process
    (:data:`COST`). Round-robin had put exact, rcc1 and cls's rare route in one process of two:
    46 s for the log audit's steps, against about 32 s balanced (docs/benchmarks.md)."""
    methods_of: dict = {}
    for spec, step in _STEPS.values():
        for k in step.kernels:
            methods_of.setdefault(k, set()).add(spec.name)
    base = {k for k, methods in methods_of.items() if len(methods) >= 3}
    owner = {name: name for name in todo}

    def root(x):
        while owner[x] != x:
            owner[x] = owner[owner[x]]
            x = owner[x]
        return x

    known = [name for name in todo if name in _STEPS]
    for a in known:
        for b in known:
            spec_a, step_a = _STEPS[a]
            spec_b, step_b = _STEPS[b]
            if a < b and (spec_a.name == spec_b.name or (set(step_a.kernels) & set(step_b.kernels)) - base):
                owner[root(a)] = root(b)
    groups: dict = {}
    for name in todo:
        groups.setdefault(root(name), []).append(name)
    loads = [[0.0, []] for _ in range(jobs)]
    for group in sorted(groups.values(), key=lambda g: -sum(COST.get(n, 1.0) for n in g)):
        least = min(loads, key=lambda load: load[0])
        least[0] += sum(COST.get(n, 1.0) for n in group)
        least[1].extend(group)
    return [[n for n in todo if n in load[1]] for load in loads if load[1]]


def _step_kernels() -> dict:
    """The compiled entry points each step reaches (their caches decide whether it is cold),
    as the table declares them."""
    import importlib

    def kernel(dotted):
        module, name = dotted.rsplit(".", 1)
        return getattr(importlib.import_module(f"chebcenter.kernels.{module}"), name)

    return {name: tuple(kernel(k) for k in step.kernels) for name, (_, step) in _STEPS.items()}


def _cached_here(kernel) -> bool:
    """Whether ``kernel`` has a valid cache entry for this CPU target (numba keeps one index
    per function, its entries keyed by the target: a cache filled for another
    ``NUMBA_CPU_NAME`` does not count)."""
    index = kernel._cache._cache_file._load_index()
    magic = kernel.targetctx.codegen().magic_tuple()
    return any(key[1] == magic for key in index)


def steps_of(methods, rows=("equality",)) -> tuple:
    """The warm-up steps the method table declares for ``methods`` (names of
    :data:`chebcenter.METHODS`) on the kinds of ``rows`` (``"equality"``, ``"interval"``), in
    the table's order: what those methods can reach, their rare routes included (a
    rank-deficient subproblem, a fallback), to compile before many processes use them.

    Examples
    --------
    >>> steps_of(["cls"], rows=("equality", "interval"))
    ('cls', 'cls_gelsd', 'cls_intervals')
    """
    from ._errors import InvalidInputError

    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    owners = {spec.name for spec, _ in _STEPS.values()}
    bad = [m for m in methods if m not in owners]
    if bad:
        raise InvalidInputError(f"methods: {bad[0]!r} has no warm-up steps; methods with steps: "
                                f"{', '.join(sorted(owners))}")
    return tuple(name for name, (spec, step) in _STEPS.items() if spec.name in methods and step.rows in rows)


def cold_steps(steps=None) -> tuple:
    """The steps (default: :data:`ORDER`) some of whose kernels are not cached for this CPU
    target yet: the ones whose first use would compile."""
    todo = ORDER if steps is None else tuple(steps)
    try:
        kernels = _step_kernels()
        return tuple(step for step in todo if any(not _cached_here(k) for k in kernels.get(step, ())))
    except Exception:  # pragma: no cover - a numba without these internals: assume warm
        return ()


def cache_is_cold() -> bool:
    """Whether some method's kernels are not cached for this CPU target yet."""
    return bool(cold_steps())


class Helper:
    """A child process compiling warm-up steps while its parent works (:func:`start_helper`)."""

    def __init__(self, proc, steps=(), meanwhile=(), shape=None):
        self.proc = proc
        self.steps = tuple(steps)
        self.meanwhile = list(meanwhile)
        self.shape = (3, 8) if shape is None else tuple(shape)
        self.done: set = set()

    def wait_for(self, step: str) -> None:
        """Block until the child has compiled ``step`` (or has ended): a kernel it is
        compiling is then loaded from the cache instead of compiled a second time here
        (two compilations of the same kernel on a 2-core machine take as long as one each,
        so waiting costs nothing and frees a core). Returns at once for a step the child was
        not given or has done."""
        if step not in self.steps or step in self.done or self.proc.stdout is None:
            return
        while self.meanwhile:   # rather than wait idle: compile this process's own later steps now
            later = self.meanwhile.pop(0)
            if cold_steps((later,)):
                _run(later, self.shape)
        for line in self.proc.stdout:   # the child writes "done STEP" after each step, in order
            word = line.split()
            if len(word) == 2 and word[0] == "done":
                self.done.add(word[1])
                if word[1] == step:
                    return
        self.done.update(self.steps)   # the child ended (or failed): compile here from now on

    def stop(self) -> None:
        """End the child if it still runs (numba writes each cache file whole, by rename, so
        stopping it mid-step loses that step's work and nothing else) and reap it."""
        from .kernels import jit as _jit

        if _jit._OWNER is self:
            _jit.set_compile_owner(None)
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start_helper(steps, shape=None, own: bool = False, meanwhile=()) -> Helper | None:
    """Compile ``steps`` (in the order given) in one child process, for a command that is
    about to use them in the *opposite* order itself.

    Meant for command-line programs on a cold cache (``vflattack audit`` uses it, and says
    so): while this process compiles what it reaches first, the child compiles what it
    will reach last; a kernel the child has cached by then is loaded from disk, not
    compiled. A library call never starts it. Returns None (and starts nothing) when no
    step is cold, the machine has one core, or the child cannot be started; call
    :meth:`Helper.stop` when done.

    Parameters
    ----------
    steps : sequence of str
        Names from :data:`STEPS`, in the order the child should compile them.
    shape : (int, int), optional
        ``(m, d)`` of the child's fixed problem (default ``(3, 8)``). The method's route,
        and so the kernels compiled, depend on d and the rank of A (the exact method's
        batch tables, its edge walk or its branch and bound): give the shape the program
        will solve so that the child compiles the same kernels.
    own : bool, default False
        This process then waits for the child's steps instead of compiling them itself
        when it reaches one first (:func:`chebcenter.kernels.jit.await_method`, called by the dispatcher): on two
        cores, compiling the same kernel twice at once takes as long as once, and keeps
        the other core from what it could compile meanwhile. Until :meth:`Helper.stop`.
    meanwhile : sequence of str, optional
        With ``own``: steps this process compiles itself (same ``shape``) the first time it
        would wait for the child, instead of waiting idle: the ones it reaches after the
        child's.

    Returns
    -------
    Helper or None

    Raises
    ------
    InvalidInputError
        If a step is not one of :data:`STEPS` or ``shape`` is not two positive integers
        with m <= d (checked before anything starts).

    Examples
    --------
    >>> import chebcenter
    >>> helper = chebcenter.start_warmup_helper(["half"])   # None on a warm cache
    >>> helper is None or helper.stop() is None
    True
    """
    import os

    from .kernels import jit as _jit

    todo = tuple(step for step in steps if step in STEPS)
    bad = [step for step in (*steps, *meanwhile) if step not in STEPS]
    if bad:
        from ._errors import InvalidInputError

        raise InvalidInputError(f"steps: unknown warm-up step {bad[0]!r}; choose from {', '.join(STEPS)}")
    shape_args = _shape_args(shape)
    if (os.cpu_count() or 1) < 2 or not cold_steps(todo):
        return None
    try:
        proc = subprocess.Popen([sys.executable, "-c", _WORKER, *shape_args, *todo], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE if own else subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                text=True)
    except OSError:  # pragma: no cover
        return None
    helper = Helper(proc, todo if own else (), tuple(meanwhile) if own else (), shape)
    if own:
        _jit.set_compile_owner(helper)
    return helper


#: a worker process: ``python -c _WORKER [--shape M D] STEP ...`` (not ``-m chebcenter._warmup``:
#: the package imports this module first, and runpy warns about running it a second time)
_WORKER = "import sys; from chebcenter._warmup import _main; sys.exit(_main(sys.argv[1:]))"


def _shape_args(shape) -> list:
    """``shape`` checked, as the worker's arguments."""
    if shape is None:
        return []
    from ._errors import InvalidInputError

    try:
        m, d = (int(v) for v in shape)
        ok = 1 <= m <= d and (m, d) == tuple(shape)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidInputError(f"shape must be two integers (m, d) with 1 <= m <= d; got {shape!r}")
    return ["--shape", str(m), str(d)]


def _problem(name: str, rng, m: int, d: int):
    """A fixed problem of the warm-up: ``(set, right-hand sides, noise)``; the set is a
    :class:`BoxSlice` (its rows ``B``) or a :class:`Polytope` (``B`` None)."""
    from .sets import BoxSlice, QuadraticSet

    A = rng.standard_normal((m, d))
    B = rng.random((4, d)) @ A.T
    if name == "projecting":   # a row whose half* point leaves the box: the projection runs
        B[-1] = A @ (A[0] > 0).astype(float)   # the vertex where A's first row peaks: the slice
        # touches the box at that face only, and the nearest point to the box's center is off it
    elif name == "single_row":
        B = B[:1]
    elif name == "repeated_row":   # the subproblems of a repeated row need LAPACK's gelsd
        return BoxSlice(np.vstack([A, 2.0 * A[0]])), B @ np.vstack([np.eye(m), 2.0 * np.eye(m)[:1]]).T, 0.05
    elif name == "four_columns":   # d - rank A = 1
        A = A[:, :4]
        return BoxSlice(A), rng.random((2, 4)) @ A.T, 0.05
    elif name == "quadratic":   # a ball
        return QuadraticSet([np.eye(2)], [np.zeros(2)], [-1.0]), None, None
    elif name == "classes":   # the class pairs of a 5-class release: many rows in few dimensions
        W5 = rng.standard_normal((5, 3))
        pairs = np.array([W5[j] - W5[i] for i in range(5) for j in range(i + 1, 5)])
        return BoxSlice(pairs), rng.random((2, 3)) @ pairs.T, 0.01
    elif name != "default":
        raise ValueError(f"unknown warm-up problem {name!r}")
    return BoxSlice(A), B, 0.05


def _run(step: str, shape=(3, 8)) -> None:
    """Run one step: its method on each of its fixed problems (``shape``: A's rows and
    columns), once per declared call, on the step's kind of rows, so its kernels compile
    with the signatures production calls use."""
    spec, decl = _STEPS[step]
    m, d = shape
    for problem in decl.problems:
        S, B, noise = _problem(problem, np.random.default_rng(0), m, d)
        rows = {"noise": noise} if decl.rows == "interval" else {}
        for options in decl.calls:
            if B is None:
                S.center(spec.name, **options)
            elif not spec.estimates:
                S.feature_ranges(B, **rows, **options)
            else:
                S.centers(B, spec.name, **rows, **options)


def warmup(steps=None, progress=None, jobs: int = 1, shape=None) -> float:
    """Compile the kernels now instead of on their first use.

    Each step uses one method on a small fixed problem (d = 8, rank 3), so its kernels are
    compiled with the signatures production calls use and written to numba's on-disk
    cache; later processes load them in well under a second. Nothing is compiled unless
    this is called: importing chebcenter does no work.

    Parameters
    ----------
    steps : str or sequence of str, optional
        Names from :data:`STEPS`: the steps the method table declares
        (``python -m chebcenter methods`` lists them), one or more per method, the
        bounded-error rows' steps ending in ``_intervals``. Default: all of them.
    progress : callable, optional
        Called as ``progress(step, seconds)`` after each step (with ``jobs > 1``: after
        each worker, as ``progress("step1+step2+...", seconds)``).
    jobs : int, default 1
        Worker processes. ``1`` compiles here, in this process. ``jobs > 1`` splits the
        steps over that many child processes (``python -c`` running this module's worker),
        balanced by their compile time, steps that share kernels together (:func:`_split`),
        and waits for all of them; this process then loads the kernels from the cache on
        first use. Compilation is single-threaded, so two jobs on two cores take about
        half the time.

    shape : (int, int), optional
        ``(m, d)`` of the fixed problem (default ``(3, 8)``): see :func:`start_helper`.

    Returns
    -------
    float
        Seconds taken (a fraction of a second when the cache is already warm).

    Raises
    ------
    InvalidInputError
        If a step is not one of :data:`STEPS` or ``jobs`` is not a positive integer
        (checked before any work).
    RuntimeError
        If a worker process fails (its standard error is in the message).

    Examples
    --------
    >>> import chebcenter
    >>> chebcenter.warmup(["half"]) >= 0.0
    True
    """
    from ._core.validate import as_positive_int
    from ._errors import InvalidInputError

    todo = STEPS if steps is None else ((steps,) if isinstance(steps, str) else tuple(steps))
    bad = [step for step in todo if step not in STEPS]
    if bad:
        raise InvalidInputError(f"steps: unknown warm-up step {bad[0]!r}; choose from {', '.join(STEPS)}")
    jobs = as_positive_int("jobs", jobs)
    shape_args = _shape_args(shape)
    t0 = time.perf_counter()
    if jobs == 1 or len(todo) <= 1:
        for step in todo:
            t = time.perf_counter()
            _run(step, (3, 8) if shape is None else tuple(shape))
            if progress is not None:
                progress(step, time.perf_counter() - t)
        return time.perf_counter() - t0
    groups = _split(todo, jobs)
    procs = [(g, subprocess.Popen([sys.executable, "-c", _WORKER, *shape_args, *g], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)) for g in groups]
    failed = []
    for g, proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            failed.append(f"{'+'.join(g)}: exit {proc.returncode}: {err.strip()[-2000:]}")
        elif progress is not None:
            progress("+".join(g), time.perf_counter() - t0)
    if failed:
        raise RuntimeError("warm-up worker failed: " + "; ".join(failed))
    return time.perf_counter() - t0


def _main(argv) -> int:
    """The worker process of ``warmup(jobs=N)`` and of :func:`start_helper`: compile the
    steps named in ``argv`` (after an optional ``--shape M D``), writing ``done STEP`` to
    standard output after each."""
    argv = list(argv)
    shape = None
    if argv[:1] == ["--shape"]:
        shape, argv = (int(argv[1]), int(argv[2])), argv[3:]
    for step in argv:
        warmup((step,), shape=shape)
        print("done", step, flush=True)
    return 0
