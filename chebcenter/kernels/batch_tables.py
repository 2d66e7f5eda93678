"""The shared tables and candidate enumeration of ``exact``'s batch route
(:mod:`chebcenter.kernels.batch_exact`).

Private module: float64/int64 arrays only, no validation.

Everything about a basis F of ``S_F = {x : Vr x = beta, lo <= x <= hi}`` but the
right-hand side is shared by the rows of a batch: its inverse, its step table ``G =
Vr[:, F]^{-1} Vr[:, N]`` and the pruning sums (:func:`basis_tables`), and the sorted half
sums of its bound patterns (:func:`half_sums`). The candidates of one row are every basic
solution, listed by halves (:func:`_candidates_halves`, :func:`_candidates1` for one
equation) or, past :func:`half_table_bytes`'s budget, depth first (:func:`_candidates`),
each with its snapped pattern for de-duplication (docs/theory.md §1.4).
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .vertices import _basis_steps, _place_basic, _record, _walk_basis

__all__ = ["basis_tables", "half_sums", "half_table_bytes"]


@jit
def basis_tables(Vr, lo, hi, combs, pivot_tol):
    """Per basis (rows of ``combs``): ``ok``, the inverse, the nonbasic coordinates in
    branching order, the step table ``G`` and the suffix sums ``neg``/``pos`` of the
    reachable range (all as ``enumerate_vertices`` builds them, by the same kernel), and
    ``x0 = binv beta + shift`` (``shift``). A singular basis keeps zeros."""
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
        if not _basis_steps(Vr, lo, hi, combs[t], pivot_tol, inv, nonbasic[t], G[t], neg[t], pos[t],
                            basis, is_basic, nbl, Gl, influence):
            continue
        ok[t] = True
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
    return ok, binv, nonbasic, G, shift, neg, pos


@jit
def _basic_start(t, beta, shift, binv, combs, lo, hi, tol, reach_lo, reach_hi, x0):
    """The basic coordinates of basis ``t`` with every nonbasic one at its lower bound, into
    ``x0`` (``binv beta + shift``); False when one of them cannot reach its bounds whatever
    the pattern (``reach_lo``/``reach_hi``: its extreme moves), so the basis has no vertex."""
    r = combs.shape[1]
    reach = True
    for a in range(r):
        s = shift[t, a]
        for k in range(r):
            s += binv[t, a, k] * beta[k]
        x0[a] = s
        i = combs[t, a]
        if s + reach_hi[t, a] < lo[i] - tol[i] or s + reach_lo[t, a] > hi[i] + tol[i]:
            reach = False
    return reach


@jit
def _candidates(beta, lo, hi, tol, combs, ok, binv, nonbasic, G, shift, neg, pos,
                V, sig, inbox, snap, route, x0, cur, choice, pow3, reach_lo, reach_hi):
    """Every basic solution of the row ``beta`` into ``V`` (basic coordinates clipped into
    the box), with its snapped pattern ``sig`` (base 3 per coordinate: 0 at lo, 1 at hi,
    2 strictly inside by more than ``tol``), ``inbox`` (no clipping was needed), ``snap``
    (a basic coordinate is within ``tol`` of a bound: the vertex may be reached from
    other bases too, and only such candidates can repeat) and its basis ``route``. Returns the count, -1 past the capacity of ``V``."""
    nb = combs.shape[0]
    count = np.int64(0)
    for t in range(nb):
        if not ok[t]:
            continue
        if not _basic_start(t, beta, shift, binv, combs, lo, hi, tol, reach_lo, reach_hi, x0):
            continue
        count = _walk_basis(t, x0, combs, nonbasic[t], G[t], neg[t], pos[t], lo, hi, tol, V, count, cur, choice,
                            True, pow3, sig, snap, inbox, route)
        if count < 0:
            return -1
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
def _pair_candidate(V, count, P1, P2, t, m1, q):
    """Write candidate ``count`` of basis ``t``: the first half's pattern ``m1`` plus the
    second half's ``q`` (:func:`half_sums`). False, with nothing written, past the capacity
    of ``V``."""
    if count >= V.shape[0]:
        return False
    for i in range(V.shape[1]):
        V[count, i] = P1[t, m1, i] + P2[t, q, i]
    return True


@jit
def _candidates_halves(beta, lo, hi, tol, combs, ok, binv, shift, S1, S2, key, P1, P2, C1, C2,
                       V, sig, inbox, snap, route, pow3, x0, base, reach_lo, reach_hi, S2_lo, S2_hi):
    """:func:`_candidates` by the half tables of :func:`half_sums`: the same candidates (up
    to the order of summation of the basic coordinates), in time proportional to the runs
    that pass the key coordinate. A basis is skipped when some basic coordinate cannot
    reach its bounds whatever the pattern (``reach_lo``/``reach_hi``: the extreme moves), a
    first-half pattern when no second half can bring it there (``S2_lo``/``S2_hi``)."""
    nb, r = combs.shape
    n1 = S1.shape[1]
    n2 = S2.shape[1]
    count = 0
    low_t = np.empty(r)
    high_t = np.empty(r)
    vals = np.empty(r)
    for t in range(nb):
        if not ok[t]:
            continue
        if not _basic_start(t, beta, shift, binv, combs, lo, hi, tol, reach_lo, reach_hi, x0):
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
                if not _pair_candidate(V, count, P1, P2, t, m1, q):
                    return -1
                for a in range(r):
                    vals[a] = base[a] + S2[t, q, a]
                _record(V, count, t, combs, vals, C1[t, m1] + C2[t, q], lo, hi, tol, pow3, sig, snap, inbox, route)
                count += 1
                q += 1
    return count


@jit
def _candidates1(beta, lo, hi, tol, combs, ok, binv, shift, S1, S2, P1, P2, C1, C2,
                 V, sig, inbox, snap, route, pow3):
    """:func:`_candidates_halves` for one equation (every pair in the run is a vertex): the
    same walk on scalars, 1.3x faster than the general loop."""
    nb = combs.shape[0]
    n1 = S1.shape[1]
    n2 = S2.shape[1]
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
                if not _pair_candidate(V, count, P1, P2, t, m1, q):
                    return -1
                code = C1[t, m1] + C2[t, q]
                part, inside, snapped = _place_basic(V, count, jb, v, lo, hi, tol, pow3)
                inbox[count] = inside
                snap[count] = snapped
                code += part
                sig[count] = code
                route[count] = t
                count += 1
                q += 1
    return count
