"""``exact``: the Chebyshev center of S_F as the minimum enclosing ball of its vertices.

1. Vertices: every basic feasible solution of ``{Vr x = Vr q, lo <= x <= hi}``
   (a vertex has at most r = rank(A) coordinates strictly inside the bounds), listed by
   a compiled walk over the edges of S_F from an LP vertex (docs/theory.md §1.4); where
   the walk meets a degenerate vertex, by the compiled enumeration of every basis and
   its bound patterns instead, then de-duplicated (degenerate vertices come from several
   bases).
2. Minimum enclosing ball of the vertices in u-space (``u = W^T (x - q)``,
   distances are preserved) by the Fischer-Gartner-Kutz walking algorithm,
   which stops when the center lies in the convex hull of its support.

A batch takes the batch route first (:mod:`chebcenter.methods.exact_batch`): the
basis tables built once for all rows, one compiled kernel for the candidates, their
de-duplication by snapped pattern and a working-set ball started from the previous row's
support (rows in the order of ``beta``); the rows it does not certify come down the
row-by-row route above (docs/theory.md §1.4).

The result carries the exact radius (``max_j ||v_j - c||``), a dual lower bound
``radius_lower`` (the gap certifies optimality), the support vertices
(``support``) with their indices into the de-duplicated vertex list
(``support_indices``; the list itself with ``return_vertices=True``) and the
vertex count. Size guards: ``max_candidates`` bounds the work
``C(d, r) * 2^(d-r)`` before anything runs, ``max_vertices`` the number of
basic feasible solutions found.

Past the enumeration (``algorithm="auto"`` when rank A = 1, or ``algorithm="bnb"``):
the working-set scheme of :mod:`chebcenter.methods.exact_bnb` -- minimum enclosing ball of a few
points of S_F, a branch-and-bound oracle for the point of S_F farthest from its center,
repeat -- which never lists the vertices. Its result is certified by
``radius_lower <= r* <= radius`` and is OPTIMAL when ``radius <= radius_lower (1 + gap_tol)``
(default 1e-6), INACCURATE (still a certified enclosing ball, centered in S_F) when the
``max_nodes`` budget ran out first. The oracle is compiled for one equation (rank 1); with
more equations each node is a compiled simplex LP (microseconds) in the same compiled
search (warm-started from the parent node's basis), whose node count still grows quickly
with d - rank (rank 3, gap 1e-6: 0.3 s at d = 20, 1.7 s at d = 24, 35 s at d = 30), so
"auto" keeps such rows TOO_LARGE and
``algorithm="bnb"`` must be asked for.
"""

from __future__ import annotations

import dataclasses
import math
import types

import numpy as np

from .._core.lifting import ROUTE_SLAB, SLAB_MAX_D, vertices_of
from .._core.normalised import _Core
from .._core.validate import as_bool, as_positive_float, as_positive_int, check_choice
from ..kernels.ball import certified_ball, walked_or_working_set_ball, working_set_ball
from ..kernels.edge_walk import PIVOT_OK, PIVOT_TOO_MANY, pivot_vertices
from ..kernels.linalg import EPS
from ..kernels.parallel import row_blocks
from ..kernels.simplex import RANGES_OK, lp_max
from ..kernels.vertices import candidate_count, distinct_rows, enumerate_vertices
from ..results import Status
from .ball_bounds import _conservative_lower, _lower_in_slice, _variance_lower
from .exact_batch import BATCH_CANDIDATES, batch_exact, batch_slab
from .exact_bnb import bnb_center
from .relax import lifted_rcc2
from .spec import Context, Extra, MethodOutput, MethodSpec, Route, WarmupStep

#: the kernels of exact's first use on slice rows (auto reaches the same ones)
EXACT_KERNELS = ("closed_forms.prepare_rows", "closed_forms.forward_rows", "edge_walk.pivot_vertices", "ball.min_enclosing_ball",
                 "batch_tables.basis_tables", "batch_exact.exact_rows")

__all__ = ["EXACT", "candidate_count", "slice_vertices"]


