"""Compiled kernels for the closed-form estimators and the projection onto S_F.

Private module: float64 arrays in, float64 arrays out, no validation and no
Python objects. Each docstring states the formula it evaluates. Notation as in
docs/theory.md: ``q = A^+ b``, ``h = q + P m`` (half*), ``m = (lo + hi) / 2``,
``Vr`` the r x d matrix with orthonormal rows spanning Row(A), so that
``A x = b  <=>  Vr x = Vr q`` for consistent ``b``.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

#: outcomes of :func:`project_one`
PROJECTED, EMPTY, UNDECIDED = 0, 1, 2

__all__ = [
    "EMPTY",
    "argsort_into",
    "argsort_stable",
    "PROJECTED",
    "UNDECIDED",
    "ball_radii",
    "cholesky_in_place",
    "cholesky_solve",
    "check_rows",
    "box_violation",
    "forward_substitute",
    "prepare_rows",
    "project_points",
    "project_rows",
    "row_products",
    "rows_times",
]


@jit
def prepare_rows(B, Ur, s_r, Vr, p_mid, lo, hi, Q, H, residual, violation):
    """Per row n, from the thin SVD ``A = Ur diag(s_r) Vr``: ``c = Ur^T b_n``,
    ``res = ||b_n - Ur c||`` (the distance of b_n to Col(A)), ``q = Vr^T (c / s_r) = A^+ b_n``,
    ``h = q + P m``, ``viol = max_i max(lo_i - h_i, h_i - hi_i, 0)``.

    Backward stable: only orthogonal factors touch b (no explicit pseudo-inverse, whose
    entries of size 1/s_min would smear rounding over every coordinate), so the residual
    is accurate to about eps ||b|| whatever the condition number of A.
    Writes ``Q[n] = q``, ``H[n] = h``, ``residual[n]``, ``violation[n]``.
    """
    n_rows, m = B.shape
    r, d = Vr.shape
    c = np.empty(r)
    for n in range(n_rows):
        b = B[n]
        for k in range(r):
            s = 0.0
            for j in range(m):
                s += Ur[j, k] * b[j]
            c[k] = s
        residual[n] = _grad_norm(Ur, b, c)  # ||b - Ur c||
        q = Q[n]
        for i in range(d):
            q[i] = 0.0
        for k in range(r):
            ck = c[k] / s_r[k]
            row = Vr[k]
            for i in range(d):
                q[i] += row[i] * ck
        for i in range(d):
            H[n, i] = q[i] + p_mid[i]
        violation[n] = box_violation(H[n], lo, hi)


@jit
def row_products(X, M, out):
    """``out[n] = M @ X[n]`` for every row n, each sum taken in index order.

    A BLAS product ``X @ M.T`` of a batch picks its kernel, and so its order of summation,
    from the batch's shape (OpenBLAS has separate paths for small and edge blocks), so a row
    could round differently alone, in a Dask block or in the whole batch. Here the result of
    a row depends on that row and M only: the same bits in any batch that runs this kernel
    (docs/theory.md, "What is reproducible")."""
    n_rows, k = X.shape
    r = M.shape[0]
    for n in range(n_rows):
        x = X[n]
        for j in range(r):
            s = 0.0
            row = M[j]
            for i in range(k):
                s += row[i] * x[i]
            out[n, j] = s


def rows_times(X, M):
    """``X @ M.T`` row by row through :func:`row_products` (see there): a new (n, r) array."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    M = np.ascontiguousarray(M, dtype=np.float64)
    out = np.empty((X.shape[0], M.shape[0]))
    if X.shape[0] and M.shape[0]:
        row_products(X, M, out)
    elif X.shape[0]:
        out[:] = 0.0
    return out


@jit
def check_rows(C, A, B, lo, hi, residual, violation):
    """Per row n: ``residual[n] = ||A c_n - b_n||``, ``violation[n] = max_i max(lo_i - c_i,
    c_i - hi_i, 0)``; rows with a NaN center are left untouched."""
    n_rows, d = C.shape
    m = A.shape[0]
    for n in range(n_rows):
        if math.isnan(C[n, 0]):
            continue
        res = 0.0
        for k in range(m):
            s = -B[n, k]
            for i in range(d):
                s += A[k, i] * C[n, i]
            res += s * s
        residual[n] = math.sqrt(res)
        violation[n] = box_violation(C[n], lo, hi)


@jit
def box_violation(x, lo, hi):
    """``max_i max(lo_i - x_i, x_i - hi_i, 0)``: how far x lies outside the box."""
    worst = 0.0
    for i in range(x.size):
        if lo[i] - x[i] > worst:
            worst = lo[i] - x[i]
        if x[i] - hi[i] > worst:
            worst = x[i] - hi[i]
    return worst


