"""Batches past one machine: the centers of a row-chunked Dask array, lazily.

:func:`centers` takes a :class:`chebcenter.BoxSlice` and a Dask array ``B`` of shape (N, m)
chunked by rows, and returns a :class:`DaskBatchResult` of lazy Dask arrays (centers,
radii, statuses, residuals and the per-row extras of the method). Nothing is computed
until you ask (``.compute()``, ``dask.compute``, ``.to_zarr``, ...), on whatever scheduler
is active: threads, processes, or a ``dask.distributed`` cluster from a laptop to many
machines.

* The rows never pass through the client: each task solves one row block where it runs.
* The factored problem (SVD, null-space basis, solver caches) is one task of the graph:
  each worker receives it once and every block on that worker reuses it.
* The compiled kernels load from numba's on-disk cache on each worker (compiled once per
  process at most, never per task).
* Each block runs exactly :meth:`BoxSlice.centers`, so results equal the in-memory batch
  row for row. For half, ls, half_star, rcc2, cls and project that is bit for bit where
  the workers run the same compiled kernels as the client (same CPU target, numba, NumPy
  and BLAS): each row's answer is computed from that row alone, by kernels that never
  multiply across the batch (docs/theory.md §6.7). On a cluster of mixed CPUs it holds to
  rounding. rcc1 agrees within its solver tolerance (its warm starts run in fixed chunks
  inside a block, so block boundaries can change the Newton path, never the certified
  answer beyond the solver's tolerance), and exact within its certified gap.

Dask is an optional dependency: ``pip install -e ".[distributed]"``. Without it, importing
this module works and :func:`centers` raises :class:`chebcenter.MissingBackendError`
naming the extra.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._core.validate import check_choice, check_options
from ._errors import InvalidInputError, import_dask
from .methods import REGISTRY
from .results import BatchResult, Status
from .sets import BoxSlice

__all__ = ["DaskBatchResult", "centers", "require_dask"]

def require_dask():
    """``(dask, dask.array)``, or an error that names the extra to install."""
    return import_dask("Dask batches", "dask", "dask.array")


@dataclass
class DaskBatchResult:
    """Lazy per-row results of :func:`centers` (Dask arrays; nothing computed yet).

    Attributes
    ----------
    centers : dask.array.Array, shape (N, d)
    radii, status_codes, residuals, box_violations : dask.array.Array, shape (N,)
    extras : dict[str, dask.array.Array]
        The method's per-row extras (their first axis is the row).
    method : str
    """

    centers: Any
    radii: Any
    status_codes: Any
    residuals: Any
    box_violations: Any
    method: str
    extras: dict = field(default_factory=dict)

    def counts(self, **compute_kwargs: Any) -> dict[str, int]:
        """``{status name: rows}``, computed from the statuses alone: the workers solve their
        blocks, but no center travels to the client."""
        _, da = require_dask()
        nums = da.bincount(self.status_codes.astype(np.int64), minlength=len(Status)).compute(**compute_kwargs)
        return {Status(k).name: int(v) for k, v in enumerate(nums) if v}

    def compute(self, **compute_kwargs: Any) -> BatchResult:
        """Materialise everything into an in-memory :class:`chebcenter.BatchResult`."""
        dask, _ = require_dask()
        keys = list(self.extras)
        c, r, s, res, viol, *ex = dask.compute(self.centers, self.radii, self.status_codes, self.residuals,
                                               self.box_violations, *[self.extras[k] for k in keys],
                                               **compute_kwargs)
        return BatchResult(c, r, s.astype(np.int8), self.method, float("nan"), res, viol, dict(zip(keys, ex)))


def _solve_block(problem: BoxSlice, block: np.ndarray, method: str, on_inconsistent: str,
                 options: dict, extra_keys: tuple) -> dict:
    """One row block, exactly as the in-memory batch; extras restricted to ``extra_keys``."""
    res = problem.centers(np.asarray(block), method, on_inconsistent=on_inconsistent, **options)
    out = {"centers": res.centers, "radii": res.radii, "status_codes": res.status_codes,
           "residuals": res.residuals, "box_violations": res.box_violations}
    n = res.centers.shape[0]
    for key, (dtype, tail, fill) in extra_keys:
        val = res.extras.get(key)
        if val is None:  # the key did not arise in this block (e.g. "check": no row failed)
            val = np.full((n,) + tail, fill, dtype=dtype)
        out[key] = np.asarray(val, dtype=dtype)
    return out


def _declared_extras(problem: BoxSlice, method: str, options: dict) -> tuple:
    """The method's per-row extras as ``(name, (dtype, trailing shape, fill))``, from its
    ``MethodSpec`` declaration: nothing is solved to find them."""
    return tuple((e.name, (e.dtype, e.trailing_shape(problem.d), e.fill))
                 for e in REGISTRY[method].all_extras(options))


def centers(problem: BoxSlice, B: Any, method: str = "auto", *, on_inconsistent: str = "status",
            **options: Any) -> DaskBatchResult:
    """Lazy :meth:`BoxSlice.centers` of a Dask array ``B`` (N, m) chunked by rows.

    A NumPy array is accepted too (it is wrapped with ``dask.array.from_array`` in blocks of
    100 000 rows). Arguments are checked here, before any work. Per-row options (an
    ``anchor`` of shape (N, d) for ``project``) are not supported: pass a shared one. The
    method's default is :meth:`BoxSlice.centers`'s (``"auto"``, the same for one row).

    Examples
    --------
    >>> import numpy as np, dask.array as da, chebcenter as cc
    >>> from chebcenter.distributed import centers
    >>> A = np.array([[1.0, 1.0, 1.0]])
    >>> B = da.from_array(np.array([[1.5], [0.3], [9.0], [1.2]]), chunks=(2, 1))
    >>> lazy = centers(cc.BoxSlice(A), B, "rcc2")
    >>> lazy.counts()
    {'OPTIMAL': 3, 'INFEASIBLE': 1}
    >>> lazy.centers.compute().round(2).tolist()[:2]
    [[0.5, 0.5, 0.5], [0.1, 0.1, 0.1]]
    """
    dask, da = require_dask()
    if not isinstance(problem, BoxSlice):
        raise InvalidInputError(f"problem must be a chebcenter.BoxSlice; got {type(problem).__name__}")
    method = check_choice("method", method, REGISTRY)
    on_inconsistent = check_choice("on_inconsistent", on_inconsistent, ("status", "project"))
    opts = check_options(REGISTRY[method], options)
    given = {k: opts[k] for k in options}
    if "anchor" in given and np.ndim(given["anchor"]) == 2:
        raise InvalidInputError("anchor must be shared (shape (d,)) for Dask batches; got one per row")
    if not isinstance(B, da.Array):
        arr = np.asarray(B)
        if arr.ndim != 2:
            raise InvalidInputError(f"B must be a 2-D array (N, {problem.m}); got shape {arr.shape}")
        B = da.from_array(arr, chunks=(100_000, -1))
    if B.ndim != 2 or B.shape[1] != problem.m:
        raise InvalidInputError(f"B must have shape (N, {problem.m}): one right-hand side per row; got {B.shape}")
    if any(np.isnan(c) for c in B.chunks[0]):
        raise InvalidInputError("B must have known row chunk sizes (call B.compute_chunk_sizes() first)")
    B = B.rechunk({1: -1})
    extra_keys = _declared_extras(problem, method, given)
    shared = dask.delayed(problem, pure=True)   # one key: each worker fetches the factored problem once
    d = problem.d
    fields = {"centers": ((d,), "f8"), "radii": ((), "f8"), "status_codes": ((), "i1"),
              "residuals": ((), "f8"), "box_violations": ((), "f8")}
    fields.update({k: (tail, dtype) for k, (dtype, tail, _) in extra_keys})
    parts: dict[str, list] = {k: [] for k in fields}
    solve = dask.delayed(_solve_block, pure=True)
    for blk, n in zip(B.to_delayed().ravel(), B.chunks[0]):
        out = solve(shared, blk, method, on_inconsistent, given, extra_keys)
        for key, (tail, dtype) in fields.items():
            parts[key].append(da.from_delayed(out[key], shape=(n,) + tuple(tail), dtype=np.dtype(dtype)))
    arrays = {k: (da.concatenate(v, axis=0) if v else da.zeros((0,) + tuple(fields[k][0]), dtype=fields[k][1]))
              for k, v in parts.items()}
    extras = {k: arrays[k] for k, _ in extra_keys}
    return DaskBatchResult(arrays["centers"], arrays["radii"], arrays["status_codes"], arrays["residuals"],
                           arrays["box_violations"], method, extras)
