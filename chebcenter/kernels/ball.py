"""The minimum enclosing ball of a finite point set, certified both ways.

Private module. The walking algorithm of Fischer, Gärtner and Kutz ("Fast
smallest-enclosing-ball computation in high dimensions", ESA 2003): keep a support set T
on the boundary of a ball that contains every point, walk the center toward the
circumcenter of T, add the first point the shrinking ball touches, and drop a support
point whose affine coefficient is negative. It stops exactly when the center lies in
conv(T), which is the optimality condition of the minimum enclosing ball. Every answer
carries an enclosing radius and a dual lower bound (docs/theory.md §6.5).
:func:`ball_from_support` restarts from a known support by active sets (exact's batch
route, round after round), and gives up to the walk when it cannot go on.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import cholesky_solve

__all__ = ["ball_from_support", "certified_ball", "min_enclosing_ball", "walked_or_working_set_ball",
           "working_set_ball"]


@jit
def _circumcenter(P, T, k, center, lam, work, rhs, sol):
    """Center of the smallest sphere through ``P[T[:k]]`` within their affine hull.

    With ``M = [P_t1 - P_t0, ...]``: solve ``(M^T M) y = diag(M^T M) / 2``,
    ``center = P_t0 + M y``, affine coefficients ``lam = (1 - sum y, y)``.
    Returns False if the support points are affinely dependent.
    """
    dim = P.shape[1]
    t0 = T[0]
    n = k - 1
    for a in range(n):
        for b in range(a + 1):
            s = 0.0
            for i in range(dim):
                s += (P[T[a + 1], i] - P[t0, i]) * (P[T[b + 1], i] - P[t0, i])
            work[a, b] = s
            work[b, a] = s
        rhs[a] = 0.5 * work[a, a]
    scale = 0.0
    for a in range(n):
        scale = max(scale, work[a, a])
    if not cholesky_solve(work, rhs, sol, n, 1e-13 * scale):
        return False
    total = 0.0
    for a in range(n):
        lam[a + 1] = sol[a]
        total += sol[a]
    lam[0] = 1.0 - total
    for i in range(dim):
        s = P[t0, i]
        for a in range(n):
            s += sol[a] * (P[T[a + 1], i] - P[t0, i])
        center[i] = s
    return True


@jit
def farthest2(P, n, c):
    """``max_j ||P_j - c||^2`` over the first ``n`` rows of ``P``."""
    best = 0.0
    for j in range(n):
        s = 0.0
        for i in range(P.shape[1]):
            t = P[j, i] - c[i]
            s += t * t
        best = max(best, s)
    return best


@jit
def weighted_spread2(P, T, k, lam):
    """``sum_a w_a ||P_{T_a} - c_w||^2`` with the weights ``lam[:k]`` clipped to >= 0 and
    normalised (``c_w`` their weighted mean): a lower bound on the squared radius of any
    ball enclosing the points (MEB duality); 0 when no weight is positive."""
    dim = P.shape[1]
    wsum = 0.0
    for a in range(k):
        wsum += max(lam[a], 0.0)
    if not wsum > 0.0:
        return 0.0
    clam = np.zeros(dim)
    for a in range(k):
        w = max(lam[a], 0.0) / wsum
        for i in range(dim):
            clam[i] += w * P[T[a], i]
    lower2 = 0.0
    for a in range(k):
        w = max(lam[a], 0.0) / wsum
        s = 0.0
        for i in range(dim):
            t = P[T[a], i] - clam[i]
            s += t * t
        lower2 += w * s
    return lower2


@jit
def min_enclosing_ball(P, maxit, start):
    """Minimum enclosing ball of the rows of ``P`` (n x dim), walking from the center ``start``.

    Any ``start`` is correct (the walk begins with the ball about it through the farthest
    point, which encloses every point); one near the answer, such as the ball of a subset
    found before, saves most of the walk.

    Returns ``(center, radius, lower, support, n_support, status)``:
    ``radius = max_j ||P_j - center||`` (an enclosing radius, honest whatever
    happens); ``lower = sqrt(sum_j lam_j ||P_j - c_lam||^2)`` with the support's
    nonnegative, normalised affine weights, a lower bound on the optimal
    radius by MEB duality; ``status`` 0 optimal, 1 iteration limit,
    2 degenerate support (both still return a valid enclosing ball).
    """
    n, dim = P.shape
    cap = dim + 2
    T = np.empty(cap, dtype=np.int64)
    in_T = np.zeros(n, dtype=np.bool_)
    lam = np.zeros(cap)
    work = np.empty((cap, cap))
    rhs = np.empty(cap)
    sol = np.empty(cap)
    c = start.copy()
    caff = np.empty(dim)
    direction = np.empty(dim)
    far = 0
    best = -1.0
    for j in range(n):
        s = 0.0
        for i in range(dim):
            t = P[j, i] - c[i]
            s += t * t
        if s > best:
            best = s
            far = j
    T[0] = far
    in_T[far] = True
    k = np.int64(1)
    status = 1
    scale = math.sqrt(best) + 1e-300
    for _ in range(maxit):
        if not _circumcenter(P, T, k, caff, lam, work, rhs, sol):
            status = 2
            break
        dist = 0.0
        for i in range(dim):
            direction[i] = caff[i] - c[i]
            dist += direction[i] * direction[i]
        if math.sqrt(dist) <= 1e-14 * scale:
            # at the circumcenter: optimal iff it lies in conv(T)
            jmin = 0
            for a in range(1, k):
                if lam[a] < lam[jmin]:
                    jmin = a
            if lam[jmin] >= -1e-12:
                status = 0
                break
            in_T[T[jmin]] = False
            for a in range(jmin, k - 1):
                T[a] = T[a + 1]
            k -= 1
            continue
        # walk c -> caff; stop where a point outside T reaches the boundary
        t0 = T[0]
        r2 = 0.0
        for i in range(dim):
            t = P[t0, i] - c[i]
            r2 += t * t
        tmin = 1.0
        block = -1
        for j in range(n):
            if in_T[j]:
                continue
            den = 0.0
            dj2 = 0.0
            for i in range(dim):
                den += (P[t0, i] - P[j, i]) * direction[i]
                t = P[j, i] - c[i]
                dj2 += t * t
            den *= 2.0
            if den > 1e-14 * scale * math.sqrt(dist):
                tj = max(r2 - dj2, 0.0) / den
                if tj < tmin:
                    tmin = tj
                    block = j
        if block >= 0:
            for i in range(dim):
                c[i] += tmin * direction[i]
            if k >= cap:
                status = 2
                break
            T[k] = block
            in_T[block] = True
            k += 1
        else:
            for i in range(dim):
                c[i] = caff[i]
    radius2 = farthest2(P, n, c)
    # dual lower bound from the support weights (clipped to >= 0, renormalised)
    lower2 = weighted_spread2(P, T, k, lam) if status != 2 else 0.0
    support = T[:k].copy()
    return c, math.sqrt(radius2), math.sqrt(lower2), support, k, status


@jit
def ball_from_support(P, k_sup, maxit, c, T, lam, work, rhs, sol):
    """Minimum enclosing ball of the rows of ``P`` by active sets, started from the
    support ``T[:k_sup]`` (row indices of P) of a ball of some of them: the circumsphere of
    T (within its affine hull); a point of T with a negative affine weight leaves it, else
    the farthest point beyond the sphere joins it, until no point is outside. Each step is
    one small solve, where the walk (:func:`min_enclosing_ball`) rediscovers the support
    point by point; but nothing guarantees that the steps end, so after ``maxit`` steps, or
    on an affinely dependent T, it gives up (``status`` 1 or 2) and the caller walks.

    Returns ``(radius, lower, k, status)`` with the center in ``c``, the support in
    ``T[:k]`` and its weights in ``lam[:k]``; radius and lower as
    :func:`min_enclosing_ball` (an enclosing radius and a dual bound, whatever happens)."""
    n, dim = P.shape
    cap = min(T.size, dim + 1)
    k = k_sup
    in_T = np.zeros(n, dtype=np.bool_)
    for a in range(k):
        in_T[T[a]] = True
    for _ in range(maxit):
        if k == 0 or not _circumcenter(P, T, k, c, lam, work, rhs, sol):
            return math.inf, 0.0, k, 2
        jmin = 0
        for a in range(1, k):
            if lam[a] < lam[jmin]:
                jmin = a
        if lam[jmin] < -1e-12:
            in_T[T[jmin]] = False
            for a in range(jmin, k - 1):
                T[a] = T[a + 1]
            k -= 1
            continue
        r2 = 0.0
        for i in range(dim):
            t = P[T[0], i] - c[i]
            r2 += t * t
        far, best = -1, r2 * (1.0 + 1e-12)
        for j in range(n):
            if in_T[j]:
                continue
            s = 0.0
            for i in range(dim):
                t = P[j, i] - c[i]
                s += t * t
            if s > best:
                best, far = s, j
        if far < 0:
            radius2 = farthest2(P, n, c)
            return math.sqrt(radius2), math.sqrt(weighted_spread2(P, T, k, lam)), k, 0
        if k >= cap:
            return math.inf, 0.0, k, 2
        T[k] = far
        in_T[far] = True
        k += 1
    return math.inf, 0.0, k, 1


def _orders(n):
    """The point orders :func:`certified_ball` tries, made only when reached (most balls
    certify on the first: building the two permutations cost more than the walk on small
    sets)."""
    yield None
    if n <= 1:
        return
    yield np.arange(n)[::-1]
    for seed in (0, 1):
        yield np.random.default_rng(seed).permutation(n)


def certified_ball(P, gap_tol=1e-9, start=None):
    """:func:`min_enclosing_ball` made robust to degenerate supports.

    The walk can stop on an affinely dependent support (cospherical points, common at
    the vertices of box slices). Its answers are certified both ways (``radius`` encloses
    every point, ``lower`` is a dual bound), so it is rerun on up to three other point
    orders (reversed, two fixed permutations) until ``radius - lower <= gap_tol (1 +
    radius)``. The first run walks from ``start`` (default: the first point), the others
    from their first point; if none certifies, the walk is run on jittered points and
    judged on the true ones (see the code). Returns ``(center, radius, lower, support,
    status)`` where, if no run certifies, ``radius``/``center`` come from the run with the
    smallest radius, ``lower`` is the largest lower bound of all runs and ``status`` is
    that of the last run (non-zero).
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    n, dim = P.shape
    maxit = 200 * (dim + 2) + 1000
    best = None
    lower = 0.0
    status = 1
    for order in _orders(n):
        pts = P if order is None else np.ascontiguousarray(P[order])
        c0 = pts[0] if order is not None or start is None else np.asarray(start, dtype=np.float64)
        c, radius, low, sup, k, status = min_enclosing_ball(pts, maxit, np.ascontiguousarray(c0))
        support = sup[:k] if order is None else order[sup[:k]]
        lower = max(lower, low)
        if best is None or radius < best[1]:
            best = (c, radius, support)
        if status == 0 and best[1] - lower <= gap_tol * (1.0 + best[1]):
            return best[0], best[1], lower, np.sort(best[2]), 0
    if n > dim + 1:
        # ties: many points on one sphere (integer data at rank 1: tens of thousands of
        # vertices at the same distance) leave every order on a dependent support. The walk
        # is rerun on the points moved by a tiny random jitter (general position), and its
        # answer is judged on the true points: the radius about its center is computed
        # over them, and the lower bound is the walk's dual bound on the true points of its
        # support (a subset's radius bounds the set's from below; the dual bound holds for
        # any weights). A jitter of eps moves both by about eps sqrt(dim).
        spread = float(np.max(np.ptp(P, axis=0)))
        rng = np.random.default_rng(12345)
        for eps in (1e-12, 1e-10):
            moved = P + (eps * (spread + 1e-300)) * rng.standard_normal(P.shape)
            c, _, _, sup, k, _ = min_enclosing_ball(moved, maxit, np.ascontiguousarray(best[0]))
            radius = float(np.sqrt(np.max(np.sum((P - c) ** 2, axis=1))))
            sub = np.ascontiguousarray(P[sup[:k]])
            _, _, low, _, _, _ = min_enclosing_ball(sub, maxit, np.ascontiguousarray(c))
            lower = max(lower, low)
            if radius < best[1]:
                best = (c, radius, sup[:k].copy())
            if best[1] - lower <= gap_tol * (1.0 + best[1]):
                return best[0], best[1], lower, np.sort(best[2]), 0
    return best[0], best[1], lower, np.sort(best[2]), max(status, 1)


