"""The method table: one entry per estimator (CVXPY-style registry).

Adding a method is one :class:`MethodSpec` in :data:`REGISTRY`; the dispatcher
in :mod:`chebcenter.problem` never branches on method names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Context", "MethodOutput", "MethodSpec", "REGISTRY", "METHODS"]


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

    problem: Any
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
    and its keyword options with their defaults and validators."""

    name: str
    func: Callable[[Context], MethodOutput]
    lies_in: str
    certifies: str
    options: Mapping[str, Any] = field(default_factory=dict)
    validators: Mapping[str, Callable[[str, Any], Any]] = field(default_factory=dict)

    @property
    def in_feasible_set(self) -> bool:
        """True when the method's centers lie in S_F (they are clipped to the box)."""
        return self.lies_in == "S_F"


from . import auto as _auto  # noqa: E402
from . import cls as _cls  # noqa: E402
from . import exact as _exact  # noqa: E402
from . import relax as _relax  # noqa: E402
from . import simple as _simple  # noqa: E402

REGISTRY: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        _simple.HALF, _simple.LS, _simple.HALF_STAR, _cls.CLS,
        _relax.RCC1, _relax.RCC2, _exact.EXACT, _auto.AUTO,
    )
}
METHODS: tuple[str, ...] = tuple(REGISTRY)
