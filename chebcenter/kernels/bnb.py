"""The branch and bound's compiled search: the rank-1 node LP (a continuous knapsack, solved
exactly with an incrementally sorted ratio order) and the depth-first search over
sub-boxes that maximises ``||x - c||^2`` over S_F (:func:`farthest_point_dfs`).

Private module. The scheme, its bounds and its certificate are described in
:mod:`chebcenter.methods.exact_bnb`, the Python driver that calls it.
"""

from __future__ import annotations

import numpy as np

from .jit import jit, jit_noalloc
from .linalg import argsort_into
from .simplex import RANGES_EMPTY, RANGES_OK, lp_max_warm, simplex_state, warm_phase2

__all__ = ["farthest_point_dfs", "knapsack_lp", "knapsack_lp_work"]


@jit
def knapsack_lp(g, a, beta, l, u, x):
    """:func:`knapsack_lp_work` with its own work space."""
    d = g.size
    return knapsack_lp_work(g, a, beta, l, u, x, np.empty(d), np.empty(d, dtype=np.int64), np.empty(d, dtype=np.int64))


@jit_noalloc
def knapsack_lp_work(g, a, beta, l, u, x, key, order, tmp):
    """``max g^T x`` s.t. ``a^T x = beta``, ``l <= x <= u`` (one equation), written into x.

    ``order`` receives the coordinates by decreasing ``g_i / a_i`` (merge sort with the work
    array ``tmp``; an empty ``tmp`` means ``order`` already holds a nearly sorted order, which
    an insertion sort finishes in about d steps).

    Lagrangian sweep: at multiplier lam, x_i = u_i if g_i > lam a_i else l_i. Start from
    lam = +inf (a^T x minimal), and flip coordinates in decreasing order of g_i / a_i until
    a^T x reaches beta; the last flip is fractional. Returns the fractional index, -1 if
    none, or -2 if the slice of the box is empty (beta out of range by more than rounding).
    """
    d = g.size
    total = 0.0
    span = 0.0
    for i in range(d):
        if a[i] > 0.0:
            x[i] = l[i]
        elif a[i] < 0.0:
            x[i] = u[i]
        else:
            x[i] = u[i] if g[i] > 0.0 else l[i]
        total += a[i] * x[i]
        span += abs(a[i]) * (u[i] - l[i])
    tol = 1e-12 * (abs(beta) + span + 1.0)
    if beta < total - tol or beta > total + span + tol:
        return -2
    for i in range(d):  # decreasing g_i / a_i, coordinates with a_i = 0 last
        key[i] = -g[i] / a[i] if a[i] != 0.0 else np.inf
    if tmp.size == 0:  # ``order`` is the parent node's: one key moved, insertion sort is O(d)
        for k in range(1, d):
            i = order[k]
            kk = k - 1
            while kk >= 0 and key[order[kk]] > key[i]:
                order[kk + 1] = order[kk]
                kk -= 1
            order[kk + 1] = i
    else:
        argsort_into(key, order, tmp)
    need = beta - total
    for k in range(d):
        i = order[k]
        if a[i] == 0.0:
            break
        step = abs(a[i]) * (u[i] - l[i])
        if step >= need:
            frac = need / abs(a[i])
            x[i] = l[i] + frac if a[i] > 0.0 else u[i] - frac
            x[i] = min(max(x[i], l[i]), u[i])
            return i if l[i] < x[i] < u[i] else -1
        need -= step
        x[i] = u[i] if a[i] > 0.0 else l[i]
    return -1


