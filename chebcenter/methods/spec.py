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

from .._core.validate import check_choice

if TYPE_CHECKING:  # the core sits a floor below the methods; only its type is needed here
    from .._core.normalised import _Core

__all__ = ["BOX_SLICE_KINDS", "COMMON_EXTRAS", "Context", "EXTRA_UNITS", "Extra", "FACTS", "GENERAL", "MethodOutput", "MethodSpec",
           "ProblemCache", "ROWS", "Route", "SET_KINDS", "SOLVERS", "SetRoute", "WarmupStep"]

#: the one solver vocabulary: a method's ``solver`` option takes some of these, ``"auto"``
#: (the method's own choice) always among them. ``numba``: the compiled kernels; ``scipy``:
#: SciPy's solver per row; ``clarabel``, ``scs``: the cvxpy formulation with that solver
SOLVERS = ("auto", "numba", "scipy", "clarabel", "scs")
#: the rows of a box slice batch a method may serve: equations ``A x = b`` and bounded-error
#: rows ``L <= A x <= U``
ROWS = ("equality", "interval")
#: the general sets a method may serve (:class:`chebcenter.Polytope`, :class:`chebcenter.QuadraticSet`)
SET_KINDS = ("polytope", "quadratic")
#: the general sets that reduce to a box slice with interval rows (a polytope: its bounding box,
#: its rows one-sided intervals), so every method of interval rows serves them
BOX_SLICE_KINDS = ("polytope",)
#: what a route may require of the rows it serves (:attr:`Context.facts`), and what each means
FACTS = {
    "equations": "every interval of every row is a point over the shared box: the rows are slices A x = b, "
                 "the lifting is trivial (K = d), and the context carries the slice's factors (q = A^+ b, "
                 "half*, R, the projection of the box midpoint)",
    "no equations": "no row of the lifted group is an equation (every constraint is an interval)",
    "one interval row": "one interval row and no equation: a slab l <= a^T x <= u (K = d + 1)",
}
#: the name :meth:`MethodSpec.run` records for a method's general body (its function)
GENERAL = "lifted"


@dataclass(frozen=True)
class Route:
    """A fast path of a method: ``func(Context) -> MethodOutput`` on rows whose context has
    every fact in ``needs`` (:data:`FACTS`). The method's function is its general body, on
    the lifted box slice of any set; a route must give the answer that body gives, only
    faster (a test runs both on the rows the route serves)."""

    name: str
    func: Callable[..., Any]
    needs: frozenset = frozenset()
    doc: str = ""

    def __post_init__(self) -> None:
        needs = frozenset(self.needs)
        bad = sorted(needs - set(FACTS))
        if bad:
            raise ValueError(f"route {self.name!r}: needs must come from {sorted(FACTS)}; got {bad}")
        if self.name == GENERAL:
            raise ValueError(f"route name {GENERAL!r} is the general body's")
        object.__setattr__(self, "needs", needs)


@dataclass(frozen=True)
class SetRoute:
    """A method on one kind of general set: ``func(set, t0, **options) -> CenterResult``
    (``t0``: the call's start time), with its own options, validators and solvers (the
    solvers from :data:`SOLVERS`; its ``solver`` validator is derived from them)."""

    func: Callable[..., Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    validators: Mapping[str, Callable[[str, Any], Any]] = field(default_factory=dict)
    solvers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "validators", _with_solver_check(self.validators, self.solvers, self.options))


