"""Compiled RCC1 dual solver: barrier path-following Newton on the weights alpha (its
certificate, which holds for any weights, is :mod:`chebcenter.kernels.rcc1_certificate`).

Private module (float64 arrays only). With ``a_i`` the rows of W (d x p),
``c_i = q_i - m_i`` and ``t_i = (q_i - lo_i)(q_i - hi_i)``, the RCC1 dual after
eliminating tau is

    minimise  phi(alpha) = v^T M^{-1} v - alpha^T t   over alpha >= 0, M >= I,
    M = sum_i alpha_i a_i a_i^T,   v = sum_i alpha_i c_i a_i.

With ``y = M^{-1} v`` and ``s_i = c_i - a_i^T y``:
``grad phi_i = 2 c_i a_i^T y - (a_i^T y)^2 - t_i`` and
``hess phi = 2 (s s^T) o K``, ``K = W M^{-1} W^T`` (o: elementwise). The barrier
``-mu (log det(M - I) + sum log alpha_i)`` adds ``-mu a_i^T (M-I)^{-1} a_i - mu/alpha_i``
to the gradient and ``mu (K1 o K1) + mu diag(1/alpha^2)`` to the Hessian,
``K1 = W (M - I)^{-1} W^T``.

Every matrix function goes through a Cholesky factorisation that reports failure (the
project's own below order ``LAPACK_FROM``, LAPACK's dpotrf with its error caught from
there on), so a singular or indefinite matrix is a status code, never an exception: one bad row cannot
end a batch, and blocks of rows run on all cores (threads; the kernels are ``nogil``).

Path following: start at ``alpha = 2`` (``M = 2 I``, strictly feasible) with ``mu = cold_mu``;
at each ``mu`` take damped Newton steps (fraction to the boundary, Armijo backtracking on
the barrier merit, whose factorisations are reused by the next step) until the Newton
decrement is below ``CENTERING mu d``; then divide ``mu`` by ``1/MU_FACTOR`` down to ``mu_min``.
The duality gap on the central path is about ``mu (d + p)``.

Predictor: on the central path ``grad phi(alpha) = mu g_B(alpha)`` with
``g_B = diag(K1) + 1/alpha`` (minus the barrier's gradient), so the path's tangent is
``d alpha / d mu = H^{-1} g_B`` -- one more solve with the Newton matrix's factor. When
``mu`` drops, the iterate moves along it (kept 10 % away from ``alpha = 0``) if ``M - I``
stays positive definite there, and the next step is always a Newton step, whatever its
decrement (without that, a run of predictions could end "centred" off the path: phi is
not self-concordant). It cuts the Newton steps by 30-45 % (measured per row at mu_min = 1e-10: 29 to 21 at
d = 30, 24 to 14 at d = 50, 28 to 20 at d = 200); the stopping test is unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import cholesky_in_place, cholesky_substitute

__all__ = ["rcc1_barrier_rows", "rcc1_segment_rows", "CONVERGED", "MAX_ITERATIONS", "NUMERICAL_FAILURE"]

#: mu is divided by 100 per level; a level ends when the Newton decrement is below
#: CENTERING * mu * d. Looser settings (1e-3 and 0.5-2: 20% fewer steps) end "converged"
#: up to 0.4 away from the reference center on slices through box corners (measured):
#: phi is not self-concordant, so a small decrement far from the path is possible.
MU_FACTOR = 0.01
CENTERING = 0.1
CONVERGED, MAX_ITERATIONS, NUMERICAL_FAILURE = 0, 1, 2
#: the predictor step (False: plain path following, kept for comparison runs)
PREDICT = True


#: from this order on, the barrier's Cholesky factorisations call LAPACK (dpotrf: 3x faster
#: at 200, 173 against 503 us; no faster below 80) and its triangular solves go by blocks
LAPACK_FROM = 96


@jit
def _forward_rows(L, B, p):
    """``L^{-1} B`` for the lower triangle of ``L[:p, :p]``, row by row (contiguous).

    From ``p = LAPACK_FROM`` on, in blocks of 48 rows: the rows of a block first take the
    update from all rows above it as one matrix product (BLAS), then are solved row by row
    within the block; 2.1x faster at p = 195, 2.6x at 495. Below, one block: the plain loop."""
    G = B.copy()
    n = G.shape[1]
    block = p if p < LAPACK_FROM else 48
    i0 = 0
    while i0 < p:
        i1 = min(i0 + block, p)
        if i0 > 0:
            Lb = np.empty((i1 - i0, i0))
            for i in range(i0, i1):
                for k in range(i0):
                    Lb[i - i0, k] = L[i, k]
            U = Lb @ G[:i0]
            for i in range(i0, i1):
                for j in range(n):
                    G[i, j] -= U[i - i0, j]
        for i in range(i0, i1):
            for k in range(i0, i):
                lik = L[i, k]
                for j in range(n):
                    G[i, j] -= lik * G[k, j]
            inv = 1.0 / L[i, i]
            for j in range(n):
                G[i, j] *= inv
        i0 = i1
    return G


@jit
def _cholesky(H, n):
    """Lower Cholesky factor of ``H[:n, :n]`` in its lower triangle; False if not positive
    definite. :func:`chebcenter.kernels.linalg.cholesky_in_place` below ``LAPACK_FROM``, LAPACK above."""
    if n < LAPACK_FROM:
        return cholesky_in_place(H, n, 0.0)
    A = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            A[i, j] = H[i, j]
            A[j, i] = H[i, j]
    try:
        F = np.linalg.cholesky(A)
    except Exception:  # numba's dpotrf wrapper raises when a pivot is not positive
        return False
    for i in range(n):
        if not F[i, i] > 0.0:
            return False
        for j in range(i + 1):
            H[i, j] = F[i, j]
    return True


@jit
def _state(W, c, t, alpha, mu, L, L1, y):
    """Factor ``M`` into ``L`` and ``M - I`` into ``L1``, solve ``M y = v``; return
    ``(feasible, merit)`` with merit ``phi(alpha) - mu (log det(M - I) + sum log alpha)``."""
    d, p = W.shape
    logsum = 0.0
    for i in range(d):
        if not alpha[i] > 0.0:
            return False, np.inf
        logsum += math.log(alpha[i])
    M = (W.T * alpha) @ W
    v = W.T @ (alpha * c)
    for i in range(p):
        for j in range(p):
            L[i, j] = M[i, j]
            L1[i, j] = M[i, j]
        L1[i, i] -= 1.0
    if not _cholesky(L1, p):
        return False, np.inf
    if not _cholesky(L, p):
        return False, np.inf
    logdet = 0.0
    for i in range(p):
        logdet += 2.0 * math.log(L1[i, i])
    cholesky_substitute(L, v, y, p)
    return True, v @ y - alpha @ t - mu * (logdet + logsum)


@jit
def _solve_one(W, c, t, alpha, mu, mu_min, maxit, mu_factor, centering):
    """Path-follow one row from ``alpha`` (strictly feasible); returns (iterations, status)."""
    d, p = W.shape
    L, L1, y = np.empty((p, p)), np.empty((p, p)), np.empty(p)
    Lc, L1c, yc = np.empty((p, p)), np.empty((p, p)), np.empty(p)
    ok, f0 = _state(W, c, t, alpha, mu, L, L1, y)
    if not ok:
        return 0, NUMERICAL_FAILURE
    step = np.empty(d)
    gb = np.empty(d)
    tangent = np.empty(d)
    cand = np.empty(d)
    predicted = False
    WT = np.ascontiguousarray(W.T)
    for it in range(maxit):
        G = _forward_rows(L, WT, p)      # K = G^T G = W M^{-1} W^T
        G1 = _forward_rows(L1, WT, p)    # K1 = W (M - I)^{-1} W^T
        K = G.T @ G
        K1 = G1.T @ G1
        Wy = W @ y
        s = c - Wy
        grad = 2.0 * c * Wy - Wy * Wy - t
        H = np.empty((d, d))
        for i in range(d):
            si2 = 2.0 * s[i]
            for j in range(d):
                H[i, j] = si2 * s[j] * K[i, j] + mu * K1[i, j] * K1[i, j]
            grad[i] -= mu * K1[i, i] + mu / alpha[i]
            H[i, i] += mu / (alpha[i] * alpha[i])
        rhs = -grad
        for i in range(d):   # the barrier's pull: the central path moves as d alpha / d mu = H^{-1} gb
            gb[i] = K1[i, i] + 1.0 / alpha[i]
        if not _regularised_solve(H, rhs, step, gb, tangent, d):
            return it + 1, NUMERICAL_FAILURE
        decrement = -(grad @ step)
        if decrement < centering * mu * d and not predicted:
            if mu <= mu_min:
                return it + 1, CONVERGED
            new_mu = max(mu * mu_factor, mu_min)
            # predictor: follow the path's tangent to the new mu (kept at 0.9 of the way to
            # alpha = 0); used only if M - I stays positive definite there, else stay put.
            # Only the starting point of the next centering changes, never its stopping test.
            dmu = new_mu - mu
            tau = 1.0
            for i in range(d):
                if dmu * tangent[i] < 0.0:
                    tau = min(tau, -0.9 * alpha[i] / (dmu * tangent[i]))
            for i in range(d):
                cand[i] = alpha[i] + tau * dmu * tangent[i]
            mu = new_mu
            ok, fc = _state(W, c, t, cand, mu, Lc, L1c, yc)
            if ok and math.isfinite(fc) and PREDICT:
                predicted = True  # the next step is a Newton (corrector) step whatever its decrement
                _accept(cand, Lc, L1c, yc, alpha, L, L1, y)
                f0 = fc
            else:
                ok, f0 = _state(W, c, t, alpha, mu, L, L1, y)
            continue
        predicted = False
        tau = 1.0  # fraction to the boundary for alpha > 0
        for i in range(d):
            if step[i] < 0.0:
                tau = min(tau, -0.99 * alpha[i] / step[i])
        accepted = False
        for _ in range(60):
            for i in range(d):
                cand[i] = alpha[i] + tau * step[i]
            ok, fc = _state(W, c, t, cand, mu, Lc, L1c, yc)
            if ok and fc <= f0 - 1e-4 * tau * decrement:
                accepted = True
                break
            tau *= 0.5
        if not accepted:  # no descent along the Newton direction: not on the central path
            return it + 1, NUMERICAL_FAILURE
        _accept(cand, Lc, L1c, yc, alpha, L, L1, y)
        f0 = fc
    return maxit, MAX_ITERATIONS


@jit
def _accept(cand, Lc, L1c, yc, alpha, L, L1, y):
    """Make the candidate the iterate: alpha and its factorisations of M and M - I, and y."""
    for i in range(alpha.size):
        alpha[i] = cand[i]
    p = y.size
    for i in range(p):
        y[i] = yc[i]
        for j in range(p):
            L[i, j] = Lc[i, j]
            L1[i, j] = L1c[i, j]


@jit
def _regularised_solve(H, rhs, out, rhs2, out2, n):
    """Newton step ``H z = rhs`` (and ``H z2 = rhs2`` with the same factor). H is positive
    semidefinite in exact arithmetic but can lose definiteness to rounding at small mu; then
    retry with ``H + delta I``, ``delta`` from ``1e-14 max(diag H)`` up by 10x (a
    Levenberg-Marquardt step), at most 10 times."""
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(H[i, i]))
    Hc = H.copy()
    delta = 0.0
    for attempt in range(11):
        if attempt > 0:
            delta = 1e-14 * scale if attempt == 1 else 10.0 * delta
            for i in range(n):
                for j in range(n):
                    Hc[i, j] = H[i, j]
                Hc[i, i] += delta
        if _finite_solve(Hc, rhs, out, n):   # Hc now holds the factor
            cholesky_substitute(Hc, rhs2, out2, n)
            return True
    return False


@jit
def _finite_solve(H, rhs, out, n):
    """Solve ``H z = rhs`` by Cholesky (:func:`_cholesky`, H overwritten) with a finite answer."""
    if not _cholesky(H, n):
        return False
    cholesky_substitute(H, rhs, out, n)
    for i in range(n):
        if not math.isfinite(out[i]):
            return False
    return True


#: warm start: the next row of a chunk starts at WARM_MIX * (previous alpha) + (1 - WARM_MIX) * 2
#: (a convex combination of a feasible and a strictly feasible point: strictly feasible for
#: every right-hand side, since feasibility depends on alpha only) with mu = WARM_MU.
#: WARM_MIX = 0.99 solves a warm row in 9 Newton steps at d = 30-50 (10-11 with 0.9), with
#: the same fallbacks on corner-heavy slices (9 of 800); WARM_MU = 1e-4 or a mu drop of
#: 1e-3 saves more steps but sends 4x more corner rows to cvxpy.
WARM_MIX = 0.99
WARM_MU = 1e-3
#: the cold start alpha = 2 (M = 2 I) begins at mu = cold_mu: COLD_MU on a first pass (a
#: third fewer Newton steps than from 1: 14 against 18 at d = 200, 14 against 21 at d = 50,
#: cold rows), ROBUST_MU for the rows that failed it (from 0.1 a few more corner-heavy rows,
#: 6 of 3 200, miss the checks than from 1; the re-solve gives them that chance before cvxpy)
COLD_MU = 0.1
ROBUST_MU = 1.0


@jit
def rcc1_barrier_rows(W, C, T, Alpha, iterations, status, mu_min, maxit, chunk, cold_mu,
                      mu_factor=MU_FACTOR, centering=CENTERING):
    """Solve the RCC1 dual for every row n (``C[n] = q - m``, ``T[n] = t``); writes
    ``Alpha[n]``, the Newton iteration count and a status code (CONVERGED,
    MAX_ITERATIONS or NUMERICAL_FAILURE).

    Rows are cut into fixed chunks of ``chunk`` rows (the caller runs blocks of whole
    chunks on all cores, :func:`chebcenter.kernels.parallel.row_blocks`); inside a chunk each row
    is warm-started from the previous row's alpha and re-solved cold (``alpha = 2``,
    ``mu = cold_mu``) if that fails. The chunks do not depend on the number of threads, so
    neither does the result. ``chunk = 1``: every row cold."""
    n_rows = C.shape[0]
    d = W.shape[0]
    prev = np.empty(d)
    alpha = np.empty(d)
    warm = False
    for n in range(n_rows):
        if n % chunk == 0:  # a new chunk starts cold (one loop: a separate chunk function
            warm = False    # would cost a second of compilation for nothing)
        its, code = 0, NUMERICAL_FAILURE
        if warm:
            for i in range(d):
                alpha[i] = WARM_MIX * prev[i] + (1.0 - WARM_MIX) * 2.0
            its, code = _solve_one(W, C[n], T[n], alpha, WARM_MU, mu_min, maxit, mu_factor, centering)
        if code != CONVERGED:
            for i in range(d):
                alpha[i] = 2.0
            its2, code = _solve_one(W, C[n], T[n], alpha, cold_mu, mu_min, maxit, mu_factor, centering)
            its += its2
        for i in range(d):
            Alpha[n, i] = alpha[i]
        iterations[n] = its
        status[n] = code
        warm = code == CONVERGED
        if warm:
            for i in range(d):
                prev[i] = alpha[i]


@jit
def _segment_alpha(w, c, t, alpha, U):
    """RCC1 for ``p = 1`` in closed form (S_F is the segment ``q + w u``, ``||w|| = 1``).

    Each box row with ``w_i != 0`` relaxes to the chord ``U <= l_i(u) = s_i u + k_i`` of
    ``U = u^2`` over its interval (``s_i = -2 c_i / w_i``, ``k_i = -t_i / w_i^2``), so by the minimax theorem the relaxed center is
    ``u* = argmax_u h(u)``, ``h(u) = min_i l_i(u) - u^2`` (strictly concave), and
    ``eta = h(u*)``. ``u*`` is found by bisection on the sign of ``h'``; the dual weights are
    ``1 / w_i^2`` on the active chord, or split between the two chords of a kink. Writes
    ``alpha`` and ``U[0] = u*`` and returns the number of bisection steps (-1: no row constrains u)."""
    d = w.size
    ulo, uhi = -np.inf, np.inf
    for i in range(d):
        if w[i] != 0.0:
            r1 = (-c[i] - math.sqrt(max(c[i] * c[i] - t[i], 0.0))) / w[i]
            r2 = (-c[i] + math.sqrt(max(c[i] * c[i] - t[i], 0.0))) / w[i]
            ulo = max(ulo, min(r1, r2))
            uhi = min(uhi, max(r1, r2))
    if not (math.isfinite(ulo) and math.isfinite(uhi)):
        return -1
    if uhi < ulo:  # an empty segment up to rounding: a point
        ulo = uhi = 0.5 * (ulo + uhi)
    a, b = ulo, uhi
    its = 0
    while its < 200 and b - a > 4e-16 * max(abs(a), abs(b), 1e-300):
        its += 1
        u = 0.5 * (a + b)
        best, slope = np.inf, 0.0
        for i in range(d):
            if w[i] != 0.0:
                li = (-2.0 * c[i] * u - t[i] / w[i]) / w[i]
                si = -2.0 * c[i] / w[i]
                if li < best or (li == best and si < slope):
                    best, slope = li, si
        if slope - 2.0 * u > 0.0:
            a = u
        else:
            b = u
    ustar = 0.5 * (a + b)
    # optimality: 2 u* lies between the slopes of the chords active at u* (0 in the
    # superdifferential of h). Take the lowest chord at u* among those with slope >= 2 u*
    # (active just left of u*) and among those with slope <= 2 u* (just right); the caller
    # verifies that the resulting dual weights reproduce u*.
    iL, iR = -1, -1
    bestL, bestR = np.inf, np.inf
    for i in range(d):
        alpha[i] = 0.0
        if w[i] != 0.0:
            li = (-2.0 * c[i] * ustar - t[i] / w[i]) / w[i]
            si = -2.0 * c[i] / w[i]
            if si >= 2.0 * ustar and li < bestL:
                bestL, iL = li, i
            if si <= 2.0 * ustar and li < bestR:
                bestR, iR = li, i
    if iL < 0:
        iL = iR
    if iR < 0:
        iR = iL
    sL = -2.0 * c[iL] / w[iL]
    sR = -2.0 * c[iR] / w[iR]
    if iL == iR or sL <= sR:
        alpha[iR] = 1.0 / (w[iR] * w[iR])
    else:
        lam = min(max((2.0 * ustar - sR) / (sL - sR), 0.0), 1.0)
        alpha[iL] = lam / (w[iL] * w[iL])
        alpha[iR] += (1.0 - lam) / (w[iR] * w[iR])
    U[0] = ustar
    return its


@jit
def rcc1_segment_rows(w, C, T, Alpha, Ustar, iterations):
    """:func:`_segment_alpha` for every row (``C[n] = q - m``, ``T[n] = t``)."""
    for n in range(C.shape[0]):
        iterations[n] = _segment_alpha(w, C[n], T[n], Alpha[n], Ustar[n:n + 1])
