"""Compiled vertex enumeration of ``{x in [lo, hi] : G x <= h}`` by cutting the box
(the double-description method), in x itself (docs/theory.md §8.7).

Private module: float64/int64 arrays only, no validation.

The box's 2^d corners are the vertices of the first polytope; each row ``g_k^T x <= h_k``
then cuts the current one. A vertex with ``g_k^T v - h_k`` above the row's tolerance is
cut off, one within it lies on the new face, and every edge from a cut-off vertex p to a
kept one q gives the new vertex where the edge crosses the face. p and q span an edge
exactly when the constraints active at both have rank d - 1 (the algebraic test: the face
they define holds both and has dimension d - rank = 1), whatever the degeneracy; a pair
with fewer than d - 1 common active constraints cannot pass it and is skipped on a bit
count first. Each vertex carries its active set as a bit mask (constraint ``i < d``:
``x_i >= lo_i``; ``d <= i < 2d``: ``x_i <= hi_i``; ``2d + k``: row k). A new vertex is
interpolated on its edge from the two it joins; over 90 cuts of 10-class releases the chain
moved no vertex by more than 3e-14 from its value recomputed from d active constraints.

It is the route for sets with many interval rows in few dimensions (a k-class release has
k(k-1)/2 pair rows of rank k - 1): the lifting to a box slice works in d + m coordinates
and visits ``C(d + m, m) 2^d`` bases, where the cuts touch a few hundred vertices per row.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .linalg import EPS

__all__ = ["CUTS_EMPTY", "CUTS_OK", "CUTS_TOO_MANY", "cut_vertices", "slab_vertices"]

CUTS_OK = 0
CUTS_EMPTY = 1
CUTS_TOO_MANY = 2
#: a pivot below this (rows of unit norm) makes a set of constraints rank-deficient
_PIVOT = 1e-9


@jit
def _normal(G, d, c, out):
    """The outward normal of constraint ``c`` into ``out``."""
    for i in range(d):
        out[i] = 0.0
    if c < d:
        out[c] = -1.0
    elif c < 2 * d:
        out[c - d] = 1.0
    else:
        for i in range(d):
            out[i] = G[c - 2 * d, i]


@jit
def _popcount2(M, p, q, nw):
    """The number of set bits of ``M[p] & M[q]`` over ``nw`` words (SWAR, constant time a word)."""
    n = 0
    for w in range(nw):
        x = M[p, w] & M[q, w]
        x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
        x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
        x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
        n += int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
    return n


@jit
def _rank_reaches(G, d, mask, target, work, row):
    """Do the normals of the constraints in ``mask`` reach rank ``target``? (Gauss with
    partial pivoting over the set bits only, stopping at ``target``; a target of 0, the edge
    test in one dimension, is always reached.)"""
    if target <= 0:
        return True
    r = 0
    for w in range(mask.size):
        bits = mask[w]
        while bits:
            low = bits & (~bits + np.uint64(1))          # the lowest set bit
            c = w * 64 + _bit_index(low)
            bits ^= low
            _normal(G, d, c, row)
            for k in range(r):   # reduce by the pivots found so far
                piv = int(work[k, d])
                f = row[piv]
                if f != 0.0:
                    for i in range(d):
                        row[i] -= f * work[k, i]
            best, at = 0.0, -1
            for i in range(d):
                if abs(row[i]) > best:
                    best, at = abs(row[i]), i
            if best > _PIVOT:
                inv = 1.0 / row[at]
                for i in range(d):
                    work[r, i] = row[i] * inv
                work[r, d] = at
                r += 1
                if r >= target:
                    return True
    return False


@jit
def _bit_index(low):
    """The index of the single set bit of ``low``."""
    i = 0
    while low > np.uint64(1):
        low >>= np.uint64(1)
        i += 1
    return i


@jit
def _grown(a, size, used):
    """``a`` with ``size`` rows, its first ``used`` rows kept (the rest zero)."""
    out = np.zeros((size, a.shape[1]), dtype=a.dtype)
    for i in range(used):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j]
    return out


@jit
def cut_vertices(G, h, tol, lo, hi, capacity):
    """The vertices of ``{x in [lo, hi] : G x <= h}`` (module docstring): returns
    ``(V, count, code)`` with the first ``count`` rows of V the vertices and ``code`` one of
    CUTS_OK, CUTS_EMPTY (no vertex: the set is empty beyond the tolerances ``tol``, one per
    row of G) or CUTS_TOO_MANY (more than ``capacity`` vertices at some cut). Rows of G
    should have unit norm (``tol`` is then a distance)."""
    d = lo.size
    m = G.shape[0]
    nc = 2 * d + m
    nw = (nc + 63) // 64
    n = 1 << d
    if n > capacity:
        return np.empty((0, d)), 0, CUTS_TOO_MANY
    # the work arrays start at 4 times the corners and double up to capacity when a cut
    # needs more (allocating the capacity itself, 2e5 rows, costs more than the cuts)
    size = min(capacity, 4 * n)
    V = np.empty((size, d))
    M = np.zeros((size, nw), dtype=np.uint64)
    V2 = np.empty((size, d))
    M2 = np.zeros((size, nw), dtype=np.uint64)
    s = np.empty(size)
    pos = np.empty(size, dtype=np.int64)
    neg = np.empty(size, dtype=np.int64)
    for c in range(n):
        for i in range(d):
            face = d + i if (c >> i) & 1 else i
            V[c, i] = hi[i] if (c >> i) & 1 else lo[i]
            M[c, face >> 6] |= np.uint64(1) << np.uint64(face & 63)
    work = np.empty((d, d + 1))
    row = np.empty(d)
    common = np.zeros(nw, dtype=np.uint64)
    for k in range(m):
        bit = 2 * d + k
        word, flag = bit >> 6, np.uint64(1) << np.uint64(bit & 63)
        npos = 0
        nkeep = 0
        for v in range(n):
            acc = -h[k]
            for i in range(d):
                acc += G[k, i] * V[v, i]
            s[v] = acc
            if acc > tol[k]:
                npos += 1
            else:
                nkeep += 1
        if nkeep == 0:
            return V, 0, CUTS_EMPTY
        if npos == 0:
            for v in range(n):
                if s[v] >= -tol[k]:
                    M[v, word] |= flag
            continue
        n2 = 0
        for v in range(n):
            if s[v] <= tol[k]:
                for i in range(d):
                    V2[n2, i] = V[v, i]
                for w in range(nw):
                    M2[n2, w] = M[v, w]
                if s[v] >= -tol[k]:
                    M2[n2, word] |= flag
                n2 += 1
        npos = nneg = 0
        for v in range(n):      # the cut-off vertices, and the kept ones strictly inside
            if s[v] > tol[k]:
                pos[npos] = v
                npos += 1
            elif s[v] < -tol[k]:
                neg[nneg] = v
                nneg += 1
        for a in range(npos):
            p = pos[a]
            for b in range(nneg):
                q = neg[b]
                if _popcount2(M, p, q, nw) < d - 1:
                    continue
                for w in range(nw):
                    common[w] = M[p, w] & M[q, w]
                # distinct vertices never share d independent constraints, so rank d - 1 is
                # the edge test (a rounding-level rank d would be one point counted twice)
                if not _rank_reaches(G, d, common, d - 1, work, row):
                    continue
                if n2 >= size:
                    if size >= capacity:
                        return V, 0, CUTS_TOO_MANY
                    size = min(capacity, 2 * size)
                    V2 = _grown(V2, size, n2)
                    M2 = _grown(M2, size, n2)
                t = s[q] / (s[q] - s[p])
                for i in range(d):
                    V2[n2, i] = V[q, i] + t * (V[p, i] - V[q, i])
                for w in range(nw):
                    M2[n2, w] = common[w]
                M2[n2, word] |= flag
                n2 += 1
        if V.shape[0] < size:   # the next cut's arrays as large as this one's output
            V = np.empty((size, d))
            M = np.zeros((size, nw), dtype=np.uint64)
            s = np.empty(size)
            pos = np.empty(size, dtype=np.int64)
            neg = np.empty(size, dtype=np.int64)
        V, V2 = V2, V
        M, M2 = M2, M
        n = n2
    return V, n, CUTS_OK


@jit
def slab_vertices(a, lo, hi, lower, upper, tol):
    """The vertices of the slab ``{x in [lo, hi] : lower <= a^T x <= upper}`` (one interval
    row): the box corners with ``a^T x`` within ``[lower - tol, upper + tol]``, and the points
    where a box edge crosses ``a^T x = lower`` or ``= upper`` strictly between its corners.
    A vertex of the slab has d active constraints, so it is a corner (no face of the row
    active) or lies on one face of the row and d - 1 box faces, that is on a box edge: the
    two parallel cuts of the box meet only its own edges, which are known, so no adjacency
    test is needed. Two passes of :func:`_slab_fill`, one to count and one to fill, so the
    array holds the vertices only (up to d 2^d of them could be written). Returns
    ``(V, count)``."""
    d = lo.size
    x = np.empty(d)
    count = _slab_fill(a, lo, hi, lower, upper, tol, np.empty((d, 0)), np.empty(0, dtype=np.int64),
                       np.empty(0), x)
    VT = np.empty((d, count))
    _slab_fill(a, lo, hi, lower, upper, tol, VT, np.empty(count, dtype=np.int64), np.empty(count), x)
    return np.ascontiguousarray(VT.T), count


@jit
def _slab_fill(a, lo, hi, lower, upper, tol, VT, sig, slack, x):
    """The vertices of one slab into ``VT`` by coordinate (vertex j is ``VT[:, j]``; with
    their names ``sig`` and ``slack``), as many as fit; returns how many there are (more
    than ``VT`` holds: the caller grows it and calls again).

    The corners are visited in Gray-code order, ``a^T x`` updated by one term a step: a
    corner farther than ``max_j |a_j| (hi_j - lo_j)`` from the slab (plus a margin for the
    updates' rounding, at most 2^d eps times the terms' sum) neither lies in it nor starts
    an edge that crosses it, and is passed over. The others are computed afresh."""
    d = lo.size
    size = VT.shape[1]
    n_corner = np.int64(1) << np.int64(d)
    reach = 0.0
    total = 0.0
    run = 0.0
    for i in range(d):
        reach = max(reach, abs(a[i]) * (hi[i] - lo[i]))
        total += abs(a[i]) * max(abs(lo[i]), abs(hi[i]))
        x[i] = lo[i]
        run += a[i] * lo[i]
    margin = reach + 4.0 * n_corner * EPS * total
    # the edges by the step a_j w_j they make in a^T x, rising ones and falling ones each
    # from the largest: an edge from a corner crosses a^T x = b only if its step is larger
    # than the corner's distance to b, in b's direction, so each list is walked only that far
    aw = np.empty(d)
    for i in range(d):
        aw[i] = a[i] * (hi[i] - lo[i])
    by_size = np.argsort(-np.abs(aw))
    rise = np.empty(d, dtype=np.int64)
    fall = np.empty(d, dtype=np.int64)
    n_rise = n_fall = 0
    for q in range(d):
        i = by_size[q]
        if aw[i] > 0.0:
            rise[n_rise] = i
            n_rise += 1
        elif aw[i] < 0.0:
            fall[n_fall] = i
            n_fall += 1
    count = 0
    c = np.int64(0)
    for gray in range(n_corner):
        if gray > 0:   # the corner differs from the last in bit j, the lowest set bit of gray
            j = 0
            while not (gray >> j) & 1:
                j += 1
            c ^= np.int64(1) << j
            if (c >> j) & 1:
                x[j] = hi[j]
                run += aw[j]
            else:
                x[j] = lo[j]
                run -= aw[j]
        if run + margin < lower - tol or run - margin > upper + tol:
            continue
        ax = 0.0
        mag = 0.0
        for i in range(d):
            ax += a[i] * x[i]
            mag += abs(a[i] * x[i])
        if lower - tol <= ax <= upper + tol:
            if count < size:
                for i in range(d):
                    VT[i, count] = x[i]
                sig[count] = c
                slack[count] = 0.0
            count += 1
        for side in range(2):
            b = lower if side == 0 else upper
            gap = ax - b
            up = gap < 0.0
            n_walk = n_rise if up else n_fall
            # the step must beat |gap|; 1e-12 of slack in the cut-off, the exact test below
            need = abs(gap) * (1.0 - 1e-12)
            for q in range(n_walk):
                j = rise[q] if up else fall[q]
                w = hi[j] - lo[j]
                if abs(aw[j]) <= need:
                    break
                if (c >> j) & 1:   # the edge to the corner with coordinate j at hi
                    continue
                ax2 = ax + a[j] * w
                if (ax - b) * (ax2 - b) < 0.0:
                    if count < size:
                        t = (b - ax) / (ax2 - ax)
                        for i in range(d):
                            VT[i, count] = x[i]
                        VT[j, count] = min(max(lo[j] + t * w, lo[j]), hi[j])
                        sig[count] = n_corner + (c * d + j) * 2 + side
                        # |t - t*| w <= (rounding of b - a^T q) / |a_j| + the interpolation's
                        err = (d + 4) * EPS * (abs(b) + mag) / abs(a[j]) + 4.0 * EPS * (abs(lo[j]) + w)
                        slack[count] = min(err, w)
                    count += 1
    return count
