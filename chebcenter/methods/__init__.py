"""The method table: one :class:`MethodSpec` per method, and everything derived from it.

Adding a method is one :class:`MethodSpec` in :data:`TABLE`. Each spec declares what the
method serves (the rows of a box slice, :data:`ROWS`; the general sets, :data:`SET_KINDS`),
its solvers (from the one vocabulary :data:`SOLVERS`), its options and the steps of the
warm-up with the kernels they compile. From the table come:

* :data:`REGISTRY` and :data:`METHODS`, the estimators of :class:`chebcenter.BoxSlice`;
* :func:`set_methods`, the methods of :class:`chebcenter.Polytope` and
  :class:`chebcenter.QuadraticSet`;
* :func:`warmup_steps`, the steps of ``python -m chebcenter warmup``;
* :func:`method_table`, the table of docs/chebcenter.md (``python -m chebcenter methods``).

The dispatcher (:mod:`chebcenter.methods.dispatch`) never branches on method names. The
types live in :mod:`chebcenter.methods.spec`, below the method modules, so no method imports
from this package.
"""

from __future__ import annotations

from typing import Any

from .._core.validate import check_choice, check_options
from .._errors import InvalidInputError
from .auto import AUTO
from .cls import CLS
from .exact import EXACT
from .general_sets import INSCRIBED
from .project import PROJECT
from .ranges import RANGES
from .relax import RCC1, RCC2
from .simple import HALF, HALF_STAR, LS
from .spec import (
    BOX_SLICE_KINDS,
    GENERAL,
    ROWS,
    SET_KINDS,
    SOLVERS,
    Context,
    Extra,
    MethodOutput,
    MethodSpec,
    Route,
    SetRoute,
    WarmupStep,
)

__all__ = ["GENERAL", "Context", "Extra", "METHODS", "MethodOutput", "MethodSpec", "REGISTRY", "ROWS", "Route", "SET_KINDS",
           "SOLVERS",
           "SetRoute", "TABLE", "WarmupStep", "choose_set_method", "method_table", "set_methods", "warmup_steps"]

#: every method, in the order of a typical session's first use (the warm-up's order)
TABLE: tuple[MethodSpec, ...] = (HALF, LS, HALF_STAR, CLS, RCC1, RCC2, EXACT, AUTO, PROJECT, RANGES, INSCRIBED)
#: the estimators of a box slice by name; each function serves slice rows and groups of
#: interval rows alike
REGISTRY: dict[str, MethodSpec] = {spec.name: spec for spec in TABLE if spec.rows and spec.estimates}
METHODS: tuple[str, ...] = tuple(REGISTRY)


def set_methods(kind: str) -> dict[str, tuple[MethodSpec, SetRoute | None]]:
    """The methods of the general sets of ``kind`` (one of :data:`SET_KINDS`), by name, each
    with its own route there, or None where the set reduces to a box slice: a polytope is the
    box slice of its bounding box with its rows as one-sided intervals, so every estimator of
    interval rows serves it (:meth:`chebcenter.Polytope.center`)."""
    reduces = kind in BOX_SLICE_KINDS
    found = {spec.name: (spec, None) for spec in REGISTRY.values() if reduces and "interval" in spec.rows}
    found.update({spec.name: (spec, spec.sets[kind]) for spec in TABLE if kind in spec.sets})
    return found


def serves(spec: MethodSpec, kind: str) -> bool:
    """Whether ``spec`` serves the general sets of ``kind`` (its own route, or a polytope's reduction)."""
    return spec.name in set_methods(kind)


def choose_set_method(kind: str, method: Any, options: dict,
                      refused: dict | None = None) -> tuple[MethodSpec, SetRoute | None, dict]:
    """The method ``method`` on a general set of ``kind``: its spec, its route (None: the box
    slice's) and its checked options (the one option check, as for BoxSlice). ``refused`` maps
    a method the table leaves out on purpose to the reason given."""
    if refused and isinstance(method, str) and method in refused:
        raise InvalidInputError(refused[method])
    table = set_methods(kind)
    spec, route = table[check_choice("method", method, table)]
    return spec, route, check_options(spec, options, route)


def warmup_steps() -> tuple[tuple[MethodSpec, WarmupStep], ...]:
    """Every warm-up step with its method: first the steps every first use reaches, in the
    table's order, then those only some problems reach."""
    steps = [(spec, step) for spec in TABLE for step in spec.warmup]
    return tuple(s for s in steps if s[1].always) + tuple(s for s in steps if not s[1].always)


def method_table() -> str:
    """The method table as Markdown: what each method serves, its routes on box-slice rows
    (the declared fast paths, with the facts they need, then the general body), its solvers,
    where its centers lie, what its radius certifies and its warm-up steps (docs/chebcenter.md
    prints it)."""
    yes = {True: "yes", False: "—"}
    lines = ["| method | equality rows | interval rows | polytope | quadratic set | routes | solvers | centers lie in | "
             "`radius` certifies | warm-up steps |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for spec in TABLE:
        kinds = [yes[r in spec.rows] for r in ROWS] + [yes[serves(spec, k)] for k in SET_KINDS]
        solvers = ", ".join(spec.solvers) or "—"
        on_sets = sorted({v for route in spec.sets.values() for v in route.solvers}, key=SOLVERS.index)
        if on_sets and tuple(on_sets) != spec.solvers:
            solvers += f" (sets: {', '.join(on_sets)})"
        steps = ", ".join(f"`{step.name}`" for step in spec.warmup) or "—"
        name = f"`{spec.name}`" + ("" if spec.estimates else " (feature ranges)")
        routes = ", ".join([f"`{r.name}` ({', '.join(sorted(r.needs))})" for r in spec.routes]
                           + [f"`{GENERAL}`"]) if spec.func is not None else "—"
        lines.append(f"| {name} | {' | '.join(kinds)} | {routes} | {solvers} | {spec.lies_in} | "
                     f"{spec.certifies.replace('||', '‖')} | {steps} |")
    return "\n".join(lines)
