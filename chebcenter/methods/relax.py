"""Relaxed Chebyshev centers: ``rcc1`` (Eldar-Beck-Teboulle) and ``rcc2``.

RCC1 (docs/theory.md §1), in u-space ``x = q + W u``: each box row is one quadratic
``(a_i^T u + q_i - lo_i)(a_i^T u + q_i - hi_i) <= 0``. The dual (EBT Thm III.1)

    minimise_{alpha >= 0, tau}  tau - sum_i alpha_i t_i
    s.t. [[M, v], [v^T, tau]] >= 0,  M >= I,
    M = W^T D_alpha W,  v = W^T D_alpha (q - m),  t_i = (q_i - lo_i)(q_i - hi_i)

gives ``u = -M^{-1} v``. ``solver="auto"`` (= ``"numba"``) solves it with the compiled
kernels of :mod:`chebcenter.kernels.rcc1`: in closed form when ``p = d - rank A = 1``,
else by the barrier method, rows in parallel with warm starts inside fixed chunks
(option ``warm_chunk``); rows the kernels cannot certify go to cvxpy. ``"clarabel"`` and
``"scs"`` build the cvxpy problem once (Parameters) and are the reference routes. For ANY ``alpha >= 0`` with ``M > I`` one has
``max_{x in S_F} ||x - x(alpha)||^2 <= eta(alpha) = v^T M^{-1} v - alpha^T t``,
so the radius we report is recomputed from the solver's alpha (rescaled to
make ``M >= I`` hold exactly) and is a certificate independent of the solver's
accuracy. ``alpha = 1`` gives half* with ``eta = R^2``; it is optimal iff some
``Z >= 0`` has ``a_i^T Z a_i = (h_i - lo_i)(hi_i - h_i)``, which we test first
with NNLS on ``(P o P) delta = s`` (``Z = W^T D_delta W``), then, on the rows left,
with pair generators too (:func:`alpha_one_certified`).

RCC2: the projection of the box midpoint onto S_F (the relaxation taken in
x-space with ``A x = b`` kept linear); its value
``sum_i ((hi_i-lo_i)/2)^2 - ||x - m||^2`` bounds the squared worst-case error
of its own center.

On interval rows ``L <= A x <= U`` (docs/theory.md §8.4-§8.5) both run on the lifted group
(:mod:`chebcenter._core.lifting`): rcc2 is the projection of the box midpoint onto S (a dual
coordinate ascent, certified at any dual point, or the metric QP in the lifted coordinates),
and rcc1 is the EBT dual with every box row and every interval row a quadratic, solved by
the same barrier and certified at its weights.
"""

from __future__ import annotations

import itertools

import numpy as np

from .._core.cvxpy_forms import EbtDual, ProjectionQP, status_of
from .._core.normalised import corner_radius
from .._core.validate import as_bool, as_positive_int, check_choice
from ..kernels.linalg import EPS, numerical_rank, rows_times
from ..kernels.nnls import CHUNK as NNLS_CHUNK
from ..kernels.nnls import nnls_rows
from ..kernels.parallel import row_blocks
from ..kernels.projection import PROJECT_MAXIT, PROJECTED, project_points
from ..kernels.rcc1 import COLD_MU, CONVERGED, NUMERICAL_FAILURE, ROBUST_MU, rcc1_barrier_rows, rcc1_segment_rows
from ..kernels.rcc1_certificate import certify_rows
from ..kernels.rcc2_intervals import RCC2_OPTIMAL, box_qp_patterns, rcc2_interval_rows
from ..kernels.simplex import RANGES_OK, range_rows
from ..results import Status
from .general_sets import quadratic_rcc1
from .spec import GENERAL, Context, Extra, MethodOutput, MethodSpec, ProblemCache, Route, SetRoute, WarmupStep

__all__ = ["RCC1", "RCC2", "rcc1_certificate"]

#: per-problem cvxpy problems of this module (the reference routes: at d = 50 Clarabel
#: takes 9-15 s per solve and SCS 0.1-0.5 s on this machine; "auto" uses the compiled solver)
_SOLVERS = ProblemCache()


def certificate_delta(Q):
    """Per-row widening of the box that covers the rounding of ``q = A^+ b`` and ``W``
    (normalised units, where the largest half-width is 1):
    ``delta = 4 eps (1 + max_i |q_i|)``.

    This is the backward-error view: q and W are computed from orthogonal factors, so the
    computed affine set is the exact one of a matrix within a few eps of A; points of that
    set lie within ``delta`` of the box. (The forward error, up to ``cond(A)`` times
    larger, is not a property of the slice but of its conditioning; see docs/theory.md.)"""
    return 4.0 * EPS * (1.0 + np.max(np.abs(Q), axis=1, initial=0.0))


