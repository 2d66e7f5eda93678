"""The one jit decorator used by every compiled kernel of :mod:`chebcenter`.

``cache=True`` keeps compiled machine code next to the sources, so only the
first import on a machine pays the compilation. ``fastmath`` is deliberately
off: the kernels contain geometric predicates (is a point inside the box, is a
basis singular) whose answers must not depend on re-associated arithmetic.

Two conventions keep compilation and calls cheap (both measured):

* A variable whose first value is a constant and that is later passed to another
  kernel is initialised through ``np.int64(...)`` / ``np.bool_(...)``. numba types a
  plain ``-1`` as ``Literal[int](-1)`` while inferring the caller and compiles the callee
  for that literal too, a second specialisation that is never used again (the simplex's
  pivot was compiled three times).
* :func:`jit_noalloc` kernels (``_nrt=False``) may not allocate arrays, and in exchange
  numba emits no reference counting for their array arguments: an atomic increment and
  decrement per array per call, which cost 25% of a branch-and-bound node whose LP kernel
  takes 9 arrays. The hot loops of the edge walk likewise never reassign an array variable
  (a reassigned array is reference-counted on every use).
* No cfunc wrapper is built (``no_cfunc_wrapper``): the kernels are never passed as
  first-class functions, so it would only be compiled and cached for nothing.
"""

from __future__ import annotations

import numba

__all__ = ["await_method", "jit", "jit_noalloc", "set_compile_owner"]


def jit(fn):
    """Compile ``fn`` in nopython mode with the project's fixed settings."""
    return numba.njit(cache=True, nogil=True, fastmath=False, no_cfunc_wrapper=True)(fn)


def jit_noalloc(fn):
    """:func:`jit` without numba's reference counting (``_nrt=False``): for allocation-free
    kernels called once per node or per pivot (see the module docstring)."""
    return numba.njit(cache=True, nogil=True, fastmath=False, _nrt=False, no_cfunc_wrapper=True)(fn)


#: a compile helper whose steps this process waits for instead of compiling them itself
#: (chebcenter._warmup.start_helper(own=True)); None: compile on first use, as always
_OWNER = None
#: the warm-up step that compiles what a method (a MethodSpec's name) reaches
_STEP_OF = {"auto": "exact"}


def set_compile_owner(helper) -> None:
    """Register (or, with None, clear) the helper :func:`await_method` waits for: an object
    with ``wait_for(step)``."""
    global _OWNER
    _OWNER = helper


def await_method(name: str) -> None:
    """Called by the dispatcher before it runs method ``name``: if a registered helper is
    compiling that method's warm-up step, wait until its kernels are in the cache (they are
    then loaded, not compiled a second time in parallel). Without a helper, one global read."""
    if _OWNER is not None:
        _OWNER.wait_for(_STEP_OF.get(name, name))
