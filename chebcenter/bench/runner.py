"""``python -m chebcenter bench``: the speed table, regenerated on the machine it runs on.

Every row times one chebcenter route against the fastest thing a user would otherwise write
for the same answer at the same accuracy. Each row names its candidates (NumPy, SciPy's
BVLS and TRF, HiGHS per LP or stacked, qhull, cvxpy with SCS at its defaults and at a
matched accuracy, Clarabel, OSQP; the primal and the dual formulations), the bench times
them all on the same data, measures each one's error against our answer on a sample of rows,
and the baseline is the fastest candidate within ``MATCHED`` (1e-6 relative) of our answer
(:func:`choose`). The candidates' table names every one with its time and error. Each repeat is a round over the
whole table in a fresh interpreter; a row reports the median time per row (or per call)
and the spread (min-max over the rounds), and the speed-up as the median of the per-round
ratios with their min-max. A timed call is repeated until 0.25 s have passed. The
measuring processes run with glibc's allocator thresholds fixed (:data:`ALLOCATOR_ENV`),
so that a row's page faults, and so its time, do not depend on the rows run before it.

Like with like:

* **per core**: chebcenter on one numba thread against the single-threaded baseline, BLAS
  limited to one thread for both (threadpoolctl);
* **all cores**: chebcenter on every numba thread (and BLAS at its default) against the
  same single-threaded baseline: what a user gains on this machine.

Cold start rows run a fresh interpreter with an empty numba cache (a temporary
``NUMBA_CACHE_DIR``) and time the first batch of a method; they have no baseline.

The header names the CPU, the core count, NumPy and its BLAS, numba and its compile
target, so a table says where it was measured. Nothing here runs on import.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .cases import CASES, DEFAULT, FULL, MATCHED, _relative, highs_ranges, qhull_vertices  # noqa: F401

__all__ = ["CASES", "DEFAULT", "FULL", "Row", "choose", "machine_header", "run", "to_markdown"]


@dataclass
class Row:
    """One measured line of the table (times in seconds per unit)."""

    what: str
    unit: str
    ours_1: list = field(default_factory=list)      # one numba thread, one BLAS thread
    ours_all: list = field(default_factory=list)    # every thread
    base: list = field(default_factory=list)        # the baseline, single-threaded (set by choose)
    baseline: str = "—"
    agree: str = ""
    busy: int = 0                                   # cases measured again: the machine was busy
    busy_at: float = 1.10                           # the calibration's ratio past which a case was measured again
    cands: dict = field(default_factory=dict)       # candidate -> its times, single-threaded
    errors: dict = field(default_factory=dict)      # candidate -> its relative error (None: not measured)
    note: str = ""

    def ratios(self, ours):
        if not self.base or not ours:
            return []
        return [b / o for b, o in zip(self.base, ours) if o > 0]


def choose(row: Row, tol: float = MATCHED) -> Row:
    """Set the row's baseline: the candidate with the smallest median time among those whose
    error is within ``tol`` (a candidate without a measured error, a comparison row's, counts
    as matched). With no candidate matched, the row has no baseline and says why."""
    if not row.cands:
        return row
    matched = {name: t for name, t in row.cands.items()
               if row.errors.get(name) is None or row.errors[name] <= tol}
    if matched:
        name = min(matched, key=lambda n: statistics.median(matched[n]))
        row.baseline, row.base = name, list(matched[name])
    else:
        fastest = min(row.cands, key=lambda n: statistics.median(row.cands[n]))
        row.baseline, row.base = (f"none within {tol:g} of our answer (the fastest, {fastest}, is "
                                  f"{row.errors[fastest]:.1e} off)"), []
    return row


# -- measuring ---------------------------------------------------------------------------
def _time(fn, units, min_time=0.25):
    """Seconds per unit of ``fn()``, calling it until ``min_time`` has passed (at least once),
    so that a repeat is long enough for the timer and short calls are not all noise."""
    calls, t0 = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time:
            return elapsed / (calls * units)


@contextlib.contextmanager
def _threads(n):
    """numba threads and BLAS threads limited to ``n`` (None: all of them)."""
    import numba
    from threadpoolctl import threadpool_limits

    before = numba.get_num_threads()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS if n is None else n)
    try:
        if n is None:
            yield
        else:
            with threadpool_limits(limits=n):
                yield
    finally:
        numba.set_num_threads(before)


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


_COLD = r"""
import time, numpy as np
t0 = time.perf_counter()
import chebcenter as cc
rng = np.random.default_rng(0); A = rng.standard_normal((3, 20)); B = rng.random((1000, 20)) @ A.T
P = cc.BoxSlice(A)
t1 = time.perf_counter()
P.centers(B, "{method}")
print(time.perf_counter() - t1)
"""


def _cold(method):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", _COLD.format(method=method)], capture_output=True, text=True,
                             env=_measuring_env(NUMBA_CACHE_DIR=tmp), timeout=600, check=True)
    return float(out.stdout.strip().splitlines()[-1])


COLD = ("half_star", "rcc1")

#: predictions in the log-audit row (200 000: about 45 s a round on 2 cores)
LOG_ROWS = 200_000

_LOG_AUDIT = r"""
import json, pathlib, shutil, tempfile
from vflattack.bench import run_audit, write_inputs
root = pathlib.Path(tempfile.mkdtemp(prefix="chebcenter-bench-log-"))
try:
    write_inputs(root, {rows}, 2)
    print(json.dumps([[r["task_s"] / r["rows"], r["peak_rss_mb"]] for r in (run_audit(root, w) for w in (1, 2))]))