@jit
def ball_radii(H, mid, half_diag_sq, out):
    """``R_n = sqrt(max(0, sum_i ((hi_i - lo_i)/2)^2 - ||h_n - m||^2))`` (docs/theory.md §2.4)."""
    n_rows, d = H.shape
    for n in range(n_rows):
        s = 0.0
        for i in range(d):
            t = H[n, i] - mid[i]
            s += t * t
        out[n] = math.sqrt(max(0.0, half_diag_sq - s))


@jit
def _dual_value(c, Vr, beta, lo, hi, lam, y, x):
    """``g(lam) = 1/2 ||x - c||^2 - lam^T (Vr x - beta)``, ``x = clip(c + Vr^T lam)``."""
    r, d = Vr.shape
    for i in range(d):
        s = c[i]
        for k in range(r):
            s += Vr[k, i] * lam[k]
        y[i] = s
        x[i] = min(max(s, lo[i]), hi[i])
    g = 0.0
    for i in range(d):
        t = x[i] - c[i]
        g += 0.5 * t * t
    for k in range(r):
        s = -beta[k]
        for i in range(d):
            s += Vr[k, i] * x[i]
        g -= lam[k] * s
    return g


@jit
def argsort_stable(key):
    """Indices that sort ``key`` ascending, ties in index order (bottom-up merge sort).

    Written out rather than ``np.argsort``, whose compiled introsort cost 3.5 s of every
    fresh install's first branch-and-bound call; this one compiles in a fraction of that."""
    n = key.size
    idx = np.empty(n, dtype=np.int64)
    argsort_into(key, idx, np.empty(n, dtype=np.int64))
    return idx