@jit
def _distances2(P, c, out):
    """``out[j] = ||P_j - c||^2`` for every row; returns the largest."""
    far2 = 0.0
    for j in range(P.shape[0]):
        s = 0.0
        for i in range(P.shape[1]):
            t = P[j, i] - c[i]
            s += t * t
        out[j] = s
        if s > far2:
            far2 = s
    return far2


@jit
def _working_set_walk(P, maxit, first, gap_tol):
    """The compiled loop of :func:`working_set_ball`: the walking ball of the ``first``
    points farthest from the centroid, then of those plus the dim + 2 farthest points
    outside, until none is. Returns ``(center, radius, lower, support, status)``: ``radius``
    over every point, ``lower`` the working set's dual bound, ``support`` indexing P;
    ``status`` 0 when the working set's walk certified (gap_tol), else the walk's status
    (the caller then certifies the working set itself)."""
    n, dim = P.shape
    centroid = np.zeros(dim)
    for j in range(n):
        for i in range(dim):
            centroid[i] += P[j, i]
    for i in range(dim):
        centroid[i] /= n
    d2 = np.empty(n)
    _distances2(P, centroid, d2)
    order = np.argsort(-d2, kind="mergesort")
    work = np.empty(n, dtype=np.int64)
    in_work = np.zeros(n, dtype=np.bool_)
    m = min(first, n)
    for j in range(m):
        work[j] = order[j]
        in_work[order[j]] = True
    c = centroid.copy()
    add = dim + 2
    while True:
        sub = np.empty((m, dim))
        for j in range(m):
            for i in range(dim):
                sub[j, i] = P[work[j], i]
        c, r, low, sup, k, status = min_enclosing_ball(sub, maxit, c)
        support = np.empty(k, dtype=np.int64)
        for j in range(k):
            support[j] = work[sup[j]]
        if status != 0 or r - low > gap_tol * (1.0 + r):
            return c, r, low, work[:m].copy(), max(status, 1)
        far2 = _distances2(P, c, d2)
        nout = 0
        for j in range(n):
            if d2[j] > r * r and not in_work[j]:
                nout += 1
        if nout == 0 or m >= n:
            return c, max(math.sqrt(far2), r), min(low, math.sqrt(far2)), support, 0
        out = np.empty(nout, dtype=np.int64)
        q = 0
        for j in range(n):
            if d2[j] > r * r and not in_work[j]:
                out[q] = j
                q += 1
        top = out[np.argsort(-d2[out], kind="mergesort")[:add]]
        for j in top:
            work[m] = j
            in_work[j] = True
            m += 1


