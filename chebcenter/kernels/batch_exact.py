"""Compiled ``exact`` for a batch of right-hand sides that share A (the common case).

Private module: float64/int64 arrays only, no validation.

The basic solutions of ``S_F = {x : Vr x = beta, lo <= x <= hi}`` come from the bases F
(r coordinates with ``Vr[:, F]`` invertible) and the bound patterns of the other
coordinates (docs/theory.md §1.4). Everything about a basis but the right-hand side is
shared by the rows of a batch: the inverse ``Vr[:, F]^{-1}``, the step table ``G =
Vr[:, F]^{-1} Vr[:, N]`` and the reachable-range suffix sums used for pruning.
:func:`basis_tables` builds them once (in :mod:`chebcenter.kernels.batch_tables`, with
the candidate enumeration); :func:`exact_rows` then lists, for each row, every basis's
bound patterns that give a vertex (by sorted half sums, or depth first as
:func:`chebcenter.kernels.vertices.enumerate_vertices` with the tables looked up instead
of rebuilt), de-duplicates the candidates by the pattern they snap to, and finds the
minimum enclosing ball by a working set: the ball of a few vertices
(:func:`chebcenter.kernels.ball.min_enclosing_ball`), then the vertex farthest from its
center, added until the farthest vertex is within the gap of the working set's dual bound.

A row whose answer this kernel cannot certify is handed back (its ``flag``) to the
row-by-row route of :mod:`chebcenter.methods.exact`, which has the degenerate-support and
forward-error remedies; the kernel never returns an uncertified ball as certified.
"""

from __future__ import annotations

import math

import numpy as np

from .ball import _circumcenter, ball_from_support, farthest2, min_enclosing_ball, weighted_spread2
from .batch_tables import _candidates, _candidates1, _candidates_halves, basis_tables, half_sums, half_table_bytes
from .jit import jit

__all__ = ["ADD", "FLAG_DONE", "FLAG_EMPTY", "FLAG_PROJECT", "FLAG_TOO_MANY", "FLAG_UNCERTIFIED",
           "basis_tables", "exact_rows", "half_sums", "half_table_bytes"]

#: certified: ``radius - lower <= gap (1 + radius)``, lower valid for S_F
FLAG_DONE = 0
#: more than ``capacity`` or ``limit`` candidates
FLAG_TOO_MANY = 1
#: no candidate: the row-by-row route widens by the forward error
FLAG_EMPTY = 2
#: the working set did not certify (degenerate support, iteration limit)
FLAG_UNCERTIFIED = 3
#: certified ball, but a support point is not known to lie in S_F: ``lower`` is the
#: support's dual bound before projection, which the caller must make valid (project)
FLAG_PROJECT = 4


@jit
def _distance_to_slice(Vr, beta, x, lo, hi, basic, inv):
    """How far the candidate ``x`` (in the box, from the basis ``basic`` with inverse
    ``inv``) is from a point of S_F: the basic coordinates corrected by ``inv`` times the
    residual ``beta - Vr x``; -1 when the correction would leave the box (the caller then
    projects)."""
    r, d = Vr.shape
    dist2 = 0.0
    for a in range(r):
        s = 0.0
        for k in range(r):
            res = beta[k]
            for i in range(d):
                res -= Vr[k, i] * x[i]
            s += inv[a, k] * res
        i = basic[a]
        if x[i] + s < lo[i] or x[i] + s > hi[i]:
            return -1.0
        dist2 += s * s
    return math.sqrt(dist2)


#: points added to the working set per round (the farthest ones, distinct patterns; 8 against
#: 4: rank 3, d = 10, 76 against 82 us per row, rank 1 31 against 34 us; 12 and 16 no better)
ADD = 8


