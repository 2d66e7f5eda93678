"""Compiled ``exact`` for a batch of slabs ``{x in [lo, hi] : l <= a^T x <= u}`` that share
``a`` and the box (one interval row per batch row: a two-class release, a rounded score).

Private module: float64/int64 arrays only, no validation.

A vertex of a slab is a box corner with ``l <= a^T x <= u`` or the point where a box edge
crosses ``a^T x = l`` or ``= u`` (listed by :func:`chebcenter.kernels.cuts._slab_fill`, the
enumeration of :func:`chebcenter.kernels.cuts.slab_vertices`). Each has a
name that does not depend on the row: the corner's bit pattern, or (corner, edge, side).
Rows in the order of their interval share most of their vertices' names, so, as the
equality case's batch route (:mod:`chebcenter.kernels.batch_exact`), a row first tries the
ball of the previous row's support names (their circumsphere, certified by its affine
weights and the farthest vertex), then the working-set ball over its vertices.

Every radius bounds the true vertices, not only their computed copies: a corner is exact,
and a crossing, computed from ``a^T q`` at the corner q it leaves, is within its ``slack``
of the true crossing on the same edge (the rounding of ``a^T q`` over ``|a_j|``, plus the
interpolation's, and never more than the edge); the radius is ``max_j (||v_j - c|| +
slack_j)``. The dual lower bound loses the support's slack. A row this kernel does not
certify is handed back (its flag) to the row-by-row route.
"""

from __future__ import annotations

import math

import numpy as np

from .batch_exact import ADD, FLAG_DONE, FLAG_EMPTY, FLAG_TOO_MANY, FLAG_UNCERTIFIED, _canonical, _distances2, _farthest, _settle, _sphere
from .cuts import _slab_fill
from .jit import jit

__all__ = ["slab_rows"]



@jit
def slab_rows(a, lo, hi, Lw, Uw, Tol, order, capacity, gap, centers, radii, lowers, n_vertices, flags):
    """The rows ``order`` of the slabs ``Lw[row] <= a^T x <= Uw[row]`` (tolerances ``Tol``):
    for each, its vertices, the ball of the previous row's support names if it certifies,
    else the working-set ball, and the certificate (module docstring). Outputs per row:
    ``centers``, ``radii``, ``lowers``, ``n_vertices`` and ``flags`` (the ``FLAG_*`` of
    :mod:`chebcenter.kernels.batch_exact`: FLAG_DONE, or the row is left to the caller)."""
    d = lo.size
    n_corner = np.int64(1) << np.int64(d)
    size = min(capacity, 4 * n_corner)
    VT = np.empty((d, size))
    sig = np.empty(size, dtype=np.int64)
    slack = np.empty(size)
    snap = np.zeros(size, dtype=np.bool_)
    d2 = np.empty(size)
    where = np.full(n_corner * (2 * d + 1), -1, dtype=np.int64)   # a name's vertex in this row
    x = np.empty(d)
    cap_w = d + 2 + ADD
    W = np.empty(cap_w, dtype=np.int64)
    prev = np.empty(cap_w, dtype=np.int64)
    n_prev = 0
    cw = np.empty(d)
    lam = np.empty(cap_w)
    work = np.empty((cap_w, cap_w))
    rhs = np.empty(cap_w)
    sol = np.empty(cap_w)
    start = np.empty(d)
    c_prev = np.empty(d)
    have_prev = False
    topj = np.empty(ADD, dtype=np.int64)
    maxit = 200 * (d + 2) + 1000
    for at in range(order.size):
        row = order[at]
        count = _slab_fill(a, lo, hi, Lw[row], Uw[row], Tol[row], VT, sig, slack, x)
        if count > capacity:
            flags[row] = FLAG_TOO_MANY
            n_prev = 0
            continue
        if count > VT.shape[1]:
            size = min(capacity, max(count, 2 * VT.shape[1]))
            VT = np.empty((d, size))
            sig = np.empty(size, dtype=np.int64)
            slack = np.empty(size)
            snap = np.zeros(size, dtype=np.bool_)
            d2 = np.empty(size)
            count = _slab_fill(a, lo, hi, Lw[row], Uw[row], Tol[row], VT, sig, slack, x)
        if count == 0:
            flags[row] = FLAG_EMPTY
            n_prev = 0
            continue
        V = VT.T   # vertex j is V[j] (a view: the ball's small solves read its rows)
        for j in range(count):
            where[sig[j]] = j
        for i in range(d):
            s = 0.0
            for j in range(count):
                s += VT[i, j]
            start[i] = s / count
        # the previous row's support, by name (the warm start of the equality case's batch)
        k0 = 0
        for q in range(n_prev):
            if where[prev[q]] >= 0:
                W[k0] = where[prev[q]]
                k0 += 1
        warm, radius, low = False, math.inf, 0.0
        if k0 == n_prev and k0 >= 2:
            _canonical(sig, snap, count, W, k0)
            radius, low, warm = _sphere(V, count, W, k0, gap, cw, lam, work, rhs, sol, VT, d2)
        k_all = k0
        if not warm and have_prev and k0 + ADD <= W.size:
            # the farthest vertices from the last row's center join the names found: the
            # support moves between neighbouring slabs, and these are where it moves to
            # (4.7 working-set rounds a row on a rounded release's slabs, against 6.4 without them)
            _farthest(V, count, c_prev, sig, W, k0, -1.0, topj, VT, d2)
            for q in range(ADD):
                if topj[q] >= 0:
                    W[k_all] = topj[q]
                    k_all += 1
        c, _, low, ks, certified = _settle(V, count, sig, snap, c_prev if have_prev else start, gap, W, k_all, k0,
                                           maxit, VT, d2, warm, radius, low, cw, lam, work, rhs, sol)
        if certified:
            for i in range(d):
                c_prev[i] = c[i]
        have_prev = certified
        for j in range(count):
            where[sig[j]] = -1
        n_prev = ks if certified else 0
        for q in range(n_prev):
            prev[q] = sig[W[q]]
        if not certified:
            flags[row] = FLAG_UNCERTIFIED
            continue
        _distances2(VT, count, c, d2)
        out = 0.0
        for j in range(count):
            out = max(out, math.sqrt(d2[j]) + slack[j])
        delta = 0.0
        for q in range(ks):
            delta = max(delta, slack[W[q]])
        low = max(0.0, min(low, out) - delta)
        if not out - low <= gap * (1.0 + out):
            flags[row] = FLAG_UNCERTIFIED
            continue
        for i in range(d):
            centers[row, i] = c[i]
        radii[row] = out
        lowers[row] = low
        n_vertices[row] = count
        flags[row] = FLAG_DONE
