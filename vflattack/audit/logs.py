"""Audit a prediction log on disk, out of core, on Dask.

An auditor is handed a model file (:meth:`VFLModel.save`) and a log of what the active
party saw: per prediction its active features and the k scores. Columns:

* ``id``: a record id (needed to join the passive party's log; optional otherwise);
* ``y0 .. y{d_a-1}``: the active features;
* ``p0 .. p{k-1}``: the scores (probabilities, in the model's class order), or
  ``logp0 .. logp{k-1}``: log-probabilities (preferred: saturated scores stay exact).

A log of a deployment that publishes its scores some other way is audited with its
``release`` (:class:`vflattack.Release`), on the sets the release implies: rounded, clipped
or noisy probabilities in ``p0 ..``, rounded log-probabilities in ``logp0 ..``, the label
only in ``label`` (class index; or one-hot ``p0 ..``), the top-1 label with its rounded
probability in ``label`` and ``p_top``; the top-K classes (``topk``) in ``p0 ..`` with empty
cells where a class is withheld; the order of the classes (``rank``) in ``rank0 ..`` (the
class at each rank, best first) or as pseudo-scores in ``p0 ..``. Without a release the scores are taken as exact; a
log whose scores look rounded (every value a multiple of 10^-K, K <= 6) is then flagged in
the report, with the ``--release`` to use.

The passive party's log, when the auditor has it, holds ``id`` and ``x0 .. x{d-1}``.
Logs are Parquet (a file or a directory of parts) or CSV, read with ``dask.dataframe``, so
a log larger than memory streams through in partitions. Each partition is mapped to
``(A, b')`` and attacked exactly as :func:`vflattack.whitebox_attack` does (the same score
flags, methods and options); its reconstructions and per-row statuses are written as one
Parquet part, and only small sums travel back (status counts; with the passive log, the
squared errors per feature on the rows every method reconstructed), from which the MSE
per feature is exact. Needs the ``[distributed]`` extra.

:func:`attack_log` is the computation: it streams the parts into a directory it is given
and returns a :class:`~vflattack.audit.protocol.Result`. :func:`vflattack.audit_log` runs
it inside an atomically written report directory and adds the report's files.
"""

from __future__ import annotations

import pathlib
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import UnreadableReleaseWarning
from .._validate import InvalidInputError
from ..attacks import BASELINES, DEFAULT_METHODS, PRIOR_METHODS, Prior, whitebox_attack
from ..attacks.known_input import infer_decimals
from ..model import VFLModel
from ..release import Release, fitting_kinds, verdict_line
from .intervals import LEVEL, LOG_RESAMPLES, LOG_SEED, interval, poisson_replicates, poisson_sums
from .logfiles import (
    BLOCK_ROWS,
    Columns,
    Part,
    columns_of,
    partitions,
    passive_columns,
    passive_rows,
    read_columns,
    read_part,
    write_columns,
)
from .protocol import Result

__all__ = ["attack_frame", "attack_log", "read_log", "write_log"]

def _dask():
    from chebcenter import import_dask

    return import_dask("prediction-log audits", "dask", "dask.dataframe", "pandas")


def write_log(model: VFLModel, Y: Any, X: Any, directory: Any, *, ids: Any = None, log_scores: bool = True,
              partitions: int = 4, release: Release | None = None, rng: Any = 0) -> tuple[pathlib.Path, pathlib.Path]:
    """Write what a deployment would log: ``predictions.parquet`` (id, active features, scores)
    and ``passive.parquet`` (id, passive features), each in ``partitions`` parts. With a
    ``release`` the scores are logged as that release publishes them (:meth:`Release.publish`,
    noise drawn from ``rng``; columns as in the module docstring) and ``log_scores`` is ignored,
    as it is for a model whose link is not softmax (its outputs are logged as ``p0..``, as the
    deployment computes them)."""
    _, dd, pd = _dask()
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    X = np.asarray(X, dtype=float)
    Y = np.zeros((X.shape[0], 0)) if Y is None and model.n_active == 0 else np.asarray(Y, dtype=float)
    ids = np.arange(X.shape[0]) if ids is None else np.asarray(ids)
    if (release is not None and not release.exact) or model.link != "softmax":   # a link model: its outputs
        release = release if release is not None else Release()
        cols = _published_columns(release.publish(model, Y, X, rng), release)
    else:
        S = model.predict_log_proba(Y, X) if log_scores else model.predict_proba(Y, X)
        cols = {f"{'logp' if log_scores else 'p'}{i}": S[:, i] for i in range(S.shape[1])}
    preds = pd.DataFrame({"id": ids, **{f"y{j}": Y[:, j] for j in range(Y.shape[1])}, **cols})
    passive = pd.DataFrame({"id": ids, **{f"x{j}": X[:, j] for j in range(X.shape[1])}})
    paths = out / "predictions.parquet", out / "passive.parquet"
    dd.from_pandas(preds, npartitions=partitions).to_parquet(paths[0], write_index=False)
    dd.from_pandas(passive, npartitions=partitions).to_parquet(paths[1], write_index=False)
    return paths