finally:
    shutil.rmtree(root, ignore_errors=True)
"""


def log_audit_available() -> bool:
    """Whether the log-audit row can run: vflattack (same distribution) and its Dask extra.
    The row runs vflattack in a subprocess; chebcenter itself never imports it."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("vflattack", "distributed", "pyarrow", "psutil"))


def _log_audit(rows=LOG_ROWS):
    """One round of the log-audit row: ``[[s per row, peak MB] for 1 and 2 workers]``, the
    time being the audit's ``task_seconds`` (first partition submitted to last done; the
    cluster's start, 5-8 s here, would hide the rate at this size)."""
    out = subprocess.run([sys.executable, "-c", _LOG_AUDIT.format(rows=int(rows))], capture_output=True, text=True,
                         env=_measuring_env(), timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"the log-audit row failed: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


#: the release-design rows: ``vflattack design --target radius=0.1`` on these datasets (d = 10)
DESIGN_DATASETS = ("breast_cancer", "digits")


def _design(dataset: str, threads: int | None) -> float:
    """Wall seconds of one ``vflattack design --target radius=0.1`` on ``dataset`` in a fresh
    process (warm cache), on ``threads`` numba threads (None: all cores). Exit 4 (no release
    meets the target) is a result, not a failure."""
    env = _measuring_env(**({"NUMBA_NUM_THREADS": str(threads)} if threads else {}))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "vflattack", "design", "--target", "radius=0.1", "--dataset", dataset,
                          "--no-progress"], capture_output=True, text=True, env=env, timeout=1800)
    wall = time.perf_counter() - t0
    if out.returncode not in (0, 4):
        raise RuntimeError(f"the design row failed: {out.stderr.strip()[-2000:]}")
    return wall


def _application_rows(only, full) -> tuple:
    """The rows that run vflattack in a subprocess, if asked for and installed: the log audit's
    (or None) and the release design's (compiled once here, outside the measurements)."""
    log_row, design_rows = None, []
    if ((full and not only) or (only and "log_audit" in only)) and log_audit_available():
        log_row = Row(f"log audit (`vflattack audit --log --passive-log`, default methods), {LOG_ROWS:,} predictions, "
                      "k = 2, d = 10 + 10; per core: 1 worker, all cores: 2 workers; the partitions' time (no cluster start)",
                      "row", baseline="—")
    if ((full and not only) or (only and "design" in only)) and log_audit_available():
        design_rows = [Row(f"release design (`vflattack design --target radius=0.1 --dataset {ds}`, d = 10, 29 "
                           "candidates), wall time of the command in a fresh process, warm cache; per core: "
                           "NUMBA_NUM_THREADS=1", "run", baseline="—") for ds in DESIGN_DATASETS]
        for ds in DESIGN_DATASETS:
            _design(ds, None)
    return log_row, design_rows


