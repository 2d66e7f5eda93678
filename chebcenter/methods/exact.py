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

The result carries the exact radius (``max_j ||v_j - c||``), a dual lower bound
``radius_lower`` (the gap certifies optimality), the support vertices
(``support``) with their indices into the de-duplicated vertex list
(``support_indices``; the list itself with ``return_vertices=True``) and the
vertex count. Size guards: ``max_candidates`` bounds the work
``C(d, r) * 2^(d-r)`` before anything runs, ``max_vertices`` the number of
basic feasible solutions found.

Past the enumeration (``algorithm="auto"`` when rank A = 1, or ``algorithm="bnb"``):
the working-set scheme of :mod:`chebcenter._bnb` -- minimum enclosing ball of a few
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

import math

import numpy as np

from .._bnb import bnb_center
from .._exact_kernels import PIVOT_OK, PIVOT_TOO_MANY, certified_ball, distinct_rows, enumerate_vertices, pivot_vertices
from .._parallel import row_blocks
from .._ranges_kernel import RANGES_OK, lp_max
from .._validate import as_bool, as_positive_float, as_positive_int, check_choice
from ..results import Status
from ._types import Context, MethodOutput, MethodSpec

__all__ = ["EXACT", "candidate_count", "slice_vertices"]


def candidate_count(d: int, r: int) -> int:
    """Number of (basis, bound pattern) pairs the enumeration visits: ``C(d, r) 2^(d-r)``."""
    return math.comb(d, r) * 2 ** (d - r)


#: rank 1 and d at least this: the compiled branch and bound (gap 1e-6) is cheaper than
#: listing the vertices by the edge walk (measured per row, one thread: d = 12 6.4 vs
#: 5.4 ms, d = 14 11 vs 24 ms, d = 16 29 vs 123 ms, d = 18 87 ms vs 2.1 s)
BNB_FROM_D = 14


def prefer_bnb(d: int, rank: int) -> bool:
    """Whether the branch and bound replaces the enumeration: rank 1 (its node LP is the
    compiled knapsack) and ``d >= BNB_FROM_D``."""
    return rank == 1 and d >= BNB_FROM_D


def _start_direction(d):
    """A fixed generic objective for the walk's starting LP vertex (no symmetry with the box)."""
    return np.sin(1.0 + 2.718281828 * np.arange(d))


def slice_vertices(problem, q, capacity, walk=True):
    """Distinct vertices of S_F for ``q = A^+ b`` (rows), or None past ``capacity``.

    First the edge walk (:func:`chebcenter._exact_kernels.pivot_vertices`) from an LP
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
                return V[:count]
            if code == PIVOT_TOO_MANY:
                return None
    V, count = enumerate_vertices(problem.Vr, beta, problem.lo, problem.hi, capacity,
                                  problem.box_tol, 1e-10)
    if count < 0:
        return None
    return distinct_rows(V[:count], problem.box_tol * 10.0)


def exact(ctx: Context) -> MethodOutput:
    """Exact minimax center by vertex enumeration + minimum enclosing ball."""
    prob = ctx.problem
    opts = ctx.options
    n, d = ctx.rows.size, prob.d
    centers = np.full((n, d), np.nan)
    radii = np.full(n, np.nan)
    lower = np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    n_vertices = np.zeros(n, dtype=np.int64)
    support = np.empty(n, dtype=object)
    support_idx = np.empty(n, dtype=object)
    vertices = np.empty(n, dtype=object)
    algorithm = opts["algorithm"]
    if algorithm == "auto":
        cheap = candidate_count(d, prob.rank) <= opts["max_candidates"]
        if cheap and prefer_bnb(d, prob.rank) and not opts["return_vertices"]:
            algorithm = "bnb"
        else:
            algorithm = "enumerate" if cheap else ("bnb" if prob.rank == 1 else "none")
    if algorithm == "bnb":
        return _bnb_rows(ctx, centers, radii, lower, codes, support)
    if algorithm == "none" or candidate_count(d, prob.rank) > opts["max_candidates"]:
        codes[:] = Status.TOO_LARGE
        return MethodOutput(centers, radii, codes, {"radius_lower": lower, "n_vertices": n_vertices,
                                                    "support": support})

    def block(start, stop):  # rows are independent; the kernels release the GIL
        for k in range(start, stop):
            _exact_row(k)

    def _exact_row(k):
        q = ctx.Q[k]
        V = slice_vertices(prob, q, opts["max_vertices"])
        if V is None:
            codes[k] = Status.TOO_LARGE
            return
        n_vertices[k] = V.shape[0]
        if V.shape[0] == 0:  # S_F was certified nonempty; only rounding can do this
            codes[k] = Status.SOLVER_ERROR
            return
        U = (V - q) @ prob.W
        c, radius, low, sup, meb_status = certified_ball(U)
        low = min(low, radius)  # the dual bound is exact up to rounding
        centers[k] = q + prob.W @ c
        radii[k], lower[k] = radius, low
        support_idx[k] = sup
        support[k] = V[support_idx[k]]
        if opts["return_vertices"]:
            vertices[k] = V
        gap_ok = radius - low <= 1e-9 * (1.0 + radius)
        if meb_status != 0 or not gap_ok:
            codes[k] = Status.INACCURATE

    row_blocks(n, 1, block)
    extras = {"radius_lower": lower, "n_vertices": n_vertices, "support": support,
              "support_indices": support_idx}
    if opts["return_vertices"]:
        extras["vertices"] = vertices
    return MethodOutput(centers, radii, codes, extras)


def _bnb_rows(ctx, centers, radii, lower, codes, support):
    """The working-set branch and bound row by row (see the module docstring)."""
    prob, opts = ctx.problem, ctx.options
    n = ctx.rows.size
    nodes = np.zeros(n, dtype=np.int64)
    rounds = np.zeros(n, dtype=np.int64)
    def block(start, stop):  # rows are independent; the search kernel releases the GIL
        for k in range(start, stop):
            c, up, low, sup, info = bnb_center(prob, ctx.Q[k], gap_tol=opts["gap_tol"],
                                               max_nodes=opts["max_nodes"])
            nodes[k], rounds[k] = info["nodes"], info["rounds"]
            if c is None or not np.isfinite(up):
                codes[k] = Status.SOLVER_ERROR if c is None else Status.TOO_LARGE
                continue
            centers[k], radii[k], lower[k], support[k] = c, up, low, sup
            if not info["complete"]:
                codes[k] = Status.INACCURATE

    row_blocks(n, 1, block)
    return MethodOutput(centers, radii, codes, {"radius_lower": lower, "support": support,
                                                "bnb_nodes": nodes, "bnb_rounds": rounds})


EXACT = MethodSpec(
    "exact", exact, lies_in="S_F",
    certifies="the exact Chebyshev radius max_{x in S_F} ||x - c|| (radius_lower certifies it)",
    options={"max_vertices": 200_000, "max_candidates": 200_000_000, "return_vertices": False,
             "algorithm": "auto", "gap_tol": 1e-6, "max_nodes": 20_000_000},
    validators={"max_vertices": as_positive_int, "max_candidates": as_positive_int,
                "return_vertices": as_bool,
                "algorithm": lambda name, v: check_choice(name, v, ("auto", "enumerate", "bnb")),
                "gap_tol": as_positive_float, "max_nodes": as_positive_int},
)