#: rank 1 and d at least this: the compiled branch and bound (gap 1e-6) is cheaper than
#: listing the vertices by the batch route (measured per row, one thread, 400 rows: d = 12
#: 3.0 vs 0.63 ms, d = 14 5.0 vs 3.1 ms, d = 16 11.7 vs 21 ms)
BNB_FROM_D = 15
#: node budget of the branch and bound when it stands in for an enumeration that could not
#: certify its ball (a small slice: a few milliseconds), and the most ``auto``'s short
#: search spends before it enumerates (see :func:`_short_budget`)
_FALLBACK_NODES = 2_000_000
#: the largest enumeration (candidates C(d, r) 2^(d - r)) that ``auto`` runs after a short
#: branch and bound that did not certify (d = 16, rank 1: 524 288; 0.1-0.5 s per row)
_ENUM_FALLBACK = 2_000_000


def _short_budget(d: int, rank: int) -> int:
    """Node budget of ``auto``'s short branch and bound where the enumeration is affordable:
    half the enumeration's candidate count, at most ``_FALLBACK_NODES``. A node of the
    rank-1 search costs about 0.5 us with its rounds' enclosing balls, a candidate of the
    edge walk about 0.3 us (d = 16, rank 1, integer ties: 2e6 nodes in 0.9-2.5 s, the
    524 288-candidate enumeration in 0.07-0.19 s), so a row that needs both costs about
    twice its enumeration; a 2e6 budget made 5 of 40 such rows take 1-2.8 s."""
    return int(min(_FALLBACK_NODES, max(10_000, candidate_count(d, rank) // 2)))


def prefer_bnb(d: int, rank: int) -> bool:
    """Whether the branch and bound replaces the enumeration: rank 1 (its node LP is the
    compiled knapsack) and ``d >= BNB_FROM_D``."""
    return rank == 1 and d >= BNB_FROM_D


def _start_direction(d):
    """A fixed generic objective for the walk's starting LP vertex (no symmetry with the box)."""
    return np.sin(1.0 + 2.718281828 * np.arange(d))


def slice_vertices(problem, q, capacity, walk=True, raw=False, tol=None):
    """Distinct vertices of S_F for ``q = A^+ b`` (rows), or None past ``capacity``, on the
    normalised problem ``problem`` (a :class:`chebcenter._core.normalised._Core`; ``q`` in its frame).
    With ``raw=True``, ``(distinct, every candidate before de-duplication)``.

    First the edge walk (:func:`chebcenter.kernels.edge_walk.pivot_vertices`) from an LP
    vertex: it lists each vertex once and is complete whenever every vertex is simple.
    Where it cannot prove that (a degenerate vertex, a nearly singular basis, d > 31),
    the basis-by-basis enumeration, which needs no such assumption. ``walk=False``
    forces the enumeration (the tests compare the two)."""
    beta = problem.Vr @ q
    if walk and 0 < problem.rank < problem.d:
        x0 = np.empty(problem.d)
        if lp_max(problem.Vr, beta, problem.lo, problem.hi, _start_direction(problem.d), x0) == RANGES_OK:
            V, count, code = pivot_vertices(problem.Vr, beta, problem.lo, problem.hi, x0, capacity,
                                            100.0 * problem.box_tol, 1e-9)
            if code == PIVOT_OK:
                return (V[:count], V[:count]) if raw else V[:count]
            if code == PIVOT_TOO_MANY:
                return None
    if tol is None:
        tol = problem.coord_tol
    V, count = enumerate_vertices(problem.Vr, beta, problem.lo, problem.hi, capacity, tol, 1e-10)
    if count < 0:
        return None
    # duplicates (one degenerate vertex from several bases) differ by rounding; the grid is
    # per coordinate so that vertices apart only along a narrow coordinate stay apart
    grid = np.minimum(1e-11, np.maximum(1e-3 * (problem.hi - problem.lo), 1e-300))
    D = distinct_rows(V[:count], grid)
    return (D, V[:count]) if raw else D


def exact(ctx: Context) -> MethodOutput:
    """Exact minimax center of any rows' sets, the general body (:func:`_exact_lifted`): the
    minimum enclosing ball of the lifted slice's vertices, found by the route of least cost;
    without the support points when ``return_support=False``."""
    return _without_support(ctx, _exact_lifted(ctx))


def _exact_slices(ctx: Context) -> MethodOutput:
    """The route of slice rows: vertex enumeration (the batch route first) + minimum enclosing
    ball, or the branch and bound; without the support points when ``return_support=False`` (a
    batch of 1e5 rows at d = 10 keeps 100 MB of them, and a privacy audit reads only the
    centers and radii)."""
    return _without_support(ctx, _exact(ctx))


def _without_support(ctx, out):
    if not ctx.options["return_support"]:
        out.extras.pop("support", None)
        out.extras.pop("support_indices", None)
    return out


def _exact(ctx: Context) -> MethodOutput:
    prob = ctx.problem
    opts = ctx.options
    n, d = ctx.rows.size, prob.d
    centers = np.full((n, d), np.nan)
    radii = np.full(n, np.nan)
    lower = np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    n_vertices = np.zeros(n, dtype=np.int64)
    support = np.empty(n, dtype=object)
    algorithm = opts["algorithm"]
    if algorithm == "auto":
        cheap = candidate_count(d, prob.rank) <= opts["max_candidates"]
        if cheap and prefer_bnb(d, prob.rank) and not opts["return_vertices"]:
            algorithm = "bnb"
        else:
            algorithm = "enumerate" if cheap else ("bnb" if prob.rank == 1 else "none")
    if algorithm == "bnb":
        if candidate_count(d, prob.rank) <= _ENUM_FALLBACK:
            # auto chose it for speed: a short search, then the enumeration for the rows it left
            # open; asked for by name: its whole budget, then the enumeration likewise
            budget = _short_budget(d, prob.rank) if opts["algorithm"] == "auto" else opts["max_nodes"]
            return _bnb_then_enumeration(ctx, centers, radii, lower, codes, support, budget)
        return _bnb_rows(ctx, centers, radii, lower, codes, support)
    if algorithm == "none" or candidate_count(d, prob.rank) > opts["max_candidates"]:
        codes[:] = Status.TOO_LARGE
        return MethodOutput(centers, radii, codes, {"radius_lower": lower, "n_vertices": n_vertices,
                                                    "support": support})
    done = np.zeros(n, dtype=bool)
    if not opts["return_vertices"] and 0 < prob.rank < d and candidate_count(d, prob.rank) <= BATCH_CANDIDATES:
        done = batch_exact(ctx, centers, radii, lower, n_vertices, support)
    rows = _EnumeratedRows(ctx, centers, radii, lower, codes, n_vertices, support)

    def block(start, stop):  # rows are independent; the kernels release the GIL
        for k in range(start, stop):
            if not done[k]:
                rows.solve(k)

    if not done.all():
        row_blocks(n, 1, block)
    extras = {"radius_lower": lower, "n_vertices": n_vertices, "support": support,
              "support_indices": rows.support_idx}
    if any(r is not None for r in rows.routes):
        extras["check"] = rows.routes
    _conservative_lower(lower)
    if opts["return_vertices"]:
        extras["vertices"] = rows.vertices
    return MethodOutput(centers, radii, codes, extras)


class _EnumeratedRows:
    """The rows the batch route leaves to the enumeration, one at a time, written into the
    method's output arrays (shared across the threads of :func:`row_blocks`: each row writes
    only its own entries)."""

    def __init__(self, ctx, centers, radii, lower, codes, n_vertices, support):
        self.ctx, self.prob, self.opts = ctx, ctx.problem, ctx.options
        self.centers, self.radii, self.lower, self.codes = centers, radii, lower, codes
        self.n_vertices, self.support = n_vertices, support
        n = ctx.rows.size
        self.support_idx = np.empty(n, dtype=object)
        self.vertices = np.empty(n, dtype=object)
        self.routes = np.full(n, None, dtype=object)

    def _vertices(self, k, q):
        """The slice's vertices and every candidate, widened to the forward error or to the
        equations' tolerance when the computed slice has none; None if there are too many."""
        prob, opts = self.prob, self.opts
        got = slice_vertices(prob, q, opts["max_vertices"], raw=True)
        if got is None:
            return None
        V, every = got
        widened, at_tau = 0.0, False
        # S_F was found nonempty but the computed slice has no vertex: it misses the box by its
        # forward error (near-parallel equations), or by less than the equations' tolerance tau
        # (beyond a face of the box); its vertices at the first of the two that finds some
        for widening in (_forward_error, _tau_in_coordinates):
            if V.shape[0]:
                break
            widened = max(widened, widening(prob, q))
            at_tau = widening is _tau_in_coordinates
            got = slice_vertices(prob, q, opts["max_vertices"], walk=False, raw=True,
                                 tol=np.maximum(prob.coord_tol, widened))
            if got is None:
                return None
            V, every = got
        return V, every, widened, at_tau

    def solve(self, k):
        prob, opts = self.prob, self.opts
        q = self.ctx.Q[k]
        got = self._vertices(k, q)
        if got is None:
            self.codes[k] = Status.TOO_LARGE
            return
        V, every, widened, at_tau = got
        self.n_vertices[k] = V.shape[0]
        if V.shape[0] == 0:  # only rounding beyond the tolerance can do this
            self.codes[k] = Status.SOLVER_ERROR
            return
        U = (V - q) @ prob.W
        c, radius, low, sup, meb_status = certified_ball(U)
        low = min(low, radius)  # the dual bound is exact up to rounding
        self.centers[k] = q + prob.W @ c
        # the radius bounds every candidate, not only the de-duplicated ones
        radius = max(radius, float(np.max(np.linalg.norm(every - self.centers[k], axis=1))))
        if widened:   # candidates judged at the forward error: the true vertices are that close
            radius += widened * math.sqrt(prob.d)
            low = 0.0
            self.codes[k] = Status.INACCURATE
            self.routes[k] = ("the slice meets the box only at the equations' tolerance: vertices at that tolerance, "
                              "radius widened by it") if at_tau else (
                "near-parallel equations: the computed slice missed the box by its forward error; "
                "vertices at that tolerance, radius widened by it")
        self.radii[k], self.lower[k] = radius, low
        self.support_idx[k] = sup
        self.support[k] = V[sup]
        if opts["return_vertices"]:
            self.vertices[k] = V
        if not radius - low <= 1e-9 * (1.0 + radius) and not widened:   # the walk's dual is weak on
            low = max(low, _variance_lower(U, c, radius))                 # cospherical vertices
        gap_ok = radius - low <= 1e-9 * (1.0 + radius)
        self.lower[k] = _lower_in_slice(prob, q, V, low)   # a bound for S_F itself (see there)
        if not gap_ok:   # (a walk that stopped early still gives an enclosing radius; the gap decides)
            self.codes[k] = Status.INACCURATE
            if opts["algorithm"] != "enumerate":   # the branch and bound certifies by other means
                self._bnb_fallback(k, q)

    def _bnb_fallback(self, k, q):
        """A second certificate from the branch and bound: the smaller of the two enclosing
        radii (with its center) and the larger of the two lower bounds; OPTIMAL when they
        meet within gap_tol, as for the branch and bound itself."""
        prob, opts = self.prob, self.opts
        c, up, low, sup, info = bnb_center(prob, q, gap_tol=opts["gap_tol"], max_nodes=_FALLBACK_NODES)
        if c is None or not np.isfinite(up) or not np.isfinite(low):
            return
        if up < self.radii[k]:
            self.centers[k], self.radii[k], self.support[k], self.support_idx[k] = c, up, sup, None
        low = _lower_in_slice(prob, q, sup, low)
        self.lower[k] = max(low, self.lower[k]) if np.isfinite(self.lower[k]) else low
        self.lower[k] = min(self.lower[k], self.radii[k])
        self.routes[k] = "the enumeration's ball was not certified: certified by the branch and bound"
        if self.radii[k] <= self.lower[k] * (1.0 + opts["gap_tol"]):
            self.codes[k] = Status.OPTIMAL
        else:
            self.routes[k] = "the enumeration's ball was not certified, nor by the branch and bound"


def _forward_error(prob, q):
    """A bound on how far the computed slice ``{Vr x = Vr q}`` can lie from the slice of the
    exact right-hand side, per coordinate, in normalised units: the rounding of b and of
    ``A x`` (a few eps times ``||b|| + sigma_max ||q||``) divided by the smallest singular
    value, ``8 eps (||b|| + sigma_max ||q||) / s_min`` (never below the feasibility tolerance)."""
    b_norm = float(np.linalg.norm(prob.A @ q))
    s_min = float(prob.s_r[-1]) if prob.rank else 1.0
    return max(prob.box_tol, 8.0 * EPS * (b_norm + prob.sigma_max * float(np.linalg.norm(q))) / s_min)


def _tau_in_coordinates(prob, q):
    """The equations' tolerance tau (docs/theory.md §6.2) at the right-hand side ``A q``,
    carried into coordinates: tau over the smallest singular value moves the slice's
    right-hand side, and a basic coordinate by that over its column's weight in the
    orthonormal rows (the smallest nonzero column norm bounds it). A slice beyond a face of
    the box by less than tau (a right-hand side just above the row's maximum over the box)
    is nonempty at tau, and its vertices are found at this tolerance."""
    tau = float(np.max(prob._row_tol((prob.A @ q)[None, :])[0]))
    s_min = float(prob.s_r[-1]) if prob.rank else 1.0
    cols = np.linalg.norm(prob.Vr, axis=0)
    weight = float(np.min(cols[cols > 1e-12])) if np.any(cols > 1e-12) else 1.0
    return tau / s_min / weight


def _bnb_then_enumeration(ctx, centers, radii, lower, codes, support, budget):
    """The branch and bound where the enumeration is affordable: the search runs with
    ``budget`` nodes at most (``auto``: :func:`_short_budget`; ``algorithm="bnb"``: its
    ``max_nodes``), and a row it does not certify in that budget is enumerated; the row keeps
    the smaller radius and the larger lower bound of the two (integer data at d = 16, rank
    1: vertex sets with tens of thousands of ties kept the search past 2e7 nodes and 5-35 s,
    INACCURATE, while the enumeration takes 0.07-0.2 s)."""
    short = dataclasses.replace(ctx, options=dict(ctx.options, max_nodes=min(ctx.options["max_nodes"], budget)))
    out = _bnb_rows(short, centers, radii, lower, codes, support)
    open_rows = np.flatnonzero((out.codes == Status.INACCURATE) | (out.codes == Status.SOLVER_ERROR))
    if open_rows.size == 0:
        return out
    n_open = open_rows.size
    sub = ctx.subset(open_rows, dict(ctx.options, algorithm="enumerate", return_vertices=True, return_support=True))
    enum = _exact_slices(sub)
    prob = ctx.problem
    gap_tol = ctx.options["gap_tol"]
    check = out.extras.get("check")
    check = np.full(ctx.rows.size, None, dtype=object) if check is None else check
    enum_check = enum.extras.get("check")
    for j, k in zip(range(n_open), open_rows):
        if enum.codes[j] > Status.INACCURATE:
            continue
        note = enum_check[j] if enum_check is not None else None
        if out.codes[k] > Status.INACCURATE:   # the search answered nothing: the enumeration's row
            out.centers[k], out.radii[k], out.codes[k] = enum.centers[j], enum.radii[j], enum.codes[j]
            out.extras["support"][k] = enum.extras["support"][j]
            out.extras["radius_lower"][k] = enum.extras["radius_lower"][j]
            check[k] = "the branch and bound found no point of the computed slice: the enumeration was run" + (
                f"; {note}" if note else "")
            continue
        if enum.radii[j] < out.radii[k]:
            out.centers[k], out.radii[k], out.extras["support"][k] = enum.centers[j], enum.radii[j], enum.extras["support"][j]
        low = enum.extras["radius_lower"][j]
        V = enum.extras["vertices"][j]
        if V is not None and len(V) and not enum.codes[j] == Status.OPTIMAL:
            # the variance bound about the better center, over the whole vertex list (it is
            # tight to second order in that center's distance from the optimum)
            q = ctx.Q[k]
            U = (V - q) @ prob.W
            cu = prob.W.T @ (out.centers[k] - q)
            far = float(np.max(np.linalg.norm(U - cu, axis=1)))
            out.radii[k] = min(out.radii[k], far)
            low = max(low, _lower_in_slice(prob, q, V, _variance_lower(U, cu, far, active=1e-4)))
        if np.isfinite(low) and not low <= out.extras["radius_lower"][k]:
            out.extras["radius_lower"][k] = min(low, out.radii[k])
        if enum.codes[j] == Status.OPTIMAL or out.radii[k] <= out.extras["radius_lower"][k] * (1.0 + gap_tol):
            out.codes[k] = Status.OPTIMAL
        check[k] = ("the branch and bound did not certify the row (its node or round budget, or a gap at "
                    "rounding level): the enumeration was run too")
    out.extras["check"] = check
    return out


def _bnb_rows(ctx, centers, radii, lower, codes, support):
    """The working-set branch and bound row by row (see the module docstring)."""
    prob, opts = ctx.problem, ctx.options
    n = ctx.rows.size
    nodes = np.zeros(n, dtype=np.int64)
    rounds = np.zeros(n, dtype=np.int64)
    check = np.full(n, None, dtype=object)

    def block(start, stop):  # rows are independent; the search kernel releases the GIL
        for k in range(start, stop):
            c, up, low, sup, info = bnb_center(prob, ctx.Q[k], gap_tol=opts["gap_tol"],
                                               max_nodes=opts["max_nodes"])
            nodes[k], rounds[k] = info["nodes"], info["rounds"]
            if c is None and info["nodes"] < opts["max_nodes"]:
                # S_F was found nonempty at the tolerances but the computed slice misses the box
                # (a near-point slice at a corner, near-parallel equations): the search again on
                # the box widened as the enumeration widens it, the radius widened by as much
                wide = _widened_search(prob, ctx.Q[k], opts, opts["max_nodes"] - info["nodes"])
                if wide is not None:
                    centers[k], radii[k], lower[k], support[k], used = wide
                    nodes[k] += used
                    codes[k], check[k] = Status.INACCURATE, WIDENED_SEARCH
                    continue
            if c is None or not np.isfinite(up):
                codes[k] = Status.SOLVER_ERROR if c is None else Status.TOO_LARGE
                continue
            low = _lower_in_slice(prob, ctx.Q[k], sup, low)
            centers[k], radii[k], lower[k], support[k] = c, up, low, sup
            if not info["complete"]:
                codes[k] = Status.INACCURATE

    row_blocks(n, 1, block)
    _conservative_lower(lower)
    extras = {"radius_lower": lower, "support": support, "bnb_nodes": nodes, "bnb_rounds": rounds}
    if np.any(check != None):  # noqa: E711  (object array)
        extras["check"] = check
    return MethodOutput(centers, radii, codes, extras)


WIDENED_SEARCH = ("the slice meets the box only at the equations' tolerance: branch and bound on the box "
                  "widened by it, radius widened by it")


def _widened_search(prob, q, opts, max_nodes):
    """The branch and bound of a slice whose computed copy misses the box although S_F is
    nonempty at the tolerances: on the box widened by ``t``, the larger of the forward error
    and the tolerance in coordinates (as the enumeration widens its vertices). Every point of
    S_F lies within ``t`` per coordinate of a point of the computed slice in the widened box,
    so the widened set's radius plus ``t sqrt(d)`` bounds S_F, about the center clipped into
    the box (clipping moves it no farther from any box point). ``(center, radius, 0, support,
    nodes)`` or None where that search too finds nothing. No lower bound is claimed."""
    t = max(_forward_error(prob, q), _tau_in_coordinates(prob, q))
    wide = types.SimpleNamespace(Vr=prob.Vr, W=prob.W, p=prob.p, lo=prob.lo - t, hi=prob.hi + t)
    c, up, _, sup, info = bnb_center(wide, q, gap_tol=opts["gap_tol"], max_nodes=max_nodes)
    if c is None or not np.isfinite(up):
        return None
    c = np.clip(c, prob.lo, prob.hi)
    return c, up + t * math.sqrt(prob.d), 0.0, sup, info["nodes"]


# -- interval rows (docs/theory.md §8) ---------------------------------------------------------

def _exact_lifted(ctx: Context) -> MethodOutput:
    """exact on a lifted group (docs/theory.md §8.7): the minimum enclosing ball of
    the vertices, found by the route of least cost (:func:`chebcenter._core.lifting.vertices_of`),
    the batch slab route on one interval row, or the lifted branch and bound."""
    core, grp, k, Y0, opts = ctx.problem, ctx.group, ctx.k, ctx.Y0, ctx.options
    n = k.size
    capacity = int(opts["max_vertices"])
    X = np.full((n, core.d), np.nan)
    R, low = np.full(n, np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    nv = np.full(n, -1, dtype=np.int64)
    route = np.full(n, None, dtype=object)

    algorithm = opts["algorithm"]

    def block(start, stop):
        for j in range(start, stop):
            kk = k[j]
            if grp.p == 0:
                X[j], R[j], low[j], nv[j], route[j] = grp.invert(Y0[j:j + 1])[0], 0.0, 0.0, 1, "one point"
                continue
            one_row = grp.AE.shape[0] == 0 and grp.K == core.d + 1   # the branch and bound's rank 1
            P, route[j] = (None, "branch and bound") if (algorithm == "bnb" and one_row) else vertices_of(
                core, grp, kk, capacity, opts["max_candidates"])
            if P is None and one_row and algorithm != "enumerate":
                route[j] = "branch and bound"
                _, r2, _ = lifted_rcc2(core, grp, k[j:j + 1], Y0[j:j + 1])
                X[j], R[j], low[j], codes[j] = _lifted_bnb(core, grp, kk, opts, float(r2[0]))
                continue
            if P is None:
                codes[j] = Status.TOO_LARGE
                continue
            if P.shape[0] == 0:
                P = grp.invert(Y0[j:j + 1])
            # the walk starts from the vertices' centroid: 3x fewer steps than from the first
            # vertex on the thousands of vertices of a full-dimensional set (measured, d = 10)
            # a slab's vertices are mostly box corners, many on one sphere: its ball goes
            # through a working set (3x faster there); vertices in general position (the
            # lifted walk, the cuts) are walked all at once from their centroid, which is
            # faster on them (measured: 509 against 655 us a row at d = 10, m = 3)
            if route[j] == ROUTE_SLAB:
                c, radius, lower, _, status = working_set_ball(P)
            else:
                c, radius, lower, _, status = walked_or_working_set_ball(P, start=P.mean(axis=0))
            X[j], R[j], low[j], nv[j] = c, radius, min(lower, radius), P.shape[0]
            if status != 0 and radius - lower > 1e-9 * (1.0 + radius):
                codes[j] = Status.INACCURATE
                check[j] = "the enclosing ball's walk stopped short: radius and radius_lower bracket the optimum"

    check = np.full(n, None, dtype=object)
    row_blocks(n, 1, block)
    for j in np.flatnonzero((codes == Status.INACCURATE) & (check == None)):  # noqa: E711  (object array)
        check[j] = "the branch and bound stopped short of its gap: radius and radius_lower bracket the optimum"
    out = {"radius_lower": low, "n_vertices": nv, "route": route}
    if any(c is not None for c in check):
        out["check"] = check
    return MethodOutput(X, R, codes, out)


def _exact_slab(ctx: Context) -> MethodOutput:
    """The route of one interval row (a slab ``l <= a^T x <= u``, d <= SLAB_MAX_D): the batch
    slab route (the two bounding slices and the box corners between, tables shared by the
    group's rows); the rows it leaves, and every row with ``algorithm="bnb"``, go to the
    general body (``extras["path"]`` says which)."""
    core, grp, k, opts = ctx.problem, ctx.group, ctx.k, ctx.options
    n = k.size
    X = np.full((n, core.d), np.nan)
    R, low = np.full(n, np.nan), np.full(n, np.nan)
    nv = np.full(n, -1, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    if core.d <= SLAB_MAX_D and opts["algorithm"] != "bnb":
        done = batch_slab(core, grp, k, int(opts["max_vertices"]), X, R, low, nv)
    extras = {"radius_lower": low, "n_vertices": nv, "route": np.where(done, ROUTE_SLAB, None).astype(object)}
    return MethodOutput(X, R, np.full(n, Status.OPTIMAL, dtype=np.int8), extras).rest_by(ctx, done, "slab", exact)


#: the lifted coordinate of the interval row is shrunk to a half-width of _SHRINK times
#: rcc2's radius (a bound on the set's) for the branch and bound: see _lifted_bnb
_SHRINK = 1e-4


def _lifted_bnb(core, grp, kk, opts, r2):
    """The certified branch and bound of box slices (:func:`chebcenter.methods.exact_bnb.bnb_center`)
    on one interval row ``l <= a^T x <= u`` (docs/theory.md §8.4).

    Lifted with its coordinate shrunk, ``y = (x, (a^T x - c) / lam)`` with c the interval's
    midpoint and ``lam = (u - l) / (2 eps)``, the set is the rank-1 box slice
    ``{y : a^T x - lam y_s = c, x in box, |y_s| <= eps}``. Distances there are at least
    x's, so the slice's certified radius bounds S; and a ball of radius r(S) about
    ``(c_x, 0)`` holds the lifted set within ``sqrt(r(S)^2 + eps^2)``, so its certified lower
    bound L gives ``r(S) >= sqrt(L^2 - eps^2)``. ``eps = 1e-4 r2`` (r2: rcc2's radius, at
    least r(S)) costs the lower bound at most 5e-9 of r2; a smaller eps would let the slice's
    own feasibility tolerance on y_s (1e-13 absolute) grow by lam into x's interval.
    Returns ``(center, radius, lower, status)``."""
    d = core.d
    lo_s, hi_s = grp.Lo[kk, d], grp.Hi[kk, d]
    eps = _SHRINK * max(r2, 1e-12)
    lam = (hi_s - lo_s) / (2.0 * eps)
    a = grp.AI[0]
    A_l = np.ascontiguousarray(np.append(a, -lam)[None, :] / math.hypot(1.0, lam))
    lifted = _Core(A_l, np.append(core.hi, eps), np.zeros(d + 1), None, core.feas_tol)
    q = lifted.q_of(np.array([0.5 * (lo_s + hi_s) / math.hypot(1.0, lam)]))
    # half the gap for the search: the lower bound then loses up to 5e-9 (eps) and the
    # projection of its support (_lower_in_slice), and the row is judged at the full gap
    c, up, low, sup, info = bnb_center(lifted, q, gap_tol=0.5 * opts["gap_tol"], max_nodes=opts["max_nodes"])
    if c is None or not np.isfinite(up):
        return np.full(d, np.nan), np.nan, np.nan, Status.SOLVER_ERROR if c is None else Status.TOO_LARGE
    low = _lower_in_slice(lifted, q, sup, low)
    lower = math.sqrt(max(low * low - eps * eps, 0.0))
    certified = info["complete"] and up <= lower * (1.0 + opts["gap_tol"]) + 1e-12
    return c[:d], up, min(lower, up), Status.OPTIMAL if certified else Status.INACCURATE


EXACT = MethodSpec(
    "exact", exact, lies_in="S_F", image="vertices",
    certifies="the exact Chebyshev radius max_{x in S_F} ||x - c|| (radius_lower certifies it)",
    options={"max_vertices": 200_000, "max_candidates": 200_000_000, "return_vertices": False,
             "return_support": True,
             "algorithm": "auto", "gap_tol": 1e-6, "max_nodes": 20_000_000},
    validators={"max_vertices": as_positive_int, "max_candidates": as_positive_int,
                "return_vertices": as_bool, "return_support": as_bool,
                "algorithm": lambda name, v: check_choice(name, v, ("auto", "enumerate", "bnb")),
                "gap_tol": as_positive_float, "max_nodes": as_positive_int},
    interval_values={"return_vertices": (False,), "return_support": (False,)},
    routes=(Route("box slice", _exact_slices, {"equations"},
                  "the slices' batch route (basis tables shared by the rows of one A), the edge walk or the "
                  "enumeration row by row, and the branch and bound past the enumeration"),
            Route("slab", _exact_slab, {"one interval row"},
                  "the batch slab route: the two bounding slices and the box corners between, for the group")),
    extras=(
        Extra("radius_lower", "length", "f8", "a lower bound on the minimax radius of S_F (the certificate)"),
        Extra("support", "points", "O", "the vertices the enclosing ball touches", when="return_support"),
        Extra("n_vertices", "count", "i8", "the vertices enumerated (-1: the row was not enumerated)", fill=-1),
        Extra("support_indices", "indices", "O", "the support's rows in the enumerated vertex list",
              when="return_support"),
        Extra("bnb_nodes", "count", "i8", "the branch and bound's nodes (0: not searched)"),
        Extra("bnb_rounds", "count", "i8", "the branch and bound's working-set rounds (0: not searched)"),
        Extra("vertices", "points", "O", "every vertex of S_F", when="return_vertices"),
        Extra("route", "label", "O", "bounded-error rows: how the vertices were found (two slices and the corners "
                                     "between, lifted edge walk, cuts of the box in x, lifted basis enumeration, "
                                     "branch and bound, one point)"),
    ),
    warmup=(WarmupStep("exact", EXACT_KERNELS),
            WarmupStep("bnb", ("closed_forms.prepare_rows", "closed_forms.forward_rows", "bnb.farthest_point_dfs"),
                       problems=("single_row",),
                       calls=({"algorithm": "bnb"},)),
            # the cuts of the box in x: many interval rows in few dimensions (a 5-class release)
            WarmupStep("exact_intervals", ("interval_rows.project_points_boxes", "cuts.cut_vertices"),
                       rows="interval", problems=("default", "classes"), always=False)),
)
