"""Compiled projection of an anchor onto ``{V x = beta, lo <= x <= hi}`` in a metric.

Private module (float64 arrays only). Solves

    minimise  1/2 (x - a)^T P (x - a)   subject to  V x = beta,  lo <= x <= hi

(P symmetric positive definite: the inverse of the metric Sigma) by a primal active-set
method on bounded variables, from a feasible start x0 (the Euclidean projection of the
box midpoint, which the caller has). The working set W holds variables fixed at a bound;
each iteration solves the equality-constrained step

    [P_FF  V_F^T] [s_F]   [-g_F]
    [V_F   0    ] [lam] = [  0 ],   g = P (x - a),  s_W = 0,

moves as far as the bounds allow (a blocking variable joins W), and when the step
vanishes releases the bound whose multiplier ``mu_j = g_j + (V^T lam)_j`` has the wrong
sign (at lo it must be >= 0, at hi <= 0); none left means the KKT conditions hold. A
blocking variable has ``s_j != 0`` while ``V s = 0`` and ``s_W = 0``, so its bound is
independent of the working constraints and V_F keeps full row rank: the KKT matrix stays
nonsingular. The dense solves use Gaussian elimination with partial pivoting.

Statuses: QP_OPTIMAL, QP_MAX_ITERATIONS, QP_SINGULAR.
"""

from __future__ import annotations

import numpy as np

from .jit import jit

__all__ = ["QP_MAX_ITERATIONS", "QP_OPTIMAL", "QP_SINGULAR", "project_metric_rows"]

QP_OPTIMAL, QP_MAX_ITERATIONS, QP_SINGULAR = 0, 1, 2


@jit
def _lu_solve(K, rhs, n):
    """Solve ``K z = rhs`` (n x n, overwritten) by partial pivoting; None if singular."""
    z = rhs[:n].copy()
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale = max(scale, abs(K[i, j]))
    tol = 1e-13 * max(scale, 1e-300)
    for col in range(n):
        piv = col
        for i in range(col + 1, n):
            if abs(K[i, col]) > abs(K[piv, col]):
                piv = i
        if abs(K[piv, col]) <= tol:
            return z, False
        if piv != col:
            for j in range(n):
                K[col, j], K[piv, j] = K[piv, j], K[col, j]
            z[col], z[piv] = z[piv], z[col]
        inv = 1.0 / K[col, col]
        for i in range(col + 1, n):
            f = K[i, col] * inv
            if f != 0.0:
                for j in range(col, n):
                    K[i, j] -= f * K[col, j]
                z[i] -= f * z[col]
    for i in range(n - 1, -1, -1):
        s = z[i]
        for j in range(i + 1, n):
            s -= K[i, j] * z[j]
        z[i] = s / K[i, i]
    return z, True


@jit
def _project_one(P, V, beta, lo, hi, a, x, maxit, tol):
    """Active-set solve for one row from the feasible ``x`` (overwritten by the answer)."""
    r, d = V.shape
    where = np.zeros(d, dtype=np.int64)  # -1 at lo, +1 at hi (in the working set), 0 free
    free = np.empty(d, dtype=np.int64)
    for it in range(maxit):
        g = P @ (x - a)
        nf = 0
        for j in range(d):
            if where[j] == 0:
                free[nf] = j
                nf += 1
        n = nf + r
        K = np.zeros((n, n))
        rhs = np.zeros(n)
        for p in range(nf):
            i = free[p]
            for q in range(nf):
                K[p, q] = P[i, free[q]]
            for k in range(r):
                K[p, nf + k] = V[k, i]
                K[nf + k, p] = V[k, i]
            rhs[p] = -g[i]
        sol, ok = _lu_solve(K, rhs, n)
        if not ok:
            return it + 1, QP_SINGULAR
        step = 0.0
        for p in range(nf):
            step = max(step, abs(sol[p]))
        if step <= tol:
            # multipliers of the working bounds: mu = g + V^T lam
            worst, release = 0.0, -1
            for j in range(d):
                if where[j] == 0:
                    continue
                mu = g[j]
                for k in range(r):
                    mu += V[k, j] * sol[nf + k]
                viol = -mu if where[j] < 0 else mu  # at lo: mu >= 0; at hi: mu <= 0
                if viol > worst:
                    worst, release = viol, j
            gmax = 0.0
            for i in range(g.size):
                gmax = max(gmax, abs(g[i]))
            if release < 0 or worst <= tol * (1.0 + gmax):
                return it + 1, QP_OPTIMAL
            where[release] = 0
            continue
        alpha, block, block_side = 1.0, -1, 0
        # components below 1e-10 of the step do not block: in exact arithmetic a blocking
        # variable is independent of the working bounds (module docstring), but a dependent one
        # (a lifted coordinate that is a combination of fixed ones: pair rows z_j - z_i of a
        # many-class release) has s_j of 1e-16..1e-13 of the step and, sitting on its bound,
        # would block with alpha = 0 and make the KKT matrix singular (QP_SINGULAR on 6 of 10
        # rows at k = 9 without this cut-off). A skipped component overshoots its bound by at
        # most 1e-10 of the step and is clipped back: below the box tolerances (feas_tol 1e-9
        # of the width)
        s_floor = 1e-10 * step
        for p in range(nf):
            i = free[p]
            s = sol[p]
            if abs(s) <= s_floor:
                continue
            if s < 0.0:
                lim = (x[i] - lo[i]) / -s
                if lim < alpha:
                    alpha, block, block_side = max(lim, 0.0), i, -1
            elif s > 0.0:
                lim = (hi[i] - x[i]) / s
                if lim < alpha:
                    alpha, block, block_side = max(lim, 0.0), i, 1
        for p in range(nf):
            i = free[p]
            x[i] = min(max(x[i] + alpha * sol[p], lo[i]), hi[i])
        if block >= 0:
            x[block] = lo[block] if block_side < 0 else hi[block]
            where[block] = block_side
    return maxit, QP_MAX_ITERATIONS


@jit
def project_metric_rows(P, V, Beta, lo, hi, Anchor, X, status, iterations, maxit, tol):
    """:func:`_project_one` for every row n (anchor ``Anchor[n]``, start and answer ``X[n]``)."""
    for n in range(Beta.shape[0]):
        its, code = _project_one(P, V, Beta[n], lo, hi, Anchor[n], X[n], maxit, tol)
        status[n] = code
        iterations[n] = its