def working_set_ball(P, gap_tol=1e-9):
    """:func:`certified_ball` of many points through a working set.

    The ball of the 2 (dim + 2) points farthest from the centroid first; then, while some
    point lies outside the current ball, the dim + 2 farthest of those join the working set
    and its ball is recomputed from the last center (compiled: :func:`_working_set_walk`).
    Where the working set's walk does not certify (a degenerate support, common among box
    corners), that working set goes through :func:`certified_ball` (other point orders,
    jitter) and the loop goes on in Python. The answer is certified as
    :func:`certified_ball`'s: ``radius`` is the largest distance from the center to any
    point of P (an enclosing radius whatever the working set), and ``lower`` is the working
    set's dual bound, which bounds the whole set's radius from below (a subset's minimum
    ball is no larger). Returns ``(center, radius, lower, support, status)`` with ``support``
    indexing P."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    n, dim = P.shape
    if n <= 4 * (dim + 2):
        return certified_ball(P, gap_tol, start=P.mean(axis=0) if n else None)
    maxit = 200 * (dim + 2) + 1000
    c, r, low, idx, status = _working_set_walk(P, maxit, 2 * (dim + 2), gap_tol)
    if status == 0:
        return c, r, low, np.sort(idx), 0
    work, start = idx, c
    while True:
        c, r, low, sup, status = certified_ball(P[work], gap_tol, start=start)
        diff = P - c
        dist2 = np.einsum("ij,ij->i", diff, diff)
        radius = math.sqrt(float(dist2.max()))
        dist2[work] = -1.0      # the working set is inside its own ball
        outside = np.flatnonzero(dist2 > r * r)
        if outside.size == 0 or work.size >= n:
            return c, max(radius, r), min(low, radius), np.sort(work[sup]), status
        add = outside[np.argsort(-dist2[outside], kind="stable")[: dim + 2]]
        work = np.concatenate([work, add])
        start = c


#: from this many points :func:`walked_or_working_set_ball` tries the working set first.
#: Measured (one thread, the sets exact's lifted route meets): 22 000 clustered vertices
#: of a thin set (d = 13, four float32 intervals), 21.4 against 29.8 ms a set; 3 000
#: vertices in general position (d = 10, m = 3, b +- 0.01), 1.02 against 0.52 ms
WORKING_SET_FIRST = 10_000


def walked_or_working_set_ball(P, gap_tol=1e-9, start=None):
    """:func:`certified_ball` of the rows of ``P`` (walked from ``start``), and where that walk
    stops short of ``gap_tol``, :func:`working_set_ball` too, keeping the smaller enclosing
    radius (with its center and support) and the larger lower bound: both radii enclose every
    point and both lower bounds hold, so the pair is certified as each one is. Thin intervals
    split each vertex of what is nearly a slice into a cluster (28 000 vertices a row at
    d = 13, four float32 intervals), where the walk over all of them stopped short on 7-12 %
    of rows and the working set certified every one; from :data:`WORKING_SET_FIRST` points
    on, the working set runs first and the walk only where it stops short. Returns
    ``(center, radius, lower, support, status)``, status 0 when ``radius - lower <= gap_tol
    (1 + radius)``."""
    runs = [lambda: certified_ball(P, gap_tol, start=start), lambda: working_set_ball(P, gap_tol)]
    if len(P) >= WORKING_SET_FIRST:
        runs.reverse()
    first, second = runs
    c, radius, lower, sup, status = first()
    if status == 0 or radius - lower <= gap_tol * (1.0 + radius):
        return c, radius, lower, sup, status
    c2, r2, l2, sup2, status2 = second()
    if r2 < radius:
        c, radius, sup = c2, r2, sup2
    lower = max(lower, l2)
    return c, radius, lower, sup, 0 if radius - lower <= gap_tol * (1.0 + radius) else max(status, status2, 1)

