"""Compiled bounded-variable least squares: a line-by-line port of SciPy's BVLS.

Private module. ``cls`` is defined (docs/theory.md §1 and §7) as
``scipy.optimize.lsq_linear(A, b, bounds=(lo, hi), method="bvls", tol=tol)``; because
every point of S_F minimises ``||A x - b||`` over the box when b is consistent, the
estimate is the point where that particular algorithm stops, so this port keeps its
every decision: the unbounded start ``lstsq(A, b, rcond=-1)`` (returned as is when it
lies in the box, ``nit = 0``), the initialisation loop that pins violated variables,
Stark and Parker's loops A and B with the same ``argmax``/``argmin`` tie-breaking, the
same minimum-norm least-squares subproblems, the same termination tests and the same
iteration count. The subproblems are solved by Householder QR when safely full rank
(the minimum-norm solution is then unique, so this differs from SciPy's LAPACK gelsd by
rounding only) and by gelsd with NumPy's ``rcond=None`` cut-off otherwise, as in SciPy.
It agrees with SciPy to rounding (tested); what it drops is the Python overhead and
gelsd's cost on the many small well-posed subproblems.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from ._kernels import forward_substitute

__all__ = ["bvls_rows"]

_EPS = np.finfo(np.float64).eps


@jit
def _kkt(g, on_bound):
    """SciPy's ``compute_kkt_optimality``."""
    best = -np.inf
    for i in range(g.size):
        v = abs(g[i]) if on_bound[i] == 0.0 else g[i] * on_bound[i]
        if v > best:
            best = v
    return best


@jit
def _free_lstsq(A, b, x, on_bound, idx):
    """``lstsq(A[:, idx], b - A (x * active), rcond=None)`` for the free columns ``idx``."""
    m, n = A.shape
    if idx.size == 0:  # NumPy returns an empty solution; LAPACK refuses empty arrays
        return np.empty(0)
    xa = np.zeros(n)
    for i in range(n):
        if on_bound[i] != 0.0:
            xa[i] = x[i]
    b_free = b - A @ xa
    A_free = np.empty((m, idx.size))
    for k in range(idx.size):
        A_free[:, k] = A[:, idx[k]]
    z = _min_norm_qr(A_free, b_free)
    if z.size == 0:  # rank-deficient or nearly so: LAPACK gelsd with NumPy's cut-off, as SciPy
        rcond = _EPS * max(m, idx.size)
        z = np.linalg.lstsq(A_free, b_free, rcond=rcond)[0]
    return z


@jit
def _min_norm_qr(A, b):
    """Minimum-norm solution of the underdetermined ``A z = b`` (m <= n) by Householder QR
    of ``A^T``: ``z = Q R^{-T} b``. Backward stable like SciPy's gelsd, and 5-10x cheaper at
    m = 9, n = 45 (measured), so it differs from gelsd only by rounding (~cond(A) eps).
    Returns an empty array when ``m > n`` or ``R`` is not safely nonsingular
    (``min |R_jj| <= 1e-8 max |R_jj|``): the caller then uses gelsd, whose rank cut-off
    decides such cases."""
    m, n = A.shape
    if m > n:
        return np.empty(0)
    M = A.T.copy()  # n x m; reflectors below the diagonal, R on and above it
    beta = np.zeros(m)
    rmax, rmin = 0.0, np.inf
    for j in range(m):
        norm = 0.0
        for i in range(j, n):
            norm += M[i, j] * M[i, j]
        norm = np.sqrt(norm)
        if norm == 0.0:
            return np.empty(0)
        alpha = -norm if M[j, j] >= 0.0 else norm
        v0 = M[j, j] - alpha
        # v = (1, M[j+1:, j] / v0), H = I - beta v v^T, H x = alpha e_1
        for i in range(j + 1, n):
            M[i, j] /= v0
        beta[j] = -v0 / alpha
        M[j, j] = alpha
        for k in range(j + 1, m):
            s = M[j, k]
            for i in range(j + 1, n):
                s += M[i, j] * M[i, k]
            s *= beta[j]
            M[j, k] -= s
            for i in range(j + 1, n):
                M[i, k] -= s * M[i, j]
        rmax = max(rmax, abs(alpha))
        rmin = min(rmin, abs(alpha))
    if rmin <= 1e-8 * rmax:
        return np.empty(0)
    y = np.zeros(n)  # R^T y[:m] = b (R upper: R^T lower), then z = H_0 ... H_{m-1} y
    forward_substitute(M, b, y, m, True)
    for j in range(m - 1, -1, -1):
        s = y[j]
        for i in range(j + 1, n):
            s += M[i, j] * y[i]
        s *= beta[j]
        y[j] -= s
        for i in range(j + 1, n):
            y[i] -= s * M[i, j]
    return y


