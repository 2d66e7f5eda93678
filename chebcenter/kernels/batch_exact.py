"""Compiled ``exact`` for a batch of right-hand sides that share A (the common case).

Private module: float64/int64 arrays only, no validation.

The basic solutions of ``S_F = {x : Vr x = beta, lo <= x <= hi}`` come from the bases F
(r coordinates with ``Vr[:, F]`` invertible) and the bound patterns of the other
coordinates (docs/theory.md §1.4). Everything about a basis but the right-hand side is
shared by the rows of a batch: the inverse ``Vr[:, F]^{-1}``, the step table ``G =
Vr[:, F]^{-1} Vr[:, N]`` and the reachable-range suffix sums used for pruning.
:func:`basis_tables` builds them once; :func:`exact_rows` then visits, for each row, every
basis and its bound patterns depth first (the walk of
:func:`chebcenter.kernels.vertices.enumerate_vertices`, with the tables looked up instead
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

from .._jit import jit
from .ball import _circumcenter, min_enclosing_ball
from .linalg import argsort_stable
from .vertices import _lu_inverse

__all__ = ["FLAG_DONE", "FLAG_EMPTY", "FLAG_PROJECT", "FLAG_TOO_MANY", "FLAG_UNCERTIFIED",
           "basis_tables", "exact_rows"]

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
def basis_tables(Vr, lo, hi, combs, pivot_tol):
    """Per basis (rows of ``combs``): ``ok``, the inverse, the nonbasic coordinates in
    branching order, the step table ``G``, ``x0 = binv beta + shift`` (``shift``) and the
    suffix sums ``neg``/``pos`` of the reachable range (as in ``enumerate_vertices``)."""
    nb, r = combs.shape
    d = Vr.shape[1]
    p = d - r
    ok = np.zeros(nb, dtype=np.bool_)
    binv = np.zeros((nb, r, r))
    nonbasic = np.zeros((nb, p), dtype=np.int64)
    G = np.zeros((nb, r, p))
    shift = np.zeros((nb, r))
    neg = np.zeros((nb, p + 1, r))
    pos = np.zeros((nb, p + 1, r))
    basis = np.empty((r, r))
    inv = np.empty((r, r))
    is_basic = np.zeros(d, dtype=np.bool_)
    nbl = np.empty(p, dtype=np.int64)
    Gl = np.empty((r, p))
    influence = np.zeros(p)
    for t in range(nb):
        for i in range(d):
            is_basic[i] = False
        for a in range(r):
            is_basic[combs[t, a]] = True
            for k in range(r):
                basis[k, a] = Vr[k, combs[t, a]]
        if not _lu_inverse(basis, inv, pivot_tol):
            continue
        ok[t] = True
        j = 0
        for i in range(d):
            if not is_basic[i]:
                nbl[j] = i
                j += 1
        for a in range(r):
            for jj in range(p):
                s = 0.0
                for k in range(r):
                    s += inv[a, k] * Vr[k, nbl[jj]]
                Gl[a, jj] = s
        # several basic coordinates: branch first on the nonbasic ones that move them most
        # (the pruning then acts at shallow depth); one: keep the index order
        for jj in range(p):
            m_ = 0.0
            for a in range(r):
                m_ = max(m_, abs(Gl[a, jj]))
            influence[jj] = -m_ * (hi[nbl[jj]] - lo[nbl[jj]]) if r >= 2 else 0.0
        order = argsort_stable(influence)
        for jj in range(p):
            nonbasic[t, jj] = nbl[order[jj]]
            for a in range(r):
                G[t, a, jj] = Gl[a, order[jj]]
        for a in range(r):
            for k in range(r):
                binv[t, a, k] = inv[a, k]
            s = 0.0
            for k in range(r):
                u = 0.0
                for jj in range(p):
                    u -= Vr[k, nonbasic[t, jj]] * lo[nonbasic[t, jj]]
                s += inv[a, k] * u
            shift[t, a] = s
        for L in range(p - 1, -1, -1):
            width = hi[nonbasic[t, L]] - lo[nonbasic[t, L]]
            for a in range(r):
                step = -width * G[t, a, L]
                neg[t, L, a] = neg[t, L + 1, a] + min(0.0, step)
                pos[t, L, a] = pos[t, L + 1, a] + max(0.0, step)
    return ok, binv, nonbasic, G, shift, neg, pos


@jit
def _candidates(beta, lo, hi, tol, combs, ok, binv, nonbasic, G, shift, neg, pos,
                V, sig, inbox, snap, route, x0, cur, choice, pow3):
    """Every basic solution of the row ``beta`` into ``V`` (basic coordinates clipped into
    the box), with its snapped pattern ``sig`` (base 3 per coordinate: 0 at lo, 1 at hi,
    2 strictly inside by more than ``tol``), ``inbox`` (no clipping was needed), ``snap``
    (a basic coordinate is within ``tol`` of a bound: the vertex may be reached from
    other bases too, and only such candidates can repeat) and its basis ``route``. Returns the count, -1 past the capacity of ``V``."""
    nb, r = combs.shape
    d = lo.size
    p = d - r
    cap = V.shape[0]
    count = 0
    for t in range(nb):
        if not ok[t]:
            continue
        reachable = True
        for a in range(r):
            s = shift[t, a]
            for k in range(r):
                s += binv[t, a, k] * beta[k]
            x0[a] = s
            i = combs[t, a]
            if s + pos[t, 0, a] < lo[i] - tol[i] or s + neg[t, 0, a] > hi[i] + tol[i]:
                reachable = False
        if not reachable:
            continue
        for a in range(r):
            cur[0, a] = x0[a]
        for L in range(p + 1):
            choice[L] = -1
        L = 0
        while L >= 0:
            if L == p:
                if count >= cap:
                    return -1
                code = np.int64(0)
                fits = True
                snapped = False
                for jj in range(p):
                    i = nonbasic[t, jj]
                    if choice[jj] == 1:
                        V[count, i] = hi[i]
                        code += pow3[i]
                    else:
                        V[count, i] = lo[i]
                for a in range(r):
                    i = combs[t, a]
                    v = cur[p, a]
                    if v < lo[i] or v > hi[i]:
                        fits = False
                    V[count, i] = min(max(v, lo[i]), hi[i])
                    if v - lo[i] <= tol[i]:
                        snapped = True
                    elif hi[i] - v <= tol[i]:
                        code += pow3[i]
                        snapped = True
                    else:
                        code += 2 * pow3[i]
                sig[count] = code
                snap[count] = snapped
                inbox[count] = fits
                route[count] = t
                count += 1
                L -= 1
                continue
            choice[L] += 1
            if choice[L] > 1:
                choice[L] = -1
                L -= 1
                continue
            width = hi[nonbasic[t, L]] - lo[nonbasic[t, L]]
            go = True
            for a in range(r):
                v = cur[L, a] - choice[L] * width * G[t, a, L]
                cur[L + 1, a] = v
                i = combs[t, a]
                if v + pos[t, L + 1, a] < lo[i] - tol[i] or v + neg[t, L + 1, a] > hi[i] + tol[i]:
                    go = False
            if go:
                L += 1
    return count


def half_sums(lo, hi, combs, ok, nonbasic, G):
    """The tables of the enumeration by halves: per basis, the moves of the r basic
    coordinates from the bound patterns of the first ``h = p // 2`` nonbasic coordinates
    (``S1[t, mask]``), and from the other ``p - h`` (``S2[t]``), these sorted by the move of
    one basic coordinate, ``key[t]`` (the one they move most, relative to its width); each
    half's patterns also as rows and codes (``P1``, ``C1``, ``P2``, ``C2``, see below).

    A vertex is a pair of half patterns whose total move puts every basic coordinate in its
    bounds. For each first-half pattern the second halves that do so for the key
    coordinate are one contiguous run of ``S2[t]``; the first half is sorted by the key
    descending, so the runs' starts only move right (in the one-equation kernel, found by
    bisection); only those are checked for the others (with one equation, every one of them is a vertex). The walk
    costs ``2^h log 2^(p-h)`` per basis and row plus the run lengths, and the tables are
    shared by every row (they do not depend on the right-hand side)."""
    nb, r = combs.shape
    d = lo.size
    p = d - r
    h = p // 2
    width = hi - lo
    step = np.zeros((nb, r, p))
    for t in range(nb):
        if ok[t]:
            step[t] = -width[nonbasic[t]] * G[t]
    key = np.zeros(nb, dtype=np.int64)
    for t in range(nb):
        if ok[t] and r > 1:
            key[t] = int(np.argmax(np.abs(step[t, :, h:]).sum(axis=1) / width[combs[t]]))
    bits1 = (np.arange(2 ** h)[:, None] >> np.arange(h)) & 1
    bits2 = (np.arange(2 ** (p - h))[:, None] >> np.arange(p - h)) & 1
    S1 = np.einsum("trj,mj->tmr", step[:, :, :h], bits1.astype(float)) if h else np.zeros((nb, 1, r))
    S2 = np.einsum("trj,mj->tmr", step[:, :, h:], bits2.astype(float))
    M2 = np.argsort(S2[np.arange(nb), :, key], axis=1, kind="stable").astype(np.int64)
    S2 = np.ascontiguousarray(np.take_along_axis(S2, M2[:, :, None], axis=1))
    # the first half sorted by the key too, descending: the runs' starts then only move right
    M1 = np.argsort(-S1[np.arange(nb), :, key], axis=1, kind="stable").astype(np.int64)
    S1 = np.take_along_axis(S1, M1[:, :, None], axis=1)
    # each half's pattern as a row (its coordinates at lo or hi, the others 0) and as its
    # part of the base-3 code: a vertex is then one sum of two rows (exact: x + 0 = x)
    pow3 = 3 ** np.arange(d, dtype=np.int64)
    P1 = np.zeros((nb, S1.shape[1], d))
    P2 = np.zeros((nb, S2.shape[1], d))
    C1 = np.zeros((nb, S1.shape[1]), dtype=np.int64)
    C2 = np.zeros((nb, S2.shape[1]), dtype=np.int64)
    for t in range(nb):
        if not ok[t]:
            continue
        n1, n2 = nonbasic[t, :h], nonbasic[t, h:]
        if h:
            b1 = bits1[M1[t]]
            P1[t][:, n1] = np.where(b1 == 1, hi[n1], lo[n1])
            C1[t] = b1 @ pow3[n1]
        b2 = bits2[M2[t]]
        P2[t][:, n2] = np.where(b2 == 1, hi[n2], lo[n2])
        C2[t] = b2 @ pow3[n2]
    return np.ascontiguousarray(S1), S2, key, P1, P2, C1, C2


def half_table_bytes(d, r, nb):
    """The size of :func:`half_sums`'s tables, to decide between them and the walk."""
    p = d - r
    return 8 * nb * (2 ** (p // 2) + 2 ** (p - p // 2)) * (d + r + 1)


@jit
def _candidates_halves(beta, lo, hi, tol, combs, ok, binv, shift, S1, S2, key, P1, P2, C1, C2,
                       V, sig, inbox, snap, route, pow3, x0, base, reach_lo, reach_hi, S2_lo, S2_hi):
    """:func:`_candidates` by the half tables of :func:`half_sums`: the same candidates (up
    to the order of summation of the basic coordinates), in time proportional to the runs
    that pass the key coordinate. A basis is skipped when some basic coordinate cannot
    reach its bounds whatever the pattern (``reach_lo``/``reach_hi``: the extreme moves), a
    first-half pattern when no second half can bring it there (``S2_lo``/``S2_hi``)."""
    nb, r = combs.shape
    d = lo.size
    n1 = S1.shape[1]
    n2 = S2.shape[1]
    cap = V.shape[0]
    count = 0
    low_t = np.empty(r)
    high_t = np.empty(r)
    for t in range(nb):
        if not ok[t]:
            continue
        reach = True
        for a in range(r):
            s = shift[t, a]
            for k in range(r):
                s += binv[t, a, k] * beta[k]
            x0[a] = s
            i = combs[t, a]     # the basis reaches no vertex: its coordinate cannot reach the box
            if s + reach_hi[t, a] < lo[i] - tol[i] or s + reach_lo[t, a] > hi[i] + tol[i]:
                reach = False
        if not reach:
            continue
        kk = key[t]
        jk = combs[t, kk]
        low_k = lo[jk] - tol[jk]
        high_k = hi[jk] + tol[jk]
        for a in range(r):
            low_t[a] = lo[combs[t, a]] - tol[combs[t, a]]
            high_t[a] = hi[combs[t, a]] + tol[combs[t, a]]
        start = 0
        for m1 in range(n1):
            near = True
            for a in range(r):
                base[a] = x0[a] + S1[t, m1, a]
                i = combs[t, a]   # no second half can bring this coordinate into the box
                if base[a] + S2_hi[t, a] < lo[i] - tol[i] or base[a] + S2_lo[t, a] > hi[i] + tol[i]:
                    near = False
            if not near:
                continue
            want = low_k - base[kk]
            # first index of the run, S2[t, :, kk] >= want: the first half is sorted by its
            # key move descending, so ``want`` only grows and the start only moves right
            while start < n2 and S2[t, start, kk] < want:
                start += 1
            q = start
            while q < n2 and base[kk] + S2[t, q, kk] <= high_k:
                fits = True
                for a in range(r):   # (no early exit: branch-free, measured faster)
                    v = base[a] + S2[t, q, a]
                    fits &= (v >= low_t[a]) & (v <= high_t[a])
                if not fits:
                    q += 1
                    continue
                if count >= cap:
                    return -1
                for i in range(d):
                    V[count, i] = P1[t, m1, i] + P2[t, q, i]
                code = C1[t, m1] + C2[t, q]
                inside = True
                snapped = False
                for a in range(r):
                    i = combs[t, a]
                    v = base[a] + S2[t, q, a]
                    if v < lo[i] or v > hi[i]:
                        inside = False
                    V[count, i] = min(max(v, lo[i]), hi[i])
                    if v - lo[i] <= tol[i]:
                        snapped = True
                    elif hi[i] - v <= tol[i]:
                        code += pow3[i]
                        snapped = True
                    else:
                        code += 2 * pow3[i]
                inbox[count] = inside
                snap[count] = snapped
                sig[count] = code
                route[count] = t
                count += 1
                q += 1
    return count


@jit
def _candidates1(beta, lo, hi, tol, combs, ok, binv, shift, S1, S2, P1, P2, C1, C2,
                 V, sig, inbox, snap, route, pow3):
    """:func:`_candidates_halves` for one equation (every pair in the run is a vertex): the
    same walk on scalars, 1.3x faster than the general loop."""
    nb = combs.shape[0]
    d = lo.size
    n1 = S1.shape[1]
    n2 = S2.shape[1]
    cap = V.shape[0]
    count = 0
    for t in range(nb):
        if not ok[t]:
            continue
        jb = combs[t, 0]
        x0 = shift[t, 0] + binv[t, 0, 0] * beta
        low_b = lo[jb] - tol[jb]
        high_b = hi[jb] + tol[jb]
        for m1 in range(n1):
            base = x0 + S1[t, m1, 0]
            want = low_b - base
            # first index of S2[t] with S2 >= want
            a, b = 0, n2
            while a < b:
                mid = (a + b) >> 1
                if S2[t, mid, 0] < want:
                    a = mid + 1
                else:
                    b = mid
            q = a
            while q < n2 and base + S2[t, q, 0] <= high_b:
                v = base + S2[t, q, 0]
                if v < low_b:   # (rounding of the split sum)
                    q += 1
                    continue
                if count >= cap:
                    return -1
                for i in range(d):
                    V[count, i] = P1[t, m1, i] + P2[t, q, i]
                code = C1[t, m1] + C2[t, q]
                inbox[count] = lo[jb] <= v <= hi[jb]
                V[count, jb] = min(max(v, lo[jb]), hi[jb])
                snap[count] = True
                if v - lo[jb] <= tol[jb]:
                    pass
                elif hi[jb] - v <= tol[jb]:
                    code += pow3[jb]
                else:
                    code += 2 * pow3[jb]
                    snap[count] = False
                sig[count] = code
                route[count] = t
                count += 1
                q += 1
    return count


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
#: 4: rank 3, d = 10, 82 -> 76 us per row, rank 1 34 -> 31 us; 12 and 16 no better)
ADD = 8


@jit
def _farthest(V, count, c, sig, W, k, floor2, topj):
    """One pass over the candidates: the largest squared distance to ``c``, and in ``topj``
    up to ``ADD`` of the farthest candidates beyond ``floor2`` whose patterns differ from
    the working set's ``W[:k]`` and from each other (-1 where fewer). Returns the largest."""
    d = V.shape[1]
    best = 0.0
    topd = np.full(ADD, -1.0)
    for a in range(ADD):
        topj[a] = -1
    for j in range(count):
        s = 0.0
        for i in range(d):
            t = V[j, i] - c[i]
            s += t * t
        best = max(best, s)
        if s <= floor2 or s <= topd[ADD - 1]:
            continue
        dup = False
        for a in range(k):
            if sig[W[a]] == sig[j]:
                dup = True
        for a in range(ADD):
            if topj[a] >= 0 and sig[topj[a]] == sig[j]:
                dup = True     # (a duplicate of a kept one: the nearer is dropped, good enough)
        if dup:
            continue
        a = ADD - 1
        while a > 0 and topd[a - 1] < s:
            topd[a] = topd[a - 1]
            topj[a] = topj[a - 1]
            a -= 1
        topd[a] = s
        topj[a] = j
    return best


@jit
def _ball(V, count, sig, start, gap, W, k0, maxit):
    """Minimum enclosing ball of ``V[:count]`` by a working set (indices kept in ``W``):
    the walk on the working set (``W[:k0]`` to begin with, or the farthest candidates from
    ``start`` if ``k0 = 0``), then the farthest candidates join it, until the farthest
    is within ``gap`` of the working set's dual bound. Returns ``(center, radius over every
    candidate, dual lower bound, support size, certified)``; the support is ``W[:size]``."""
    d = V.shape[1]
    topj = np.empty(ADD, dtype=np.int64)
    c = start.copy()
    k = k0
    if k == 0:
        _farthest(V, count, c, sig, W, 0, -1.0, topj)
        for a in range(ADD):
            if topj[a] >= 0:
                W[k] = topj[a]
                k += 1
    keep = np.empty(W.size, dtype=np.int64)
    while True:
        P = np.empty((k, d))
        for a in range(k):
            for i in range(d):
                P[a, i] = V[W[a], i]
        c, rad, low, sup, ks, status = min_enclosing_ball(P, maxit, c)
        if status != 0:
            return c, math.inf, low, k, False
        for a in range(ks):
            keep[a] = W[sup[a]]
        for a in range(ks):
            W[a] = keep[a]
        k = ks
        best = _farthest(V, count, c, sig, W, k, rad * rad * (1.0 + 1e-12), topj)
        radius = math.sqrt(best)
        if radius - low <= gap * (1.0 + radius):
            return c, radius, low, k, True
        if topj[0] < 0 or k + ADD > W.size:
            return c, radius, low, k, False   # nothing new to add (duplicates): uncertified
        for a in range(ADD):
            if topj[a] >= 0:
                W[k] = topj[a]
                k += 1


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
def _sphere(V, count, W, k, gap, c, lam, work, rhs, sol):
    """The circumsphere of ``V[W[:k]]`` as the ball of every candidate: its center into
    ``c``; ``(radius over every candidate, dual lower bound, certified)``, certified when
    the affine weights are nonnegative (the center is in the support's hull) and the
    farthest candidate is within the gap of the bound."""
    d = V.shape[1]
    if k < 1 or not _circumcenter(V, W, k, c, lam, work, rhs, sol):
        return math.inf, 0.0, False
    for a in range(k):
        if lam[a] < -1e-12:
            return math.inf, 0.0, False
    wsum = 0.0
    for a in range(k):
        wsum += max(lam[a], 0.0)
    cl = np.zeros(d)
    for a in range(k):
        for i in range(d):
            cl[i] += max(lam[a], 0.0) / wsum * V[W[a], i]
    low2 = 0.0
    for a in range(k):
        s = 0.0
        for i in range(d):
            s += (V[W[a], i] - cl[i]) ** 2
        low2 += max(lam[a], 0.0) / wsum * s
    best = 0.0
    for j in range(count):
        s = 0.0
        for i in range(d):
            t = V[j, i] - c[i]
            s += t * t
        best = max(best, s)
    radius = math.sqrt(best)
    low = math.sqrt(low2)
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
    radius, low, ok = _sphere(V, count, W, k, gap, c, lam, work, rhs, sol)
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
                                V, sig, inbox, snap, route, x0, cur, choice, pow3)
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
        if certified:
            c, ks = cw.copy(), k0
        else:
            c, radius, low, ks, certified = _ball(V, count, sig, start, gap, W, k0, maxit)
            if certified:   # the same ball from the canonical support (same bits, warm or not)
                _canonical(sig, snap, count, W, ks)
                r2, l2, ok2 = _sphere(V, count, W, ks, gap, cw, lam, work, rhs, sol)
                if ok2:
                    c, radius, low = cw.copy(), r2, l2
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
