"""``auto``: the best center the size allows -- exact where its certificate is cheap, else rcc1.

Per row: the exact center (vertex enumeration + minimum enclosing ball, certified by its
dual lower bound) when the enumeration work ``C(d, r) 2^(d-r)`` is at most
``max_candidates`` (default 2e6: well under a second per row on a laptop, see
``benchmarks/test_exact.py``) and the slice has at most ``max_vertices`` vertices; every
other row gets the RCC1 relaxation (certified by ``sqrt(eta)``), which costs milliseconds
at any d met in practice. For rank 1 from d = 14, where it is faster than the enumeration
(and the enumeration would likely pass the default vertex limit), the exact center comes
from the compiled branch and bound instead (certified to ``gap_tol`` = 1e-6 relative);
past the enumeration's budget it is not used either, to keep rows at milliseconds (it
takes 0.1-2 s per row at d - rank = 20-30), since batches are the normal case. ``extras["method"]`` says which estimator each row got; both
lie in S_F and both radii are rigorous upper bounds on the worst-case error (the exact one
is also tight).
"""

from __future__ import annotations

import numpy as np

from .._core.lifting import listing_within
from .._core.validate import as_positive_int
from ..results import Status
from .exact import EXACT, EXACT_KERNELS, candidate_count, prefer_bnb
from .general_sets import quadratic_auto
from .relax import RCC1
from .spec import Context, Extra, MethodOutput, MethodSpec, Route, SetRoute, WarmupStep

__all__ = ["AUTO", "exact_options"]

#: exact's own defaults (its vertex and candidate limits), for the rows auto gives it twice
EXACT_OPTIONS = dict(EXACT.options)


def exact_options(options, d, rank):
    """The options auto gives exact on a problem of dimension d and rank ``rank``: its own
    vertex and candidate limits, the branch and bound where it is the faster exact route
    (rank 1 from d = 15, :func:`chebcenter.methods.exact.prefer_bnb`) at a 1e-6 gap and 5e6
    nodes. One policy for equality rows and bounded-error rows (there, d and rank are the
    lifted set's)."""
    return {"max_vertices": options["max_vertices"], "max_candidates": options["max_candidates"],
            "return_vertices": False, "return_support": False, "algorithm": "bnb" if prefer_bnb(d, rank) else "enumerate",
            "gap_tol": 1e-6, "max_nodes": 5_000_000}


def auto(ctx: Context) -> MethodOutput:
    """The general body: exact where listing the lifted set's vertices is cheap by a cost
    known before any work (:func:`chebcenter._core.lifting.listing_within`, as the candidate
    count is on slices), within auto's limits, where exact's routes decide TOO_LARGE
    themselves (:func:`chebcenter._core.lifting.vertices_of`); else rcc1. A row rcc1 does
    not certify is given to exact again within exact's own limits (:func:`_second_chance`)."""
    return _auto(ctx, True)


def _auto_slices(ctx: Context) -> MethodOutput:
    """Slices: exact where the enumeration's candidate count ``C(d, r) 2^(d - r)`` is within
    ``max_candidates`` (known before any work), else rcc1."""
    return _auto(ctx, False)


