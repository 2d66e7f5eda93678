"""Running compiled kernels over the rows of a batch on all cores.

The kernels are compiled ``nogil`` (:mod:`chebcenter._jit`), so plain Python threads run
them in parallel; :func:`row_blocks` cuts a batch into contiguous ranges, one per thread.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba

__all__ = ["row_blocks"]


def row_blocks(n_rows, align, work):
    """Run ``work(start, stop)`` over contiguous row ranges on all cores and wait.

    The compiled kernels are ``nogil``, so Python threads run them truly in parallel
    (numba's own ``parallel=True`` doubled their first-call compilation, to about a
    minute). The number of threads is ``numba.get_num_threads()`` (set it with
    ``NUMBA_NUM_THREADS`` or ``numba.set_num_threads``); range boundaries are multiples of
    ``align`` so that fixed chunks of rows stay whole. Exceptions propagate.
    """
    n_units = -(-n_rows // align)
    threads = max(1, min(numba.get_num_threads(), n_units))
    if threads == 1:
        work(0, n_rows)
        return
    cuts = [min(n_rows, (k * n_units // threads) * align) for k in range(threads + 1)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(lambda k: work(cuts[k], cuts[k + 1]), range(threads)))
