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

import math

import numpy as np

from .jit import jit
from .linalg import EPS, forward_substitute

__all__ = ["NEEDS_GELSD", "bvls_rows"]

#: status of a row whose subproblem was too close to rank deficient for the SVD route:
#: re-run it with ``gelsd=True``
NEEDS_GELSD = -2



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
def _free_lstsq(A, b, x, on_bound, idx, gelsd):
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
        for i in range(m):
            A_free[i, k] = A[i, idx[k]]
    z = _min_norm_qr(A_free, b_free)
    if z.size == 0:  # rank-deficient or nearly so: LAPACK gelsd with NumPy's cut-off, as SciPy
        rcond = EPS * max(m, idx.size)
        z = _lstsq(A_free, b_free, rcond, gelsd)
    return z


@jit
def _lstsq(A, b, rcond, gelsd):
    """gelsd's minimum-norm least squares. ``gelsd=None`` compiles without LAPACK's
    ``np.linalg.lstsq`` (numba prunes the branch: its wrapper cost about 5 s of a fresh
    install's first ``cls`` call) and uses :func:`_svd_lstsq`, which agrees with gelsd to
    rounding when every singular value is well clear of the cut-off, and otherwise returns
    NaN: the row is then re-run with ``gelsd=True``, whose decisions are LAPACK's own."""
    if gelsd is None:
        return _svd_lstsq(A, b, rcond)
    return np.linalg.lstsq(A, b, rcond=rcond)[0]


@jit
def _svd_lstsq(A, b, rcond):
    """``A^+ b`` by a one-sided Jacobi SVD (Hestenes) of the narrower orientation ``Bm`` (A, or
    A^T when A is wide): plane rotations ``Bm V`` until every pair of columns is orthogonal to
    working precision, then ``Bm = U S`` column by column. Only when every singular value
    exceeds ``1e-8 s_max`` (far above any rank cut-off ``rcond s_max``, so gelsd keeps them all
    and the two solutions differ by rounding); else all NaN."""
    m, n = A.shape
    z = np.zeros(n)
    if m == 0 or n == 0:
        return z
    tall = m >= n
    rows, cols = (m, n) if tall else (n, m)
    Bm = np.empty((rows, cols))
    for i in range(rows):
        for j in range(cols):
            Bm[i, j] = A[i, j] if tall else A[j, i]
    V = np.zeros((cols, cols))
    for j in range(cols):
        V[j, j] = 1.0
    for _ in range(60):
        rotated = False
        for j in range(cols - 1):
            for k in range(j + 1, cols):
                a = 0.0
                c = 0.0
                g = 0.0
                for i in range(rows):
                    a += Bm[i, j] * Bm[i, j]
                    c += Bm[i, k] * Bm[i, k]
                    g += Bm[i, j] * Bm[i, k]
                if g == 0.0 or abs(g) <= EPS * np.sqrt(a * c):
                    continue
                rotated = True
                zeta = (c - a) / (2.0 * g)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                cs = 1.0 / np.sqrt(1.0 + t * t)
                sn = cs * t
                for i in range(rows):
                    u, w = Bm[i, j], Bm[i, k]
                    Bm[i, j] = cs * u - sn * w
                    Bm[i, k] = sn * u + cs * w
                for i in range(cols):
                    u, w = V[i, j], V[i, k]
                    V[i, j] = cs * u - sn * w
                    V[i, k] = sn * u + cs * w
        if not rotated:
            break
    sig = np.empty(cols)
    smax = 0.0
    smin = np.inf
    for j in range(cols):
        a = 0.0
        for i in range(rows):
            a += Bm[i, j] * Bm[i, j]
        sig[j] = np.sqrt(a)
        smax = max(smax, sig[j])
        smin = min(smin, sig[j])
    if not (smin > 1e-8 * smax and smin > max(rcond, EPS) * smax):
        z[:] = np.nan
        return z
    for j in range(cols):
        w2 = sig[j] * sig[j]
        coef = 0.0
        if tall:    # A V = U S:  A^+ b = sum_j V[:, j] (Bm[:, j] . b) / s_j^2
            for i in range(rows):
                coef += Bm[i, j] * b[i]
            coef /= w2
            for i in range(cols):
                z[i] += coef * V[i, j]
        else:       # A^T V = U S, A = V S U^T:  A^+ b = sum_j Bm[:, j] (V[:, j] . b) / s_j^2
            for i in range(cols):
                coef += V[i, j] * b[i]
            coef /= w2
            for i in range(rows):
                z[i] += coef * Bm[i, j]
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
    forward_substitute(M, b, y, m, np.bool_(True))  # one specialisation for both flags
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
def _bvls_one(A, b, lb, ub, tol, x, gelsd):
    """One problem; writes ``x`` and returns ``(nit, status)`` as SciPy reports them."""
    m, n = A.shape
    x_lsq = _min_norm_qr(A, b)
    if x_lsq.size == 0:
        x_lsq = _lstsq(A, b, -1.0, gelsd)
        if x_lsq.size > 0 and math.isnan(x_lsq[0]):
            return 0, NEEDS_GELSD
    inside = True
    for i in range(n):
        if not (x_lsq[i] >= lb[i] and x_lsq[i] <= ub[i]):
            inside = False
    for i in range(n):
        x[i] = x_lsq[i]
    if inside:
        return 0, 3
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
        z = _free_lstsq(A, b, x, on_bound, idx, gelsd)
        if z.size > 0 and math.isnan(z[0]):
            return iteration, NEEDS_GELSD
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
            z = _free_lstsq(A, b, x, on_bound, idx, gelsd)
            if z.size > 0 and math.isnan(z[0]):
                return it + 1, NEEDS_GELSD
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
def bvls_rows(A, B, lb, ub, tol, X, nit, status, gelsd=None):
    """:func:`_bvls_one` for every row of ``B`` (blocks of rows run on all cores through
    :func:`chebcenter.kernels.parallel.row_blocks`); writes ``X[n]``, the
    iteration count and SciPy's status code (0 max iterations, 1 first-order optimality,
    2 cost change below tol, 3 unconstrained solution in the box)."""
    for n in range(B.shape[0]):
        its, code = _bvls_one(A, B[n], lb, ub, tol, X[n], gelsd)
        nit[n] = its
        status[n] = code