def _auto(ctx: Context, general: bool) -> MethodOutput:
    prob = ctx.problem
    opts = ctx.options
    n = ctx.rows.size
    centers = np.full((n, prob.d), np.nan)
    radii = np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    chosen = np.full(n, "rcc1", dtype=object)
    lower = np.full(n, np.nan)   # exact's certified lower bound on its rows
    extras = {}
    todo = np.arange(n)
    d, rank = ctx.dim, ctx.rank
    cheap = listing_within(prob, ctx.group, opts["max_candidates"]) if general else \
        candidate_count(d, rank) <= opts["max_candidates"]
    if cheap:
        # rank 1 from d = 15 (exact.BNB_FROM_D): the certified branch and bound is faster there,
        # and the enumeration would likely pass the default vertex limit (2e4)
        ex = EXACT.run(ctx.subset(todo, exact_options(opts, d, rank)))
        done = ex.codes != Status.TOO_LARGE
        centers[done], radii[done], codes[done] = ex.centers[done], ex.radii[done], ex.codes[done]
        chosen[done] = "exact"
        lower[done] = ex.extras["radius_lower"][done]
        for key in ("route", "check"):
            if key in ex.extras:
                extras[key] = ex.extras[key]
        todo = todo[~done]
    if todo.size:
        rc_opts = {key: opts[key] for key in RCC1.options}
        rc = RCC1.run(ctx.subset(todo, rc_opts))
        centers[todo], radii[todo], codes[todo] = rc.centers, rc.radii, rc.codes
        if "check" in rc.extras:
            extras.setdefault("check", np.full(n, None, dtype=object))[todo] = rc.extras["check"]
        if "route" in extras:
            extras["route"][todo] = None
        if general:
            _second_chance(ctx, todo[codes[todo] != Status.OPTIMAL], centers, radii, codes, chosen, lower, extras)
    return MethodOutput(centers, radii, codes, {"method": chosen, "radius_lower": lower, **extras})


#: what a row that rcc1 left uncertified and exact then certified says
SECOND_CHANCE = "rcc1 did not certify the row: exact did, past auto's vertex limit (within exact's own)"


def _second_chance(ctx, rows, centers, radii, codes, chosen, lower, extras):
    """Interval rows that auto's exact left TOO_LARGE and rcc1 did not certify, given to exact
    again within exact's own limits (in place): a row it certifies becomes exact's; any
    other keeps rcc1's answer, or exact's where that radius is smaller (both centers lie in
    the set and both radii bound it). Thin intervals (float32 bounds) split each vertex of
    what is nearly a slice into a cluster, past auto's 20 000 vertices, and the RCC1 dual's
    weights grow like one over the width squared there, so rcc1 is the method that fails
    and the enumeration the one that certifies."""
    if rows.size == 0:
        return
    ex = EXACT.run(ctx.subset(rows, {**EXACT_OPTIONS, "return_support": False}))
    better = (ex.codes == Status.OPTIMAL) | ((ex.codes == Status.INACCURATE) & (ex.radii < radii[rows]))
    at = rows[better]
    centers[at], radii[at], codes[at] = ex.centers[better], ex.radii[better], ex.codes[better]
    chosen[at] = "exact"
    lower[at] = ex.extras["radius_lower"][better]
    check = extras.setdefault("check", np.full(codes.size, None, dtype=object))
    check[at] = np.where(ex.codes[better] == Status.OPTIMAL, SECOND_CHANCE, ex.extras.get(
        "check", np.full(rows.size, None, dtype=object))[better])
    route = extras.setdefault("route", np.full(codes.size, None, dtype=object))
    route[at] = ex.extras["route"][better]


AUTO = MethodSpec(
    "auto", auto, lies_in="S_F", image="vertices_then_rcc1",
    certifies="per row: the exact radius where enumeration is cheap, else sqrt(eta) of rcc1",
    options={"max_candidates": 2_000_000, "max_vertices": 20_000, **RCC1.options},
    validators={"max_candidates": as_positive_int, "max_vertices": as_positive_int, **RCC1.validators},
    extras=(
        Extra("method", "label", "O", "the estimator the row got (exact or rcc1)"),
        Extra("radius_lower", "length", "f8", "exact rows: a lower bound on the minimax radius of S_F; NaN on rcc1 rows"),
        Extra("route", "label", "O", "bounded-error exact rows: how the vertices were found (as exact's route)"),
    ),
    solvers=RCC1.solvers,
    sets={"quadratic": SetRoute(quadratic_auto, {"solver": "auto"}, solvers=("auto", "clarabel", "scs"))},
    routes=(Route("box slice", _auto_slices, {"equations"},
                  "exact where the slice's candidate count is within max_candidates, else rcc1"),),
    warmup=(WarmupStep("auto", EXACT_KERNELS),),
)