def _log_agreement(log_row, log_mb) -> None:
    """The log-audit row's last column: peak memory with 1 and 2 workers, and their speed-up."""
    speedup = [a / b for a, b in zip(log_row.ours_1, log_row.ours_all)]
    log_row.agree = (f"peak RSS of the process tree {statistics.median(log_mb[0]):.0f} MB ({min(log_mb[0]):.0f}–"
                     f"{max(log_mb[0]):.0f}) with 1 worker, {statistics.median(log_mb[1]):.0f} MB "
                     f"({min(log_mb[1]):.0f}–{max(log_mb[1]):.0f}) with 2; 2 workers "
                     f"{statistics.median(speedup):.2f}× ({min(speedup):.2f}–{max(speedup):.2f}) the rows/s of 1")


#: a case whose calibration before or after it ran this much slower than the best
#: calibration of the run is measured again (at most ``_RETRIES`` times): on this 2-core VM
#: the calibration's own spread over 40 quiet repeats is 2 % (median) to 5 % (worst) above
#: its best, and the slowdowns another tenant causes (the HiGHS baseline 40 % slower for
#: minutes, with nothing else running here) are several times that
BUSY = 1.10
_RETRIES = 2
#: calibrations at the start of each round, whose spread sets the round's threshold
_QUIET = 10


def _calibration():
    """A fixed single-threaded workload (a BLAS product, a memory-bound sum, a sort): its
    best-of-3 time says whether the machine is as quiet as it was."""
    rng = np.random.default_rng(0)
    M, V = rng.standard_normal((192, 192)), rng.standard_normal(2_000_000)

    def work():
        M @ M
        V.sum()
        np.sort(V[:100_000])

    from threadpoolctl import threadpool_limits

    def measure():
        with threadpool_limits(limits=1):
            return min(_time(work, 1, 0.05) for _ in range(3))
    return measure


def _round(names, with_checks, reference=float("inf")):
    """One round over the rows ``names`` in this process: ``{name: {...}}`` (times per unit),
    and under ``"_calibration"`` the best calibration time seen (``reference``: the best of
    the rounds before). Every candidate is run once before it is timed (cvxpy compiles a
    problem on its first solve); with ``with_checks`` its answer on the case's sample rows is
    compared with ours (``"errors"``). A case measured while the calibration ran more than
    ``BUSY`` times its best is measured again, up to ``_RETRIES`` times; ``"busy"`` counts the
    retries."""
    calibrate = _calibration()
    quiet = [calibrate() for _ in range(_QUIET)]
    best = min(reference, min(quiet))
    # the machine's own spread, quiet: a case is measured again only past it (a 2-core VM here
    # spreads by 10-25 % with nothing else running, another by 2-5 %)
    busy_at = max(BUSY, 1.05 * max(quiet) / min(quiet))
    out = {}
    for name in names:
        case = CASES[name]()
        with _threads(None):
            _quiet(case.ours)                # load or compile the kernels, warm the caches
        errors = {}
        ref = _quiet(case.reference) if (with_checks and case.reference is not None) else None
        for cand in case.candidates:
            with _threads(1):
                if ref is not None and cand.answer is not None:
                    errors[cand.name] = float((case.error or _relative)(np.asarray(_quiet(cand.answer)), np.asarray(ref)))
                else:
                    _quiet(cand.run)
        rec = {"what": case.what, "unit": case.unit, "note": case.note, "errors": errors,
               "agree": (_quiet(case.agree) if (with_checks and case.agree is not None) else "")}
        for attempt in range(_RETRIES + 1):  # noqa: B007 - the count is reported after the loop
            before = calibrate()
            with _threads(1):
                rec["ours_1"] = _time(functools.partial(_quiet, case.ours), case.n_ours)
                rec["cands"] = {c.name: _time(functools.partial(_quiet, c.run), c.n) for c in case.candidates}
            with _threads(None):
                rec["ours_all"] = _time(functools.partial(_quiet, case.ours), case.n_ours)
            after = calibrate()
            best = min(best, before, after)
            if max(before, after) <= busy_at * best:
                break
        rec["busy"] = attempt
        rec["calibration"] = [before, after]
        out[name] = rec
    out["_calibration"] = best
    out["_busy_at"] = busy_at
    return out