@jit
def argsort_into(key, idx, tmp):
    """:func:`argsort_stable` into ``idx`` with the work array ``tmp`` (no allocation)."""
    n = key.size
    for i in range(n):
        idx[i] = i
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if key[idx[j]] < key[idx[i]]:
                    tmp[k] = idx[j]
                    j += 1
                else:
                    tmp[k] = idx[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = idx[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = idx[j]
                j += 1
                k += 1
        for i in range(n):
            idx[i] = tmp[i]
        width *= 2


@jit
def cholesky_in_place(H, n, min_pivot):
    """Lower Cholesky factor of ``H[:n, :n]`` written into its lower triangle; False when
    a squared pivot is ``<= min_pivot`` (not positive definite to working precision) or NaN."""
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= H[j, k] * H[j, k]
        if not s > min_pivot:
            return False
        ljj = math.sqrt(s)
        H[j, j] = ljj
        for i in range(j + 1, n):
            t = H[i, j]
            for k in range(j):
                t -= H[i, k] * H[j, k]
            H[i, j] = t / ljj
    return True


@jit
def cholesky_solve(H, rhs, out, n, min_pivot):
    """Solve ``H[:n, :n] z = rhs[:n]`` (symmetric positive definite) by Cholesky, in place
    on ``H``; returns False when :func:`cholesky_in_place` fails."""
    if not cholesky_in_place(H, n, min_pivot):
        return False
    cholesky_substitute(H, rhs, out, n)
    return True


@jit
def forward_substitute(T, rhs, out, n, upper):
    """Solve ``L z = rhs[:n]`` into ``out`` with L lower triangular: ``L = T[:n, :n]``
    (lower part), or ``L = T[:n, :n]^T`` when ``upper`` (T's upper part, e.g. the R of a QR)."""
    for i in range(n):
        t = rhs[i]
        for k in range(i):
            t -= (T[k, i] if upper else T[i, k]) * out[k]
        out[i] = t / T[i, i]


@jit
def cholesky_substitute(L, rhs, out, n):
    """Solve ``L L^T z = rhs[:n]`` into ``out`` for a lower factor ``L[:n, :n]`` (as left
    by :func:`cholesky_in_place`): forward, then backward substitution."""
    forward_substitute(L, rhs, out, n, np.bool_(False))
    for i in range(n - 1, -1, -1):
        t = out[i]
        for k in range(i + 1, n):
            t -= L[k, i] * out[k]
        out[i] = t / L[i, i]


@jit
def _grad_norm(Vr, beta, x):
    """``||beta - Vr x||``."""
    r, d = Vr.shape
    total = 0.0
    for k in range(r):
        s = beta[k]
        for i in range(d):
            s -= Vr[k, i] * x[i]
        total += s * s
    return math.sqrt(total)


@jit
def project_one(c, Vr, beta, lo, hi, x, maxit, tol):
    """Euclidean projection of ``c`` onto ``{x : Vr x = beta, lo <= x <= hi}``.

    Dual semismooth Newton: maximise the concave dual
    ``g(lam) = min_{lo<=x<=hi} 1/2||x - c||^2 - lam^T (Vr x - beta)``, whose
    minimiser is ``x(lam) = clip(c + Vr^T lam, lo, hi)`` and gradient
    ``beta - Vr x(lam)``. The Newton matrix is ``Vr_F Vr_F^T + mu I`` over the
    free coordinates F; Armijo backtracking, and a gradient step of length 1
    (``Vr`` has orthonormal rows, so ``grad g`` is 1-Lipschitz) if it fails.
    Returns ``(state, iterations)``: PROJECTED (``x`` is the projection, ``||Vr x - beta||
    <= tol``, x in the box exactly), EMPTY, or UNDECIDED (the iteration budget ran out).

    Emptiness certificate (weak duality): if S_F is nonempty then for every lam,
    ``g(lam) <= min_{x in S_F} 1/2 ||x - c||^2 <= f_max = 1/2 sum_i max(c_i - lo_i, hi_i - c_i)^2``.
    An empty S_F makes the dual unbounded, so the Newton iterates soon exhibit a lam with
    ``g(lam) > f_max`` beyond the rounding error of g; that lam proves S_F empty.
    """
    r, d = Vr.shape
    lam = np.zeros(r)
    lam_new = np.zeros(r)
    grad = np.zeros(r)
    step_dir = np.zeros(r)
    y = np.empty(d)
    H = np.empty((r, r))
    f_max = 0.0
    size = 0.0
    for i in range(d):
        f_max += 0.5 * max(c[i] - lo[i], hi[i] - c[i]) ** 2
        size = max(size, abs(lo[i]), abs(hi[i]), abs(c[i]))
    bsize = 0.0
    for k in range(r):
        bsize += abs(beta[k])
    for it in range(maxit):
        g0 = _dual_value(c, Vr, beta, lo, hi, lam, y, x)
        lsize = 0.0
        for k in range(r):
            lsize += abs(lam[k])
        # rounding of g: its terms are at most f_max and |lam| (|beta| + sqrt(d) size)
        if g0 > f_max + 1e-10 * (1.0 + f_max + lsize * (bsize + math.sqrt(d) * size)):
            return EMPTY, it
        gnorm2 = 0.0
        for k in range(r):
            s = beta[k]
            for i in range(d):
                s -= Vr[k, i] * x[i]
            grad[k] = s
            gnorm2 += s * s
        gnorm = math.sqrt(gnorm2)
        if gnorm <= tol:
            return PROJECTED, it
        mu = min(1e-2, gnorm) + 1e-14
        for a in range(r):
            for b in range(a + 1):
                s = 0.0
                for i in range(d):
                    if lo[i] < y[i] < hi[i]:
                        s += Vr[a, i] * Vr[b, i]
                H[a, b] = s
                H[b, a] = s
            H[a, a] += mu
        ok = cholesky_solve(H, grad, step_dir, r, 0.0)
        slope = 0.0
        for k in range(r):
            slope += grad[k] * step_dir[k]
        accepted = False
        if ok and slope > 0.0:
            t = 1.0
            for _ in range(40):
                for k in range(r):
                    lam_new[k] = lam[k] + t * step_dir[k]
                g1 = _dual_value(c, Vr, beta, lo, hi, lam_new, y, x)
                if g1 >= g0 + 1e-4 * t * slope:
                    accepted = True
                    break
                # near the solution dual values differ below rounding: accept a step
                # that shrinks the gradient instead (non-monotone safeguard)
                if _grad_norm(Vr, beta, x) <= 0.9 * gnorm:
                    accepted = True
                    break
                t *= 0.5
        if not accepted:
            for k in range(r):
                lam_new[k] = lam[k] + grad[k]
        for k in range(r):
            lam[k] = lam_new[k]
    _dual_value(c, Vr, beta, lo, hi, lam, y, x)
    return (PROJECTED if _grad_norm(Vr, beta, x) <= tol else UNDECIDED), maxit


@jit
def project_rows(c, Vr, Beta, lo, hi, X, state, iterations, maxit, tol):
    """``X[n] = argmin {||x - c|| : Vr x = Beta[n], lo <= x <= hi}`` for every row n
    (see :func:`project_one`); ``state[n]`` is PROJECTED, EMPTY or UNDECIDED."""
    for n in range(Beta.shape[0]):
        st, its = project_one(c, Vr, Beta[n], lo, hi, X[n], maxit, tol)
        state[n] = st
        iterations[n] = its


@jit
def project_points(C, Vr, Beta, lo, hi, X, state, iterations, maxit, tol):
    """``X[n] = argmin {||x - C[n]|| : Vr x = Beta[n], lo <= x <= hi}``: one point per row
    (see :func:`project_one`); ``state[n]`` is PROJECTED, EMPTY or UNDECIDED."""
    for n in range(Beta.shape[0]):
        st, its = project_one(C[n], Vr, Beta[n], lo, hi, X[n], maxit, tol)
        state[n] = st
        iterations[n] = its
