"""The method table: one entry per estimator (CVXPY-style registry).

Adding a method is one :class:`MethodSpec` in :data:`REGISTRY`; the dispatcher
(:mod:`chebcenter.methods.dispatch`) never branches on method names. The types live in
:mod:`chebcenter.methods.spec`, below the method modules, so no method imports
from this package.
"""

from __future__ import annotations

from .auto import AUTO
from .cls import CLS
from .exact import EXACT
from .project import PROJECT
from .relax import RCC1, RCC2
from .simple import HALF, HALF_STAR, LS
from .spec import Context, Extra, MethodOutput, MethodSpec

__all__ = ["Context", "Extra", "MethodOutput", "MethodSpec", "REGISTRY", "METHODS"]

#: each method by name; its function serves slice rows and groups of interval rows alike
REGISTRY: dict[str, MethodSpec] = {spec.name: spec for spec in (HALF, LS, HALF_STAR, CLS, RCC1, RCC2, EXACT, AUTO,
                                                                PROJECT)}
METHODS: tuple[str, ...] = tuple(REGISTRY)
