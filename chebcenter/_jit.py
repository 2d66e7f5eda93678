"""The one jit decorator used by every compiled kernel of :mod:`chebcenter`.

``cache=True`` keeps compiled machine code next to the sources, so only the
first import on a machine pays the compilation. ``fastmath`` is deliberately
off: the kernels contain geometric predicates (is a point inside the box, is a
basis singular) whose answers must not depend on re-associated arithmetic.
"""

from __future__ import annotations

import numba

__all__ = ["jit", "row_blocks"]


def jit(fn):
    """Compile ``fn`` in nopython mode with the project's fixed settings."""
    return numba.njit(cache=True, nogil=True, fastmath=False)(fn)



def row_blocks(n_rows, align, work):
    """Run ``work(start, stop)`` over contiguous row ranges on all cores and wait.

    The compiled kernels are ``nogil``, so Python threads run them truly in parallel
    (numba's own ``parallel=True`` doubled their first-call compilation, to about a
    minute). The number of threads is ``numba.get_num_threads()`` (set it with
    ``NUMBA_NUM_THREADS`` or ``numba.set_num_threads``); range boundaries are multiples of
    ``align`` so that fixed chunks of rows stay whole. Exceptions propagate.
    """
    from concurrent.futures import ThreadPoolExecutor

    n_units = -(-n_rows // align)
    threads = max(1, min(numba.get_num_threads(), n_units))
    if threads == 1:
        work(0, n_rows)
        return
    cuts = [min(n_rows, (k * n_units // threads) * align) for k in range(threads + 1)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(lambda k: work(cuts[k], cuts[k + 1]), range(threads)))
