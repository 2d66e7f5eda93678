"""Running compiled kernels over the rows of a batch on all cores.

The kernels are compiled ``nogil`` (:mod:`chebcenter.kernels.jit`), so plain Python threads run
them in parallel; :func:`row_blocks` cuts a batch into contiguous ranges, one per thread.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numba

__all__ = ["row_blocks"]

#: one batch at a time runs its row threads: each already uses every core, and so BLAS's
#: thread limit is set and restored by the same thread (threadpoolctl lets only the thread
#: that set OpenBLAS's limit change it again)
_SECTION = threading.Lock()
_CONTROLLER: list = []
_LOCAL = threading.local()


def _one_blas_thread():
    """BLAS on one thread while the row threads run (threadpoolctl).

    The row threads already use every core; a kernel that calls BLAS or LAPACK (rcc1's
    barrier from order 96) would otherwise start BLAS's own threads inside each of them,
    2 x 2 threads on 2 cores: measured 2.3x slower than one thread at d = 200 (88 ms per
    row against 38 ms; 20 ms with this limit). The controller is built on first use, not
    at import (it scans the loaded libraries)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def _inside(work, a, b):
    """``work(a, b)`` in a row thread, marked so that a nested row_blocks runs inline."""
    _LOCAL.inside = True
    try:
        work(a, b)
    finally:
        _LOCAL.inside = False


def row_blocks(n_rows, align, work):
    """Run ``work(start, stop)`` over contiguous row ranges on all cores and wait.

    The compiled kernels are ``nogil``, so Python threads run them truly in parallel
    (numba's own ``parallel=True`` doubled their first-call compilation, to about a
    minute). The number of threads is ``numba.get_num_threads()`` (set it with
    ``NUMBA_NUM_THREADS`` or ``numba.set_num_threads``); range boundaries are multiples of
    ``align`` so that fixed chunks of rows stay whole. While the threads run, BLAS is held
    to one thread (:func:`_one_blas_thread`), and batches of several user threads take
    turns (each uses every core); a row_blocks inside a row thread runs inline.
    Exceptions propagate.
    """
    n_units = -(-n_rows // align)
    threads = max(1, min(numba.get_num_threads(), n_units))
    if threads == 1 or getattr(_LOCAL, "inside", False):   # one thread, or already in a row thread
        work(0, n_rows)
        return
    cuts = [min(n_rows, (k * n_units // threads) * align) for k in range(threads + 1)]
    with _SECTION, _one_blas_thread(), ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(lambda k: _inside(work, cuts[k], cuts[k + 1]), range(threads)))