def _published_columns(published, release: Release) -> dict:
    """The log columns of what a release published (module docstring; the release's
    :class:`vflattack.release.LogColumns`)."""
    return release.entry.log.write(published)


def _score_columns(k: int, release: Release | None, columns) -> list[str]:
    """The score columns a log must have for ``release`` (None: exact, p.. or logp..)."""
    probs = [f"p{i}" for i in range(k)]
    if release is None or release.exact:
        logs = [f"logp{i}" for i in range(k)]
        return logs if all(c in columns for c in logs) else probs
    log = release.entry.log
    names = log.names(k)
    return probs if log.fallback and not all(c in columns for c in names) else names


def _published(df, k: int, release: Release | None):
    """What the partition's rows published, as whitebox_attack takes it, and log_scores."""
    cols = _score_columns(k, release, df.columns)
    if release is None or release.exact:
        return _matrix(df, cols), cols[0].startswith("logp")
    log = release.entry.log
    if cols != log.names(k):   # the probabilities instead (labels, rankings derived from them)
        return _matrix(df, cols), False
    return log.read(_matrix(df, cols)), log.log_scores


def _matrix(df, cols: list[str]) -> np.ndarray:
    """The columns ``cols`` of ``df`` (a pandas DataFrame or :class:`~vflattack.audit.logfiles.Columns`)
    as an (n, len(cols)) float array."""
    return df.matrix(cols) if isinstance(df, Columns) else df[cols].to_numpy(float)


