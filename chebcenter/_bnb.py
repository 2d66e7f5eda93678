"""Certified exact Chebyshev centers without enumerating the vertices.

Private module. Working-set scheme: keep a few points of S_F, take the minimum
enclosing ball (c, R) of the working set, and ask an oracle for the point of S_F
farthest from c. If it lies within ``R (1 + gap_tol)`` of c the ball ``B(c, D)``
(D = the proven farthest distance) contains S_F while R (in fact the MEB's dual lower
bound) is a lower bound on the Chebyshev radius of S_F (it is the radius of a subset):
a certified exact center with ``R <= r* <= D``. Otherwise the far point joins the
working set.

The oracle need not find the farthest point exactly: it may stop at a point within a
factor ``1 + slack`` of it. A fixed slack of 1e-3 made the late cuts poor once the gap was
far below it (the loop then converged like 1/rounds: 946 rounds at d - rank = 30 for a 1e-6
gap); the slack is now ``SLACK_FRAC`` (0.3) times the current relative gap, so each cut is
as good as the gap requires: 38-58 rounds there, and 3-7x fewer rounds elsewhere. The
certifying threshold is ``(R (1 + gap_tol))^2`` moved inside by the search's own pruning
tolerance, so "nothing beyond it" always certifies the gap.

The oracle maximises the convex ``f(x) = ||x - c||^2`` over S_F by branch and bound over
sub-boxes ``[l, u]``: on a sub-box, ``(x_i - c_i)^2 <= (x_i - c_i)^2 + (x_i - l_i)(u_i - x_i)``
(the secant, linear in x), so a linear program over ``{l <= x <= u, A x = b}`` bounds f
from above, and its optimal vertex, a point of S_F, bounds it from below. A vertex has at
most r = rank A coordinates strictly between its bounds, and only those contribute to the
gap, which is at most ``sum_j (u_j - l_j)^2 / 4`` over them: the relaxation of a box slice
is nearly tight, which is what makes the search small. Branching splits the box at the
fractional coordinate with the largest gap term, at the LP value. For r = 1 the LP is a
continuous knapsack solved exactly by a compiled kernel (each node finishes its parent's
ratio order by an insertion sort: 0.21-0.25 us per node at d = 26-41); for r > 1 it is the compiled
bounded-variable simplex of :mod:`chebcenter.kernels.simplex`, started from the parent node's
optimal basis (:func:`~chebcenter.kernels.simplex.lp_max_warm`: the parent's vertex stays
feasible in both children, so phase 2 needs a few pivots; 1.1-1.6 us per node at r = 3..5,
d = 20..30, against 1.3 ms for HiGHS). The search is compiled for every rank
(:func:`farthest_point_dfs`, depth first); a node whose simplex runs out of pivots keeps
its parent's bound and marks the search incomplete (INACCURATE, never a wrong bound).
:func:`_node_lp` is the same node LP callable from Python, with HiGHS as its fallback.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from ._jit import jit, jit_noalloc
from .kernels.ball import certified_ball
from .kernels.linalg import argsort_into
from .kernels.simplex import RANGES_EMPTY, RANGES_OK, lp_max, lp_max_warm, simplex_state, warm_phase2

__all__ = ["bnb_center"]

#: the search's slack as a fraction of the current relative gap (see bnb_center)
SLACK_FRAC = 0.3


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


def _node_lp(Vr, beta, g, l, u):
    """The node LP ``max g^T x`` over ``{Vr x = beta, l <= x <= u}`` (r > 1): the compiled
    bounded-variable simplex, HiGHS only if it fails (pivot budget); x or None if empty."""
    x = np.empty(l.size)
    status = lp_max(Vr, beta, l, u, g, x)
    if status == RANGES_OK:
        return x
    if status == RANGES_EMPTY:
        return None
    res = linprog(-g, A_eq=Vr, b_eq=beta, bounds=np.column_stack([l, u]), method="highs")
    return res.x if res.status == 0 else None


def farthest_point(Vr, beta, lo, hi, c, threshold, max_nodes, slack=1e-3):
    keep = max(2 * Vr.shape[1], 8)
    kept_x = np.zeros((keep, lo.size))
    kept_f = np.full(keep, -np.inf)
    best_f, upper, nodes, done, bi = farthest_point_dfs(
        np.ascontiguousarray(Vr), np.ascontiguousarray(beta, dtype=np.float64), lo, hi, c, float(threshold),
        slack, int(max_nodes), 4096, keep, kept_x, kept_f)
    if not np.isfinite(best_f):
        return None, best_f, upper, nodes, done, []
    best_x = kept_x[bi if bi >= 0 else 0].copy()
    beyond = [(float(kept_f[k]), kept_x[k].copy()) for k in range(keep) if kept_f[k] > threshold]
    return best_x, best_f, upper, nodes, done, beyond


def bnb_center(prob, q, gap_tol=1e-6, max_nodes=20_000_000, max_rounds=2_000):
    """Certified exact center of ``S_F`` for ``q = A^+ b`` by the working-set scheme.

    Returns ``(center, radius_upper, radius_lower, support_points, info)`` with
    ``info = {"rounds", "nodes", "complete", "working_set"}``. Anytime: every round proves
    ``max_{x in S_F} ||x - c_k|| <= D_k`` for its center c_k, and the center with the
    smallest D_k is returned with ``radius_upper = D_k``; ``radius_lower`` is the MEB dual
    bound of the working set. ``complete``: ``D <= R (1 + gap_tol) + 1e-12 (1 + ||hi - lo||)``
    was reached before a node or round budget ran out."""
    Vr, W = prob.Vr, prob.W
    beta = Vr @ q
    lo, hi = prob.lo, prob.hi
    # rounding floor for the gap (S_F a point has radius 0: no relative gap can be met)
    abs_tol = 1e-12 * (1.0 + float(np.linalg.norm(hi - lo)))
    nodes = 0
    # start: a point of S_F (nearly) farthest from q
    x0, _, _, n0, _, _ = farthest_point(Vr, beta, lo, hi, q, -np.inf, max_nodes)
    nodes += n0
    if x0 is None:
        return None, np.nan, np.nan, None, {"rounds": 0, "nodes": nodes, "complete": False,
                                            "working_set": 0}
    # the working set, in x and in u = W^T (x - q) (the MEB is taken in u); both grow by
    # whole rounds, and only the new points are transformed
    P = x0[None, :].copy()
    U = np.ascontiguousarray((P - q) @ W)
    best = (np.inf, x0.copy(), None)  # (upper radius, its center, its support)
    low = 0.0
    complete = False
    rounds = 0
    c_prev = None
    for rounds in range(1, max_rounds + 1):  # noqa: B007 - the count is reported after the loop
        c_u, radius, low_k, sup, _ = certified_ball(U, start=c_prev)  # the last round's ball: a short walk
        c_prev = c_u
        low = max(low, low_k)
        c_x = q + W @ c_u
        # nothing beyond thr certifies the gap: the search prunes at its bound + 1e-12 (1 + bound),
        # so thr sits that far inside (low (1 + gap_tol) + abs_tol)^2
        target = (low * (1.0 + gap_tol) + abs_tol) ** 2
        thr = max(target - 2e-12, 0.0) / (1.0 + 4e-12)
        # cuts as good as the gap is small: the search returns a point within a factor
        # (1 + slack) of the farthest, slack a tenth of the current relative gap (a fixed 1e-3
        # gave poor late cuts: 946 rounds at d - rank = 30 and 1e-6, against 38)
        gap_now = best[0] / max(low, 1e-300) - 1.0 if np.isfinite(best[0]) else 1.0
        x, f, ub, n, done, beyond = farthest_point(Vr, beta, lo, hi, c_x, thr, max_nodes - nodes,
                                                   slack=min(1e-3, max(SLACK_FRAC * gap_now, 1e-9)))
        nodes += n
        if done and np.sqrt(max(ub, radius ** 2)) < best[0]:
            best = (np.sqrt(max(ub, radius ** 2)), c_x, P[sup])
        if not done or nodes >= max_nodes:
            break
        if f <= thr:  # nothing beyond the threshold: certified
            complete = best[0] <= low * (1.0 + gap_tol) + abs_tol
            break
        # the farthest and up to p more of the points found beyond the ball, farthest first
        # (several cuts per round: far fewer rounds)
        beyond.sort(key=lambda item: -item[0])
        added = np.empty((prob.p + 1, x.size))
        added[0] = x
        n_added = 1
        for _, y in beyond:
            if n_added > prob.p:
                break
            if np.abs(added[:n_added] - y).max(axis=1).min() > 1e-9:
                added[n_added] = y
                n_added += 1
        P = np.concatenate([P, added[:n_added]])
        U = np.ascontiguousarray(np.concatenate([U, (added[:n_added] - q) @ W]))
    upper, center, support = best
    info = {"rounds": rounds, "nodes": nodes, "complete": complete, "working_set": P.shape[0]}
    return np.clip(center, lo, hi), upper, low, support, info


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
