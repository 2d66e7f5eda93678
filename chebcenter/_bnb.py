"""Certified exact Chebyshev centers without enumerating the vertices.

Private module. Working-set scheme: keep a few points of S_F, take the minimum
enclosing ball (c, R) of the working set, and ask an oracle for the point of S_F
farthest from c. If it lies within ``R (1 + gap_tol)`` of c the ball ``B(c, D)``
(D = the proven farthest distance) contains S_F while R (in fact the MEB's dual lower
bound) is a lower bound on the Chebyshev radius of S_F (it is the radius of a subset):
a certified exact center with ``R <= r* <= D``. Otherwise the far point joins the
working set.

The oracle maximises the convex ``f(x) = ||x - c||^2`` over S_F by branch and bound over
sub-boxes ``[l, u]``: on a sub-box, ``(x_i - c_i)^2 <= (x_i - c_i)^2 + (x_i - l_i)(u_i - x_i)``
(the secant, linear in x), so a linear program over ``{l <= x <= u, A x = b}`` bounds f
from above, and its optimal vertex, a point of S_F, bounds it from below. A vertex has at
most r = rank A coordinates strictly between its bounds, and only those contribute to the
gap, which is at most ``sum_j (u_j - l_j)^2 / 4`` over them: the relaxation of a box slice
is nearly tight, which is what makes the search small. Branching splits the box at the
fractional coordinate with the largest gap term, at the LP value. For r = 1 the LP is a
continuous knapsack solved exactly in O(d log d) by a compiled kernel; for r > 1 it is the
compiled bounded-variable simplex of :mod:`chebcenter._ranges_kernel` (3-9 us per node at
r = 2..5, d = 14..20, against 1.3 ms for HiGHS), with HiGHS only as a fallback when the
simplex runs out of pivots. The search itself is still Python (best first, a heap).
"""

from __future__ import annotations

import heapq

import numpy as np
from scipy.optimize import linprog

from ._exact_kernels import certified_ball
from ._jit import jit
from ._ranges_kernel import RANGES_EMPTY, RANGES_OK, lp_max

__all__ = ["bnb_center"]