@jit
def _distances2(VT, count, c, d2):
    """``d2[j] = ||v_j - c||^2`` for the candidates stored by coordinate (``VT[i, j]``):
    coordinate by coordinate over every candidate, a loop the compiler vectorises (on
    the candidates' rows, one candidate at a time, it cannot: d is small and a runtime
    value). Returns the largest."""
    for j in range(count):
        d2[j] = 0.0
    for i in range(VT.shape[0]):
        ci = c[i]
        row = VT[i]
        for j in range(count):
            t = row[j] - ci
            d2[j] += t * t
    best = 0.0
    for j in range(count):
        best = max(best, d2[j])
    return best


@jit
def _farthest(V, count, c, sig, W, k, floor2, topj, VT, d2):
    """One pass over the candidates: the largest squared distance to ``c``, and in ``topj``
    up to ``topj.size`` (``ADD`` in the equality case) of the farthest candidates beyond
    ``floor2`` whose patterns differ from the working set's ``W[:k]`` and from each other
    (-1 where fewer). Returns the largest. With ``VT`` (the candidates by coordinate, at
    least ``count`` columns; else empty) the distances come from :func:`_distances2`."""
    d = V.shape[1]
    add = topj.size
    best = 0.0
    topd = np.full(add, -1.0)
    for a in range(add):
        topj[a] = -1
    by_coordinate = VT.shape[1] >= count and VT.shape[1] > 0
    if by_coordinate:
        best = _distances2(VT, count, c, d2)
    for j in range(count):
        if by_coordinate:
            s = d2[j]
        else:
            s = 0.0
            for i in range(d):
                t = V[j, i] - c[i]
                s += t * t
            best = max(best, s)
        if s <= floor2 or s <= topd[add - 1]:
            continue
        dup = False
        for a in range(k):
            if sig[W[a]] == sig[j]:
                dup = True
        for a in range(add):
            if topj[a] >= 0 and sig[topj[a]] == sig[j]:
                dup = True     # (a duplicate of a kept one: the nearer is dropped, good enough)
        if dup:
            continue
        a = add - 1
        while a > 0 and topd[a - 1] < s:
            topd[a] = topd[a - 1]
            topj[a] = topj[a - 1]
            a -= 1
        topd[a] = s
        topj[a] = j
    return best


@jit
def _ball(V, count, sig, start, gap, W, k0, maxit, VT, d2, known0):
    """Minimum enclosing ball of ``V[:count]`` by a working set (indices kept in ``W``):
    the walk on the working set (``W[:k0]`` to begin with, its first ``known0`` taken as a
    support to start the active sets from; or the farthest candidates from ``start`` if
    ``k0 = 0``), then the farthest candidates join it, until the farthest is within ``gap``
    of the working set's dual bound. Returns ``(center, radius over every candidate, dual
    lower bound, support size, certified)``; the support is ``W[:size]``. Each round adds
    up to ``W.size - d - 2`` candidates (``ADD`` in the equality case)."""
    d = V.shape[1]
    add = W.size - d - 2
    topj = np.empty(add, dtype=np.int64)
    c = start.copy()
    k = k0
    if k == 0:
        _farthest(V, count, c, sig, W, 0, -1.0, topj, VT, d2)
        for a in range(add):
            if topj[a] >= 0:
                W[k] = topj[a]
                k += 1
    keep = np.empty(W.size, dtype=np.int64)
    # the support of the last round (or the warm patterns) starts the active sets of the next
    known = min(known0, k0)
    T = np.empty(W.size, dtype=np.int64)
    cb = np.empty(d)
    lam = np.empty(d + 2)
    work = np.empty((d + 2, d + 2))
    rhs = np.empty(d + 2)
    sol = np.empty(d + 2)
    while True:
        P = np.empty((k, d))
        for a in range(k):
            for i in range(d):
                P[a, i] = V[W[a], i]
        status = 1
        if known > 0:
            for a in range(known):
                T[a] = a
            rad, low, ks, status = ball_from_support(P, known, 4 * (d + 2), cb, T, lam, work, rhs, sol)
            if status == 0:
                c = cb.copy()
                sup = T[:ks]
        if status != 0:
            c, rad, low, sup, ks, status = min_enclosing_ball(P, maxit, c)
            if status != 0:
                return c, math.inf, low, k, False
        for a in range(ks):
            keep[a] = W[sup[a]]
        for a in range(ks):
            W[a] = keep[a]
        k = ks
        known = ks
        best = _farthest(V, count, c, sig, W, k, rad * rad * (1.0 + 1e-12), topj, VT, d2)
        radius = math.sqrt(best)
        if radius - low <= gap * (1.0 + radius):
            return c, radius, low, k, True
        if topj[0] < 0 or k + add > W.size:
            return c, radius, low, k, False   # nothing new to add (duplicates): uncertified
        for a in range(add):
            if topj[a] >= 0:
                W[k] = topj[a]
                k += 1