@dataclass(frozen=True)
class WarmupStep:
    """One step of ``python -m chebcenter warmup``: its method on a small fixed problem.

    ``kernels`` are the compiled entry points the step reaches (``"module.function"`` under
    :mod:`chebcenter.kernels`): where one has no cache entry for this CPU, the step is cold.
    ``rows`` is the kind of rows it solves (one of :data:`ROWS`, or a kind of :data:`SET_KINDS`);
    ``problems`` the fixed problems it solves (named in :mod:`chebcenter._warmup`), ``calls``
    the options of each call, and ``always`` whether the method's first use reaches these
    kernels (False: only some problems do, and the step is compiled last)."""

    name: str
    kernels: tuple[str, ...] = ()
    rows: str = "equality"
    problems: tuple[str, ...] = ("default",)
    calls: tuple[Mapping[str, Any], ...] = ({},)
    always: bool = True

    def __post_init__(self) -> None:
        if self.rows not in ROWS + SET_KINDS:
            raise ValueError(f"rows must be one of {ROWS + SET_KINDS}; got {self.rows!r}")
        if self.rows in SET_KINDS and self.rows not in self.problems:
            # the default problem is a box slice: a general set's step would never reach its kernels
            raise ValueError(f"step {self.name!r} on {self.rows} sets must solve the {self.rows!r} problem; "
                             f"got {self.problems}")


def _with_solver_check(validators, solvers, options):
    """``validators`` with a ``solver`` check derived from ``solvers`` (unless one is given);
    the declared solvers must come from :data:`SOLVERS` and include the default."""
    bad = [v for v in solvers if v not in SOLVERS]
    if bad:
        raise ValueError(f"solvers must come from {SOLVERS}; got {bad}")
    if not solvers:
        if "solver" in options:
            raise ValueError("a method with a solver option declares its solvers")
        return validators
    if "auto" not in solvers or options.get("solver") not in solvers:
        raise ValueError(f"solvers {solvers} must include 'auto' and the default {options.get('solver')!r}")
    if "solver" in validators:
        return validators
    return {**validators, "solver": lambda name, v: check_choice(name, v, solvers)}

#: how a per-row extra maps back from the normalised frame to the user's coordinates
#: (:class:`chebcenter.BoxSlice` scales the box to ``[-w, w]`` by ``s`` and drops fixed
#: coordinates; docs/theory.md §6)
EXTRA_UNITS = {
    "length": "a distance: times s",
    "squared_length": "a squared distance: times s**2",
    "point": "a point of R^d per row, shape (d,): mapped like a center",
    "points": "per row, an array of points (n_i, d) or None: each point mapped like a center",
    "free_coordinates": "per row, one value per free coordinate: zero on the fixed ones, shape (d,)",
    "count": "an integer count: unchanged",
    "label": "per row, a string or None: unchanged",
    "indices": "per row, an integer array or None: unchanged",
}


@dataclass(frozen=True)
class Extra:
    """One per-row extra a method may return in ``BatchResult.extras``.

    ``name`` is its key; ``unit`` one of :data:`EXTRA_UNITS` (how it maps back to the user's
    coordinates); ``dtype`` its NumPy dtype string (``"f8"``, ``"i8"``, ``"O"``); ``shape``
    its trailing shape in the user's frame, ``"d"`` standing for the dimension; ``fill``
    what a row where it did not arise holds (a Dask block that lacks the key); ``when`` an
    option that must be true for the method to return it at all.
    """

    name: str
    unit: str
    dtype: str
    doc: str
    shape: tuple = ()
    fill: Any = None
    when: str | None = None

    def __post_init__(self) -> None:
        if self.unit not in EXTRA_UNITS:
            raise ValueError(f"unit must be one of {sorted(EXTRA_UNITS)}; got {self.unit!r}")
        if self.fill is None and self.dtype != "O":
            object.__setattr__(self, "fill", np.nan if self.dtype.startswith("f") else 0)

    def trailing_shape(self, d: int) -> tuple[int, ...]:
        """``shape`` with ``"d"`` replaced by ``d``."""
        return tuple(d if n == "d" else int(n) for n in self.shape)