@jit
def _bvls_one(A, b, lb, ub, tol, x):
    """One problem; writes ``x`` and returns ``(nit, status)`` as SciPy reports them."""
    m, n = A.shape
    x_lsq = _min_norm_qr(A, b)
    if x_lsq.size == 0:
        x_lsq = np.linalg.lstsq(A, b, rcond=-1.0)[0]
    inside = True
    for i in range(n):
        if not (x_lsq[i] >= lb[i] and x_lsq[i] <= ub[i]):
            inside = False
    if inside:
        x[:] = x_lsq
        return 0, 3
    x[:] = x_lsq
    on_bound = np.zeros(n)
    for i in range(n):
        if x[i] <= lb[i]:
            x[i] = lb[i]
            on_bound[i] = -1.0
    for i in range(n):
        if x[i] >= ub[i]:
            x[i] = ub[i]
            on_bound[i] = 1.0
    free = np.empty(n, dtype=np.int64)
    nfree = 0
    for i in range(n):
        if on_bound[i] == 0.0:
            free[nfree] = i
            nfree += 1
    r = A @ x - b
    cost = 0.5 * (r @ r)
    g = A.T @ r
    iteration = 0
    while nfree > 0:  # initialisation: pin the violators until the free solution is feasible
        iteration += 1
        idx = free[:nfree].copy()
        z = _free_lstsq(A, b, x, on_bound, idx)
        keep = 0
        for k in range(nfree):
            i = idx[k]
            if z[k] < lb[i]:
                x[i] = lb[i]
                on_bound[i] = -1.0
            elif z[k] > ub[i]:
                x[i] = ub[i]
                on_bound[i] = 1.0
            else:
                x[i] = z[k]
                free[keep] = i
                keep += 1
        r = A @ x - b
        cost = 0.5 * (r @ r)
        g = A.T @ r
        if keep == nfree:
            break
        nfree = keep
    max_iter = n + iteration
    status = -1
    optimality = _kkt(g, on_bound)
    it = iteration
    for it2 in range(iteration, max_iter):  # loop A
        it = it2
        if optimality < tol:
            status = 1
        if status != -1:
            break
        gb = g * on_bound
        on_bound[np.argmax(gb)] = 0.0
        while True:  # loop B
            nf = 0
            for i in range(n):
                if on_bound[i] == 0.0:
                    free[nf] = i
                    nf += 1
            idx = free[:nf].copy()
            z = _free_lstsq(A, b, x, on_bound, idx)
            # violators: first those below lb, then those above ub (SciPy's hstack order)
            best = np.inf
            best_k = -1
            best_low = False
            for k in range(nf):
                i = idx[k]
                if z[k] < lb[i]:
                    a = (lb[i] - x[i]) / (z[k] - x[i])
                    if a < best:
                        best, best_k, best_low = a, k, True
            for k in range(nf):
                i = idx[k]
                if z[k] > ub[i]:
                    a = (ub[i] - x[i]) / (z[k] - x[i])
                    if a < best:
                        best, best_k, best_low = a, k, False
            if best_k >= 0:
                for k in range(nf):
                    i = idx[k]
                    x[i] = x[i] * (1.0 - best) + best * z[k]
                on_bound[idx[best_k]] = -1.0 if best_low else 1.0
            else:
                for k in range(nf):
                    x[idx[k]] = z[k]
                break
        r = A @ x - b
        cost_new = 0.5 * (r @ r)
        if cost - cost_new < tol * cost:
            status = 2
        cost = cost_new
        g = A.T @ r
        optimality = _kkt(g, on_bound)
    if status == -1:
        status = 0
    return it + 1, status


@jit
def bvls_rows(A, B, lb, ub, tol, X, nit, status):
    """:func:`_bvls_one` for every row of ``B`` (blocks of rows run on all cores through
    :func:`chebcenter._parallel.row_blocks`); writes ``X[n]``, the
    iteration count and SciPy's status code (0 max iterations, 1 first-order optimality,
    2 cost change below tol, 3 unconstrained solution in the box)."""
    for n in range(B.shape[0]):
        its, code = _bvls_one(A, B[n], lb, ub, tol, X[n])
        nit[n] = its
        status[n] = code
