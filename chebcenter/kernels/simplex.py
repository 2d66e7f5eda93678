"""Compiled feature ranges: ``[min x_i, max x_i]`` over ``S_F`` for every coordinate.

Private module (float64 arrays only), on the normalised problem
``{x : V x = beta, lo <= x <= hi}`` with V the r x d orthonormal rows of the thin SVD.

* r = 1 (one equation ``v^T x = beta``): closed form. ``x_i`` can take exactly the values
  ``t`` in ``[lo_i, hi_i]`` for which ``beta - v_i t`` lies in the range of
  ``sum_{j != i} v_j x_j`` over the box, ``[L - l_i, U - u_i]`` with ``L``, ``U`` the sums
  of ``min``/``max(v_j lo_j, v_j hi_j)`` over all j and ``l_i``, ``u_i`` coordinate i's
  terms: an interval intersection, O(d) for all coordinates together (the fractional
  knapsack bound, without sorting).
* r >= 2: a bounded-variable primal simplex on a dense r x (d + r) tableau. Phase 1 starts
  from ``x = lo`` with one artificial variable per equation; phase 2 then maximises and
  minimises each coordinate in turn, each LP warm-started from the previous optimal
  basis (only the objective changes), so a row costs a few pivots per coordinate.
  Bland's rule (smallest index enters, ties leave by smallest index) rules out cycling.

Statuses per row: RANGES_OK, RANGES_EMPTY (phase 1 ends with a positive infeasibility:
the caller has usually decided emptiness before), RANGES_FAILED (pivot budget or a
vanishing pivot).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit, jit_noalloc
from .linalg import EPS

__all__ = ["RANGES_EMPTY", "RANGES_FAILED", "RANGES_OK", "lp_max", "lp_max_warm", "range_rows", "simplex_state"]

RANGES_OK, RANGES_EMPTY, RANGES_FAILED = 0, 1, 2
_PIVOT_TOL = 1e-11
_COST_TOL = 1e-12
_FEAS_TOL = 1e-9


@jit
def _knapsack(v, beta, lo, hi, lower, upper):
    """One equation ``v^T x = beta``: the exact range of every coordinate (see module)."""
    d = v.size
    L = 0.0
    U = 0.0
    for j in range(d):
        a, b = v[j] * lo[j], v[j] * hi[j]
        L += min(a, b)
        U += max(a, b)
    for i in range(d):
        a, b = v[i] * lo[i], v[i] * hi[i]
        rest_lo = L - min(a, b)   # range of sum_{j != i} v_j x_j
        rest_hi = U - max(a, b)
        if v[i] == 0.0:
            lower[i], upper[i] = lo[i], hi[i]
            continue
        # v_i t = beta - rest with rest in [rest_lo, rest_hi]
        t1 = (beta - rest_hi) / v[i]
        t2 = (beta - rest_lo) / v[i]
        lower[i] = max(lo[i], min(t1, t2))
        upper[i] = min(hi[i], max(t1, t2))
        if lower[i] > upper[i]:  # rounding on a slice that only touches the box
            mid = 0.5 * (lower[i] + upper[i])
            lower[i] = upper[i] = min(max(mid, lo[i]), hi[i])
    return RANGES_OK


@jit_noalloc
def _pivot(T, rhs, basis, row, col):
    """Gauss-Jordan pivot of the tableau ``[T | rhs]`` on ``(row, col)``."""
    r, n = T.shape
    inv = 1.0 / T[row, col]
    for j in range(n):
        T[row, j] *= inv
    rhs[row] *= inv
    for k in range(r):
        if k != row:
            f = T[k, col]
            if f != 0.0:
                for j in range(n):
                    T[k, j] -= f * T[row, j]
                rhs[k] -= f * rhs[row]
    basis[row] = col


@jit_noalloc
def _basic_values(T, rhs, basis, where, x):
    """``x_B = B^{-1} beta - sum_{j nonbasic} (B^{-1} a_j) x_j`` (recomputed: no drift)."""
    r, n = T.shape
    for k in range(r):
        s = rhs[k]
        for j in range(n):
            if where[j] != 0:
                s -= T[k, j] * x[j]
        x[basis[k]] = s


@jit_noalloc
def _simplex(T, rhs, basis, where, x, lo, hi, c, max_pivots):
    """Maximise ``c^T x`` from the current basic feasible solution (Bland's rule).

    ``where[j]`` is -1 (nonbasic at lo), +1 (nonbasic at hi) or 0 (basic). Returns True
    at an optimum, False when the pivot budget runs out or a pivot vanishes."""
    r, n = T.shape
    for _ in range(max_pivots):
        enter = np.int64(-1)  # typed int64, not Literal[-1]: see chebcenter.kernels.jit
        direction = 0.0
        for j in range(n):
            if where[j] == 0 or lo[j] == hi[j]:
                continue
            dj = c[j]
            for k in range(r):
                dj -= c[basis[k]] * T[k, j]
            if where[j] < 0 and dj > _COST_TOL:
                enter, direction = j, 1.0
                break
            if where[j] > 0 and dj < -_COST_TOL:
                enter, direction = j, -1.0
                break
        if enter < 0:
            return True
        theta = hi[enter] - lo[enter]  # a bound flip of the entering variable
        leave = np.int64(-1)
        leave_to = 0
        for k in range(r):
            rate = -direction * T[k, enter]  # d x_{basis[k]} / d theta
            b = basis[k]
            if rate < -_PIVOT_TOL:
                lim = max(x[b] - lo[b], 0.0) / -rate
                if lim < theta or (lim == theta and leave >= 0 and b < basis[leave]):
                    theta, leave, leave_to = lim, k, -1
            elif rate > _PIVOT_TOL:
                lim = max(hi[b] - x[b], 0.0) / rate
                if lim < theta or (lim == theta and leave >= 0 and b < basis[leave]):
                    theta, leave, leave_to = lim, k, 1
        if not math.isfinite(theta):
            return False
        x[enter] += direction * theta
        for k in range(r):
            x[basis[k]] -= direction * theta * T[k, enter]
        if leave < 0:  # bound flip, the basis stays
            where[enter] = 1 if direction > 0 else -1
            x[enter] = hi[enter] if direction > 0 else lo[enter]
            continue
        out = basis[leave]
        _pivot(T, rhs, basis, leave, enter)
        where[enter] = 0
        where[out] = leave_to
        x[out] = lo[out] if leave_to < 0 else hi[out]
        _basic_values(T, rhs, basis, where, x)
    return False


@jit
def simplex_state(r, d):
    """Buffers of a bounded simplex over d variables and r equations (+ r artificials):
    ``(T, rhs, basis, where, x, blo, bhi)``, the tableau zeroed."""
    n = d + r
    return (np.zeros((r, n)), np.empty(r), np.empty(r, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(n), np.empty(n), np.empty(n))


@jit
def _phase1(V, beta, lo, hi):
    """A basic feasible solution of ``{V x = beta, lo <= x <= hi}`` (artificials fixed at 0).

    Returns ``(status, T, rhs, basis, where, x, blo, bhi)``; status RANGES_OK, RANGES_EMPTY or
    RANGES_FAILED."""
    r, d = V.shape
    n = d + r
    T, rhs, basis, where, x, blo, bhi = simplex_state(r, d)
    for j in range(d):
        blo[j], bhi[j] = lo[j], hi[j]
        x[j] = lo[j]
        where[j] = -1
    for k in range(r):
        res = beta[k]
        for j in range(d):
            res -= V[k, j] * lo[j]
        sgn = 1.0 if res >= 0.0 else -1.0
        for j in range(d):
            T[k, j] = sgn * V[k, j]
        T[k, d + k] = 1.0
        rhs[k] = sgn * beta[k]
        basis[k] = d + k
        where[d + k] = 0
        x[d + k] = abs(res)
        blo[d + k], bhi[d + k] = 0.0, np.inf
    c = np.zeros(n)
    for k in range(r):
        c[d + k] = -1.0
    if not _simplex(T, rhs, basis, where, x, blo, bhi, c, 50 * n):
        return RANGES_FAILED, T, rhs, basis, where, x, blo, bhi
    infeas = 0.0
    for k in range(r):
        infeas += x[d + k]
    bmax = 0.0
    for k in range(r):
        bmax = max(bmax, abs(beta[k]))
    if infeas > _FEAS_TOL * (1.0 + bmax):
        return RANGES_EMPTY, T, rhs, basis, where, x, blo, bhi
    for k in range(r):  # artificials leave the basis (degenerate pivots) and are fixed at 0
        if basis[k] >= d:
            best, col = 0.0, np.int64(-1)
            for j in range(d):
                if where[j] != 0 and abs(T[k, j]) > best:
                    best, col = abs(T[k, j]), j
            if col >= 0 and best > 1e-9:
                art = basis[k]
                _pivot(T, rhs, basis, k, col)
                where[col] = 0
                where[art] = -1
    for k in range(r):
        blo[d + k] = 0.0
        bhi[d + k] = 0.0
        if where[d + k] != 0:
            x[d + k] = 0.0
    _basic_values(T, rhs, basis, where, x)
    return RANGES_OK, T, rhs, basis, where, x, blo, bhi


@jit_noalloc
def _factor_basis(T, rhs, cols, pivot_tol):
    """Gauss-Jordan elimination with partial pivoting on the tableau ``[T | rhs]`` (r rows)
    that turns column ``cols[k]`` into ``e_k`` for k = 0..r-1, by :func:`_pivot`: with
    ``T = [B-columns ... | I]`` it leaves ``B^{-1}`` times the tableau. False, the tableau
    part-way, when a pivot is at most ``pivot_tol`` in magnitude (the columns are singular
    to working precision). Serves :func:`_refactor` and the bases' inverse of the vertex
    enumeration (:func:`chebcenter.kernels.vertices._invert_in_place`)."""
    r, n = T.shape
    for k in range(r):
        col = cols[k]
        piv = k
        best = abs(T[k, col])
        for i in range(k + 1, r):
            if abs(T[i, col]) > best:
                best = abs(T[i, col])
                piv = i
        if best <= pivot_tol:
            return False
        if piv != k:
            for j in range(n):
                t = T[k, j]
                T[k, j] = T[piv, j]
                T[piv, j] = t
            t = rhs[k]
            rhs[k] = rhs[piv]
            rhs[piv] = t
        _pivot(T, rhs, cols, k, col)
    return True


@jit_noalloc
def _refactor(V, beta, T, rhs, basis, where, x):
    """Recompute the tableau of the current basis from the data: ``[T | rhs] = B^{-1} [V I | beta]``
    (:func:`_factor_basis`), then the basic values.

    The pivots update T in place, so a basis passed on the way (phase 1 crosses bases of
    condition 1e10 on rows 2^-30 from parallel) leaves its error eps cond in T for good: 6e-6
    on a final basis of condition 3. The artificial columns are ``+e_k`` here (phase 1 signed
    them): they are fixed at 0 in phase 2, so the sign is immaterial. False on a basis
    singular to working precision (a zero pivot; the tableau is then left part-way)."""
    r, d = V.shape
    for k in range(r):
        for j in range(d):
            T[k, j] = V[k, j]
        for j in range(r):
            T[k, d + j] = 1.0 if j == k else 0.0
        rhs[k] = beta[k]
    if not _factor_basis(T, rhs, basis, 0.0):
        return False
    _basic_values(T, rhs, basis, where, x)
    return True


@jit_noalloc
def _forward_error(V, beta, T, basis, x, i):
    """A bound on ``|x_i - x*_i|`` for x* the exact basic solution of the final basis (0 when
    x_i is nonbasic: it sits at its bound). B (x*_B - x_B) = rho, the residual
    ``beta - V x_{1..d} - x_art``, so ``|x*_B - x_B| <= |B^{-1}| |rho|`` with B^{-1} the artificial
    columns of the freshly factored T, and |rho| at most the computed one plus the rounding
    of computing it, ``gamma_{d+2} (|beta| + |V| |x| + |x_art|)`` (to first order in eps cond)."""
    r, d = V.shape
    row = -1
    for k in range(r):
        if basis[k] == i:
            row = k
    if row < 0:
        return 0.0
    u = 0.5 * EPS
    gamma = (d + 2) * u / (1.0 - (d + 2) * u)
    bound = 0.0
    for k in range(r):
        res = beta[k] - x[d + k]
        mag = abs(beta[k]) + abs(x[d + k])
        for j in range(d):
            res -= V[k, j] * x[j]
            mag += abs(V[k, j] * x[j])
        bound += abs(T[row, d + k]) * (abs(res) + gamma * mag)
    return bound


@jit
def _ranges_simplex(V, beta, lo, hi, lower, upper):
    """Bounded-variable simplex ranges for one row (r >= 2); returns a RANGES_ status.

    Each optimum is confirmed on a tableau factored afresh (:func:`_refactor`; a pivot the
    fresh reduced costs still ask for runs, and the basis is factored again), and its
    endpoint is widened by the forward error of the final basic solution
    (:func:`_forward_error`), so that the interval contains the exact one of the data, up to
    the optimality tolerance on the reduced costs (``_COST_TOL``; no dual bound is added)."""
    r, d = V.shape
    status, T, rhs, basis, where, x, blo, bhi = _phase1(V, beta, lo, hi)
    if status != RANGES_OK:
        return status
    n = d + r
    budget = 50 * n
    c = np.zeros(n)
    seen = np.full(r, -1, dtype=np.int64)   # the basis last factored afresh
    for i in range(d):
        for sgn in (1.0, -1.0):
            c[i] = sgn
            fresh = False
            for _ in range(4):   # ordinary rows need 1 or 2 rounds; more means it cycles
                if not _simplex(T, rhs, basis, where, x, blo, bhi, c, budget):
                    return RANGES_FAILED
                fresh = True
                for k in range(r):
                    fresh = fresh and seen[k] == basis[k]
                    seen[k] = basis[k]
                if fresh:   # no pivot since the last factoring: T is the data's
                    break
                if not _refactor(V, beta, T, rhs, basis, where, x):
                    return RANGES_FAILED
            if not fresh:
                return RANGES_FAILED
            err = _forward_error(V, beta, T, basis, x, i)
            if sgn > 0:   # x_i + err rounded outward (nearest could land one ulp inside)
                v = np.nextafter(x[i] + err, np.inf) if err > 0.0 else x[i]
                upper[i] = min(max(v, lo[i]), hi[i])
            else:
                v = np.nextafter(x[i] - err, -np.inf) if err > 0.0 else x[i]
                lower[i] = min(max(v, lo[i]), hi[i])
        c[i] = 0.0
    return RANGES_OK


@jit
def lp_max(V, beta, lo, hi, g, out):
    """``argmax g^T x`` over ``{V x = beta, lo <= x <= hi}`` into ``out`` (a vertex); returns
    a RANGES_ status (RANGES_EMPTY: no feasible point). The compiled node LP of the
    branch and bound (docs/theory.md §6.6's simplex with one objective)."""
    r, d = V.shape
    T, rhs, basis, where, xs, blo, bhi = simplex_state(r, d)
    return lp_max_warm(V, beta, lo, hi, g, out, T, rhs, basis, where, xs, blo, bhi, np.bool_(False))


@jit
def lp_max_warm(V, beta, lo, hi, g, out, T, rhs, basis, where, xs, blo, bhi, warm):
    """:func:`lp_max` that can start from a previous optimal basis (``warm``): the state
    ``(T, rhs, basis, where, xs)`` of an earlier call on the same equations with other bounds
    and objective. The branch and bound passes its parent node's: a child changes one bound,
    of a coordinate that was basic at the parent's optimum and sits exactly at the new bound,
    so the parent's vertex stays feasible and phase 2 needs a few pivots instead of phase 1
    and phase 2 from scratch. Falls back to the cold start if the warm basis is not feasible
    or the pivots run out. Leaves the final state in the buffers; returns a RANGES_ status."""
    r, d = V.shape
    c = np.empty(d + r)
    if warm_phase2(V, lo, hi, g, out, T, rhs, basis, where, xs, blo, bhi, c, warm):
        return RANGES_OK
    return _cold_phase2(V, beta, lo, hi, out, T, rhs, basis, where, xs, blo, bhi, c)


@jit_noalloc
def warm_phase2(V, lo, hi, g, out, T, rhs, basis, where, xs, blo, bhi, c, warm):
    """The warm start of :func:`lp_max_warm` alone, in the caller's buffers (``c``: d + r).

    Sets the bounds ``blo, bhi`` and the cost ``c``; then, if ``warm``, re-solves from the
    state's basis. True if that reached the optimum (written to ``out``); False if there was
    no warm start, its basis is infeasible or the pivots ran out (the caller starts cold).
    Allocation-free and compiled without reference counting: it runs once per node of the
    branch and bound (numba's per-call reference counts of its 13 array arguments cost 12 %
    of a rank-3 node)."""
    r, d = V.shape
    n = d + r
    for j in range(d):
        blo[j], bhi[j] = lo[j], hi[j]
        c[j] = g[j]
    for k in range(r):
        blo[d + k], bhi[d + k] = 0.0, 0.0
        c[d + k] = 0.0
    if not warm:
        return False
    for j in range(n):
        if where[j] < 0:
            xs[j] = blo[j]
        elif where[j] > 0:
            xs[j] = bhi[j]
    _basic_values(T, rhs, basis, where, xs)
    for k in range(r):
        b = basis[k]
        tol = _FEAS_TOL * (1.0 + abs(blo[b]) + abs(bhi[b]))
        if not (blo[b] - tol <= xs[b] <= bhi[b] + tol):
            return False
    return _phase2_into(T, rhs, basis, where, xs, blo, bhi, c, lo, hi, out)


@jit_noalloc
def _phase2_into(T, rhs, basis, where, xs, blo, bhi, c, lo, hi, out):
    """Phase 2 from the state's basic feasible solution; at the optimum its first d
    coordinates, clipped to ``[lo, hi]``, go to ``out``. False if the pivots run out."""
    if not _simplex(T, rhs, basis, where, xs, blo, bhi, c, 50 * T.shape[1]):
        return False
    for j in range(out.size):
        out[j] = min(max(xs[j], lo[j]), hi[j])
    return True


@jit
def _cold_phase2(V, beta, lo, hi, out, T, rhs, basis, where, xs, blo, bhi, c):
    """Phase 1 from scratch, then phase 2 for the cost ``c`` with the bounds ``blo, bhi``
    that :func:`warm_phase2` set; the final state goes to the buffers."""
    r, d = V.shape
    n = d + r
    status, T0, rhs0, basis0, where0, x0, blo0, bhi0 = _phase1(V, beta, lo, hi)
    if status != RANGES_OK:
        return status
    for k in range(r):
        rhs[k] = rhs0[k]
        basis[k] = basis0[k]
        for j in range(n):
            T[k, j] = T0[k, j]
    for j in range(n):
        where[j] = where0[j]
        xs[j] = x0[j]
    return RANGES_OK if _phase2_into(T, rhs, basis, where, xs, blo, bhi, c, lo, hi, out) else RANGES_FAILED


@jit
def range_rows(V, Beta, lo, hi, Lower, Upper, status):
    """Ranges of every coordinate over ``{V x = Beta[n], lo <= x <= hi}`` for each row n."""
    r = V.shape[0]
    for n in range(Beta.shape[0]):
        if r == 0:
            for i in range(lo.size):  # loops, not Lower[n] = lo: the shape check's error
                Lower[n, i] = lo[i]   # formatting costs 2 s of compilation
                Upper[n, i] = hi[i]
            status[n] = RANGES_OK
        elif r == 1:
            status[n] = _knapsack(V[0], Beta[n, 0], lo, hi, Lower[n], Upper[n])
        else:
            status[n] = _ranges_simplex(V, Beta[n], lo, hi, Lower[n], Upper[n])
