"""Compiled vertex enumeration of ``S_F = {x : Vr x = beta, lo <= x <= hi}``.

Private module: float64/int64 arrays only, no validation.

With ``Vr`` (r x d, orthonormal rows) and ``beta = Vr q``, a point of S_F is a vertex iff
it is a basic solution: some set F of r coordinates with ``Vr[:, F]`` invertible carries
``x_F = Vr[:, F]^{-1} (beta - Vr[:, N] x_N)`` and every other coordinate sits at a bound,
``x_N in {lo_N, hi_N}``. :func:`enumerate_vertices` visits every basis F and walks the
bound patterns depth first, one nonbasic coordinate per level (each step an update
``x_F -= (hi_j - lo_j) G[:, j]`` with ``G = Vr[:, F]^{-1} Vr[:, N]``), pruning a branch as
soon as the range still reachable by some basic coordinate misses its bounds, so only a
small part of the ``2^(d-r)`` patterns is visited. The walk of one basis (:func:`_walk_basis`)
is shared with the batch route (:mod:`chebcenter.kernels.batch_tables`), which also records
each solution's bound pattern (:func:`_record`).
:func:`chebcenter.kernels.edge_walk.pivot_vertices` walks the edges of the polytope from one
vertex instead.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import argsort_stable
from .simplex import _factor_basis

__all__ = ["candidate_count", "distinct_rows", "enumerate_vertices"]

def candidate_count(d: int, r: int) -> int:
    """Number of (basis, bound pattern) pairs the enumeration visits: ``C(d, r) 2^(d-r)``."""
    return math.comb(d, r) * 2 ** (d - r)


@jit
def _lu_inverse(M, out, pivot_tol):
    """``out = M^{-1}`` by Gauss-Jordan with partial pivoting; False if a pivot
    is below ``pivot_tol`` (the basis is singular to working precision)."""
    r = M.shape[0]
    T = np.empty((r, 2 * r))
    for i in range(r):
        for j in range(r):
            T[i, j] = M[i, j]
    return _invert_in_place(T, out, pivot_tol, np.zeros(r), np.empty(r, dtype=np.int64))


@jit
def _invert_in_place(T, out, pivot_tol, rhs, order):
    """:func:`_lu_inverse` of the matrix in the left half of the tableau ``T`` (r x 2r),
    by the simplex's elimination (:func:`chebcenter.kernels.simplex._factor_basis`) on
    ``[M | I]``: the tableau is overwritten, ``rhs`` and ``order`` (r) are work arrays. No
    allocation: the edge walk inverts one small basis per distinct basis it meets."""
    r = T.shape[0]
    for i in range(r):
        rhs[i] = 0.0
        order[i] = i
        for j in range(r):
            T[i, r + j] = 1.0 if i == j else 0.0
    if not _factor_basis(T, rhs, order, pivot_tol):
        return False
    for i in range(r):
        for j in range(r):
            out[i, j] = T[i, r + j]
    return True


@jit
def _basis_steps(Vr, lo, hi, comb, pivot_tol, binv, nonbasic, G, neg, pos, basis, is_basic, nbl, Gl, influence):
    """The tables of the depth-first walk for the basis F = ``comb``, which do not depend on
    the right-hand side: ``binv = Vr[:, F]^{-1}``, the nonbasic coordinates ``nonbasic`` in
    branching order, the step table ``G = binv Vr[:, N]`` in that order and the suffix sums
    ``neg``/``pos`` that bound the moves still to come (:func:`enumerate_vertices`,
    :func:`chebcenter.kernels.batch_tables.basis_tables`). False, with only ``binv`` written,
    when the basis is singular; ``basis``, ``is_basic``, ``nbl``, ``Gl`` and ``influence``
    are work arrays."""
    r, d = Vr.shape
    p = d - r
    for a in range(r):
        for k in range(r):
            basis[a, k] = Vr[a, comb[k]]
    if not _lu_inverse(basis, binv, pivot_tol):
        return False
    for i in range(d):
        is_basic[i] = False
    for k in range(r):
        is_basic[comb[k]] = True
    j = 0
    for i in range(d):
        if not is_basic[i]:
            nbl[j] = i
            j += 1
    for a in range(r):
        for jj in range(p):
            s = 0.0
            for k in range(r):
                s += binv[a, k] * Vr[k, nbl[jj]]
            Gl[a, jj] = s
    # with several basic coordinates, branch first on the nonbasic coordinates that
    # move them most: the reachability test then prunes at shallow depth
    # (measured 1.7-2x faster at r = 5; with r = 1 every leaf is a vertex and the
    # reordering only costs, 2x slower at d = 16)
    for jj in range(p if r >= 2 else 0):
        m_ = 0.0
        for a in range(r):
            m_ = max(m_, abs(Gl[a, jj]))
        influence[jj] = -m_ * (hi[nbl[jj]] - lo[nbl[jj]])
    order = argsort_stable(influence) if r >= 2 else np.arange(p)
    for jj in range(p):
        nonbasic[jj] = nbl[order[jj]]
        for a in range(r):
            G[a, jj] = Gl[a, order[jj]]
    # neg/pos[L]: the sums over j >= L of min/max(0, -(hi_j - lo_j) G[a, j])
    for a in range(r):
        neg[p, a] = 0.0
        pos[p, a] = 0.0
    for L in range(p - 1, -1, -1):
        width = hi[nonbasic[L]] - lo[nonbasic[L]]
        for a in range(r):
            step = -width * G[a, L]
            neg[L, a] = neg[L + 1, a] + min(0.0, step)
            pos[L, a] = pos[L + 1, a] + max(0.0, step)
    return True


@jit
def _place_basic(V, count, i, v, lo, hi, tol, pow3):
    """Write the basic coordinate ``i`` of candidate ``count`` (the value ``v`` clipped into
    its bounds); returns its part of the pattern code (0 at lo, 1 at hi, 2 inside: within
    ``tol`` of a bound counts as at it), whether ``v`` was in the box, and whether it was
    snapped to a bound."""
    V[count, i] = min(max(v, lo[i]), hi[i])
    inside = lo[i] <= v <= hi[i]
    if v - lo[i] <= tol[i]:
        return np.int64(0), inside, True
    if hi[i] - v <= tol[i]:
        return pow3[i], inside, True
    return 2 * pow3[i], inside, False


@jit
def _record(V, count, t, combs, vals, code, lo, hi, tol, pow3, sig, snap, inbox, route):
    """Finish candidate ``count`` of basis ``t``, whose nonbasic coordinates are written and
    give the pattern code ``code``: its basic coordinates ``vals`` placed by
    :func:`_place_basic`, then its pattern ``sig``, ``snap``, ``inbox`` and ``route``."""
    inside = True
    snapped = False
    for a in range(combs.shape[1]):
        part, inside_a, snapped_a = _place_basic(V, count, combs[t, a], vals[a], lo, hi, tol, pow3)
        code += part
        inside = inside and inside_a
        snapped = snapped or snapped_a
    sig[count] = code
    snap[count] = snapped
    inbox[count] = inside
    route[count] = t


@jit
def _walk_basis(t, x0, combs, nonbasic, G, neg, pos, lo, hi, tol, V, count, cur, choice,
                record, pow3, sig, snap, inbox, route):
    """The depth-first walk of one basis F = ``combs[t]`` (its tables ``nonbasic``, ``G``,
    ``neg``, ``pos`` from :func:`_basis_steps`) from ``x0``, the basic coordinates with every
    nonbasic one at its lower bound: each bound pattern that keeps every basic coordinate
    within ``tol`` of its bounds is written to ``V[count:]``, basic coordinates clipped into
    the box. With ``record``, each is finished by :func:`_record` (pattern code, ``sig``,
    ``snap``, ``inbox``, ``route``); without, those arrays and ``pow3`` are not read (the
    codes, ``3^i``, overflow for d > 39). Returns the new count, -1 past the capacity of
    ``V``. ``cur`` ((p + 1) x r) and ``choice`` (p + 1) are work arrays. Callers pass
    ``record`` as a literal: numba then compiles one walk per value, without the other
    leaf action (as a runtime flag it made :func:`enumerate_vertices` 5-10% slower).

    The branch at level L sets nonbasic coordinate L at lo or hi, moving the basic ones by
    ``x_F -= (hi_j - lo_j) G[:, j]``; it is pruned as soon as some basic coordinate can no
    longer reach its bounds, the moves still to come spanning the suffix sums
    ``neg[L + 1]``/``pos[L + 1]``."""
    r = combs.shape[1]
    p = nonbasic.size
    cap = V.shape[0]
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
            for jj in range(p):
                i = nonbasic[jj]
                V[count, i] = hi[i] if choice[jj] == 1 else lo[i]
                if record:
                    code += choice[jj] * pow3[i]
            if record:
                _record(V, count, t, combs, cur[p], code, lo, hi, tol, pow3, sig, snap, inbox, route)
            else:
                for a in range(r):
                    i = combs[t, a]
                    V[count, i] = min(max(cur[p, a], lo[i]), hi[i])
            count += 1
            L -= 1
            continue
        choice[L] += 1
        if choice[L] > 1:
            choice[L] = -1
            L -= 1
            continue
        width = hi[nonbasic[L]] - lo[nonbasic[L]]
        go = True
        for a in range(r):
            v = cur[L, a] - choice[L] * width * G[a, L]
            cur[L + 1, a] = v
            i = combs[t, a]
            if v + pos[L + 1, a] < lo[i] - tol[i] or v + neg[L + 1, a] > hi[i] + tol[i]:
                go = False
        if go:
            L += 1
    return count


@jit
def enumerate_vertices(Vr, beta, lo, hi, capacity, feas_tol, pivot_tol):
    """All basic feasible solutions of ``{x : Vr x = beta, lo <= x <= hi}``.

    Returns ``(V, count)`` with ``V[:count]`` the solutions (one per basis and
    bound pattern, so degenerate vertices repeat), basic coordinates clipped
    into the box after the ``feas_tol`` test. ``feas_tol`` is per coordinate (an array
    of d tolerances): a coordinate a millionth as wide as the others is judged at its
    own scale, not allowed a slack larger than its width. ``count = -1`` means more than
    ``capacity`` solutions were found (the caller reports TOO_LARGE).
    """
    r, d = Vr.shape
    p = d - r
    V = np.empty((capacity, d))
    count = np.int64(0)
    combs = np.arange(r).reshape(1, r)
    comb = combs[0]
    basis = np.empty((r, r))
    binv = np.empty((r, r))
    nonbasic = np.empty(p, dtype=np.int64)
    G = np.empty((r, p))
    Gl = np.empty((r, p))
    nbl = np.empty(p, dtype=np.int64)
    influence = np.empty(p)
    x0 = np.empty(r)
    choice = np.full(p + 1, -1, dtype=np.int64)
    cur = np.empty((p + 1, r))
    neg = np.empty((p + 1, r))
    pos = np.empty((p + 1, r))
    is_basic = np.zeros(d, dtype=np.bool_)
    no_int = np.empty(0, dtype=np.int64)
    no_bool = np.empty(0, dtype=np.bool_)
    while True:
        if _basis_steps(Vr, lo, hi, comb, pivot_tol, binv, nonbasic, G, neg, pos, basis, is_basic, nbl, Gl,
                        influence):
            # x0 = B^{-1}(beta - Vr[:, N] lo_N)
            for a in range(r):
                s = 0.0
                for k in range(r):
                    t = beta[k]
                    for jj in range(p):
                        t -= Vr[k, nonbasic[jj]] * lo[nonbasic[jj]]
                    s += binv[a, k] * t
                x0[a] = s
            # prune the basis if some basic coordinate cannot reach [lo, hi] whatever the pattern
            reachable = True
            for a in range(r):
                i = comb[a]
                if x0[a] + pos[0, a] < lo[i] - feas_tol[i] or x0[a] + neg[0, a] > hi[i] + feas_tol[i]:
                    reachable = False
            if reachable:
                count = _walk_basis(np.int64(0), x0, combs, nonbasic, G, neg, pos, lo, hi, feas_tol, V, count, cur, choice,
                                    False, no_int, no_int, no_bool, no_bool, no_int)
                if count < 0:
                    return V, -1
        # next combination of r out of d (lexicographic)
        k = r - 1
        while k >= 0 and comb[k] == d - r + k:
            k -= 1
        if k < 0:
            break
        comb[k] += 1
        for t in range(k + 1, r):
            comb[t] = comb[t - 1] + 1
    return V, count



def distinct_rows(V, tol):
    """The rows of V with duplicates (equal to within about ``tol``, a scalar or one
    tolerance per coordinate) removed, first occurrences kept in order."""
    if V.shape[0] <= 1:
        return V.copy()
    # the rows' grid keys sorted lexicographically (stable: the first occurrence leads its run
    # of equal keys); np.unique(axis=0) gives the same rows but sorts a structured view, 4x
    # slower on the 28 000 clustered vertices of a thin set (70 against 17 ms, d = 17)
    K = np.round(V / tol)
    order = np.lexsort(K.T[::-1])
    Ks = K[order]
    lead = np.ones(K.shape[0], dtype=bool)
    lead[1:] = np.any(Ks[1:] != Ks[:-1], axis=1)
    return V[np.sort(order[lead])]
