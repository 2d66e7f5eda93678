"""Compiled RCC2 on bounded-error sets without equation rows: the projection of the box
center onto ``S = {x in [-w, w] : L <= A x <= U}`` by exact coordinate ascent on its dual,
with a radius certified at whatever dual point it stops (docs/theory.md §8.5).

Private module: float64/int64 arrays only, no validation.

With ``mu`` one multiplier per interval row (positive: the upper side binds, negative: the
lower), the Lagrangian's minimiser over the box is ``x(mu) = clip(-A^T mu)`` and the dual
function is ``g(mu) = ||x||^2 / 2 + mu^T A x - sum_j (mu_j^+ U_j - mu_j^- L_j)``, concave.
Maximising it over one ``mu_j`` at a time is a monotone piecewise-linear equation in one
variable: ``phi(t) = a_j^T clip(v - a_j t)`` must equal U_j (t > 0) or L_j (t < 0), or lie
between them at t = 0. It is solved exactly on its breakpoints. With one row that is the
answer; with several, each sweep is followed by a semismooth Newton step on the binding rows,
taken when it raises g (coordinate ascent alone crawls on correlated rows).

**The certificate holds at any mu.** For c = x(mu), every y in S has ``||y||^2 <= H =
sum w_i^2``, and ``y^T c >= lb(mu)``, the Lagrangian bound ``min_{y in box} y^T (c + A^T mu)
- sum_j (mu_j^+ U_j - mu_j^- L_j)`` (closed form, coordinate by coordinate). So
``||y - c||^2 <= H - 2 lb + ||c||^2`` for every y in S, whether or not the sweeps have
converged. At the optimum, ``lb = ||c||^2`` and this is RCC2's own ``H - ||c||^2``. A row is
OPTIMAL when c lies in S (to the rows' tolerances) and the gap ``||c||^2 - lb`` is within
``gap`` of H. Otherwise the caller solves it as a QP.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import EPS
from .qp import _lu_solve

__all__ = ["RCC2_OPTIMAL", "box_qp_patterns", "rcc2_interval_rows"]

RCC2_OPTIMAL = 0
#: the sweeps stopped, or c is outside S: the caller solves the row as a QP
RCC2_UNCERTIFIED = 1



@jit
def _phi(a, v, w, t):
    """``a^T clip(v - a t, -w, w)``."""
    s = 0.0
    for i in range(a.size):
        s += a[i] * min(max(v[i] - a[i] * t, -w[i]), w[i])
    return s


@jit
def _solve_1d(a, v, w, lower, upper, bp):
    """The exact maximiser over t of the dual along one row (module docstring): 0 when
    ``phi(0)`` is within ``[lower, upper]``, else the t where the nonincreasing ``phi``
    meets the violated side (its breakpoints sorted, the bracketing segment found by
    bisection, the linear piece solved). NaN when phi never reaches it."""
    f0 = _phi(a, v, w, 0.0)
    if lower <= f0 <= upper:
        return 0.0
    target = upper if f0 > upper else lower
    up = f0 > upper    # phi decreases in t: t > 0 lowers it to upper
    n = 0
    for i in range(a.size):
        if a[i] != 0.0:
            for edge in (-w[i], w[i]):
                t = (v[i] - edge) / a[i]
                if (t > 0.0) == up and t != 0.0:
                    bp[n] = t if up else -t
                    n += 1
    if n == 0:
        return math.nan
    pts = np.sort(bp[:n])      # distances from 0 along the direction
    sign = 1.0 if up else -1.0
    # the first breakpoint at or beyond the target (phi monotone along the direction)
    lo_k, hi_k = -1, n - 1
    f_last = _phi(a, v, w, sign * pts[n - 1])
    if (f_last > target) if up else (f_last < target):
        return math.nan
    while hi_k - lo_k > 1:
        mid = (lo_k + hi_k) // 2
        f = _phi(a, v, w, sign * pts[mid])
        if (f > target) if up else (f < target):
            lo_k = mid
        else:
            hi_k = mid
    t0 = 0.0 if lo_k < 0 else pts[lo_k]
    t1 = pts[hi_k]
    f0 = _phi(a, v, w, sign * t0)
    f1 = _phi(a, v, w, sign * t1)
    if f0 == f1:
        return sign * t1
    # linear between t0 and t1
    t = t0 + (t1 - t0) * (f0 - target) / (f0 - f1)
    return sign * min(max(t, t0), t1)


@jit
def _dual_value(A, w, v, mu, lower, upper):
    """``g(mu)`` with ``v = -A^T mu`` (module docstring)."""
    g = 0.0
    for i in range(v.size):
        x = min(max(v[i], -w[i]), w[i])
        g += 0.5 * x * x - v[i] * x
    for j in range(mu.size):
        g -= mu[j] * upper[j] if mu[j] > 0.0 else mu[j] * lower[j]
    return g


@jit
def _newton(A, w, v, mu, lower, upper, M, rhs, idx, trial, vt):
    """One semismooth Newton step on the rows with ``mu_j != 0`` (their sides held), with the
    coordinates that ``clip(v)`` leaves free: ``(A_JF A_JF^T) delta = A_J x - t_J``. Taken
    (``mu``, ``v`` updated; a multiplier that would change sign stops at 0) when it raises
    the dual, which the coordinate sweeps then keep raising; returns whether it was."""
    m, d = A.shape
    k = 0
    for j in range(m):
        if mu[j] != 0.0:
            idx[k] = j
            k += 1
    if k == 0:
        return False
    for a in range(k):
        ja = idx[a]
        s = 0.0
        for i in range(d):
            s += A[ja, i] * min(max(v[i], -w[i]), w[i])
        rhs[a] = s - (upper[ja] if mu[ja] > 0.0 else lower[ja])
        for b in range(k):
            jb = idx[b]
            t = 0.0
            for i in range(d):
                if -w[i] < v[i] < w[i]:
                    t += A[ja, i] * A[jb, i]
            M[a, b] = t
    delta, solved = _lu_solve(M, rhs, k)
    if not solved:
        return False
    for j in range(m):
        trial[j] = mu[j]
    for a in range(k):
        ja = idx[a]
        t = mu[ja] + delta[a]
        trial[ja] = t if (t > 0.0) == (mu[ja] > 0.0) else 0.0
    for i in range(d):
        s = 0.0
        for j in range(m):
            s -= A[j, i] * trial[j]
        vt[i] = s
    if _dual_value(A, w, vt, trial, lower, upper) < _dual_value(A, w, v, mu, lower, upper):
        return False
    for j in range(m):
        mu[j] = trial[j]
    for i in range(d):
        v[i] = vt[i]
    return True


@jit
def rcc2_interval_rows(A, w, Lw, Uw, Tol, maxit, gap, X, R, status):
    """RCC2 on the rows of ``Lw <= A x <= Uw`` (A: m x d, unit rows; the box ``[-w, w]``):
    center ``X[r]``, certified radius ``R[r]`` (module docstring) and ``status[r]``
    (RCC2_OPTIMAL, or RCC2_UNCERTIFIED: the caller solves the row as a QP)."""
    m, d = A.shape
    n = Lw.shape[0]
    H = 0.0
    for i in range(d):
        H += w[i] * w[i]
    mu = np.empty(m)
    v = np.empty(d)
    base = np.empty(d)
    c = np.empty(d)
    bp = np.empty(2 * d)
    M = np.empty((m, m))
    rhs = np.empty(m)
    idx = np.empty(m, dtype=np.int64)
    trial = np.empty(m)
    vt = np.empty(d)
    for r in range(n):
        for j in range(m):
            mu[j] = 0.0
        for i in range(d):
            v[i] = 0.0
        converged = False
        bad = False
        for _ in range(maxit):
            change = 0.0
            size = 0.0
            for j in range(m):
                for i in range(d):
                    base[i] = v[i] + A[j, i] * mu[j]
                t = _solve_1d(A[j], base, w, Lw[r, j], Uw[r, j], bp)
                if not math.isfinite(t):
                    bad = True
                    break
                for i in range(d):
                    v[i] = base[i] - A[j, i] * t
                change = max(change, abs(t - mu[j]))
                size = max(size, abs(t))
                mu[j] = t
            if bad:
                break
            if change <= 1e-15 * (1.0 + size):
                converged = True
                break
            if m > 1:   # a sweep settles the sides; Newton then finds the multipliers
                _newton(A, w, v, mu, Lw[r], Uw[r], M, rhs, idx, trial, vt)
        if bad:
            status[r] = RCC2_UNCERTIFIED
            R[r] = math.nan
            continue
        # c = x(mu), and the Lagrangian bound lb <= y^T c over S
        cc = 0.0
        lb = 0.0
        mag = H
        for i in range(d):
            c[i] = min(max(v[i], -w[i]), w[i])
            cc += c[i] * c[i]
            g = c[i] - v[i]         # c + A^T mu, with A^T mu = -v
            lb -= w[i] * abs(g)     # min over y_i in [-w_i, w_i] of y_i g
            mag += w[i] * abs(g)
        for j in range(m):
            if mu[j] > 0.0:
                lb -= mu[j] * Uw[r, j]
                mag += abs(mu[j] * Uw[r, j])
            elif mu[j] < 0.0:
                lb += -mu[j] * Lw[r, j]
                mag += abs(mu[j] * Lw[r, j])
        # the bound's rounding: a few operations per term, each term at most mag
        slack = 8.0 * (d + m + 4) * EPS * (mag + cc)
        R[r] = math.sqrt(max(H - 2.0 * lb + cc + slack, 0.0))
        for i in range(d):
            X[r, i] = c[i]
        inside = True
        for j in range(m):
            s = 0.0
            for i in range(d):
                s += A[j, i] * c[i]
            if s < Lw[r, j] - Tol[r, j] or s > Uw[r, j] + Tol[r, j]:
                inside = False
        tight = (cc - lb) <= gap * (1.0 + H)
        status[r] = RCC2_OPTIMAL if (converged and inside and tight) else RCC2_UNCERTIFIED


@jit
def box_qp_patterns(H, M, pattern, lo, hi, first, T, found):
    """The minimiser ``t*`` of ``t^T H t`` over the box ``[lo_n, hi_n]``, row by row, for a
    small symmetric positive definite H (m <= 4): by its KKT conditions over the patterns of
    the bounds (``pattern[P, j]``: 0 at lo, 1 at hi, 2 free), each with its closed form
    ``t_F = M[P] t_B`` (``M[P] = -H_FF^{-1} H_FB``, zero rows off F, precomputed). A row tries
    its pattern ``first[n]`` (its likeliest), then every pattern; it takes the first whose
    free values lie within their bounds (to 1e-12 of their size) and whose gradient ``H t``
    points outward at each fixed bound (to 1e-12 of its norm). ``found[n]`` is False where
    none fits (a tie at rounding level): the caller solves that row otherwise."""
    n, m = lo.shape
    P = pattern.shape[0]
    t = np.empty(m)
    tb = np.empty(m)
    g = np.empty(m)
    for r in range(n):
        found[r] = False
        for q in range(P + 1):
            p = first[r] if q == 0 else q - 1
            if q > 0 and p == first[r]:
                continue
            for j in range(m):
                tb[j] = 0.0
                if pattern[p, j] == 0:
                    tb[j] = lo[r, j]
                elif pattern[p, j] == 1:
                    tb[j] = hi[r, j]
            ok = True
            for j in range(m):
                if pattern[p, j] == 2:
                    s = 0.0
                    for i in range(m):
                        s += M[p, j, i] * tb[i]
                    t[j] = s
                    size = 1e-12 * (1.0 + max(abs(lo[r, j]), abs(hi[r, j])))
                    if s < lo[r, j] - size or s > hi[r, j] + size:
                        ok = False
                        break
                else:
                    t[j] = tb[j]
            if not ok:
                continue
            gn = 0.0
            for j in range(m):
                s = 0.0
                for i in range(m):
                    s += H[j, i] * t[i]
                g[j] = s
                gn += s * s
            gtol = 1e-12 * (1.0 + math.sqrt(gn))
            for j in range(m):
                if (pattern[p, j] == 0 and g[j] < -gtol) or (pattern[p, j] == 1 and g[j] > gtol):
                    ok = False
                    break
            if ok:
                for j in range(m):
                    T[r, j] = min(max(t[j], lo[r, j]), hi[r, j])
                found[r] = True
                break