# glibc's allocator, pinned for the measuring processes. By default glibc moves its mmap
# and trim thresholds as a process frees large blocks, so whether a 1 MB temporary costs
# 256 page faults depends on what the process allocated before: without fixed thresholds
# rcc2 takes 1.2 µs per row after the half_star row has run and 1.9 µs alone, and flips
# between the two from run to run. Fixed thresholds make a row's time independent of the
# rows before it. A variable the caller set wins; other C libraries ignore these names.
ALLOCATOR_ENV = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
                 "MALLOC_TOP_PAD_": str(256 << 20)}


def _measuring_env(**extra):
    env = dict(os.environ, **extra)
    for k, v in ALLOCATOR_ENV.items():
        env.setdefault(k, v)
    return env


_ROUND = ("import json, sys; from chebcenter.bench.runner import _round; "
          "print(json.dumps(_round(sys.argv[3:], sys.argv[1] == '1', float(sys.argv[2]))))")


def run(repeats: int = 5, only=None, progress: bool = True, cold: bool = True,
        full: bool = False) -> tuple[list[Row], float]:
    """Measure the table's rows; see the module docstring. ``only``: names from :data:`CASES`
    (and ``"cold"``, ``"log_audit"``, ``"design"``); else the :data:`DEFAULT` rows, and with
    ``full`` the :data:`FULL` ones, the cold starts, the log audit and the release design too.
    Returns the rows and the run's drift: ``max / min - 1`` of the calibration workload's
    times over the run (the measurements kept), the machine's own variation while it ran.

    Each repeat is one round over the whole table in a fresh interpreter (the kernels load
    from the cache). A row's spread therefore covers what differs between two runs of the
    command, the process's memory layout and the machine's drift over minutes, and not only
    the noise of a few seconds in one process: a second run should land inside it."""
    from tqdm.auto import tqdm

    names = (list(CASES) if full else list(DEFAULT)) if not only else [n for n in CASES if n in only]
    cold_names = list(COLD) if cold and ((full and not only) or (only and "cold" in only)) else []
    log_row, design_rows = _application_rows(only, full)
    log_mb: list = [[], []]
    bar = tqdm(total=repeats * (bool(names) + len(cold_names) + (log_row is not None) + len(design_rows)),
               desc="bench", unit="round",
               disable=not progress, file=sys.stderr)
    rows: dict = {}
    reference = float("inf")
    busy_at = BUSY
    calibrations: list = []
    cold_rows = [Row(f"cold start: first `{m}` batch (N = 1000, d = 20, m = 3) in a fresh process, empty cache",
                     "batch", baseline="—") for m in cold_names]
    for rnd in range(repeats):
        if names:
            bar.set_postfix_str(f"round {rnd + 1} of {repeats}")
            proc = subprocess.run([sys.executable, "-c", _ROUND, "1" if rnd == 0 else "0", repr(reference), *names],
                                  capture_output=True, text=True, timeout=1800,
                                  env=_measuring_env())
            if proc.returncode != 0:
                raise RuntimeError(f"bench round {rnd + 1} failed: {proc.stderr.strip()[-2000:]}")
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            reference = min(reference, got.pop("_calibration"))
            busy_at = max(busy_at, got.pop("_busy_at"))
            for name in names:
                rec = got[name]
                row = rows.setdefault(name, Row(rec["what"], rec["unit"], agree=rec["agree"], errors=rec["errors"],
                                                note=rec["note"]))
                row.ours_1.append(rec["ours_1"])
                row.ours_all.append(rec["ours_all"])
                for cname, t in rec["cands"].items():
                    row.cands.setdefault(cname, []).append(t)
                row.busy += rec["busy"]
                calibrations += rec["calibration"]
            bar.update()
        for method, row in zip(cold_names, cold_rows):
            bar.set_postfix_str(f"cold {method}, round {rnd + 1}")
            row.ours_all.append(_cold(method))
            bar.update()
        if log_row is not None:
            bar.set_postfix_str(f"log audit, round {rnd + 1}")
            (t1, m1), (t2, m2) = _log_audit()
            log_row.ours_1.append(t1)
            log_row.ours_all.append(t2)
            log_mb[0].append(m1)
            log_mb[1].append(m2)
            bar.update()
        for ds, row in zip(DESIGN_DATASETS, design_rows):
            bar.set_postfix_str(f"design {ds}, round {rnd + 1}")
            row.ours_1.append(_design(ds, 1))
            row.ours_all.append(_design(ds, None))
            bar.update()
    bar.close()
    if log_row is not None:
        _log_agreement(log_row, log_mb)
    drift = max(calibrations) / min(calibrations) - 1.0 if calibrations else 0.0
    out = [choose(rows[n]) for n in names] + cold_rows + ([log_row] if log_row is not None else []) + design_rows
    for row in out:
        row.busy_at = busy_at
    return out, drift