def _attack_partition(part: Part, model, methods, prior, method_options, part_path, columns, passive_log,
                      passive_cols, release=None, threads=1, unit_widths=None):
    """Read one partition (and its passive rows), attack it on ``threads`` numba threads, write
    its reconstructions, return its small sums."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))   # this thread only
    try:
        return _attack_read_partition(part, model, methods, prior, method_options, part_path, columns, passive_log,
                                      passive_cols, release, unit_widths)
    finally:
        numba.set_num_threads(before)


def attack_frame(model: VFLModel, frame: Any, *, methods: Sequence[str] | None = None,
                 prior: Prior | None = None, method_options: dict | None = None, release: Release | None = None):
    """The log audit's work on one batch of a prediction log, for any engine: a frame in, a
    frame out.

    ``frame`` is a pandas DataFrame (or anything with ``to_pandas()``: a pyarrow Table or
    RecordBatch) holding the log's columns (module docstring: ``id``, ``y0 ..`` and the
    scores as ``release`` publishes them). Returns a pandas DataFrame, one row per input row
    in order: ``id`` (when the input has it), ``score_flags`` (0: the scores were used; else
    :class:`vflattack.ScoreFlag` bits), and for every method its reconstruction
    ``<method>_x0 ..`` and status ``<method>_status``: exactly the rows the Dask audit writes
    for the same batch (:func:`attack_log`). ``methods`` defaults to the log audit's (without
    ``prior``, those that need none); the ``mean`` baseline and the prior-aware attacks need
    ``prior``. Dask maps it over the log's partitions; docs/vflattack.md has the recipes for
    Ray Data (``map_batches``) and Spark (``mapInPandas``).

    Examples
    --------
    >>> import numpy as np, pandas as pd, vflattack as va
    >>> m = va.VFLModel(np.ones((2, 1)), np.array([[0.0, 0.0], [1.0, 2.0]]), np.zeros(2))
    >>> y, x = np.array([[0.3]]), np.array([[0.2, 0.4]])
    >>> p = m.predict_proba(y, x)
    >>> out = attack_frame(m, pd.DataFrame({"id": [7], "y0": y[:, 0], "p0": p[:, 0], "p1": p[:, 1]}),
    ...                    methods=("half_star",))
    >>> list(out.columns), out["half_star_status"].tolist()
    (['id', 'score_flags', 'half_star_x0', 'half_star_x1', 'half_star_status'], ['OPTIMAL'])
    """
    import pandas as pd

    if not isinstance(model, VFLModel):
        raise InvalidInputError(f"model must be a VFLModel; got {type(model).__name__}")
    if hasattr(frame, "to_pandas") and not isinstance(frame, pd.DataFrame):
        frame = frame.to_pandas()
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(f"frame must be a pandas DataFrame or a pyarrow Table; got {type(frame).__name__}")
    if methods is None:
        methods = tuple(m for m in DEFAULT_METHODS + BASELINES
                        if prior is not None or not (m == "mean" or m in PRIOR_METHODS))
    methods = tuple(methods)
    need = [f"y{j}" for j in range(model.n_active)] + _score_columns(model.n_classes, release, frame.columns)
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise InvalidInputError(f"frame lacks the log's columns {missing} (module docstring of vflattack.audit.logs)")
    out, _res, _S, _log = _attack_df(model, frame, methods, prior, method_options, release)
    return pd.DataFrame(out)


def _attack_df(model, df, methods, prior, method_options, release):
    """``(the output columns, the attack's result, what was published, log_scores)`` of one frame."""
    d = model.n_passive
    S, log = _published(df, model.n_classes, release)
    Y = _matrix(df, [f"y{j}" for j in range(model.n_active)]) if model.n_active else None
    with warnings.catch_warnings():   # an unreadable release: the log's report gives the verdict once
        warnings.simplefilter("ignore", UnreadableReleaseWarning)
        res = whitebox_attack(model, S, Y, methods, prior=prior, log_scores=log, method_options=method_options,
                              release=None if release is None or release.exact else release)
    out = {"score_flags": res.score_flags.astype(np.int64)}
    if "id" in df:
        out = {"id": np.asarray(df["id"]), **out}
    for m in methods:
        for j in range(d):
            out[f"{m}_x{j}"] = res.reconstructions[m][:, j]
        out[f"{m}_status"] = res.status_names(m)
    return out, res, S, log


def _attack_read_partition(part, model, methods, prior, method_options, part_path, columns, passive_log,
                           passive_cols, release, unit_widths=None):
    df = read_columns(part, columns)   # a worker reads and writes Parquet without pandas (logfiles)
    if passive_cols:
        df = df.left_join(passive_columns(passive_log, df["id"], passive_cols, part), "the passive log")
    out, res, S, log = _attack_df(model, df, methods, prior, method_options, release)
    counts = res.status_counts()
    write_columns(out, part_path)
    refused = int(np.sum(res.score_flags != 0))
    summary = {"rows": int(len(df)), "status": counts, "refused": refused,
               # a sample of what a mostly refused partition published: the verdict names what fits it
               "sample": _head(S, 200) if refused > len(df) / 2 else None,
               # scores that look rounded, taken as exact: the report says which release to audit with
               "decimals": infer_decimals(S, max_decimals=6) if isinstance(S, np.ndarray) and S.size
               and (release is None or release.exact) and not log else None}
    if passive_cols:
        X = _matrix(df, passive_cols)
        rows = res.common_rows() & np.all(np.isfinite(X), axis=1)
        summary["scored"] = int(rows.sum())
        # per row of the partition (the bootstrap's weights follow each row's position in the log,
        # so every row is listed; the rows not scored weigh nothing)
        err = {m: (res.reconstructions[m] - X) ** 2 for m in methods}
        summary["sq"] = {m: np.sum(e[rows], axis=0) for m, e in err.items()}
        cols = list(model.binary_columns)
        per_row = {f"mse:{m}": np.mean(e, axis=1) for m, e in err.items()}
        if unit_widths is not None:   # the same errors in the data's units (FeatureBounds: x = lo + w u)
            w2 = np.asarray(unit_widths, dtype=float) ** 2
            per_row.update({f"units:{m}": np.mean(w2 * e, axis=1) for m, e in err.items()})
        if cols:   # rows whose 0/1 features rounding reads off the center exactly (VFLModel.binary_reading)
            hits = {m: np.all(model.binary_reading(res.reconstructions[m])[:, cols] == X[:, cols], axis=1)
                    for m in methods}
            summary["binary_exact"] = {m: int(np.sum(h[rows])) for m, h in hits.items()}
            per_row.update({f"binary:{m}": h.astype(float) for m, h in hits.items()})
        # this partition's share of the Poisson bootstrap over the log's records (audit.intervals)
        summary["boot"] = poisson_sums(per_row, resamples=LOG_RESAMPLES, seed=LOG_SEED, start=int(part.start),
                                       keep=rows)
    return summary


def attack_log(model: VFLModel, log: Any, parts_dir: Any, *, passive_log: Any = None,
               methods: Sequence[str] = DEFAULT_METHODS + BASELINES, prior: Prior | None = None,
               method_options: dict | None = None, client: Any = None, progress: bool = False,
               release: Release | None = None, block_rows: int | None = None, task_threads: int = 1,
               unit_widths: Any = None) -> Result:
    """Attack every partition of the prediction log ``log``; write one Parquet part per partition.

    Partitions follow the log's Parquet row groups (cut to at most ``block_rows`` rows), or
    blocks of ``block_rows`` CSV lines; each task reads its partition and the passive rows it
    needs, so memory is bounded by the partition, whatever the log's size
    (:mod:`vflattack.audit.logfiles`). ``progress`` shows rows done, rows/s and the time left.

    Before the cluster works, this process compiles what numba's cache lacks of every kernel
    the methods can reach (chebcenter's warm-up steps, over the cores), once per machine, so
    that the workers load the kernels instead of each compiling its own copy. The workers then
    load their kernels (one worker per machine first), and one of them, alone, attacks the
    first 256 rows twice, the second time to measure the seconds per row (without a cluster,
    on dask's threads, this process does). ``block_rows`` (default: sized here) is then at
    most the rows of about :data:`TASK_SECONDS` of work, at most the log's rows over
    :data:`TASKS_PER_WORKER` times the cluster's worker threads, at least
    :data:`MIN_BLOCK_ROWS` and at most :data:`~vflattack.audit.logfiles.BLOCK_ROWS` (the
    memory bound); the report's ``config["block_rule"]`` says which bound set it, and the
    partitions run.
    Each task runs chebcenter on ``task_threads`` numba threads (default 1: one per Dask worker
    thread, so that workers, not threads inside them, share the cores).

    ``release`` says how the logged scores were published (module docstring; default exact).

    ``parts_dir`` must exist; it receives ``part.<i>.parquet`` (per prediction: id, score
    flags, every method's reconstruction ``<method>_x<j>`` and status ``<method>_status``).
    With ``passive_log`` the MSE per feature is computed on the rows joined on ``id``; the
    ``mean`` baseline and the prior-aware attacks need ``prior`` (without it they are left
    out and named in ``config["skipped_without_prior"]``). ``client``: a
    ``dask.distributed.Client``, or a ``concurrent.futures.Future`` of one, waited for once the
    log is checked and the kernels compiled (default: the active Dask scheduler). ``unit_widths``: the
    log is in unit coordinates of these feature widths (:class:`vflattack.FeatureBounds`), and
    the MSE's interval is also given in the data's units. Most users call
    :func:`vflattack.audit_log`, which writes the whole report directory.
    """
    from chebcenter import import_dask

    # dask alone: the partitions are this module's own (dask.dataframe, with the pandas and
    # pyarrow it imports, is 1.35 s and 119 MB more in a fresh process, and only write_log uses it)
    (dask,) = import_dask("prediction-log audits", "dask")
    if not isinstance(model, VFLModel):
        raise InvalidInputError(f"model must be a VFLModel (VFLModel.load(path)); got {type(model).__name__}")
    methods = tuple(methods)
    dropped = [m for m in methods if m == "mean" or m in PRIOR_METHODS] if prior is None else []
    methods = tuple(m for m in methods if m not in dropped)
    if not methods:
        raise InvalidInputError(f"no method left to run: {dropped} need a prior (prior=, --prior-file)")
    columns, passive_cols = _checked_columns(model, log, passive_log, release)
    compile_s = _compile_once(model, methods, release)
    parts = partitions(log, BLOCK_ROWS if block_rows is None else block_rows)
    total = sum(p.rows for p in parts)
    client = _active_client(client)
    warm = (model, methods, prior, method_options, release)
    calibration = (columns, methods, prior, method_options, release)
    # on a cluster the workers load their kernels first, and one of them calibrates: this
    # process never loads them (0.8 s and about 60 MB it spent before the workers, which
    # load them anyway); on dask's threads this process is the worker
    warm_s, calibrate_at = _warm_workers(client, warm) if client is not None else (0.0, None)
    t_cal = time.perf_counter()
    load_s, per_row = 0.0, 0.0
    if parts and calibrate_at is None:
        load_s, per_row = _calibrate(model, parts[0], *calibration)
    elif parts:
        load_s, per_row = client.submit(_calibrate, model, parts[0], *calibration, workers=[calibrate_at],
                                        allow_other_workers=True, pure=False).result()
    rule = "given"
    if block_rows is None:
        block_rows, rule = _block_size(total, _worker_threads(client), per_row)
        if block_rows != BLOCK_ROWS:
            parts = partitions(log, block_rows)
    calibrate_s = time.perf_counter() - t_cal
    parts_dir = pathlib.Path(parts_dir)
    shared = dask.delayed(model, pure=True)
    prior_d = dask.delayed(prior, pure=True)
    tasks = [dask.delayed(_attack_partition, pure=True)(part, shared, methods, prior_d, method_options,
                                                       str(parts_dir / f"part.{i:05d}.parquet"), columns,
                                                       None if passive_log is None else str(passive_log),
                                                       passive_cols, release, task_threads, unit_widths)
             for i, part in enumerate(parts)]
    summaries, task_s = _run(tasks, client, progress, [p.rows for p in parts])
    result = _result(summaries, methods, model, log, passive_log, len(tasks))
    # the partitions' own time, from the first task submitted to the last done, after the
    # workers loaded their kernels (warm_seconds); neither counts the cluster's start
    result.config.update(block_rows=block_rows, block_rule=rule, task_threads=task_threads,
                         task_seconds=round(task_s, 3), warm_seconds=round(warm_s, 3),
                         calibrate_seconds=round(calibrate_s, 3), compile_seconds=round(compile_s, 3),
                         kernel_load_seconds=round(load_s, 3),
                         seconds_per_row=per_row)
    rel = release or Release()
    decimals = [s["decimals"] for s in summaries if s.get("decimals") is not None]
    result.config.update(skipped_without_prior=dropped, release=rel.spec, release_words=rel.describe(),
                         looks_rounded=max(decimals) if decimals and len(decimals) == len(summaries) else None)
    refused = sum(s.get("refused", 0) for s in summaries)
    rows = sum(s["rows"] for s in summaries)
    if rows and refused > rows / 2:   # the audit could not model the release: say so first, and what fits
        sample = next(s["sample"] for s in summaries if s.get("sample") is not None)
        result.config["verdict"] = verdict_line(release, refused, rows, fitting_kinds(sample, model.n_classes))
    return result


def read_log(model: VFLModel, log: Any, *, passive_log: Any = None, rows: int | None = None) -> tuple:
    """The first ``rows`` rows (default all) of a prediction log of exact scores, in memory:
    ``(Y, P, X)``, the active features, the probabilities (from ``p0..`` or, preferred,
    ``logp0..``; for a link other than softmax, the published values as logged) and, with
    ``passive_log``, the passive features joined on ``id`` (else None).
    For the release design (:func:`vflattack.design_release`), which evaluates every candidate
    on the same batch. Rows with a non-finite score or a missing passive row are dropped.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, vflattack as va
    >>> m = va.VFLModel(np.ones((2, 1)), np.array([[0.0], [1.0]]), np.zeros(2))
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_log(m, np.zeros((3, 1)), np.array([[0.1], [0.5], [0.9]]), out)
    >>> Y, P, X = read_log(m, out / "predictions.parquet", passive_log=out / "passive.parquet")
    >>> P.shape, X.ravel().tolist()
    ((3, 2), [0.1, 0.5, 0.9])
    """
    import pandas as pd

    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
        raise InvalidInputError(f"rows must be a positive integer or None; got {rows!r}")
    columns, passive_cols = _checked_columns(model, log, passive_log)
    frames, have = [], 0
    for part in partitions(log):
        frames.append(read_part(part, columns))
        have += len(frames[-1])
        if rows is not None and have >= rows:
            break
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({c: [] for c in columns})
    if rows is not None:
        df = df.iloc[:rows]
    if passive_cols:
        df = df.merge(passive_rows(passive_log, df["id"].to_numpy(), passive_cols), on="id", how="left")
    k = model.n_classes
    S, is_log = _published(df, k, None)
    with np.errstate(over="ignore", invalid="ignore"):
        P = np.exp(S) if is_log else S
    keep = np.all(np.isfinite(P), axis=1)
    X = None
    if passive_cols:
        X = df[passive_cols].to_numpy(float)
        keep &= np.all(np.isfinite(X), axis=1)
        X = X[keep]
    if not keep.any():
        raise InvalidInputError(f"log {str(log)!r} has no row with finite scores" +
                                (" and a passive row" if passive_cols else ""))
    P = P[keep]
    if model.link == "softmax":   # probabilities whose logs were rounded to the last ulp; other links publish values
        P = P / P.sum(axis=1, keepdims=True)
    Y = df[[f"y{j}" for j in range(model.n_active)]].to_numpy(float)[keep] if model.n_active else None
    return Y, P, X


def _head(S, n):
    """The first ``n`` rows of what was published (an array, or a tuple of arrays)."""
    return tuple(v[:n] for v in S) if isinstance(S, tuple) else S[:n]


def _checked_columns(model, log, passive_log, release=None):
    """The columns to read from the prediction log, and the passive log's x columns (checked)."""
    k, d = model.n_classes, model.n_passive
    have = columns_of(log)
    need = [f"y{j}" for j in range(model.n_active)] + _score_columns(k, release, have)
    missing = [c for c in need if c not in have]
    if missing:
        what = (release or Release()).entry.log.needs.format(last=k - 1) + (" (or logp0..)" if release is None else "")
        raise InvalidInputError(f"log {str(log)!r} lacks columns {missing}; it needs y0..y{model.n_active - 1} "
                                f"and, for release {(release or Release()).spec!r}, {what}")
    columns = (["id"] if "id" in have else []) + need
    passive_cols = []
    if passive_log is not None:
        pas = columns_of(passive_log)
        passive_cols = [f"x{j}" for j in range(d)]
        lack = [c for c in ["id"] + passive_cols if c not in pas]
        if lack or "id" not in have:
            raise InvalidInputError(f"joining the passive log needs 'id' in both logs and x0..x{d - 1} in the "
                                    f"passive log; missing {lack or ['id (prediction log)']}")
    return columns, passive_cols


#: partitions per worker thread, at least (a straggler then costs a quarter of a worker's share)
TASKS_PER_WORKER = 4
#: the work a partition holds, at most about (seconds at the calibrated rate)
TASK_SECONDS = 1.0
#: the fewest rows a partition is cut to (a task's own cost, reading and writing a part, is tens of ms)
MIN_BLOCK_ROWS = 1000


def _active_client(client):
    """``client`` (a Future of one is waited for: the CLI starts its cluster while the log is
    read and checked), else the active dask.distributed client, else None (dask's threads)."""
    import concurrent.futures

    if isinstance(client, concurrent.futures.Future):
        client = client.result()
    if client is None:
        try:
            from distributed import default_client
            client = default_client()
        except (ImportError, ValueError):
            client = None
    return client


def _worker_threads(client) -> int:
    """The threads that run partitions: every worker's, on a cluster; else this machine's cores
    (dask's threaded scheduler)."""
    import os

    client = _active_client(client)
    if client is None:
        return max(1, os.cpu_count() or 1)
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))


