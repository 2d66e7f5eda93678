"""Exceptions of :mod:`chebcenter`.

Every exception raised for bad input is both a :class:`ChebcenterError` and
the builtin a Python user expects (``ValueError`` for bad values and shapes,
``ImportError`` for a missing optional backend), so ``except ValueError``
keeps working. Infeasible or degenerate *instances* are never exceptions:
they are reported through :class:`chebcenter.Status`.
"""

from __future__ import annotations

__all__ = ["ChebcenterError", "InvalidInputError", "MissingBackendError"]


class ChebcenterError(Exception):
    """Base class of every exception raised by chebcenter."""


class InvalidInputError(ChebcenterError, ValueError):
    """An argument has the wrong shape, type or value.

    The message names the argument, what is required and what was received.
    """


class MissingBackendError(ChebcenterError, ImportError):
    """An optional backend is not installed; the message gives the pip command."""
