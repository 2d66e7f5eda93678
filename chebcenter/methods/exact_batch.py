"""The batch route of ``exact``: the compiled enumeration and working-set ball of
:mod:`chebcenter.kernels.batch_exact` over every row at once, with the basis tables built
once for the batch. Rows it cannot certify are left to the row-by-row route of
:mod:`chebcenter.methods.exact`, which has the remedies for degenerate supports and for
slices that miss the box by rounding."""

from __future__ import annotations

import itertools

import numpy as np

from ..kernels import batch_exact as kern
from ..kernels.linalg import EPS, rows_times
from ..kernels.parallel import row_blocks
from ..kernels.vertices import candidate_count
from .ball_bounds import _lower_in_slice

__all__ = ["BATCH_CANDIDATES", "batch_exact"]

#: the batch route is taken when the enumeration visits at most this many (basis, bound
#: pattern) pairs: its candidate buffer holds them all (d = 16, rank 1: 524 288 rows of 16
#: numbers, 67 MB per thread)
BATCH_CANDIDATES = 600_000
#: the certificate's gap, as for the row-by-row enumeration
GAP = 1e-9
#: the largest tables of the enumeration by halves (kernels/batch_tables.half_sums); past
#: them the depth-first walk (rank 3 at d = 10: 0.5 MB; rank 3 at d = 20: 200 MB)
HALF_TABLES = 32 << 20
#: rows per call of the kernel (its support buffer: CHUNK (d + 3) d numbers)
CHUNK = 4096
#: False sends every row down the row-by-row route (the tests compare the two)
ENABLED = True


def batch_exact(ctx, centers, radii, lower, n_vertices, support):
    """Fill the rows of ``exact``'s outputs that the batch kernel certifies; returns the
    boolean mask of those rows (``radius_lower`` still before its rounding allowance)."""

    prob = ctx.problem
    if not ENABLED:
        return np.zeros(ctx.rows.size, dtype=bool)
    n, d, r = ctx.rows.size, prob.d, prob.rank
    combs = np.array(list(itertools.combinations(range(d), r)), dtype=np.int64)
    ok, binv, nonbasic, G, shift, neg, pos = kern.basis_tables(prob.Vr, prob.lo, prob.hi, combs, 1e-10)
    Beta = rows_times(ctx.Q, prob.Vr)
    slack = rounding_slack(prob, combs, ok, binv, G, nonbasic)
    use_halves = kern.half_table_bytes(d, r, combs.shape[0]) <= HALF_TABLES
    if use_halves:
        tables = kern.half_sums(prob.lo, prob.hi, combs, ok, nonbasic, G)
    else:
        tables = (np.zeros((1, 1, 1)), np.zeros((1, 1, 1)), np.zeros(1, dtype=np.int64), np.zeros((1, 1, 1)),
                  np.zeros((1, 1, 1)), np.zeros((1, 1), dtype=np.int64), np.zeros((1, 1), dtype=np.int64))
    capacity = int(min(candidate_count(d, r), ctx.options["max_vertices"] * 8, kern_capacity(d)))
    cap_support = d + 3
    C = np.full((n, d), np.nan)
    rad = np.full(n, np.nan)
    low = np.full(n, np.nan)
    nv = np.zeros(n, dtype=np.int64)
    flags = np.full(n, kern.FLAG_UNCERTIFIED, dtype=np.int64)
    S = np.empty(n, dtype=object)
    # the support is needed to project it (FLAG_PROJECT) even when it is not returned
    keep_support = ctx.options.get("return_support", True)

    def block(start, stop):
        # nearby right-hand sides share their vertex structure: each block in the order of
        # beta, in chunks (the support buffer is per chunk), the last support carried over
        order = start + nearby_order(Beta[start:stop])
        prev, n_prev = np.zeros(d + 2 + kern.ADD, dtype=np.int64), np.zeros(1, dtype=np.int64)
        for c0 in range(0, order.size, CHUNK):
            o = order[c0:c0 + CHUNK]
            sup, ns = np.zeros((o.size, cap_support, d)), np.zeros(o.size, dtype=np.int64)
            kern.exact_rows(prob.Vr, Beta, o, prob.lo, prob.hi, prob.coord_tol, combs, ok, binv, nonbasic,
                            G, shift, neg, pos, use_halves, *tables, capacity, ctx.options["max_vertices"], GAP, slack,
                            C, rad, low, sup, ns, nv, flags, prev, n_prev)
            kept = np.arange(o.size) if keep_support else np.flatnonzero(flags[o] == kern.FLAG_PROJECT)
            for j in kept:
                S[o[j]] = sup[j, :ns[j]].copy()

    row_blocks(n, 1, block)
    for k in np.flatnonzero(flags == kern.FLAG_PROJECT):
        low[k] = _lower_in_slice(prob, ctx.Q[k], S[k], low[k])
        flags[k] = kern.FLAG_DONE
    done = flags == kern.FLAG_DONE
    centers[done], radii[done], lower[done], n_vertices[done] = C[done], rad[done], low[done], nv[done]
    support[done] = S[done]
    return done