@jit
def _settle(V, count, sig, snap, start, gap, W, k0, known0, maxit, VT, d2, warm, radius, low, cw, lam, work, rhs,
            sol):
    """A row's ball after its warm start: the warm ball (center in ``cw``, support ``W[:k0]``)
    if ``warm`` certified it, else the working-set ball from ``W[:k0]`` (:func:`_ball`, its
    first ``known0`` a support to start from),
    recomputed from its canonical support so that the bits do not depend on the way it was
    found. Returns ``(center, radius, lower, support size, certified)``."""
    if warm:
        return cw.copy(), radius, low, k0, True
    c, radius, low, ks, certified = _ball(V, count, sig, start, gap, W, k0, maxit, VT, d2, known0)
    if certified:
        _canonical(sig, snap, count, W, ks)
        r2, l2, ok2 = _sphere(V, count, W, ks, gap, cw, lam, work, rhs, sol, VT, d2)
        if ok2:
            c, radius, low = cw.copy(), r2, l2
    return c, radius, low, ks, certified


@jit
def _with_slack(V, count, c, route, slack, radius, low, gap):
    """The radius ``radius`` (the largest distance to a computed candidate) made a bound for
    the true vertices: plus the largest slack of the bases that gave this row candidates;
    if that breaks the gap with ``low``, the tighter ``max_j (||v_j - c|| + slack_j)``."""
    smax = 0.0
    for j in range(count):
        smax = max(smax, slack[route[j]])
    out = radius + smax
    if out - low <= gap * (1.0 + out):
        return out
    out = radius
    d = V.shape[1]
    for j in range(count):
        s = 0.0
        for i in range(d):
            t = V[j, i] - c[i]
            s += t * t
        out = max(out, math.sqrt(s) + slack[route[j]])
    return out


@jit
def _distinct(sig, snap, count):
    """The number of distinct vertices among the candidates: those with every basic
    coordinate strictly inside are reached from their basis alone; the others are counted
    once per pattern."""
    n_snap = 0
    for j in range(count):
        if snap[j]:
            n_snap += 1
    if n_snap == 0:
        return count
    keys = np.empty(n_snap, dtype=np.int64)
    m = 0
    for j in range(count):
        if snap[j]:
            keys[m] = sig[j]
            m += 1
    keys.sort()
    distinct = 1
    for a in range(1, n_snap):
        if keys[a] != keys[a - 1]:
            distinct += 1
    return count - n_snap + distinct


@jit
def _sphere(V, count, W, k, gap, c, lam, work, rhs, sol, VT, d2):
    """The circumsphere of ``V[W[:k]]`` as the ball of every candidate: its center into
    ``c``; ``(radius over every candidate, dual lower bound, certified)``, certified when
    the affine weights are nonnegative (the center is in the support's hull) and the
    farthest candidate is within the gap of the bound (``VT``, ``d2``: as :func:`_farthest`)."""
    if k < 1 or not _circumcenter(V, W, k, c, lam, work, rhs, sol):
        return math.inf, 0.0, False
    for a in range(k):
        if lam[a] < -1e-12:
            return math.inf, 0.0, False
    by_coordinate = VT.shape[1] >= count and VT.shape[1] > 0
    radius = math.sqrt(_distances2(VT, count, c, d2) if by_coordinate else farthest2(V, count, c))
    low = math.sqrt(weighted_spread2(V, W, k, lam))
    return radius, low, radius - low <= gap * (1.0 + radius)


