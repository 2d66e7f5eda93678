"""Exceptions of :mod:`chebcenter`.

Every exception raised for bad input is both a :class:`ChebcenterError` and
the builtin a Python user expects (``ValueError`` for bad values and shapes,
``ImportError`` for a missing optional backend), so ``except ValueError``
keeps working. Infeasible or degenerate *instances* are never exceptions:
they are reported through :class:`chebcenter.Status`.
"""

from __future__ import annotations

import sys

__all__ = ["DASK_HINT", "ChebcenterError", "InvalidInputError", "MissingBackendError", "import_dask"]


class ChebcenterError(Exception):
    """Base class of every exception raised by chebcenter."""


class InvalidInputError(ChebcenterError, ValueError):
    """An argument has the wrong shape, type or value.

    The message names the argument, what is required and what was received.
    """


class MissingBackendError(ChebcenterError, ImportError):
    """An optional backend is not installed; the message gives the pip command."""


#: how to install the optional Dask dependencies: the one wording every message uses
DASK_HINT = 'pip install -e ".[distributed]"  (or: pip install "chebcenter-vflattack[distributed]")'


def import_dask(purpose: str, *modules: str) -> tuple:
    """Import optional Dask modules, or say how to install them.

    Parameters
    ----------
    purpose : str
        What needs the modules, as the subject of the error message ("Dask batches").
    *modules : str
        Module names, e.g. ``"dask", "dask.array"``.

    Returns
    -------
    tuple of modules
        The modules, in the order given.

    Raises
    ------
    MissingBackendError
        If one of them cannot be imported; the message names ``purpose`` and
        :data:`DASK_HINT`, the ``[distributed]`` extra to install.

    Examples
    --------
    >>> from chebcenter import MissingBackendError, import_dask
    >>> try:
    ...     (da,) = import_dask("Dask batches", "dask.array")
    ... except MissingBackendError as exc:   # without the [distributed] extra
    ...     print(exc)
    """
    try:
        for name in modules:
            __import__(name)   # as an import statement does (so a patched __import__ is honoured)
        return tuple(sys.modules[name] for name in modules)
    except ImportError as exc:
        raise MissingBackendError(f"{purpose} need the optional Dask dependencies: {DASK_HINT}") from exc