def rcc1_certificate(W, q, lo, hi, alpha, delta=0.0):
    """Center and certified bound of the RCC1 dual at a given ``alpha``.

    Returns ``(x, eta, alpha_scaled)``: ``alpha`` is clipped at 0 and scaled so that
    ``M = W^T D_alpha W >= I`` holds despite rounding; then ``x = q - W M^{-1} v`` and
    ``eta = v^T M^{-1} v - alpha^T t`` (plus its rounding allowance) with
    ``max_{x' in S_F} ||x' - x||^2 <= eta`` for S_F's box widened by ``delta``. Returns
    ``(None, nan, alpha)`` if ``M`` is not positive definite. (One row of the batch
    kernel :func:`chebcenter.kernels.rcc1_certificate.certify_rows`.)
    """
    W = np.ascontiguousarray(W, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    Alpha = np.array(alpha, dtype=np.float64, ndmin=2)  # clipped and rescaled in place
    X = np.full((1, q.size), np.nan)
    Eta = np.full(1, np.nan)
    Q = q[None, :]
    certify_rows(W, Q, Q - 0.5 * (lo + hi), (Q - lo + delta) * (Q - hi - delta), Alpha, X, Eta,
                 np.zeros(1, dtype=np.bool_))
    if np.isnan(Eta[0]):
        return None, float("nan"), Alpha[0]
    return X[0], float(Eta[0]), Alpha[0]


#: the pair generators of the alpha = 1 test (``Z = W^T g g^T W`` for ``g = e_i +- e_j``)
#: are tried up to this d, on the rows the coordinate generators leave open, and only when
#: the null space is at least twice the rank (p >= 2 rank). Measured (4 000 rows per
#: family, softmax-model slices, one thread): at d = 10, rank 3 the pairs prove 99 % of the
#: rows they are tried on (6.9 against 28.6 us per row without them); at d, rank = 16, 3 and
#: 12, 3 all or nearly all; where p < 2 rank (d, rank = 6, 3; 8, 4; 10, 5; 12, 6; 16, 8)
#: alpha = 1 is rarely optimal, the pairs prove 0-11 % of the rows, and trying them costs up
#: to 20 % (up to 200 us a row at d = 16: d^2 columns, O(d^4) a row)
PAIR_GENERATORS_TO_D = 16


def alpha_one_certified(N, S, tol=1e-10, rank=0):
    """Which rows ``s`` of ``S`` (``s_i = (h_i - lo_i)(hi_i - h_i) >= 0``, h in the box)
    prove alpha = 1 RCC1-optimal, for the null projector ``N = W W^T`` (docs/theory.md §1).

    alpha = 1 is optimal iff ``a_i^T Z a_i = s_i`` for every i with some ``Z >= 0``. Any
    nonnegative combination ``Z = sum_g delta_g W^T g g^T W`` is PSD and gives
    ``a_i^T Z a_i = sum_g delta_g (N g)_i^2``, so a nonnegative solution of that linear
    system is a proof (NNLS, residual at most ``tol ||s||``). First the coordinate
    generators ``g = e_j`` (d columns, ``N o N``); then, for the rows left, d up to
    ``PAIR_GENERATORS_TO_D`` and ``d - rank >= 2 rank`` (``rank``: of the constraints N
    projects out), also ``g = e_i + e_j`` and ``e_i - e_j`` (d^2 columns): their
    cone is larger, and on slices of rank 3 at d = 10 it proves 99 % of the rows that the
    coordinate generators leave to the barrier (which then finds RCC2's value there)."""
    S = np.ascontiguousarray(S, dtype=np.float64)
    n, d = S.shape
    ok = np.zeros(n, dtype=np.bool_)
    res = np.empty(n)
    PP = np.ascontiguousarray(N ** 2)
    row_blocks(n, NNLS_CHUNK, lambda a, b: nnls_rows(PP, S[a:b], tol, 50 * d, ok[a:b], res[a:b]))
    left = np.flatnonzero(~ok)
    if left.size and 2 <= d <= PAIR_GENERATORS_TO_D and d - rank >= 2 * rank:
        i, j = np.triu_indices(d, 1)
        PP = np.ascontiguousarray(np.hstack([N, N[:, i] + N[:, j], N[:, i] - N[:, j]]) ** 2)
        S2 = np.ascontiguousarray(S[left])
        ok2 = np.zeros(left.size, dtype=np.bool_)
        res2 = np.empty(left.size)
        row_blocks(left.size, NNLS_CHUNK, lambda a, b: nnls_rows(PP, S2[a:b], tol, 50 * d, ok2[a:b],
                                                                    res2[a:b]))
        ok[left] = ok2
    return ok


#: the checks a solved RCC1 row must pass (normalised units: the largest box half-width
#: is 1): its center lies in the box (a true optimum does) and its radius is at most the
#: radii of the two coarser relaxations, R (alpha = 1) and RCC2's, within _ORDER_CHECK
#: relative plus _ORDER_FLOOR absolute (the accuracy of eta on slices that are points or
#: nearly so, where the dual weights grow like 1/eta)
_BOX_CHECK = 1e-8
_ORDER_CHECK = 1e-7
_ORDER_FLOOR = 1e-5


def _rcc1_checks(prob, ctx, idx, X, Eta, Alpha, delta):
    """Which of the rows ``idx`` (positions in ctx) with centers X, values Eta and weights
    Alpha pass the optimality checks; returns ``(passed, reasons)``."""
    slack = 1e-12
    viol = np.maximum(np.max(prob.lo - X, axis=1, initial=0.0), np.max(X - prob.hi, axis=1, initial=0.0))
    R2 = ctx.radius_ball[idx] ** 2
    P = ctx.projection()[idx]
    dev = P - prob.mid
    eta2 = prob.half_diag_sq - np.einsum("ij,ij->i", dev, dev)
    finite = np.isfinite(Eta)
    in_box = finite & (viol <= _BOX_CHECK)
    def allowed(e):
        return (np.sqrt(np.maximum(e, 0.0)) * (1.0 + _ORDER_CHECK) + _ORDER_FLOOR) ** 2 + slack

    below_R = finite & (Eta <= allowed(R2))
    below_2 = finite & ~(allowed(eta2) < Eta)  # NaN eta2: not checked
    reasons = np.full(idx.size, None, dtype=object)
    reasons[~below_2] = "rcc1 value above rcc2's (not the relaxation's optimum)"
    reasons[~below_R] = "rcc1 value above R^2 (not the relaxation's optimum)"
    reasons[~in_box] = "rcc1 center outside the box (not the relaxation's optimum)"
    reasons[~finite] = "no certificate"
    return in_box & below_R & below_2, reasons


def _rcc1_slices(ctx: Context) -> MethodOutput:
    """Eldar-Beck-Teboulle relaxed Chebyshev center of slice rows (see the module docstring).

    Routes, in order, for each row: the alpha = 1 NNLS certificate (``fast_path``); the
    compiled solver (closed form for p = 1, barrier with warm starts otherwise); a cold
    re-solve for a warm-started row that failed its checks; cvxpy. Every answer is
    certified from its alpha (:func:`rcc1_certificate`) and checked
    (:func:`_rcc1_checks`); a row that no route brings through the checks keeps the
    smallest valid certificate it got (or alpha = 1, half* with radius R) and is
    INACCURATE, with the reason in ``extras["check"]``. The general body: :func:`rcc1`.
    """
    prob = ctx.problem
    opts = ctx.options
    n, d = ctx.rows.size, prob.d
    solver = opts["solver"]
    centers = np.full((n, d), np.nan)
    radii = np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    alphas = np.full((n, d), np.nan)
    etas = np.full(n, np.nan)
    route = np.full(n, None, dtype=object)
    check = np.full(n, None, dtype=object)
    if prob.p == 0:  # a single point: nothing to relax
        return MethodOutput(ctx.Q.copy(), np.zeros(n), codes,
                            {"alpha": np.zeros((n, d)), "eta": np.zeros(n),
                             "route": np.full(n, "unique solution", dtype=object)})
    one = np.zeros(n, dtype=np.bool_)
    if opts["fast_path"]:  # the NNLS test of alpha = 1 on rows whose half* point is in the box
        inside = np.flatnonzero(np.all((ctx.H >= prob.lo) & (ctx.H <= prob.hi), axis=1))
        Hc = ctx.H[inside]
        ok = alpha_one_certified(prob.null_projector, (Hc - prob.lo) * (prob.hi - Hc), rank=prob.rank)
        one[inside[ok]] = True
        centers[one], alphas[one] = ctx.H[one], 1.0
        etas[one] = ctx.radius_ball[one] ** 2
        radii[one] = ctx.radius_ball[one]
        route[one] = "alpha=1 (nnls certificate)"
    todo = np.flatnonzero(~one)
    delta = certificate_delta(ctx.Q)
    best = _Best(n, d)
    if solver in ("auto", "numba") and todo.size:
        todo = _rcc1_numba(ctx, todo, delta, centers, alphas, etas, route, best, check)
    if todo.size:
        todo = _point_rows(ctx, todo, delta, centers, alphas, etas, route, check)
    _cvxpy_rows(ctx, todo, delta, centers, alphas, etas, codes, route, check, best)
    # rows no route certified: the smallest valid certificate seen, else alpha = 1
    lost = np.flatnonzero(np.isnan(etas))
    for k in lost:
        codes[k] = Status.INACCURATE
        if np.isfinite(best.eta[k]):
            centers[k], alphas[k], etas[k] = best.x[k], best.alpha[k], best.eta[k]
        else:
            centers[k], alphas[k], etas[k] = ctx.H[k], 1.0, ctx.radius_ball[k] ** 2
            check[k] = f"{check[k]}; the alpha = 1 certificate (half*, radius R) is reported"
    _not_above_rcc2(ctx, centers, etas, codes, route)
    radii = np.sqrt(np.maximum(etas, 0.0))
    extras = {"alpha": alphas, "eta": etas, "route": route}
    if any(c is not None for c in check):
        extras["check"] = check
    return MethodOutput(centers, radii, codes, extras)


def _cvxpy_rows(ctx, todo, delta, centers, alphas, etas, codes, route, check, best) -> None:
    """The rows no compiled route certified, by the EBT dual in cvxpy (Clarabel, or SCS past
    p = 12, unless ``solver`` names one), certified from its alpha and checked like the others."""
    prob, solver = ctx.problem, ctx.options["solver"]
    for k in todo:
        name = solver if solver in ("clarabel", "scs") else ("clarabel" if prob.p <= 12 else "scs")
        dual = _SOLVERS.get(prob, ("rcc1", name), lambda name=name: EbtDual(name, factors=prob.W))
        c, t = _dual_data(prob, ctx.Q[k:k + 1])
        alpha, status = dual.solve(c[0][:, None] * prob.W, t[0])
        route[k] = name if solver == name else f"{route[k]}; cvxpy {name} fallback"
        st = status_of(status, dual=True)
        if alpha is None or st > Status.INACCURATE:
            check[k] = f"cvxpy {name}: {status}"
            continue
        x, eta, alpha = rcc1_certificate(prob.W, ctx.Q[k], prob.lo, prob.hi, alpha, delta[k])
        if x is None:
            check[k] = f"cvxpy {name}: no certificate from its alpha"
            continue
        best.offer(k, x, eta, alpha)
        passed, why = _rcc1_checks(prob, ctx, np.array([k]), x[None, :], np.array([eta]),
                                   alpha[None, :], delta)
        if passed[0]:
            centers[k], alphas[k], etas[k] = x, alpha, eta
            codes[k] = st
            check[k] = None if st is Status.OPTIMAL else f"cvxpy {name}: {status}"
        else:
            check[k] = why[0]


def _not_above_rcc2(ctx, centers, etas, codes, route):
    """Keep ``eta_RCC1 <= eta_RCC2`` on every row (in place).

    In exact arithmetic RCC1 is the tighter relaxation (docs/theory.md §1.3), but the checks
    accept an RCC1 value up to their accuracy floor above RCC2's (``_ORDER_CHECK`` relative
    plus ``_ORDER_FLOOR`` absolute, needed on near-point slices where the dual weights grow
    like 1/eta), and fuzzing found OPTIMAL rcc1 radii up to 4.8 % above rcc2's there. Such
    a row gets RCC2's answer: its center lies in S_F and its radius bounds S_F (§1.3), and
    it is at most the RCC1 value the row had, so the row keeps its status and both its
    contract and the ordering hold exactly. The route says so."""
    ok = np.flatnonzero(codes <= Status.INACCURATE)
    if ok.size == 0:
        return
    P = ctx.projection()[ok]
    prob = ctx.problem
    for j in np.flatnonzero(np.isnan(P[:, 0])):   # the compiled projection did not converge: rcc2's own QP
        x, st = _qp_projection(prob, ctx.Q[ok[j]])
        if x is not None and st == Status.OPTIMAL:
            P[j] = x
    dev = P - prob.mid
    eta2 = np.maximum(prob.half_diag_sq - np.einsum("ij,ij->i", dev, dev), 0.0)
    worse = np.isfinite(eta2) & np.all(np.isfinite(P), axis=1) & (etas[ok] > eta2)
    for j in np.flatnonzero(worse):
        k = ok[j]
        centers[k], etas[k] = P[j], eta2[j]
        route[k] = f"{route[k]}; rcc2's point (a lower value)"


def _point_rows(ctx, todo, delta, centers, alphas, etas, route, check):
    """Rows whose S_F is one point as far as the checks can tell, answered from LP ranges.

    The relaxation of a point has no interior: its dual weights grow without bound and
    its value drowns in rounding (a barrier value of 1e17 was seen on a slice that meets
    the box in one corner point), and an SDP solver's center misses the box by its own
    tolerance. So the rows the compiled route could not certify get their LP ranges
    (compiled, 2 d LPs each), widened by the rounding allowance. If the ball about the
    projection of the midpoint (a point of S_F) through the farthest corner of those ranges
    has a radius below the checks' floor (``_ORDER_FLOOR``), that ball is the answer: it
    contains S_F, and its radius is below the accuracy to which the checks can compare any
    relaxation value there.
    The same rule answers point-like polytopes (:class:`chebcenter.Polytope`). Returns
    the rows still open."""
    prob = ctx.problem
    n, d = todo.size, prob.d
    Vr = np.ascontiguousarray(prob.Vr)
    Beta = rows_times(ctx.Q[todo], Vr)
    lower, upper = np.empty((n, d)), np.empty((n, d))
    status = np.zeros(n, dtype=np.int64)
    range_rows(Vr, Beta, prob.lo, prob.hi, lower, upper, status)
    widen = (delta[todo] + 1e-9 * (1.0 + np.maximum(np.abs(prob.lo), np.abs(prob.hi)).max(initial=0.0)))[:, None]
    C = ctx.projection()[todo]
    reach = np.sqrt(np.sum(np.maximum(C - (lower - widen), (upper + widen) - C) ** 2, axis=1))
    point = (status == RANGES_OK) & np.isfinite(reach) & np.all(np.isfinite(C), axis=1) & (reach <= _ORDER_FLOOR)
    for j in np.flatnonzero(point):
        k = todo[j]
        centers[k], alphas[k], etas[k] = C[j], 0.0, reach[j] ** 2
        route[k] = (f"{route[k]}; " if route[k] else "") + \
            "one point up to rounding: the ball through the corners of its LP ranges"
        check[k] = None
    return todo[~point]


class _Best:
    """The smallest valid certificate seen per row (a fallback for rows no route certifies)."""

    def __init__(self, n, d):
        self.x = np.full((n, d), np.nan)
        self.alpha = np.full((n, d), np.nan)
        self.eta = np.full(n, np.inf)

    def offer(self, k, x, eta, alpha):
        if np.isfinite(eta) and eta < self.eta[k]:
            self.x[k], self.eta[k], self.alpha[k] = x, eta, alpha


def _rcc1_numba(ctx, todo, delta, centers, alphas, etas, route, best, check):
    """The compiled solvers on the positions ``todo``; returns the positions left for cvxpy.

    p = 1: the closed form. Otherwise the barrier kernel over the whole batch on all cores
    with warm starts inside fixed chunks (cold starts at mu = COLD_MU), then a cold re-solve
    from mu = ROBUST_MU, one row per chunk, of the rows that did not converge or fail their
    checks: a warm start or the shorter cold start may save Newton steps but never changes
    an answer that is returned."""
    prob = ctx.problem
    W = np.ascontiguousarray(prob.W)
    rows, chunk = todo, 1
    if prob.p == 1:
        X, Alpha, Eta, ok, its = _segment(ctx, rows, delta, W)
        label = "segment closed form ({} bisection steps)"
    else:
        chunk = max(1, min(ctx.options["warm_chunk"], rows.size // 8))
        X, Alpha, Eta, ok, its = _barrier(ctx, rows, delta, W, chunk, COLD_MU)
        label = "numba barrier ({} Newton steps)"
    passed, why = _rcc1_checks(prob, ctx, rows, X, Eta, Alpha, delta)
    failed = ~(ok & passed)
    if prob.p > 1 and failed.any():
        # every row that failed, re-solved alone from the robust cold start (mu = 1)
        again = rows[failed]
        X2, A2, E2, ok2, its2 = _barrier(ctx, again, delta, W, 1, ROBUST_MU)
        p2, why2 = _rcc1_checks(prob, ctx, again, X2, E2, A2, delta)
        pos = np.searchsorted(rows, again)
        for j, k in enumerate(pos):
            if ok[k]:
                best.offer(rows[k], X[k], Eta[k], Alpha[k])
            X[k], Alpha[k], Eta[k], ok[k], its[k] = X2[j], A2[j], E2[j], ok2[j], its[k] + its2[j]
            passed[k], why[k] = p2[j], why2[j]
    good = ok & passed
    g = rows[good]
    centers[g], alphas[g], etas[g] = X[good], Alpha[good], Eta[good]
    route[g] = [label.format(i) for i in its[good]]
    bad = rows[~good]
    for j in np.flatnonzero(~good):
        if ok[j]:
            best.offer(rows[j], X[j], Eta[j], Alpha[j])
        route[rows[j]] = "compiled solver: " + (why[j] or "no convergence")
        check[rows[j]] = why[j] or "compiled solver did not converge"
    return bad


def dual_data(Q, lo, hi, dead):
    """The RCC1 dual's data about the points ``Q`` (rows; bounds ``lo``, ``hi`` shared or one
    row each): ``C = q - (lo + hi) / 2`` and ``T = (q - lo)(q - hi)``. A coordinate whose row of
    W is 0 (``dead``: constant on the set, inside its bounds by the feasibility test) gets
    ``c_i = 0``, ``t_i = -w_i^2``: its constraint cannot bind, and a rounding-level
    ``t_i > 0`` cannot make the dual unbounded. The one body of the slices' data (about
    ``q = A^+ b``) and a lifted group's (about a point of each set)."""
    lo, hi = np.broadcast_to(lo, Q.shape), np.broadcast_to(hi, Q.shape)
    C = np.ascontiguousarray(Q - 0.5 * (lo + hi))
    T = np.ascontiguousarray((Q - lo) * (Q - hi))
    if dead.any():
        C[:, dead] = 0.0
        T[:, dead] = -(0.5 * (hi - lo)[:, dead]) ** 2
    return C, T


def _dual_data(prob, Q):
    """:func:`dual_data` of slice rows about ``q = A^+ b``; the determined coordinates are dead."""
    return dual_data(Q, prob.lo, prob.hi, prob.determined)


def _segment(ctx, rows, delta, W):
    """RCC1 in closed form for p = 1 (bisection), certified."""
    prob = ctx.problem
    Q = np.ascontiguousarray(ctx.Q[rows])
    C, T = _dual_data(prob, Q)
    A = np.zeros_like(C)
    its = np.zeros(rows.size, dtype=np.int64)
    ustar = np.full(rows.size, np.nan)
    rcc1_segment_rows(np.ascontiguousarray(W[:, 0]), C, T, A, ustar, its)
    X, Eta, ok = _certify(prob, Q, A, delta[rows])
    ok &= its >= 0
    # the dual weights must reproduce the bisection's u*
    far = np.linalg.norm(X - Q - np.outer(ustar, W[:, 0]), axis=1)
    ok &= far <= 1e-9 * (1.0 + np.linalg.norm(Q, axis=1))
    return X, A, Eta, ok, its


#: the barrier's last mu: the duality gap is about mu (d + p), so eta is within ~1e-9
#: relative of the relaxation's optimum (measured 5e-10 against mu = 1e-10, which costs two
#: more Newton steps per row)
MU_MIN = 1e-9


def _barrier(ctx, rows, delta, W, chunk, cold_mu):
    """The barrier kernel on ``rows`` (chunks of ``chunk`` rows warm-started, cold starts at
    ``mu = cold_mu``), certified."""
    prob = ctx.problem
    Q = np.ascontiguousarray(ctx.Q[rows])
    C, T = _dual_data(prob, Q)
    A = np.zeros_like(C)
    its = np.zeros(rows.size, dtype=np.int64)
    state = np.zeros(rows.size, dtype=np.int64)
    row_blocks(rows.size, chunk, lambda a, b: rcc1_barrier_rows(
        W, C[a:b], T[a:b], A[a:b], its[a:b], state[a:b], MU_MIN, 150, chunk, cold_mu))
    X, Eta, ok = _certify(prob, Q, A, delta[rows])
    return X, A, Eta, ok & (state == CONVERGED), its


def _certify(prob, Q, Alpha, delta):
    """:func:`certify` of slice rows, the box widened by the largest ``delta``."""
    dmax = float(np.max(delta, initial=0.0))
    return certify(prob.W, Q, Q - prob.mid, (Q - prob.lo + dmax) * (Q - prob.hi - dmax), Alpha)


def _qp_projection(prob, q, solver="clarabel"):
    """The projection of the box midpoint onto S_F (the slice through ``q``) by a cvxpy QP
    (Clarabel or SCS), clipped to the box: ``(x, status)``, or ``(None, status)`` when the
    solver failed."""
    qp = _SOLVERS.get(prob, ("rcc2", solver), lambda: ProjectionQP(solver, prob.Vr, prob.lo, prob.hi, prob.mid))
    x, status = qp.solve(prob.Vr @ q)
    st = status_of(status)
    if x is None or st > Status.INACCURATE:
        return None, st
    return np.clip(x, prob.lo, prob.hi), st


def _rcc2_solver(name, value):
    """rcc2's solver, in rcc1's vocabulary: ``auto`` (= ``numba``, the compiled dual Newton),
    ``clarabel`` or ``scs`` (the projection as a cvxpy QP); ``cvxpy``, its earlier name for
    ``clarabel``, warns for one release."""
    if value == "cvxpy":
        import warnings

        warnings.warn("rcc2's solver='cvxpy' is now solver='clarabel' (or 'scs'), as for rcc1", DeprecationWarning,
                      stacklevel=6)
        return "clarabel"
    return check_choice(name, value, _RCC2_SOLVERS)


#: rcc2's solvers (the compiled dual Newton, or the projection QP in cvxpy)
_RCC2_SOLVERS = ("auto", "numba", "clarabel", "scs")


def _rcc2_slices(ctx: Context) -> MethodOutput:
    """Projection of the box midpoint onto S_F (compiled dual Newton; cvxpy on request). The
    general body: :func:`rcc2`."""
    prob = ctx.problem
    n = ctx.rows.size
    centers = ctx.projection()
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    solver = ctx.options["solver"]
    cvx = solver in ("clarabel", "scs")
    todo = np.arange(n) if cvx else np.flatnonzero(np.isnan(centers[:, 0]))
    for k in todo:
        x, st = _qp_projection(prob, ctx.Q[k], solver if cvx else "clarabel")
        if x is None:  # S_F was found nonempty: anything else is the solver's
            codes[k] = Status.SOLVER_ERROR
            centers[k] = np.nan
            continue
        centers[k] = x
        codes[k] = st
    dev = centers - prob.mid
    radii = np.sqrt(np.maximum(prob.half_diag_sq - np.einsum("ij,ij->i", dev, dev), 0.0))
    # RCC2's radius bounds S_F only about the projection itself; a solver's inexact point gets
    # the farthest box corner's distance, which bounds every subset of the box
    loose = np.flatnonzero(codes == Status.INACCURATE)
    extras = {}
    if loose.size:
        radii[loose] = corner_radius(prob, centers[loose])
        check = np.full(n, None, dtype=object)
        check[loose] = "the QP solver stopped short of the projection: the radius is the farthest box corner's distance"
        extras["check"] = check
    return MethodOutput(centers, radii, codes, extras)


# -- interval rows (docs/theory.md §8): the lifted group of chebcenter._core.lifting ------------------

#: the dual coordinate ascent of rcc2 without equation rows: sweeps, and the gap between
#: ||c||^2 and its Lagrangian bound (relative to 1 + H) at which a row is OPTIMAL
_DUAL_SWEEPS = 200
_DUAL_GAP = 1e-12
#: why an unconverged projection's row is INACCURATE, and what its radius is then
_NO_QP = "the projection onto S did not converge: the radius is the farthest box corner's distance"


def lifted_rcc2(core, grp, k, Y0):
    """The projection of the box midpoint onto S and RCC2's radius about it. The radius
    ``sqrt(R^2 - ||x||^2)`` bounds S only at the projection itself (its variational
    inequality); where the QP did not converge the row gets the farthest box corner's distance
    instead, which bounds every subset of the box about any point."""
    n, d = k.size, core.d
    X, R, ok = np.full((n, d), np.nan), np.full(n, np.nan), np.zeros(n, dtype=bool)
    if grp.p and grp.AE.shape[0] == 0:
        # no equation rows: the dual's coordinate ascent, its radius certified at any dual
        # point (kernels/rcc2_intervals); rows it does not certify go to the QP below
        Lw, Uw, Tol = (np.ascontiguousarray(M[k, d:]) for M in (grp.Lo, grp.Hi, grp.tol))
        st = np.ones(n, dtype=np.int64)
        row_blocks(n, 1, lambda a, b: rcc2_interval_rows(grp.AI, core.hi, Lw[a:b], Uw[a:b], Tol[a:b], _DUAL_SWEEPS,
                                                         _DUAL_GAP, X[a:b], R[a:b], st[a:b]))
        ok = st == RCC2_OPTIMAL
    todo = np.flatnonzero(~ok)
    if todo.size:
        Y, ok_q, _ = grp.project(k[todo], np.zeros((todo.size, d)), Y0[todo])
        Xq = grp.invert(Y)
        Rq = np.sqrt(np.maximum(core.half_diag_sq - np.sum(Xq * Xq, axis=1), 0.0))
        X[todo], R[todo], ok[todo] = Xq, np.where(ok_q, Rq, corner_radius(core, Xq)), ok_q
    return X, R, ok


def _rcc2_slab(ctx: Context) -> MethodOutput:
    """A slab ``l <= a^T x <= u`` (one interval row, no equation): the projection of the box
    midpoint m onto S is its projection onto the slice ``a^T x = t`` at ``t = clamp(a^T m, l,
    u)``. The squared distance from m to ``{x in box : a^T x = t}`` is a convex function of t
    (the value of a convex QP in its right-hand side) and is 0 at ``t = a^T m``, since m lies
    in the box; on ``[l, u]`` it is least at the clamp. So a slab row costs what a slice row
    costs: the slice's half* point ``t a`` (a of unit norm, m = 0 in the core's frame) where it
    lies in the box, else the compiled projection; rows it leaves open go to the general body."""
    core, grp, k = ctx.problem, ctx.group, ctx.k
    n, d = k.size, core.d
    a = np.ascontiguousarray(grp.AI[:1])
    t = np.clip(0.0, grp.Lo[k, d], grp.Hi[k, d])
    X = t[:, None] * a
    done = np.ones(n, dtype=bool)
    out = np.flatnonzero(np.any(np.abs(X) > core.hi, axis=1))
    if out.size:
        P = np.empty((out.size, d))
        state = np.zeros(out.size, dtype=np.int64)
        its = np.zeros(out.size, dtype=np.int64)
        Beta = np.ascontiguousarray(t[out, None])
        zero = np.zeros((out.size, d))
        row_blocks(out.size, 1, lambda i, j: project_points(zero[i:j], a, Beta[i:j], core.lo, core.hi, P[i:j],
                                                            state[i:j], its[i:j], PROJECT_MAXIT, core._project_tol))
        X[out] = P
        done[out] = state == PROJECTED
    return _rcc2_rows_or_body(ctx, X, done, "slab")


#: the most interval rows the unboxed route takes (it visits the 3^m patterns of their bounds)
UNBOXED_MAX_ROWS = 4


def _rcc2_unboxed(ctx: Context) -> MethodOutput:
    """No equation and at most ``UNBOXED_MAX_ROWS`` interval rows ``l <= A_I x <= u`` (unit
    rows): the projection of the box midpoint m = 0 onto the rows alone, ``T = {x : l <= A_I
    x <= u}``, is ``A_I^T G^{-1} t*`` (``G = A_I A_I^T``), t* the minimiser of ``t^T G^{-1} t``
    over the box ``[l, u]``, since ``min ||x||^2`` subject to ``A_I x = t`` is ``t^T G^{-1} t``
    at ``x = A_I^T G^{-1} t``. Where that point lies in the box it is the projection onto
    ``S = T ∩ box`` as well (it is in S, and no point of T is nearer). The QP in t is solved
    by its KKT conditions, compiled row by row (:func:`chebcenter.kernels.rcc2_intervals.box_qp_patterns`):
    every pattern of the bounds (each row at l, at u, or free) gives the free rows' values in
    closed form, the same for the whole group, and a row takes the first pattern, its likeliest
    first, whose values are feasible and whose gradient signs fit. A row no pattern fits (a
    tie at rounding level), or whose point leaves the box, goes to the general body, as does
    a group with more rows or rows near dependence (G's condition past 1e8)."""
    core, grp, k = ctx.problem, ctx.group, ctx.k
    n, d = k.size, core.d
    AI = grp.AI
    mI = AI.shape[0]
    G = AI @ AI.T
    sv = np.linalg.svd(G, compute_uv=False)
    if mI > UNBOXED_MAX_ROWS or not sv[-1] > 1e-8 * sv[0]:
        out = rcc2(ctx)
        out.extras["path"] = np.full(n, GENERAL, dtype=object)
        return out
    H = np.linalg.inv(G)
    H = np.ascontiguousarray(0.5 * (H + H.T))
    lo_t, hi_t = np.ascontiguousarray(grp.Lo[k, d:]), np.ascontiguousarray(grp.Hi[k, d:])
    pattern, M = _patterns(H)
    # each row's likeliest pattern first: every row at the bound nearest 0, free where its
    # interval holds 0
    first = np.where(lo_t > 0, 0, np.where(hi_t < 0, 1, 2)) @ (3 ** np.arange(mI))
    T = np.full((n, mI), np.nan)
    found = np.zeros(n, dtype=np.bool_)
    row_blocks(n, 1, lambda a, b: box_qp_patterns(H, M, pattern, lo_t[a:b], hi_t[a:b], first[a:b], T[a:b],
                                                  found[a:b]))
    # x = A_I^T H t per row, in the library's fixed summation order (a row's bits alone or in a batch)
    X = rows_times(np.where(found[:, None], T, 0.0), np.ascontiguousarray((H @ AI).T))
    done = found & np.all(np.abs(X) <= core.hi, axis=1)
    return _rcc2_rows_or_body(ctx, X, done, "unboxed")


def _patterns(H):
    """Every pattern of m bounds (``pattern[P, j]``: 0 at l, 1 at u, 2 free; pattern P is the
    base-3 number of its digits) and its closed form ``M[P] = -H_FF^{-1} H_FB`` on the free rows."""
    m = H.shape[0]
    pattern = np.array(list(itertools.product((0, 1, 2), repeat=m)), dtype=np.int64)[:, ::-1]
    pattern = np.ascontiguousarray(pattern)
    M = np.zeros((pattern.shape[0], m, m))
    for p in range(pattern.shape[0]):
        F, B = np.flatnonzero(pattern[p] == 2), np.flatnonzero(pattern[p] != 2)
        if F.size and B.size:
            M[p][np.ix_(F, B)] = -np.linalg.solve(H[np.ix_(F, F)], H[np.ix_(F, B)])
    return pattern, M


def _rcc2_rows_or_body(ctx, X, done, route):
    """RCC2's answer at the projections ``X`` of the rows ``done`` (the ``route``'s); the
    general body for the rest."""
    R = np.sqrt(np.maximum(ctx.problem.half_diag_sq - np.sum(X * X, axis=1), 0.0))
    return MethodOutput(X, R, np.full(done.size, Status.OPTIMAL, dtype=np.int8)).rest_by(ctx, done, route, rcc2)


def rcc2(ctx: Context) -> MethodOutput:
    """rcc2 on a lifted group, the general body: the projection of the box midpoint onto S."""
    X, R, ok = lifted_rcc2(ctx.problem, ctx.group, ctx.k, ctx.Y0)
    return MethodOutput(X, R, np.where(ok, Status.OPTIMAL, Status.INACCURATE).astype(np.int8), reasons(~ok, _NO_QP))


def reasons(where, text):
    """``{"check": ...}`` naming ``text`` on the rows ``where`` (none when no row)."""
    if not where.any():
        return {}
    check = np.full(where.size, None, dtype=object)
    check[where] = text
    return {"check": check}


def lifted_near(ctx, anchors, metric):
    """The projection of ``anchors`` onto the rows' sets S (in ``metric``; lifted), with the
    radius bound ``min(corner, r_rcc2 + ||c - c_rcc2||)`` (the triangle inequality from rcc2's
    ball, by rcc2's fastest route for the rows; the corner alone where rcc2's projection did
    not converge). An anchor already in S is its own projection: only the others reach the
    lifted QP (a box least-squares point of the midpoints' slice lies in S on most rows).
    Returns ``(X, R, codes, ok)``."""
    core, grp, k, Y0 = ctx.problem, ctx.group, ctx.k, ctx.Y0
    r2 = RCC2.run(ctx.subset(np.arange(k.size), {"solver": "auto"}))
    X2, R2, ok2 = r2.centers, r2.radii, r2.codes == Status.OPTIMAL
    X = np.array(anchors, dtype=np.float64)
    ok = np.ones(k.size, dtype=bool)
    Y = grp.apply(X)
    inside = np.all((Y >= grp.Lo[k]) & (Y <= grp.Hi[k]), axis=1)
    if grp.AE.shape[0]:
        inside &= np.all(np.abs(rows_times(X, grp.AE) - grp.bE[k]) <= grp.tauE[k], axis=1)
    todo = np.flatnonzero(~inside)
    if todo.size:
        Yp, okp, _ = grp.project(k[todo], np.ascontiguousarray(X[todo]), Y0[todo], metric)
        X[todo], ok[todo] = grp.invert(Yp), okp
    # rcc2's ball bounds S whatever its status (an unconverged row's radius is the farthest corner's)
    known = np.isfinite(R2) & np.all(np.isfinite(X2), axis=1)
    R = np.minimum(corner_radius(core, X), np.where(known, R2 + np.linalg.norm(X - X2, axis=1), np.inf))
    return X, R, np.where(ok & ok2, Status.OPTIMAL, Status.INACCURATE).astype(np.int8), ok & ok2


def _lifted_dual_data(grp, k, Y0):
    """``C = q - mid`` and ``T = (q - lo)(q - hi)`` per lifted row, about the feasible point
    ``q = Y0`` (RCC1 does not depend on the origin of u; about a point of the set each offset
    is within its row's half-width, so nothing cancels); a lifted row that is 0 in W (constant
    on the slice, inside its interval by feasibility) cannot bind."""
    Q, Lo, Hi = np.ascontiguousarray(Y0), grp.Lo[k], grp.Hi[k]
    C, T = dual_data(Q, Lo, Hi, ~np.any(grp.W != 0.0, axis=1))
    return Q, Lo, Hi, C, T


def rcc1(ctx: Context) -> MethodOutput:
    """rcc1 on a lifted group, the general body (docs/theory.md §8.5): the EBT dual with every
    box row and every interval row a quadratic, certified at its weights."""
    core, grp, k, Y0, opts = ctx.problem, ctx.group, ctx.k, ctx.Y0, ctx.options
    n = k.size
    if grp.p == 0:
        X = grp.invert(Y0)
        return MethodOutput(X, np.zeros(n), np.full(n, Status.OPTIMAL, dtype=np.int8),
                            {"eta": np.zeros(n), "route": np.full(n, "one point", dtype=object)})
    # rcc2's answer by its fastest route, the one the public rcc2 gives: RCC1 <= RCC2 is kept
    # against that value (a route's exact projection can sit below the dual ascent's bound)
    r2 = RCC2.run(ctx.subset(np.arange(n), {"solver": "auto"}))
    X2, R2, ok2 = r2.centers, r2.radii, r2.codes == Status.OPTIMAL
    X, Eta = np.full((n, core.d), np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    route = np.full(n, None, dtype=object)
    fast = np.zeros(n, dtype=bool)
    if opts["fast_path"] and opts["solver"] in ("auto", "numba"):
        fast = ok2 & _rcc2_is_rcc1(core, grp, k, X2)
        X[fast], Eta[fast] = X2[fast], R2[fast] ** 2
        route[fast] = "rcc2's point, proved RCC1-optimal (a primal point of the relaxation with its value)"
    rest = np.flatnonzero(~fast)
    check = np.full(n, None, dtype=object)
    if rest.size:
        X[rest], Eta[rest], codes[rest], check[rest] = _rcc1_lifted(core, grp, k[rest], Y0[rest], opts)
    # RCC1 is the tighter relaxation (docs/theory.md §8.5); where the computed value is above
    # RCC2's (the barrier's gap and the rounding allowance, on sets where the two meet), the
    # row gets RCC2's answer: in S, a bound on S, and below the value it had
    worse = ~fast & ok2 & np.isfinite(Eta) & (Eta > R2 * R2)
    route[worse] = "rcc2's point: its value is below the computed rcc1 value"
    X[worse], Eta[worse] = X2[worse], R2[worse] ** 2
    out = {"eta": Eta, "route": route}
    if any(c is not None for c in check):
        out["check"] = check
    return MethodOutput(X, np.sqrt(np.maximum(Eta, 0.0)), codes, out)


def _rcc2_is_rcc1(core, grp, k, X2):
    """Rows where rcc2's point x2 is the RCC1 center, proved by a point of the relaxation with
    rcc2's value (docs/theory.md §8.5): ``(x2, x2 x2^T + Y)`` with ``Y >= 0``, ``Y_ii = s_i =
    (x2_i - lo_i)(hi_i - x2_i)`` and every interval row ``a^T Y a <= (a^T x2 - l)(u - a^T x2)``
    has the value ``tr Y = sum s_i = eta_RCC2 >= eta_RCC1``. Two candidates: ``Y = diag(s)``
    (no equations), and ``Y = P D_delta P`` with P the projector onto the null space of
    every row (``Y a = 0``), which needs ``(P o P) delta = s``, delta >= 0: the NNLS test of
    the equality case's alpha = 1."""
    d = core.d
    s = np.ascontiguousarray((X2 - core.lo) * (core.hi - X2))
    ax = rows_times(X2, grp.AI)
    slack = (ax - grp.Lo[k][:, d:]) * (grp.Hi[k][:, d:] - ax)
    ok = np.zeros(k.size, dtype=bool)
    if grp.AE.shape[0] == 0:
        ok = np.all(rows_times(s, grp.AI ** 2) <= slack * (1.0 + 1e-12), axis=1)
    todo = np.flatnonzero(~ok)
    if todo.size:
        rows = np.vstack([grp.AE, grp.AI])
        _, sv, Vt = np.linalg.svd(rows, full_matrices=True)
        # the proof needs Y a = 0 for every row: NumPy's rule, not a looser rank_tol of the caller's
        r = numerical_rank(sv, rows.shape)
        ok[todo] = alpha_one_certified(Vt[r:].T @ Vt[r:], s[todo], rank=r)
    return ok


def _rcc1_lifted(core, grp, k, Y0, opts):
    """The RCC1 dual of the rows ``k`` (the barrier, or cvxpy on request), certified at its
    weights: ``(centers, eta, codes)``."""
    n = k.size
    Q, Lo, Hi, C, T = _lifted_dual_data(grp, k, Y0)
    # each lifted row scaled to a half-width of about 1 over the group (the box rows have
    # half-widths <= 1): a quadratic's weight scales like 1/width^2, and intervals much
    # narrower than the box would leave the barrier's weights 1e5 apart and its certificate loose.
    # The relaxation and its certificate do not change (alpha_j -> alpha_j / D_j^2).
    D = 1.0 / np.maximum(np.median(0.5 * (Hi - Lo), axis=0), 1e-300)
    D[: core.d] = 1.0
    W = np.ascontiguousarray(grp.W * D[:, None])
    Q, Lo, Hi, C, T = Q * D, Lo * D, Hi * D, np.ascontiguousarray(C * D), np.ascontiguousarray(T * D * D)
    Alpha = np.zeros((n, grp.K))
    its = np.zeros(n, dtype=np.int64)
    state = np.zeros(n, dtype=np.int64)
    solver = opts["solver"]
    if solver in ("clarabel", "scs"):   # the reference route: the EBT dual in cvxpy, built once
        _cvxpy_weights(solver, W, C, T, Alpha, state)
    else:
        chunk = int(opts["warm_chunk"])
        row_blocks(n, chunk, lambda a, b: rcc1_barrier_rows(W, C[a:b], T[a:b], Alpha[a:b], its[a:b], state[a:b],
                                                            MU_MIN, 150, chunk, COLD_MU))
        again = np.flatnonzero(state != CONVERGED)
        if again.size:
            A2 = np.zeros((again.size, grp.K))
            i2, s2 = np.zeros(again.size, dtype=np.int64), np.zeros(again.size, dtype=np.int64)
            rcc1_barrier_rows(W, C[again], T[again], A2, i2, s2, MU_MIN, 300, 1, ROBUST_MU)
            Alpha[again], state[again] = A2, s2
    delta = certificate_delta(Q)[:, None]
    Td = np.ascontiguousarray((Q - Lo + delta) * (Q - Hi - delta))
    Xl, Eta, good = certify(W, Q, C, Td, Alpha)
    codes = np.where((state == CONVERGED) & good, Status.OPTIMAL, Status.INACCURATE).astype(np.int8)
    check = np.full(n, None, dtype=object)
    check[state != CONVERGED] = "the rcc1 dual solver did not converge (its weights are certified as they are)"
    check[(state == CONVERGED) & ~good] = "the rcc1 certificate at the solver's weights is not optimal"
    bad = np.flatnonzero(~np.isfinite(Eta))
    if bad.size:   # weights 1 on the box rows, 0 on the intervals: M = N^T N = I, always certified
        Ab = np.zeros((bad.size, grp.K))
        Ab[:, : core.d] = 1.0
        Xb, Eb, _ = certify(W, Q[bad], C[bad], Td[bad], Ab)
        Xl[bad], Eta[bad] = Xb, Eb
        codes[bad] = Status.INACCURATE
        check[bad] = "no certificate at the solver's weights: the box's own (weights 1 on the box rows)"
    return grp.invert(Xl), Eta, codes, check


def _cvxpy_weights(solver, W, C, T, Alpha, state):
    """The dual weights of every row from cvxpy (Clarabel or SCS) on the EBT dual with the
    lifted rows as rank-one quadratics (:class:`chebcenter._core.cvxpy_forms.EbtDual`); the radius is
    still the certificate at those weights."""
    dual = EbtDual(solver, factors=W)
    for j in range(C.shape[0]):
        alpha, status = dual.solve(C[j][:, None] * W, T[j])
        ok = alpha is not None and status_of(status, dual=True) <= Status.INACCURATE
        Alpha[j] = alpha if ok else 0.0
        state[j] = CONVERGED if status_of(status, dual=True) == Status.OPTIMAL else NUMERICAL_FAILURE


def certify(W, Q, C, T, Alpha):
    """:func:`chebcenter.kernels.rcc1_certificate.certify_rows` on all cores: the center and
    the certified value at the weights ``Alpha`` (rescaled in place), and whether they are
    valid; the one certificate of slice rows (``W`` the null basis) and lifted groups."""
    n = Q.shape[0]
    X = np.full((n, W.shape[0]), np.nan)
    Eta = np.full(n, np.nan)
    ok = np.zeros(n, dtype=np.bool_)
    row_blocks(n, 1, lambda a, b: certify_rows(W, np.ascontiguousarray(Q[a:b]), np.ascontiguousarray(C[a:b]),
                                               np.ascontiguousarray(T[a:b]), Alpha[a:b], X[a:b], Eta[a:b], ok[a:b]))
    return X, Eta, ok



RCC1 = MethodSpec(
    "rcc1", rcc1, lies_in="S_F", image="weighted",
    certifies="sqrt(eta): the RCC1 dual value, recomputed from alpha (>= exact radius)",
    options={"solver": "auto", "fast_path": True, "warm_chunk": 16},
    validators={"fast_path": as_bool, "warm_chunk": as_positive_int},
    routes=(Route("box slice", _rcc1_slices, {"equations"},
                  "the slice's dual in u-space: the alpha = 1 NNLS certificate, the segment's closed form, the "
                  "barrier, cvxpy for the rows left"),),
    solvers=("auto", "numba", "clarabel", "scs"),
    sets={"quadratic": SetRoute(quadratic_rcc1, {"solver": "auto"}, solvers=("auto", "clarabel", "scs"))},
    warmup=(WarmupStep("rcc1", ("closed_forms.prepare_rows", "closed_forms.forward_rows", "nnls.nnls_rows", "rcc1.rcc1_barrier_rows",
                                "rcc1_certificate.certify_rows"), calls=({}, {"fast_path": False})),
            # d - rank A = 1: the closed form on a segment
            WarmupStep("rcc1_segment", ("rcc1.rcc1_segment_rows",), problems=("four_columns",),
                       calls=({"fast_path": False},), always=False),
            WarmupStep("rcc1_intervals", ("interval_rows.project_points_boxes",), rows="interval", always=False),
            WarmupStep("rcc1_quadratic", ("rcc1_certificate.certify_quadratics",), rows="quadratic",
                       problems=("quadratic",), always=False)),
    extras=(
        Extra("alpha", "free_coordinates", "f8", "the dual weights of the box constraints (sum 1)", shape=("d",)),
        Extra("eta", "squared_length", "f8", "the RCC1 dual value, recomputed from alpha: radius**2"),
        Extra("route", "label", "O", "how the row was certified (closed form, fast path, barrier, cvxpy)"),
    ),
)
RCC2 = MethodSpec(
    "rcc2", rcc2, lies_in="S_F",
    certifies="sqrt(sum((hi-lo)^2)/4 - ||x - m||^2): the RCC2 relaxation value",
    options={"solver": "auto"},
    validators={"solver": lambda name, v: _rcc2_solver(name, v)},
    solvers=_RCC2_SOLVERS,
    interval_values={"solver": ("auto", "numba")},
    routes=(Route("box slice", _rcc2_slices, {"equations"},
                  "the projection of the slice's factors (compiled dual Newton), cvxpy on request"),
            Route("slab", _rcc2_slab, {"one interval row"},
                  "the slice at the clamped value t = clamp(a^T m, l, u): half* t a, or the compiled projection"),
            Route("unboxed", _rcc2_unboxed, {"no equations"},
                  "up to four interval rows: the projection onto the rows alone (a QP in their values, solved by "
                  "its KKT patterns for the whole group), where it lies in the box")),
    warmup=(WarmupStep("rcc2", ("closed_forms.prepare_rows", "closed_forms.forward_rows", "projection.project_rows"),
                       problems=("projecting",)),
            # a few interval rows take the unboxed route; a 5-class release's ten rows, the body
            WarmupStep("rcc2_intervals", ("interval_rows.project_points_boxes", "rcc2_intervals.rcc2_interval_rows",
                                          "rcc2_intervals.box_qp_patterns"),
                       rows="interval", problems=("default", "classes"), always=False)),
)