def nearby_order(Beta):
    """An order of the rows in which consecutive right-hand sides are close: by beta with
    one equation; with more, along a Z-order (Morton) curve of beta quantised to 2^(60/r)
    levels per component, so that rows near in every component are near in the order."""
    n, r = Beta.shape
    if r == 1 or n < 3:
        return np.argsort(Beta[:, 0], kind="stable").astype(np.int64)
    bits = 60 // r
    lo, hi = Beta.min(axis=0), Beta.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    Q = np.minimum(((Beta - lo) / span * (2 ** bits)).astype(np.int64), 2 ** bits - 1)
    code = np.zeros(n, dtype=np.int64)
    for b in range(bits - 1, -1, -1):
        for a in range(r):
            code = (code << 1) | ((Q[:, a] >> b) & 1)
    return np.argsort(code, kind="stable").astype(np.int64)


def rounding_slack(prob, combs, ok, binv, G, nonbasic):
    """Per basis, a bound on how far a candidate computed from it can be from the vertex it
    stands for; the kernel adds it to the candidate's distance (so that the radius bounds
    the true vertices, not only their computed copies).

    A basic coordinate is ``x_F = binv beta + shift - sum_j s_j w_j G[:, j]``: at most
    d + 2 rounded operations on terms of size at most ``M = max|bound| + 2 sum_j w_j
    |G[a, j]|`` (``x_F`` is within the box to the tolerance), each ``binv`` and ``G`` entry
    itself accurate to ``kappa eps`` relative, ``kappa = ||B||_inf ||binv||_inf`` the
    basis's condition. Per coordinate ``(d + 4) eps kappa M``, over the r basic coordinates
    ``sqrt(r)`` times that. (Dyadic slices checked in exact arithmetic fell 2e-14 below the
    farthest true vertex without it, on a box of scale 6.)"""
    d, r = prob.d, prob.rank
    eps = EPS
    width = prob.hi - prob.lo
    edge = float(np.max(np.maximum(np.abs(prob.lo), np.abs(prob.hi))))
    slack = np.zeros(combs.shape[0])
    for t in np.flatnonzero(ok):
        kappa = np.linalg.norm(prob.Vr[:, combs[t]], np.inf) * np.linalg.norm(binv[t], np.inf)
        M = edge + 2.0 * float(np.max(np.abs(G[t]) @ width[nonbasic[t]])) if d > r else edge
        slack[t] = np.sqrt(r) * (d + 4) * eps * max(kappa, 1.0) * M
    return slack


def kern_capacity(d):
    """The candidate buffer's rows: at most 64 MB per thread."""
    return max(1024, (64 << 20) // (8 * d))


def batch_slab(core, grp, k, capacity, centers, radii, lower, n_vertices):
    """exact's batch route on slabs (one interval row, no equation: the lifting's ``K = d +
    1``) through :func:`chebcenter.kernels.batch_slab.slab_rows`, the rows in the order of
    their interval's midpoint, each thread a run of that order. Fills the rows it
    certifies; returns their mask (the others go row by row)."""
    from ..kernels import batch_slab

    n, d = k.size, core.d
    if not ENABLED:
        return np.zeros(n, dtype=bool)
    a = np.ascontiguousarray(grp.AI[0])
    Lw, Uw, Tol = (np.ascontiguousarray(M[k, d]) for M in (grp.Lo, grp.Hi, grp.tol))
    flags = np.full(n, kern.FLAG_UNCERTIFIED, dtype=np.int64)
    nv = np.zeros(n, dtype=np.int64)

    # one order for the batch, each thread a run of it: a thread's rows are then as close
    # as the batch's (per-thread orders of interleaved rows would halve the warm starts)
    order = np.argsort(Lw + Uw, kind="stable").astype(np.int64)

    def block(start, stop):
        batch_slab.slab_rows(a, core.lo, core.hi, Lw, Uw, Tol, order[start:stop], capacity, GAP, centers, radii,
                             lower, nv, flags)

    row_blocks(n, 1, block)
    done = flags == kern.FLAG_DONE
    n_vertices[done] = nv[done]
    return done
