"""Certified exact Chebyshev centers without enumerating the vertices.

Private module: the Python driver of the branch and bound (its compiled search is
:mod:`chebcenter.kernels.bnb`). Working-set scheme: keep a few points of S_F, take the minimum
enclosing ball (c, R) of the working set, and ask an oracle for the point of S_F
farthest from c. If it lies within ``R (1 + gap_tol)`` of c the ball ``B(c, D)``
(D = the proven farthest distance) contains S_F while R (in fact the MEB's dual lower
bound) is a lower bound on the Chebyshev radius of S_F (it is the radius of a subset):
a certified exact center with ``R <= r* <= D``. Otherwise the far point joins the
working set.

The oracle need not find the farthest point exactly: it may stop at a point within a
factor ``1 + slack`` of it. The slack is ``SLACK_FRAC`` (0.3) times the current relative
gap (at most 1e-3), so each cut is as good as the gap requires: a fixed slack of 1e-3 makes
the late cuts poor once the gap is far below it (the loop then converges like 1/rounds: 946
rounds at d - rank = 30 for a 1e-6 gap, against 38-58 with the relative slack, which also
takes 3-7x fewer rounds elsewhere). The certifying threshold is ``(R (1 + gap_tol))^2``
moved inside by the search's own pruning tolerance, so "nothing beyond it" always certifies
the gap.

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

from ..kernels.ball import certified_ball
from ..kernels.bnb import farthest_point_dfs
from ..kernels.simplex import RANGES_EMPTY, RANGES_OK, lp_max

__all__ = ["bnb_center"]

#: the search's slack as a fraction of the current relative gap (see bnb_center)
SLACK_FRAC = 0.3


def _node_lp(Vr, beta, g, l, u):
    """The node LP ``max g^T x`` over ``{Vr x = beta, l <= x <= u}`` (r > 1): the compiled
    bounded-variable simplex, HiGHS only if it fails (pivot budget); x or None if empty."""
    x = np.empty(l.size)
    status = lp_max(Vr, beta, l, u, g, x)
    if status == RANGES_OK:
        return x
    if status == RANGES_EMPTY:
        return None
    from scipy.optimize import linprog  # here, not at import: an import does no work
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
    """Certified exact center of ``S_F`` for ``q = A^+ b`` by the working-set scheme, on the
    normalised problem ``prob`` (a :class:`chebcenter._core.normalised._Core`; ``q`` in its frame).

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
        # (1 + slack) of the farthest, slack SLACK_FRAC of the current relative gap, at most 1e-3
        # (a fixed 1e-3 gives poor late cuts: 946 rounds at d - rank = 30 and 1e-6, against 38)
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
