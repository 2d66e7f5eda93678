"""The one jit decorator used by every compiled kernel of :mod:`chebcenter`.

``cache=True`` keeps compiled machine code next to the sources, so only the
first import on a machine pays the compilation. ``fastmath`` is deliberately
off: the kernels contain geometric predicates (is a point inside the box, is a
basis singular) whose answers must not depend on re-associated arithmetic.
"""

from __future__ import annotations

import numba

__all__ = ["jit"]


def jit(fn):
    """Compile ``fn`` in nopython mode with the project's fixed settings."""
    return numba.njit(cache=True, nogil=True, fastmath=False)(fn)


def jit_noalloc(fn):
    """:func:`jit` without numba's reference counting (``_nrt=False``)."""
    return numba.njit(cache=True, nogil=True, fastmath=False, _nrt=False)(fn)