@jit
def farthest_point_dfs(V, beta, lo, hi, c, threshold, slack, max_nodes, max_depth,
                       keep, kept_x, kept_f):
    """:func:`farthest_point`, compiled, depth first, for any number of equations.

    The node LP is the knapsack closed form for one equation (r = 1) and the compiled
    bounded-variable simplex (:func:`chebcenter.kernels.simplex.lp_max`) otherwise; a node
    whose simplex fails (pivot budget) keeps its parent's bound and makes the search
    incomplete, never a wrong certificate.

    The stack holds at most ``max_depth`` open boxes (the deeper child is explored first,
    the child with the larger bound on top). Up to ``keep`` points beyond the threshold are
    kept in ``kept_x``/``kept_f`` (the farthest ones; unused slots have f = -inf).
    Returns ``(best_f, upper, nodes, complete, best_index)``; ``best_index`` points into
    ``kept_x`` when the best point is beyond the threshold, else -1 (and ``kept_x[0]``
    holds the best point)."""
    d = V.shape[1]
    r = V.shape[0]
    SL = np.empty((max_depth, d))
    SU = np.empty((max_depth, d))
    SB = np.empty(max_depth)  # the parent's bound (a node is re-evaluated when popped)
    SO = np.empty((max_depth, d), dtype=np.int64)  # the parent's knapsack order (r = 1)
    n = d + r                                       # r > 1: the parent's simplex state
    depth_lp = max_depth if r > 1 else 1
    ST = np.empty((depth_lp, r, n))
    SRHS = np.empty((depth_lp, r))
    SBAS = np.empty((depth_lp, r), dtype=np.int64)
    SWH = np.empty((depth_lp, n), dtype=np.int64)
    SXS = np.empty((depth_lp, n))
    SHAS = np.zeros(max_depth, dtype=np.bool_)
    T, rhs, basis, where, xs, blo, bhi = simplex_state(r, d)
    cost = np.empty(n)
    for i in range(d):
        SL[0, i] = lo[i]
        SU[0, i] = hi[i]
    SB[0] = np.inf
    top = 1
    for k in range(keep):
        kept_f[k] = -np.inf
    best_f = -np.inf
    upper = -np.inf
    nodes = 0
    x = np.empty(d)
    g = np.empty(d)
    l = np.empty(d)
    u = np.empty(d)
    key = np.empty(d)
    order = np.empty(d, dtype=np.int64)
    tmp = np.empty(d, dtype=np.int64)
    no_tmp = np.empty(0, dtype=np.int64)
    for i in range(d):
        order[i] = i
    a0 = V[0]   # r = 1: the equation (one view, not one per node)
    b0 = beta[0]
    complete = True
    while top > 0:
        top -= 1
        for i in range(d):
            l[i] = SL[top, i]
            u[i] = SU[top, i]
        floor = threshold
        if best_f > threshold:
            floor = max(floor, best_f * (1.0 + slack))
        elif best_f > floor:
            floor = best_f
        if SB[top] <= floor + 1e-12 * (1.0 + abs(floor)):
            upper = max(upper, SB[top])
            continue
        if nodes >= max_nodes:
            upper = max(upper, SB[top])
            complete = False
            continue
        nodes += 1
        for i in range(d):
            g[i] = l[i] + u[i] - 2.0 * c[i]
        if r == 1:
            if top == 0 and nodes == 1:
                code = knapsack_lp_work(g, a0, b0, l, u, x, key, order, tmp)
            else:
                for i in range(d):
                    order[i] = SO[top, i]
                code = knapsack_lp_work(g, a0, b0, l, u, x, key, order, no_tmp)
            if code == -2:
                continue
        else:
            if SHAS[top]:  # the parent's optimal simplex state
                for k in range(r):
                    rhs[k] = SRHS[top, k]
                    basis[k] = SBAS[top, k]
                    for i in range(n):
                        T[k, i] = ST[top, k, i]
                for i in range(n):
                    where[i] = SWH[top, i]
                    xs[i] = SXS[top, i]
            if warm_phase2(V, l, u, g, x, T, rhs, basis, where, xs, blo, bhi, cost, SHAS[top]):
                st = RANGES_OK
            else:  # no warm start, or it failed: phase 1 from scratch
                st = lp_max_warm(V, beta, l, u, g, x, T, rhs, basis, where, xs, blo, bhi, np.bool_(False))
            if st == RANGES_EMPTY:
                continue
            if st != RANGES_OK:
                upper = max(upper, SB[top])
                complete = False
                continue
        f = 0.0
        ub = 0.0
        j = -1
        gmax = 0.0
        for i in range(d):
            f += (x[i] - c[i]) ** 2
            gi = (x[i] - l[i]) * (u[i] - x[i])
            if gi > 0.0:
                ub += gi
                if gi > gmax:
                    gmax, j = gi, i
        ub += f
        if f > threshold:  # keep the farthest points beyond the threshold
            worst = 0
            for k in range(1, keep):
                if kept_f[k] < kept_f[worst]:
                    worst = k
            if f > kept_f[worst]:
                kept_f[worst] = f
                for i in range(d):
                    kept_x[worst, i] = x[i]
        if f > best_f:
            best_f = f
            if f <= threshold:
                for i in range(d):  # below the threshold: slot 0 just carries the best point
                    kept_x[0, i] = x[i]
        floor = threshold
        if best_f > threshold:
            floor = max(floor, best_f * (1.0 + slack))
        elif best_f > floor:
            floor = best_f
        if ub <= floor + 1e-12 * (1.0 + abs(floor)) or j < 0:
            upper = max(upper, ub if j >= 0 else f)
            continue
        if top + 2 > max_depth:
            upper = max(upper, ub)
            complete = False
            continue
        xj = x[j]
        # children: [l_j, x_j] and [x_j, u_j]; push the one whose side holds more of the
        # secant gap second so that it is explored first (both get the parent's bound)
        for i in range(d):
            SL[top, i] = l[i]
            SU[top, i] = u[i]
            SL[top + 1, i] = l[i]
            SU[top + 1, i] = u[i]
            SO[top, i] = order[i]
            SO[top + 1, i] = order[i]
        if r > 1:  # both children start from this node's optimal basis
            for e in (top, top + 1):
                SHAS[e] = True
                for k in range(r):
                    SRHS[e, k] = rhs[k]
                    SBAS[e, k] = basis[k]
                    for i in range(n):
                        ST[e, k, i] = T[k, i]
                for i in range(n):
                    SWH[e, i] = where[i]
                    SXS[e, i] = xs[i]
        SL[top, j] = xj
        SB[top] = ub
        SU[top + 1, j] = xj
        SB[top + 1] = ub
        top += 2
    best_index = -1
    if best_f > threshold:
        for k in range(keep):
            if kept_f[k] == best_f:
                best_index = k
    return best_f, max(upper, best_f), nodes, complete, best_index