@jit
def knapsack_lp(g, a, beta, l, u, x):
    """``max g^T x`` s.t. ``a^T x = beta``, ``l <= x <= u`` (one equation), written into x.

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
    ratio = np.empty(d)
    for i in range(d):
        ratio[i] = g[i] / a[i] if a[i] != 0.0 else -np.inf
    order = np.argsort(-ratio)
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
    if Vr.shape[0] == 1:
        keep = max(2 * Vr.shape[1], 8)
        kept_x = np.zeros((keep, lo.size))
        kept_f = np.full(keep, -np.inf)
        best_f, upper, nodes, done, bi = farthest_point_knapsack(
            np.ascontiguousarray(Vr[0]), float(beta[0]), lo, hi, c, float(threshold), slack,
            int(max_nodes), 4096, keep, kept_x, kept_f)
        if not np.isfinite(best_f):
            return None, best_f, upper, nodes, done, []
        best_x = kept_x[bi if bi >= 0 else 0].copy()
        beyond = [(float(kept_f[k]), kept_x[k].copy()) for k in range(keep) if kept_f[k] > threshold]
        return best_x, best_f, upper, nodes, done, beyond
    return _farthest_point_py(Vr, beta, lo, hi, c, threshold, max_nodes, slack)


def _farthest_point_py(Vr, beta, lo, hi, c, threshold, max_nodes, slack=1e-3):
    """Best-first branch and bound for ``max_{x in S_F} ||x - c||^2`` with compiled node LPs (r > 1).

    Nodes whose upper bound is at most ``threshold`` are pruned (the caller only needs to
    know whether something exceeds it); once a point beyond the threshold is known, also
    nodes that cannot beat it by more than the relative ``slack`` (a point within 0.1% of
    the farthest moves the working set as well as the farthest does).
    Returns ``(x_best, f_best, upper, nodes, complete, beyond)``: ``upper`` bounds f on
    S_F when ``complete`` (the search ended within ``max_nodes``); ``beyond`` lists every
    ``(f, x)`` met with f above the threshold."""
    counter = 0
    best_x, best_f = None, -np.inf
    beyond = []  # (f, x) of every LP point found beyond the threshold
    pruned_max = -np.inf   # the largest bound among pruned nodes
    heap = []

    def evaluate(l, u):
        nonlocal best_x, best_f, counter
        counter += 1
        g = l + u - 2.0 * c
        x = _node_lp(Vr, beta, g, l, u)
        if x is None:
            return
        f = float(np.sum((x - c) ** 2))
        if f > threshold:
            beyond.append((f, x))
        if f > best_f:
            best_x, best_f = x, f
        gap_terms = (x - l) * (u - x)
        ub = f + float(np.sum(np.maximum(gap_terms, 0.0)))
        heapq.heappush(heap, (-ub, counter, l, u, x, gap_terms))

    evaluate(lo.copy(), hi.copy())
    while heap:
        neg_ub, _, l, u, x, gap_terms = heapq.heappop(heap)
        ub = -neg_ub
        floor = max(threshold, best_f * (1.0 + slack) if best_f > threshold else best_f)
        if ub <= floor + 1e-12 * (1.0 + abs(floor)):
            pruned_max = max(pruned_max, ub)
            # best first: every remaining node has a bound <= ub
            for item in heap:
                pruned_max = max(pruned_max, -item[0])
            heap.clear()
            break
        if counter >= max_nodes:
            heap.append((neg_ub, 0, l, u, x, gap_terms))
            return best_x, best_f, max(-item[0] for item in heap), counter, False, beyond
        j = int(np.argmax(gap_terms))
        if gap_terms[j] <= 0.0:  # the LP point is exact here: f(x) = ub was recorded
            pruned_max = max(pruned_max, ub)
            continue
        left_u = u.copy()
        left_u[j] = x[j]
        right_l = l.copy()
        right_l[j] = x[j]
        evaluate(l, left_u)
        evaluate(right_l, u)
    upper = max(best_f, pruned_max)
    return best_x, best_f, upper, counter, True, beyond


def bnb_center(prob, q, gap_tol=1e-6, max_nodes=5_000_000, max_rounds=2_000):
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
    points = [x0]
    best = (np.inf, x0.copy(), None)  # (upper radius, its center, its support)
    low = 0.0
    complete = False
    rounds = 0
    for rounds in range(1, max_rounds + 1):  # noqa: B007 - the count is reported after the loop
        P = np.array(points)
        U = np.ascontiguousarray((P - q) @ W)
        c_u, radius, low_k, sup, _ = certified_ball(U)
        low = max(low, low_k)
        c_x = q + W @ c_u
        thr = (radius * (1.0 + gap_tol) + abs_tol) ** 2
        x, f, ub, n, done, beyond = farthest_point(Vr, beta, lo, hi, c_x, thr, max_nodes - nodes)
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
        added = [x]
        for _, y in beyond:
            if len(added) > prob.p:
                break
            if min(np.max(np.abs(y - z)) for z in added) > 1e-9:
                added.append(y)
        points.extend(added)
    upper, center, support = best
    info = {"rounds": rounds, "nodes": nodes, "complete": complete, "working_set": len(points)}
    return np.clip(center, lo, hi), upper, low, support, info


@jit
def farthest_point_knapsack(a, beta, lo, hi, c, threshold, slack, max_nodes, max_depth,
                            keep, kept_x, kept_f):
    """:func:`farthest_point` for one equation (r = 1), compiled, depth first.

    The stack holds at most ``max_depth`` open boxes (the deeper child is explored first,
    the child with the larger bound on top). Up to ``keep`` points beyond the threshold are
    kept in ``kept_x``/``kept_f`` (the farthest ones; unused slots have f = -inf).
    Returns ``(best_f, upper, nodes, complete, best_index)``; ``best_index`` points into
    ``kept_x`` when the best point is beyond the threshold, else -1 (and ``kept_x[0]``
    holds the best point)."""
    d = a.size
    SL = np.empty((max_depth, d))
    SU = np.empty((max_depth, d))
    SB = np.empty(max_depth)  # the parent's bound (a node is re-evaluated when popped)
    SL[0] = lo
    SU[0] = hi
    SB[0] = np.inf
    top = 1
    for k in range(keep):
        kept_f[k] = -np.inf
    best_f = -np.inf
    upper = -np.inf
    nodes = 0
    x = np.empty(d)
    g = np.empty(d)
    complete = True
    while top > 0:
        top -= 1
        l = SL[top].copy()
        u = SU[top].copy()
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
        code = knapsack_lp(g, a, beta, l, u, x)
        if code == -2:
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
                kept_x[worst] = x
        if f > best_f:
            best_f = f
            if f <= threshold:
                kept_x[0] = x  # below the threshold: slot 0 just carries the best point
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
        SL[top] = l
        SU[top] = u
        SL[top, j] = xj
        SB[top] = ub
        SL[top + 1] = l
        SU[top + 1] = u
        SU[top + 1, j] = xj
        SB[top + 1] = ub
        top += 2
    best_index = -1
    if best_f > threshold:
        for k in range(keep):
            if kept_f[k] == best_f:
                best_index = k
    return best_f, max(upper, best_f), nodes, complete, best_index