#: what the dispatcher adds to every method's extras (docs/chebcenter.md, "The contract check")
COMMON_EXTRAS = (
    Extra("rhs_residual", "length", "f8", "||A A^+ b - b||: how far b is from A's range (0 for a consistent row)"),
    Extra("check", "label", "O", "why the contract check (or the method itself) changed the row's status; None if not"),
    Extra("forward_error", "length", "f8", "how far the exact set can lie from the computed one (b's rounding, "
                                           "the factors', intervals solved as midpoints): added to the radius"),
    Extra("path", "label", "O", "which of the method's routes served the row (its MethodSpec's routes, or "
                                "'lifted': the general body on the lifted box slice); None: the row reached no method"),
)
#: and to those whose centers lie in S_F
IN_SLICE_EXTRAS = (
    Extra("clipped", "length", "f8", "how far the solver's center was clipped into the box", fill=0.0),
    Extra("moved", "length", "f8", "how far a center outside its set (off A x = b, or outside L <= A x <= U) was "
                                   "moved into it (added to its radius)", fill=0.0),
)


@dataclass
class Context:
    """What a method receives: the factored problem and one group of nonempty rows.

    Every row is a set ``{x in box : L <= A x <= U}``; the dispatcher hands a method either
    rows whose intervals are all points (the slices ``A x = b``) or one lifted group of
    rows with an interval wider than a point (:attr:`group` set; docs/theory.md §8).

    ``rows`` index the batch. For slice rows, ``B``, ``Q`` (``A^+ b``), ``H`` (half*) and
    ``radius_ball`` (R) are restricted to them; the projection of the box midpoint onto
    S_F is ``H`` (clipped) where H lies in the box, and for the positions ``outside`` it is
    ``proj_outside`` (NaN rows where the compiled solver did not converge although S_F is
    nonempty). :meth:`projection` assembles it.

    Every context has ``L`` and ``U``, the rows' bounds (``L = U = B`` for slices). For
    interval rows, ``group`` is the :class:`chebcenter._core.lifting.LiftedGroup` (the
    reduction: ``group.apply`` lifts points of x, ``group.invert`` maps lifted points back),
    ``k`` the rows' positions in it, ``Y0`` a point of each row's lifted set, ``L`` and
    ``U`` the rows' clamped intervals; ``B``, ``Q``, ``H`` and ``radius_ball`` are None.
    """

    problem: _Core
    rows: np.ndarray
    B: np.ndarray | None
    Q: np.ndarray | None
    H: np.ndarray | None
    radius_ball: np.ndarray | None
    options: Mapping[str, Any]
    outside: np.ndarray | None = None
    proj_outside: np.ndarray | None = None
    group: Any = None
    k: np.ndarray | None = None
    Y0: np.ndarray | None = None
    L: np.ndarray | None = None
    U: np.ndarray | None = None

    @classmethod
    def of_group(cls, core: _Core, rows: np.ndarray, group: Any, k: np.ndarray, Y0: np.ndarray,
                 L: np.ndarray, U: np.ndarray, options: Mapping[str, Any]) -> Context:
        """The context of the rows ``k`` of one lifted group of interval rows."""
        return cls(core, rows, None, None, None, None, options, group=group, k=k, Y0=Y0, L=L, U=U)

    @property
    def facts(self) -> frozenset:
        """What the rows are (:data:`FACTS`): the routes of a method declare what they need of it."""
        grp = self.group
        if grp is None:
            return frozenset({"equations"})
        found = set()
        if grp.AE.shape[0] == 0:
            found.add("no equations")
            if grp.AI.shape[0] == 1:
                found.add("one interval row")
        return frozenset(found)

    @property
    def dim(self) -> int:
        """The dimension of the lifted box slice the methods solve on: d for slices, K for a group."""
        return self.problem.d if self.group is None else self.group.K

    @property
    def rank(self) -> int:
        """The rank of the lifted slice's equations (``dim - p``)."""
        return self.problem.rank if self.group is None else self.group.K - self.group.p

    def subset(self, idx: np.ndarray, options: Mapping[str, Any] | None = None) -> Context:
        """The context restricted to the positions ``idx`` (with other options). Slice rows
        lose their projection data (``outside``): a method that needs it recomputes it."""
        opts = self.options if options is None else options
        if self.group is not None:
            return Context.of_group(self.problem, self.rows[idx], self.group, self.k[idx], self.Y0[idx],
                                    self.L[idx], self.U[idx], opts)
        d = self.problem.d
        return Context(self.problem, self.rows[idx], self.B[idx], self.Q[idx], self.H[idx], self.radius_ball[idx],
                       opts, np.zeros(0, dtype=np.int64), np.zeros((0, d)), L=self.B[idx], U=self.B[idx])

    def projection(self) -> np.ndarray:
        """``argmin_{x in S_F} ||x - m||`` for every slice row (NaN where not computed)."""
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

    def rest_by(self, ctx: Context, done: np.ndarray, route: str, body: Callable[[Context], MethodOutput]) -> MethodOutput:
        """A route's answer on the rows ``done`` and the general ``body``'s on the rest (in
        place; the one way a route hands rows on): ``extras["path"]`` says ``route`` or
        ``lifted`` per row, and an extra only the body gives is filled on its rows."""
        n = done.size
        self.extras["path"] = np.where(done, route, GENERAL).astype(object)
        left = np.flatnonzero(~done)
        if left.size:
            rest = body(ctx.subset(left))
            self.centers[left], self.radii[left], self.codes[left] = rest.centers, rest.radii, rest.codes
            for key, val in rest.extras.items():
                self.extras.setdefault(key, np.full(n, None, dtype=object))[left] = val
        return self