# -- reporting ----------------------------------------------------------------------------
_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _span_t(vals):
    """``median unit (min–max)`` in the median's unit."""
    med = statistics.median(vals)
    scale, unit = next((u for u in _UNITS if med >= u[0]), _UNITS[-1])
    return f"{_num(med / scale)} {unit} ({_num(min(vals) / scale)}–{_num(max(vals) / scale)})"


def _num(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def _span_r(vals):
    med = statistics.median(vals)
    return f"**{_num(med)}×** ({_num(min(vals))}–{_num(max(vals))})"


def machine_header() -> str:
    """One paragraph naming where the table was measured."""
    import llvmlite.binding as ll
    import numba
    from threadpoolctl import threadpool_info

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    numpy_dir = os.path.dirname(np.__file__)
    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    mine = [i for i in infos if os.path.dirname(os.path.dirname(i.get("filepath", ""))) == os.path.dirname(numpy_dir)
            and "numpy" in i.get("filepath", "")] or infos[:1]
    blas = [f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture', '?')} kernels, "
            f"{i.get('num_threads')} threads)" for i in mine]
    target = os.environ.get("NUMBA_CPU_NAME") or ll.get_host_cpu_name()
    forced = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "NUMBA_NUM_THREADS") if k in os.environ}
    forced.update({k: os.environ[k] for k in ALLOCATOR_ENV if k in os.environ and os.environ[k] != ALLOCATOR_ENV[k]})
    return (f"Machine: {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}; NumPy {np.__version__} "
            f"with {', '.join(blas) or 'an unknown BLAS'}; numba {numba.__version__} compiling for `{target}`"
            + (f"; environment {forced}" if forced else "") + f"; {time.strftime('%Y-%m-%d')}.")