@jit
def _canonical(sig, snap, count, W, k):
    """The support ``W[:k]`` in a form that depends on the row alone: each pattern's first
    candidate (a degenerate vertex repeats, once per basis), in increasing pattern order.
    The ball computed from it then has the same bits whichever way it was found."""
    for a in range(k):
        if snap[W[a]]:
            for j in range(count):
                if sig[j] == sig[W[a]]:
                    W[a] = j
                    break
    for a in range(1, k):
        w = W[a]
        b = a
        while b > 0 and sig[W[b - 1]] > sig[w]:
            W[b] = W[b - 1]
            b -= 1
        W[b] = w


@jit
def _warm(V, count, sig, snap, prev, n_prev, W, gap, c, lam, work, rhs, sol):
    """The ball of the previous row's support pattern, if it is this row's: the first
    candidates with the patterns ``prev[:n_prev]`` into ``W``, their circumsphere as the ball
    (:func:`_sphere`). Returns ``(k, radius, lower, certified)`` (``k`` the points found; on
    failure the caller starts its working set from them)."""
    k = 0
    for j in range(count):
        for a in range(n_prev):
            if sig[j] == prev[a]:
                new = True
                for b in range(k):
                    if sig[W[b]] == sig[j]:
                        new = False
                if new:
                    W[k] = j
                    k += 1
                break
        if k == n_prev:
            break
    if k < 2 or k != n_prev:
        return k, math.inf, 0.0, False
    _canonical(sig, snap, count, W, k)
    radius, low, ok = _sphere(V, count, W, k, gap, c, lam, work, rhs, sol, np.empty((0, 0)), np.empty(0))
    return k, radius, low, ok


