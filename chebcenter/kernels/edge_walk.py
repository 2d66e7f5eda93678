"""The edge walk: every vertex of ``S_F = {x : Vr x = beta, lo <= x <= hi}`` reached by
pivoting along its edges from one vertex (:func:`pivot_vertices`).

Private module: float64/int64 arrays only, no validation. Bases are shared between the
vertices that use them and updated by their pivots (a rank-one update of the basis
inverse, refactored after a few updates); vertices are deduplicated by a hash of their
bound pattern. The walk is complete whenever every vertex is simple; where it cannot
prove that (a degenerate vertex, a nearly singular basis) it says so (``PIVOT_UNSURE``)
and the caller enumerates basis by basis (:func:`chebcenter.kernels.vertices.enumerate_vertices`).
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .vertices import _invert_in_place

__all__ = ["PIVOT_OK", "PIVOT_TOO_MANY", "PIVOT_UNSURE", "pivot_vertices"]


#: pivot_vertices result codes: every vertex listed; more than ``capacity``; not provably
#: complete (a degenerate or nearly singular basis was met: the caller enumerates instead)
PIVOT_OK, PIVOT_TOO_MANY, PIVOT_UNSURE = 0, 1, 2
_NEED_ROOM = 3  # internal: the walk stopped for the caller to grow its arrays
_HASH_MUL = -7046029254386353131  # 0x9E3779B97F4A7C15 as int64 (Fibonacci hashing)


@jit
def _slot(table, key):
    """Open-addressing slot of ``key`` in ``table`` (len a power of 2, -1 = empty)."""
    mask = table.size - 1
    h = key * _HASH_MUL
    h ^= h >> 31
    i = h & mask
    while table[i] != -1 and table[i] != key:
        i = (i + 1) & mask
    return i


@jit
def _grow(table):
    """The same keys in a table twice the size."""
    new = np.full(2 * table.size, -1, dtype=np.int64)
    for key in table:
        if key != -1:
            new[_slot(new, key)] = key
    return new


@jit
def _longer(a, n):
    """The 2-D array ``a`` with room for ``n`` rows (its rows copied)."""
    out = np.empty((n, a.shape[1]), dtype=a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j]
    return out


#: a basis reached by more pivot updates than this is factorised afresh when expanded
_MAX_UPDATES = 6


@jit
def _pivot_basis(Hs, Fs, Gs, gens, bi, nbi, leave, j, d, r):
    """Basis ``nbi`` = basis ``bi`` with coordinate ``j`` entering at position ``leave``:
    ``B'^{-1} = E B^{-1}`` for the elementary E of the pivot on column j of
    ``Gs[bi] = B^{-1} Vr`` (r x d, flattened), applied to it and to ``Hs[bi] = B^{-1} beta``."""
    inv = 1.0 / Gs[bi, leave * d + j]
    hl = Hs[bi, leave] * inv
    for k in range(d):
        Gs[nbi, leave * d + k] = Gs[bi, leave * d + k] * inv
    Hs[nbi, leave] = hl
    for a in range(r):
        Fs[nbi, a] = Fs[bi, a]
        if a == leave:
            continue
        ga = Gs[bi, a * d + j]
        for k in range(d):
            Gs[nbi, a * d + k] = Gs[bi, a * d + k] - ga * Gs[nbi, leave * d + k]
        Hs[nbi, a] = Hs[bi, a] - ga * hl
        Gs[nbi, a * d + j] = 0.0      # exactly the unit column of the entering coordinate
    Gs[nbi, leave * d + j] = 1.0
    Fs[nbi, leave] = j
    gens[nbi, 0] = gens[bi, 0] + 1


@jit
def _grow_map(table, values):
    """The same key -> value pairs in a table twice the size."""
    new = np.full(2 * table.size, -1, dtype=np.int64)
    vals = np.empty(2 * table.size, dtype=np.int64)
    for k in range(table.size):
        if table[k] != -1:
            s = _slot(new, table[k])
            new[s] = table[k]
            vals[s] = values[k]
    return new, vals


@jit
def pivot_vertices(Vr, beta, lo, hi, x0, capacity, degen_tol, pivot_tol):
    """Every vertex of ``{x : Vr x = beta, lo <= x <= hi}`` by walking its edges from the vertex ``x0``.

    The graph of a polytope is connected (Balinski), so a breadth-first walk over the
    edges from one vertex visits them all. At a vertex whose r basic coordinates are all
    more than ``degen_tol`` inside their bounds (a simple vertex), the edges are exactly
    the p = d - r moves of one nonbasic coordinate off its bound, each ending where a
    basic coordinate meets a bound (a pivot) or the moving one meets its other bound (a
    flip): one ratio test per edge, no basis that leads nowhere is ever formed. A vertex
    is keyed by its basis and the bounds of its nonbasic coordinates (two d-bit masks in
    one int64, so d <= 31) in an open-addressing hash set; its basic values are recomputed
    from ``B^{-1} beta`` and ``B^{-1} Vr`` when it is expanded. Those are kept per distinct
    basis: factorised afresh, or (for a basis first met through a pivot) the parent's
    updated by that pivot, at most ``_MAX_UPDATES`` times in a row, so rounding cannot
    accumulate along the walk.

    The walk proves completeness only while every visited vertex is simple: if one is not
    (or a basis is singular to ``pivot_tol``), it stops with PIVOT_UNSURE and the caller
    falls back to :func:`enumerate_vertices`, which makes no such assumption. Coordinates
    with ``lo = hi`` stay nonbasic at ``lo``. Returns ``(V, count, code)``; nonbasic
    coordinates are exactly at their bounds.
    """
    r, d = Vr.shape
    room = min(capacity, 1024)  # the lists grow by doubling up to capacity
    V = np.empty((room, d))
    bases = np.empty((room, r), dtype=np.int64)
    masks = np.empty((room, 2), dtype=np.int64)  # bounds mask; the coordinate whose move leads back
    if d > 31 or r == 0:
        return V, 0, PIVOT_UNSURE
    width = hi - lo
    for i in range(d):
        if 0.0 < width[i] <= 2.0 * degen_tol:
            return V, 0, PIVOT_UNSURE
    # the start: x0's coordinates strictly inside the box must form a basis
    k = 0
    bmask = np.int64(0)
    umask = 0
    for i in range(d):
        if x0[i] > lo[i] + degen_tol and x0[i] < hi[i] - degen_tol:
            if k == r:
                return V, 0, PIVOT_UNSURE
            bases[0, k] = i
            k += 1
            bmask |= 1 << i
            V[0, i] = x0[i]
        elif width[i] > 0.0 and x0[i] >= hi[i] - degen_tol:
            umask |= 1 << i
            V[0, i] = hi[i]
        else:
            V[0, i] = lo[i]
    if k != r:
        return V, 0, PIVOT_UNSURE
    table = np.full(1024, -1, dtype=np.int64)
    table[_slot(table, bmask | (umask << 31))] = bmask | (umask << 31)
    masks[0, 0] = umask
    masks[0, 1] = -1
    count = 1
    B = np.empty((r, 2 * r))   # the tableau [B | I] of _invert_in_place
    binv = np.empty((r, r))
    inv_rhs = np.empty(r)
    inv_order = np.empty(r, dtype=np.int64)
    xn = np.empty(d)
    x = np.empty(d)
    xF = np.empty(r)
    F = np.empty(r, dtype=np.int64)
    # per distinct basis (many vertices share one: 5-40x on random slices), computed once,
    # by a factorisation or by a pivot update (_pivot_basis): its coordinate order Fs,
    # Hs = B^{-1} beta and Gs = B^{-1} Vr (r x d, flattened)
    btable = np.full(256, -1, dtype=np.int64)
    bslot = np.empty(256, dtype=np.int64)
    n_bases = 0
    Fs = np.empty((64, r), dtype=np.int64)
    Hs = np.empty((64, r))
    Gs = np.empty((64, r * d))
    gens = np.empty((64, 1), dtype=np.int64)  # pivot updates since a fresh factorisation
    st = np.zeros(3, dtype=np.int64)   # the walk's state: head, count, n_bases
    st[1] = count
    while True:
        code = _walk(Vr, beta, lo, hi, width, capacity, degen_tol, pivot_tol, st, V, bases, masks, table,
                     btable, bslot, Fs, Hs, Gs, gens, B, binv, inv_rhs, inv_order, xn, x, xF, F)
        if code != _NEED_ROOM:
            return V, st[1], code
        # room for one more expansion (at most d new vertices and d + 1 new bases). Growing
        # here, outside the walk's loop, keeps that loop free of array reassignments, whose
        # reference counting would take a fifth of the walk's time.
        count, n_bases = st[1], st[2]
        if count + d > V.shape[0] and V.shape[0] < capacity:
            room = min(max(2 * V.shape[0], count + d), capacity)
            V, bases, masks = _longer(V, room), _longer(bases, room), _longer(masks, room)
        while 2 * (count + d) > table.size:
            table = _grow(table)
        if n_bases + d + 1 > Fs.shape[0]:
            nb = 2 * (n_bases + d + 1)
            Fs, Hs, Gs, gens = _longer(Fs, nb), _longer(Hs, nb), _longer(Gs, nb), _longer(gens, nb)
        while 2 * (n_bases + d + 1) > btable.size:
            btable, bslot = _grow_map(btable, bslot)


@jit
def _walk(Vr, beta, lo, hi, width, capacity, degen_tol, pivot_tol, st, V, bases, masks, table,
          btable, bslot, Fs, Hs, Gs, gens, B, binv, inv_rhs, inv_order, xn, x, xF, F):
    """The breadth-first loop of :func:`pivot_vertices`, from ``head = st[0]`` while the
    arrays have room for one more expansion. Returns a PIVOT code, or _NEED_ROOM (the
    caller grows the arrays and calls again); the state ``(head, count, n_bases)`` is
    written back to ``st``."""
    r, d = Vr.shape
    head, count, n_bases = st[0], st[1], st[2]
    code = PIVOT_OK
    glo = np.empty(r)   # the basic coordinates' distances to their bounds
    ghi = np.empty(r)
    while head < count:
        if ((count + d > V.shape[0] and V.shape[0] < capacity) or 2 * (count + d) > table.size
                or n_bases + d + 1 > Fs.shape[0] or 2 * (n_bases + d + 1) > btable.size):
            code = _NEED_ROOM
            break
        umask = masks[head, 0]
        back = masks[head, 1]  # that edge leads to the vertex this one was found from
        bmask = np.int64(0)
        for a in range(r):
            bmask |= 1 << bases[head, a]
        s_ = _slot(btable, bmask)
        if btable[s_] == bmask:
            bi = bslot[s_]
        else:
            for a in range(r):
                F[a] = bases[head, a]
                for b in range(r):
                    B[b, a] = Vr[b, F[a]]
            if not _invert_in_place(B, binv, pivot_tol, inv_rhs, inv_order):
                code = PIVOT_UNSURE
                break
            bi = n_bases
            n_bases += 1
            gens[bi, 0] = 0
            for a in range(r):
                Fs[bi, a] = F[a]
                s = 0.0
                for b in range(r):
                    s += binv[a, b] * beta[b]
                Hs[bi, a] = s
                for j in range(d):
                    Gs[bi, a * d + j] = 0.0
                for b in range(r):
                    f = binv[a, b]
                    for j in range(d):
                        Gs[bi, a * d + j] += f * Vr[b, j]
            btable[s_] = bmask
            bslot[s_] = bi
        for a in range(r):
            F[a] = Fs[bi, a]
        # x_F = B^{-1} beta - G_N x_N, from the vertex's exact nonbasic bounds
        for j in range(d):
            x[j] = V[head, j]
            xn[j] = x[j]
        for a in range(r):
            xn[F[a]] = 0.0
        for a in range(r):
            s = Hs[bi, a]
            for j in range(d):
                s -= Gs[bi, a * d + j] * xn[j]
            i = F[a]
            if not (lo[i] + degen_tol < s < hi[i] - degen_tol):
                code = PIVOT_UNSURE  # degenerate (or drifted): not provably simple
                break
            xF[a] = s
            glo[a] = s - lo[i]
            ghi[a] = hi[i] - s
            x[i] = s
            V[head, i] = s
        if code != PIVOT_OK:
            break
        for j in range(d):
            if (bmask >> j) & 1 or width[j] == 0.0 or j == back:
                continue
            up = (umask >> j) & 1
            sgn = -1.0 if up else 1.0    # x_j moves off its bound into the box
            # the ratio test; the shortest step so far is the fraction bnum / bden, so
            # the loop has no division
            bnum = width[j]
            bden = 1.0
            leave = np.int64(-1)
            leave_up = False
            for a in range(r):
                g = Gs[bi, a * d + j]
                rate = g if up else -g  # d x_F[a] / d step
                absr = abs(rate)
                gap = ghi[a] if rate > 0.0 else glo[a]
                if absr > pivot_tol and gap * bden < bnum * absr:
                    bnum, bden, leave, leave_up = gap, absr, a, rate > 0.0
            step = bnum / bden
            if leave < 0:
                nb = bmask
                nu = umask ^ (1 << j)
            else:
                out = F[leave]
                nb = (bmask & ~(1 << out)) | (1 << j)
                nu = umask & ~(1 << j)
                if leave_up:
                    nu |= 1 << out
            key = nb | (nu << 31)
            slot = _slot(table, key)
            if table[slot] == key:
                continue
            if count >= capacity:
                code = PIVOT_TOO_MANY
                break
            table[slot] = key
            for i in range(d):
                V[count, i] = x[i]
            for a in range(r):
                V[count, F[a]] = xF[a] - sgn * step * Gs[bi, a * d + j]
                bases[count, a] = F[a]
            if leave < 0:
                V[count, j] = lo[j] if up else hi[j]
            else:
                V[count, j] = (hi[j] - step) if up else (lo[j] + step)
                out = F[leave]
                V[count, out] = hi[out] if leave_up else lo[out]
                bases[count, leave] = j
                if gens[bi, 0] < _MAX_UPDATES:  # the new basis from this one by one pivot (r x d work)
                    s2 = _slot(btable, nb)
                    if btable[s2] != nb:
                        nbi = n_bases
                        n_bases += 1
                        _pivot_basis(Hs, Fs, Gs, gens, bi, nbi, leave, j, d, r)
                        btable[s2] = nb
                        bslot[s2] = nbi
            masks[count, 0] = nu
            masks[count, 1] = j if leave < 0 else F[leave]
            count += 1
        if code != PIVOT_OK:
            break
        head += 1
    st[0], st[1], st[2] = head, count, n_bases
    return code