def to_markdown(rows: list[Row], repeats: int, drift: float | None = None) -> str:
    """The table: what, ours (per core, all cores), the baseline, the ratios, the agreement."""
    lines = [machine_header(), "",
             f"Median of {repeats} rounds, each in a fresh process, (min–max) beside it. Per core: one numba "
             "thread and one BLAS thread against the single-threaded baseline; all cores: every thread against "
             "the same baseline. glibc's allocator thresholds are fixed in the measuring processes "
             "(`chebcenter.bench.runner.ALLOCATOR_ENV`), so a row's time does not depend on the rows before it.",
             "",
             "| what | ours, per core | ours, all cores | baseline | baseline time | ratio per core | "
             "ratio all cores | agreement |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = f" per {r.unit}"
        ours1 = _span_t(r.ours_1) + unit if r.ours_1 else "—"
        oursa = _span_t(r.ours_all) + unit if r.ours_all else "—"
        base = _span_t(r.base) + unit if r.base else "—"
        rat1 = _span_r(r.ratios(r.ours_1)) if r.base else "—"
        rata = _span_r(r.ratios(r.ours_all)) if r.base else "—"
        parts = [r.agree, r.note]
        if r.errors.get(r.baseline) is not None:
            parts.insert(0, f"the baseline within {r.errors[r.baseline]:.0e} of ours")
        agree = "; ".join(p for p in parts if p) or "—"
        lines.append(f"| {r.what} | {ours1} | {oursa} | {r.baseline} | {base} | {rat1} | {rata} | {agree} |")
    with_cands = [r for r in rows if r.cands]
    if with_cands:
        lines += ["", "### The candidates for each baseline", "",
                  f"Each candidate single-threaded, timed in the same rounds; its error is its answer's largest "
                  f"relative distance from ours on the row's sample (a radius, a center, a range, a vertex set); the "
                  f"baseline is the fastest within {MATCHED:g}.", "",
                  "| row | candidate | time, single-threaded | error against ours | the baseline |", "|---|---|---|---|---|"]
        for r in with_cands:
            for name, t in sorted(r.cands.items(), key=lambda kv: statistics.median(kv[1])):
                err = r.errors.get(name)
                lines.append(f"| {r.what} | {name} | {_span_t(t)} per {r.unit} | "
                             f"{'—' if err is None else f'{err:.1e}'} | {'**yes**' if name == r.baseline else ''} |")
    busy = sum(r.busy for r in rows)
    busy_at = max((r.busy_at for r in rows), default=BUSY)
    lines += ["", f"A fixed calibration workload ran before and after every case; {busy} case measurement"
              f"{'s were' if busy != 1 else ' was'} repeated because it ran more than {busy_at:.2f}× its best time "
              "(the machine was busy; the threshold is the calibration's own spread at rest, measured at the start "
              f"of each round, and at least {BUSY:.2f})."]
    if drift is not None:
        lines[-1] += (f" Drift: over this run the calibration's times spread by {100 * drift:.1f} % "
                      "(max / min − 1); a second run should put each median inside its cell's (min–max) widened by "
                      "that fraction on both sides (`--compare` checks it).")
    return "\n".join(lines) + "\n"


_DRIFT_RE = r"calibration's times spread by ([\d.]+) %"
_CELL_RE = r"^\**([\d.e+-]+)\s*(s|ms|µs|ns)?×?\**\s*\(([\d.e+-]+)–([\d.e+-]+)\)"


def _cells(text):
    """``{(row, column): (median, min, max)}`` of a table written by :func:`to_markdown`."""
    import re

    scale = {None: 1.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
    out = {}
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith(("| what", "|---")):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for j, cell in enumerate(cells[1:], start=1):
            m = re.match(_CELL_RE, cell)
            if m:
                f = scale[m.group(2)]
                out[(cells[0], j)] = (float(m.group(1)) * f, float(m.group(3)) * f, float(m.group(4)) * f)
    return out


def compare(previous: str, current: str) -> tuple[int, int, list[str]]:
    """How many medians of the table ``current`` fall inside the cells of ``previous``,
    each (min–max) widened on both sides by ``previous``'s stated drift. Returns
    ``(inside, total, lines describing the cells outside)``."""
    import re

    m = re.search(_DRIFT_RE, previous)
    drift = float(m.group(1)) / 100.0 if m else 0.0
    before, now = _cells(previous), _cells(current)
    header = ("what", "ours, per core", "ours, all cores", "baseline", "baseline time", "ratio per core",
              "ratio all cores")
    inside, outside = 0, []
    for key in sorted(set(before) & set(now)):
        _, lo, hi = before[key]
        med = now[key][0]
        # the cells are printed to 3 significant digits (integers from 100 up): each printed
        # number is within half a unit of its last digit, at most 5e-3 of itself
        if lo * (1.0 - drift) * (1 - 5e-3) <= med <= hi * (1.0 + drift) * (1 + 5e-3):
            inside += 1
        else:
            outside.append(f"{key[0][:60]} / {header[key[1]]}: {med:.4g} against {lo:.4g}–{hi:.4g} "
                           f"(± {100 * drift:.1f} %)")
    return inside, len(set(before) & set(now)), outside


def main(repeats: int = 5, only=None, out: str | None = None, progress: bool = True, cold: bool = True,
         against: str | None = None, full: bool = False) -> int:
    """Run and print the table (and write it to ``out``); with ``against``, a table file an
    earlier run wrote, also say how many of this run's medians fall inside its bands."""
    previous = None
    if against:
        with open(against, encoding="utf-8") as f:
            previous = f.read()
    t0 = time.perf_counter()
    rows, drift = run(repeats, only, progress, cold, full)
    text = to_markdown(rows, repeats, drift)
    flags = (" --full" if full else "") + (f" --only {' '.join(only)}" if only else "")
    text += f"\n`python -m chebcenter bench --repeats {repeats}{flags}` took {time.perf_counter() - t0:.0f} s.\n"
    print(text, end="")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    if previous is not None:
        inside, total, outside = compare(previous, text)
        print(f"\nAgainst {against}: {inside} of {total} medians inside its cells widened by its drift.")
        for line in outside:
            print(f"  outside: {line}")
    return 0