@jit
def exact_rows(Vr, Beta, order, lo, hi, tol, combs, ok, binv, nonbasic, G, shift, neg, pos,
               halves, S1, S2, key, P1, P2, C1, C2, capacity, limit, gap, slack, centers, radii, lowers, support, n_support,
               n_vertices, flags,
               prev, n_prev_io):
    """Rows ``Beta`` (n x r) through the shared tables of :func:`basis_tables` (and, with
    ``halves``, :func:`half_sums`; else the depth-first walk), in the order ``order``: for each, the candidates, the
    ball of the previous row's support pattern if it certifies (nearby right-hand sides
    share most of their vertex structure: sort the rows), else the working-set ball over
    them (patterns kept distinct in the working set), and its certificate.

    Outputs per row: ``centers``, ``radii`` (the largest distance to any candidate plus the
    bound ``slack`` on its rounding, per basis),
    ``lowers`` (the dual bound, less the distance from the support to S_F),
    ``support[:n_support]`` (points; these two indexed by position in ``order``), ``n_vertices`` (the candidates: the vertices, with a
    degenerate one once per basis that reaches it) and ``flags`` (the ``FLAG_*``
    constants). ``prev[:n_prev_io[0]]`` carries the last support pattern from call to call.
    """
    n, r = Beta.shape
    d = lo.size
    p = d - r
    V = np.empty((capacity, d))
    sig = np.empty(capacity, dtype=np.int64)
    inbox = np.empty(capacity, dtype=np.bool_)
    snap = np.empty(capacity, dtype=np.bool_)
    route = np.empty(capacity, dtype=np.int64)
    x0 = np.empty(r)
    basev = np.empty(r)
    reach_lo = np.empty((combs.shape[0], r))
    reach_hi = np.empty((combs.shape[0], r))
    S2_lo = np.empty((combs.shape[0], r))
    S2_hi = np.empty((combs.shape[0], r))
    for t in range(combs.shape[0]):
        for a in range(r):
            reach_lo[t, a] = neg[t, 0, a]
            reach_hi[t, a] = pos[t, 0, a]
            if halves:
                S2_lo[t, a] = S2[t, 0, a]
                S2_hi[t, a] = S2[t, 0, a]
                for q in range(S2.shape[1]):
                    S2_lo[t, a] = min(S2_lo[t, a], S2[t, q, a])
                    S2_hi[t, a] = max(S2_hi[t, a], S2[t, q, a])
    cur = np.empty((p + 1, r))
    choice = np.empty(p + 1, dtype=np.int64)
    pow3 = np.empty(d, dtype=np.int64)
    pw = np.int64(1)
    for i in range(d):
        pow3[i] = pw
        pw *= 3
    W = np.empty(d + 2 + ADD, dtype=np.int64)
    n_prev = n_prev_io[0]
    start = np.zeros(d)
    cw = np.empty(d)
    cap_w = d + 2 + ADD
    lam = np.empty(cap_w)
    work = np.empty((cap_w, cap_w))
    rhs = np.empty(cap_w)
    sol = np.empty(cap_w)
    maxit = 200 * (d + 2) + 1000
    no_vt, no_d2 = np.empty((0, 0)), np.empty(0)
    for at in range(order.size):
        row = order[at]
        beta = Beta[row]
        if halves and r == 1:
            count = _candidates1(beta[0], lo, hi, tol, combs, ok, binv, shift, S1, S2, P1, P2, C1, C2,
                                 V, sig, inbox, snap, route, pow3)
        elif halves:
            count = _candidates_halves(beta, lo, hi, tol, combs, ok, binv, shift, S1, S2, key, P1, P2, C1, C2,
                                       V, sig, inbox, snap, route, pow3, x0, basev, reach_lo, reach_hi, S2_lo, S2_hi)
        else:
            count = _candidates(beta, lo, hi, tol, combs, ok, binv, nonbasic, G, shift, neg, pos,
                                V, sig, inbox, snap, route, x0, cur, choice, pow3, reach_lo, reach_hi)
        distinct = _distinct(sig, snap, count) if count >= 0 else 0
        if count < 0 or distinct > limit:
            flags[row] = FLAG_TOO_MANY
            continue
        if count == 0:
            flags[row] = FLAG_EMPTY
            continue
        for i in range(d):
            s = 0.0
            for k in range(r):
                s += Vr[k, i] * beta[k]
            start[i] = s
        k0, radius, low, certified = _warm(V, count, sig, snap, prev, n_prev, W, gap, cw, lam, work, rhs, sol)
        c, radius, low, ks, certified = _settle(V, count, sig, snap, start, gap, W, k0, k0, maxit, no_vt, no_d2,
                                                certified, radius, low, cw, lam, work, rhs, sol)
        n_vertices[row] = distinct
        n_prev = ks if certified else 0
        for a in range(n_prev):
            prev[a] = sig[W[a]]
        if not certified or ks > support.shape[1]:
            flags[row] = FLAG_UNCERTIFIED
            continue
        radius = _with_slack(V, count, c, route, slack, radius, low, gap)
        low = min(low, radius)
        delta = 0.0
        flag = FLAG_DONE
        for a in range(ks):
            j = W[a]
            if not inbox[j]:   # a clipped candidate: another basis may reach its pattern in the box
                for jj in range(count):
                    if sig[jj] == sig[j] and inbox[jj]:
                        j = jj
                        break
            for i in range(d):
                support[at, a, i] = V[W[a], i]
            dist = _distance_to_slice(Vr, beta, V[j], lo, hi, combs[route[j]], binv[route[j]]) \
                if inbox[j] else -1.0
            if dist < 0.0:
                flag = FLAG_PROJECT
            else:   # the support point V[W[a]] stands for V[j], that close to S_F
                dd = 0.0
                for i in range(d):
                    dd += (V[j, i] - V[W[a], i]) ** 2
                delta = max(delta, dist + math.sqrt(dd))
        if not radius - low <= gap * (1.0 + radius):   # (the slack can tip a row at the gap)
            flags[row] = FLAG_UNCERTIFIED
            continue
        for i in range(d):
            centers[row, i] = c[i]
        radii[row] = radius
        lowers[row] = low if flag == FLAG_PROJECT else max(0.0, low - delta)
        n_support[at] = ks
        flags[row] = flag
    n_prev_io[0] = n_prev