#: the routes of ``of=`` a method can declare (:attr:`MethodSpec.image`)
IMAGE_ROUTES = ("mapped", "vertices", "vertices_then_rcc1", "weighted")


@dataclass(frozen=True)
class MethodSpec:
    """One row of the method table (:data:`chebcenter.methods.TABLE`): a method, what it
    serves, where its centers lie, what its radius certifies, its options and the kernels
    its warm-up compiles.

    ``func`` is ``Context -> MethodOutput``, the method's general body: it solves on the lifted
    box slice of any rows (slices, whose lifting is trivial, and groups of interval rows
    alike), or None for a method of the general sets only; ``routes`` are its fast paths,
    each declaring the facts of the rows it serves (:class:`Route`; :meth:`run` picks one);
    ``rows`` the kinds of box-slice rows it serves (:data:`ROWS`),
    ``sets`` its route on each kind of general set (:data:`SET_KINDS`), ``solvers`` the
    values of its ``solver`` option (:data:`SOLVERS`; the option's check is derived from
    them), ``warmup`` the steps of ``python -m chebcenter warmup`` it owns, and ``estimates``
    False for a table entry that is not an estimator (the feature ranges)."""

    name: str
    func: Callable[..., Any] | None
    lies_in: str
    certifies: str
    options: Mapping[str, Any] = field(default_factory=dict)
    validators: Mapping[str, Callable[[str, Any], Any]] = field(default_factory=dict)
    rows: tuple[str, ...] = ROWS
    solvers: tuple[str, ...] = ()
    sets: Mapping[str, SetRoute] = field(default_factory=dict)
    warmup: tuple[WarmupStep, ...] = ()
    estimates: bool = True
    #: options given in the user's coordinates (an anchor, a metric) are mapped into the
    #: normalised frame by ``to_frame(box_slice, options, rows, n_rows) -> options``; ``rows``
    #: are the batch rows that reach the solver (per-row options are restricted to them)
    to_frame: Callable[..., Any] | None = None
    #: the method's own per-row extras (the dispatcher's are added by :meth:`all_extras`)
    extras: tuple[Extra, ...] = ()
    #: the fast paths, tried in order before the general body (:meth:`run`)
    routes: tuple[Route, ...] = ()
    #: True for a method that decides the emptiness of interval rows itself (the feature
    #: ranges: their LPs' phase 1): the dispatcher then finds no point of each set first, and
    #: the method's context has ``Y0`` None and gives an empty row the status INFEASIBLE
    decides_emptiness: bool = False
    #: options the bounded-error rows (an interval wider than a point) honour only at some
    #: values: option -> the values honoured there. A call that gives another value
    #: explicitly, on a batch with such rows, is refused with an error naming the option
    #: (:meth:`refused_for_intervals`) rather than silently ignored
    interval_values: Mapping[str, tuple] = field(default_factory=dict)
    #: how ``of=`` (the center of a linear image, :mod:`chebcenter.methods.image`) answers for
    #: this method (:data:`IMAGE_ROUTES`): ``vertices``, the projected vertices' smallest ball;
    #: ``vertices_then_rcc1``, that and rcc1's mapped center past the enumeration's limits;
    #: ``weighted``, the weighted EBT relaxation beside the mapped center; ``mapped``, the
    #: method's own center mapped by L with a certified radius
    image: str = "mapped"
    #: how far the radius moves when every point of the set moves by at most 1: 1 for an x-space
    #: radius, ``||L||`` for the radius of an image ``L S`` (the dispatcher's forward-error
    #: widening, :func:`chebcenter.methods.dispatch.widen`)
    lipschitz: float = 1.0

    def __post_init__(self) -> None:
        if self.image not in IMAGE_ROUTES:
            raise ValueError(f"method {self.name!r}: image must be one of {IMAGE_ROUTES}; got {self.image!r}")
        rows = () if self.func is None else self.rows
        if any(r not in ROWS for r in rows):
            raise ValueError(f"method {self.name!r}: rows must come from {ROWS}; got {self.rows}")
        if any(k not in SET_KINDS for k in self.sets):
            raise ValueError(f"method {self.name!r}: sets must come from {SET_KINDS}; got {tuple(self.sets)}")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "validators", _with_solver_check(self.validators, self.solvers, self.options))

    def run(self, ctx: Context) -> MethodOutput:
        """The method on the context's rows: the first route whose needs the rows meet
        (:attr:`Context.facts`), else the general body ``func``; ``extras["path"]`` names which."""
        facts = ctx.facts
        route = next((r for r in self.routes if r.needs <= facts), None)
        out = (self.func if route is None else route.func)(ctx)
        out.extras.setdefault("path", np.full(ctx.rows.size, GENERAL if route is None else route.name, dtype=object))
        return out

    def route_names(self) -> tuple[str, ...]:
        """The routes :meth:`run` may take: the declared ones, then the general body's."""
        return tuple(r.name for r in self.routes) + (GENERAL,)

    def refused_for_intervals(self, given: Mapping[str, Any]) -> str | None:
        """The message refusing the explicitly ``given`` options that interval rows do not
        honour, or None."""
        bad = [f"{k}={given[k]!r}" for k, ok in self.interval_values.items() if k in given and given[k] not in ok]
        if not bad:
            return None
        honoured = "; ".join(f"{k} in {list(ok)}" for k, ok in self.interval_values.items())
        return (f"method {self.name!r}: {', '.join(bad)} is not available on bounded-error rows (lower < upper); "
                f"there: {honoured}")

    def all_extras(self, options: Mapping[str, Any] | None = None) -> tuple[Extra, ...]:
        """Every extra a call may return: the dispatcher's, then the method's; with
        ``options``, only those whose ``when`` option is true."""
        found = COMMON_EXTRAS + (IN_SLICE_EXTRAS if self.in_feasible_set else ()) + self.extras
        if options is None:
            return found
        merged = {**self.options, **options}
        return tuple(e for e in found if e.when is None or merged.get(e.when))

    def extra(self, name: str) -> Extra:
        """The declaration of the extra ``name`` (a KeyError names the method if it has none)."""
        for e in self.all_extras():
            if e.name == name:
                return e
        raise KeyError(f"method {self.name!r} returned the undeclared extra {name!r}: declare it in its MethodSpec")

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
