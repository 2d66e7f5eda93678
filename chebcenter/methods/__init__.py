"""The method table: one entry per estimator (CVXPY-style registry).

Adding a method is one :class:`MethodSpec` in :data:`REGISTRY`; the dispatcher
(:mod:`chebcenter.dispatch`) never branches on method names. The types live in
:mod:`chebcenter.methods._types`, below the method modules, so no method imports
from this package.
"""

from __future__ import annotations

import dataclasses

from . import bounded
from ._types import Context, Extra, MethodOutput, MethodSpec
from .auto import AUTO
from .cls import CLS
from .exact import EXACT
from .project import PROJECT
from .relax import RCC1, RCC2
from .simple import HALF, HALF_STAR, LS

__all__ = ["Context", "Extra", "MethodOutput", "MethodSpec", "REGISTRY", "METHODS"]

#: each method with its function on equality rows (``func``) and on bounded-error rows
#: (``bounded``, :mod:`chebcenter.methods.bounded`, which imports the method modules and so is
#: joined to their specs here)
REGISTRY: dict[str, MethodSpec] = {spec.name: dataclasses.replace(spec, bounded=on_bounded) for spec, on_bounded in (
    (HALF, bounded.half), (LS, bounded.ls), (HALF_STAR, bounded.half_star), (CLS, bounded.cls),
    (RCC1, bounded.rcc1), (RCC2, bounded.rcc2), (EXACT, bounded.exact), (AUTO, bounded.auto),
    (PROJECT, bounded.project))}
METHODS: tuple[str, ...] = tuple(REGISTRY)