def _block_size(total: int, threads: int, per_row: float) -> tuple[int, str]:
    """``(block_rows, which bound set it)``: :func:`attack_log`'s rule."""
    bounds = {"memory": BLOCK_ROWS, f"{TASKS_PER_WORKER} per worker": -(-total // (TASKS_PER_WORKER * threads))}
    if per_row > 0:
        bounds[f"{TASK_SECONDS:g} s of work"] = int(TASK_SECONDS / per_row)
    rule = min(bounds, key=bounds.get)
    if bounds[rule] < MIN_BLOCK_ROWS:
        return MIN_BLOCK_ROWS, "smallest partition"
    return int(bounds[rule]), rule


def _compile_once(model, methods, release) -> float:
    """Compile, in this process's machine, every kernel the methods can reach that numba's
    cache lacks, before any worker starts: chebcenter's warm-up steps (each runs its method on
    fixed problems that take the rare routes too: a projection, a fallback, a rank-deficient
    subproblem), split over the cores, which the idle workers leave free. Calibrating on
    sample rows instead missed routes only some rows take (rcc1's barrier fallback, the
    projection onto S_F), and 8 workers on 2 cores then compiled them side by side mid-run:
    a 200 000-row log's partitions took 63 s instead of 9. Returns the seconds taken (a few
    hundredths when the cache is warm)."""
    import os

    import chebcenter as cc

    bounded = model.link != "softmax" or (release is not None and not release.exact)
    # the prior-aware attacks are chebcenter's metric projection; the baselines compile nothing
    used = {"project" if m in PRIOR_METHODS else m for m in methods} & set(cc.METHODS)
    steps = cc.warmup_steps_of(sorted(used), rows=("equality", "interval") if bounded else ("equality",))
    t0 = time.perf_counter()
    cold = cc.cold_warmup_steps(steps)
    if cold:
        cc.warmup(cold, jobs=max(1, min(len(cold), os.cpu_count() or 1, 4)))
    return time.perf_counter() - t0


def _calibrate(model, part, columns, methods, prior, method_options, release) -> tuple[float, float]:
    """Attack the first 256 rows of ``part`` twice on one numba thread: ``(seconds of the first
    run, reading the rows and loading any kernel not yet loaded, seconds per row of the
    second)``. On a cluster it runs on one worker after the warm-up, alone."""
    import numba

    df = read_columns(part, columns).head(256)
    if len(df) == 0:
        return 0.0, 0.0
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        t0 = time.perf_counter()
        _attack_df(model, df, methods, prior, method_options, release)
        t1 = time.perf_counter()
        _attack_df(model, df, methods, prior, method_options, release)
        t2 = time.perf_counter()
    finally:
        numba.set_num_threads(before)
    return t1 - t0, (t2 - t1) / len(df)


def _warm_worker(model, methods, prior, method_options, release):
    """Load every kernel the partitions will call, on a worker, before they run: a 4-row
    attack of the same model, methods and release (a worker's first partition paid 3-4 s of
    imports and cache loads, which at 2e5 rows and 2 workers was a third of the time)."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        rng = np.random.default_rng(0)
        Y = rng.random((4, model.n_active)) if model.n_active else None
        X = rng.random((4, model.n_passive))
        S = model.predict_proba(Y, X) if release is None or release.exact else release.publish(model, Y, X)
        whitebox_attack(model, S, Y, methods, prior=prior, method_options=method_options,
                        release=None if release is None or release.exact else release)
    finally:
        numba.set_num_threads(before)


def _warm_workers(client, warm) -> tuple[float, Any]:
    """Every worker loads the kernels the partitions will call (:func:`_warm_worker` with
    ``warm``): ``(seconds, the address of a worker on this machine, or any, to calibrate on)``.
    This machine's workers load what this process compiled, all at once; on another machine
    one worker first compiles what its cache lacks, then the others load them, never compiling
    the same kernels side by side. A warm-up only: an error, or a worker lost meanwhile, is
    left to the partitions' own tasks."""
    import socket

    t0 = time.perf_counter()
    here = {"127.0.0.1", "localhost", "::1", socket.gethostname()}
    try:
        here.add(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    hosts: dict = {}
    for addr, info in client.scheduler_info().get("workers", {}).items():
        hosts.setdefault(info.get("host"), []).append(addr)
    first = [x for h, a in hosts.items() for x in (a if h in here else a[:1])]
    rest = [x for h, a in hosts.items() if h not in here for x in a[1:]]
    for group in (first, rest):
        if group:
            client.run(_warm_worker, *warm, workers=group, on_error="ignore")
    return time.perf_counter() - t0, (first[0] if first else None)


def _run(tasks, client, progress, rows):
    """Compute the partition tasks, in order; the progress bar counts rows (``rows`` per task).
    Returns ``(summaries, task seconds)``."""
    import dask

    if client is None:
        import warnings

        t0 = time.perf_counter()
        with warnings.catch_warnings():  # dask's Parquet reader trips pandas deprecations the user cannot act on
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            return list(dask.compute(*tasks)), time.perf_counter() - t0
    from distributed import as_completed
    from tqdm.auto import tqdm

    t1 = time.perf_counter()
    futures = client.compute(tasks)
    size = {f.key: n for f, n in zip(futures, rows)}
    with tqdm(total=sum(rows), desc="log audit", unit="row", unit_scale=True, disable=not progress,
              leave=False) as bar:
        for fut in as_completed(futures):
            bar.update(size[fut.key])
    return client.gather(futures), time.perf_counter() - t1


def _result(summaries, methods, model, log, passive_log, n_parts) -> Result:
    rows = sum(s["rows"] for s in summaries)
    records = []
    for m in methods:
        status: dict = {}
        for s in summaries:
            for key, v in s["status"][m].items():
                status[key] = status.get(key, 0) + v
        rec = {"method": m, "status": status, "mse": None, "mse_per_feature": None, "rows_scored": 0}
        if passive_log is not None:
            n = sum(s["scored"] for s in summaries)
            sq = np.sum([s["sq"][m] for s in summaries], axis=0)
            rec.update(rows_scored=n, mse=float(np.sum(sq) / (n * model.n_passive)) if n else float("nan"),
                       mse_per_feature=(sq / n).tolist() if n else None)
            boots = [s.get("boot") for s in summaries]
            rec["mse_ci"] = interval(poisson_replicates(boots, f"mse:{m}"), LEVEL)
            if any(b is not None and f"units:{m}" in b for b in boots):
                rec["mse_data_units_ci"] = interval(poisson_replicates(boots, f"units:{m}"), LEVEL)
            if model.binary_columns:
                hit = sum(s.get("binary_exact", {}).get(m, 0) for s in summaries)
                rec["binary_exact_share"] = hit / n if n else float("nan")
                rec["binary_exact_ci"] = interval(poisson_replicates(boots, f"binary:{m}"), LEVEL)
        records.append(rec)
    config = {"log": str(log), "passive_log": None if passive_log is None else str(passive_log), "rows": rows,
              "partitions": n_parts, "n_passive": model.n_passive, "n_classes": model.n_classes,
              "methods": list(methods), "reconstructions": "reconstructions/part.*.parquet",
              "link": model.link, "parties": {n: list(c) for n, c in zip(model.party_names, model.parties)},
              "onehot": [list(g) for g in model.onehot], "binary": list(model.binary)}
    if passive_log is not None:
        config["intervals"] = {"level": LEVEL, "resamples": LOG_RESAMPLES, "seed": LOG_SEED,
                               "method": "Poisson bootstrap over records (each record weighted Poisson(1) per "
                                         "replicate, a function of the seed and of the record's position in the log)"}
    return Result("log_audit", records, config)
