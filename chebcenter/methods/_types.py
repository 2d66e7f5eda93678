"""The types a method sees and returns, below every method module.

A method is a function ``Context -> MethodOutput`` described by a :class:`MethodSpec`;
:mod:`chebcenter.methods` assembles the specs into the registry. Solver state that a
method keeps between calls lives in a :class:`ProblemCache` owned by that method's
module, keyed by the problem.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the core sits a floor below the methods; only its type is needed here
    from ..core import _Core

__all__ = ["Context", "MethodOutput", "MethodSpec", "ProblemCache"]


@dataclass
class Context:
    """What a method receives: the factored problem and the rows with S_F nonempty.

    ``rows`` index the batch; ``B``, ``Q`` (``A^+ b``), ``H`` (half*) and
    ``radius_ball`` (R) are restricted to them. The projection of the box
    midpoint onto S_F is ``H`` (clipped) where H lies in the box; for the
    positions ``outside`` it is ``proj_outside`` (NaN rows where the compiled
    solver did not converge although S_F is nonempty). :meth:`projection`
    assembles it.
    """

    problem: _Core
    rows: np.ndarray
    B: np.ndarray
    Q: np.ndarray
    H: np.ndarray
    radius_ball: np.ndarray
    options: Mapping[str, Any]
    outside: np.ndarray
    proj_outside: np.ndarray

    def projection(self) -> np.ndarray:
        """``argmin_{x in S_F} ||x - m||`` for every row (NaN where not computed)."""
        prob = self.problem
        out = np.clip(self.H, prob.lo, prob.hi)
        out[self.outside] = self.proj_outside
        return out


@dataclass
class MethodOutput:
    """What a method returns for the rows of its :class:`Context`."""

    centers: np.ndarray
    radii: np.ndarray
    codes: np.ndarray
    extras: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MethodSpec:
    """A method: its function, where its centers lie, what its radius certifies,
    and its keyword options with their defaults and validators.

    ``func`` is ``Context -> MethodOutput`` (the :data:`chebcenter.methods.REGISTRY` of
    :class:`chebcenter.BoxSlice`; the general sets have their own
    :class:`chebcenter.sets.SetMethodSpec`)."""

    name: str
    func: Callable[..., Any]
    lies_in: str
    certifies: str
    options: Mapping[str, Any] = field(default_factory=dict)
    validators: Mapping[str, Callable[[str, Any], Any]] = field(default_factory=dict)
    #: options given in the user's coordinates (an anchor, a metric) are mapped into the
    #: normalised frame by ``to_frame(box_slice, options, rows, n_rows) -> options``; ``rows``
    #: are the batch rows that reach the solver (per-row options are restricted to them)
    to_frame: Callable[..., Any] | None = None

    @property
    def in_feasible_set(self) -> bool:
        """True when the method's centers lie in S_F (they are clipped to the box)."""
        return self.lies_in == "S_F"


class ProblemCache:
    """Per-problem solver state of one method: built once per (problem, key), thread safe.

    Entries are dropped with their problem (weak keys), so a cache never keeps a problem
    alive.
    """

    def __init__(self) -> None:
        self._data: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, problem: Any, key: Any, build: Callable[[], Any]) -> Any:
        """The entry for ``(problem, key)``, built by ``build()`` on first use."""
        with self._lock:
            entries = self._data.setdefault(problem, {})
            if key not in entries:
                entries[key] = build()
            return entries[key]
