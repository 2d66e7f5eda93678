r"""Bounded-error sets ``S = {x in [lo, hi] : L <= A x <= U}`` (docs/theory.md §8).

Private module, beside :mod:`chebcenter.dispatch`: :class:`chebcenter.BoxSlice` calls
:func:`solve_intervals` on its normalised core (box ``[-w, w]``, fixed coordinates
substituted) for the rows of a batch whose intervals are not all points; the rows whose
intervals are all points are the equality case and never come here.

The lifting. For one batch row, the rows with ``L_j = U_j`` (after the intervals are
clamped to what ``a_j^T x`` reaches over the box) are equalities: ``x = q + N u`` with
``N`` an orthonormal basis of their null space and ``q`` their minimum-norm solution. The
other rows are intervals, scaled to unit norm. In the lifted coordinates

    y = (x, A_I x) = (q, A_I q) + W u,      W = [N; A_I N],

``S`` is the box slice ``{y : V y = V (q, A_I q), lo_y <= y <= hi_y}`` with the box
``[lo, L_I] x [hi, U_I]`` and ``V`` the orthonormal complement of ``range(W)``. The map
``u -> y`` is affine and one to one, so vertices, feature ranges and emptiness are those
of a box slice (the compiled kernels, with a box per row), and ``||x - x'|| = ||u - u'||``
because N is orthonormal. Rows of a batch with the same equality pattern share W and V.

The estimators (docs/chebcenter.md, "Bounded-error sets"): ``half`` (the box midpoint),
``ls`` and ``half_star`` (today's definitions on the interval midpoint, which need not lie
in S; their radius is the distance to the farthest box corner), ``rcc2`` (the projection
of the box midpoint onto S: the metric QP in the lifted coordinates, with the metric zero
on ``A_I x``), ``project`` (the same in the user's metric, from the user's anchor),
``cls`` (the box least-squares point of ``A x = `` the interval midpoint, projected onto S),
``rcc1`` (the EBT dual with every box row and every interval row a quadratic: the compiled
barrier on the rows of W, certified at its weights for any weights), ``exact`` (the
minimum enclosing ball of the vertices) and ``auto``. Every center that claims S is held to
it: a center outside is projected onto S, its radius grows by the move and the row becomes
INACCURATE.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import linprog

from ._parallel import row_blocks
from .core import CLIP_TOL
from .kernels import intervals as lifted
from .kernels.ball import certified_ball
from .kernels.bvls import NEEDS_GELSD, bvls_rows
from .kernels.projection import EMPTY, PROJECTED
from .kernels.qp import QP_OPTIMAL
from .kernels.rcc1 import COLD_MU, CONVERGED, ROBUST_MU, rcc1_barrier_rows
from .kernels.rcc1_certificate import certify_rows
from .kernels.simplex import RANGES_OK
from .kernels.vertices import distinct_rows, enumerate_vertices
from .results import Status

__all__ = ["INTERVAL_METHODS", "interval_ranges", "solve_intervals"]

_EPS = np.finfo(np.float64).eps
_PROJECT_MAXIT = 200
_QP_MAXIT = 2000
_MU_MIN = 1e-9
#: the estimators defined on interval sets
INTERVAL_METHODS = ("half", "ls", "half_star", "cls", "rcc1", "rcc2", "exact", "auto", "project")


class _Group:
    """The rows of a batch with one equality pattern, lifted (module docstring)."""

    def __init__(self, core, rows, eq, Lp, Up):
        A, d = core.A, core.d
        self.rows, self.d = rows, d
        n = rows.size
        AE, AI = A[eq], A[~eq]
        norms = np.linalg.norm(AI, axis=1)
        self.AI = AI / norms[:, None]
        Li, Ui = Lp[:, ~eq] / norms, Up[:, ~eq] / norms
        self.consistent = np.ones(n, dtype=bool)
        if eq.any():
            UE, s, Vt = np.linalg.svd(AE, full_matrices=True)
            r = int(np.sum(s > (s[0] if s.size else 0.0) * max(AE.shape) * _EPS))
            self.N = np.ascontiguousarray(Vt[r:].T)
            bE = Lp[:, eq]
            q = ((bE @ UE[:, :r]) / s[:r]) @ Vt[:r] if r else np.zeros((n, d))
            resid = np.linalg.norm(q @ AE.T - bE, axis=1)
            scale = np.linalg.norm(bE, axis=1) + (s[0] if s.size else 0.0) * math.sqrt(core.half_diag_sq)
            self.consistent = resid <= core.feas_tol * np.maximum(scale, 1e-300)
            self.AE, self.bE = AE, bE
        else:
            self.N = np.eye(d)
            q = np.zeros((n, d))
            self.AE, self.bE = np.zeros((0, d)), np.zeros((n, 0))
        self.p = self.N.shape[1]
        W = np.vstack([self.N, self.AI @ self.N])
        # a lifted row that is constant on the slice (rounding-level row of W) carries no constraint
        W[np.linalg.norm(W, axis=1) <= 64.0 * _EPS * max(W.shape)] = 0.0
        self.W = np.ascontiguousarray(W)
        self.K = W.shape[0]
        Qf, _ = np.linalg.qr(W, mode="complete") if self.p else (np.eye(self.K), None)
        self.V = np.ascontiguousarray(Qf[:, self.p:].T)
        self.Qt = np.ascontiguousarray(np.hstack([q, q @ self.AI.T]))
        self.Lo = np.ascontiguousarray(np.hstack([np.broadcast_to(core.lo, (n, d)), Li]))
        self.Hi = np.ascontiguousarray(np.hstack([np.broadcast_to(core.hi, (n, d)), Ui]))
        self.Beta = np.ascontiguousarray(self.Qt @ self.V.T)
        width = self.Hi - self.Lo
        self.tol = np.minimum(core.box_tol, np.maximum(core.feas_tol * width, 64.0 * _EPS * self.K))
        self.metric = np.zeros(self.K)
        self.metric[:d] = 1.0

    def x_of(self, Y):
        return np.ascontiguousarray(Y[:, : self.d])

    def lift(self, X):
        return np.hstack([X, X @ self.AI.T])

    def feasible_points(self, k):
        """A point of the lifted slice for each row ``k`` (NaN rows: S is empty)."""
        C = 0.5 * (self.Lo[k] + self.Hi[k])
        Y = np.full((k.size, self.K), np.nan)
        state = np.zeros(k.size, dtype=np.int64)
        its = np.zeros(k.size, dtype=np.int64)
        lifted.project_points_boxes(np.ascontiguousarray(C), self.V, self.Beta[k], self.Lo[k], self.Hi[k], Y, state,
                                    its, _PROJECT_MAXIT, 1e-11 * (1.0 + float(np.max(np.abs(self.Hi), initial=1.0))))
        Y[state == EMPTY] = np.nan
        for j in np.flatnonzero((state != PROJECTED) & (state != EMPTY)):
            Y[j] = self._lp_point(k[j])
        if self.p == 0:   # one point: the equalities' solution, in the box or not
            inside = np.all((self.Qt[k] >= self.Lo[k] - self.tol[k]) & (self.Qt[k] <= self.Hi[k] + self.tol[k]), axis=1)
            Y = np.where(inside[:, None], np.clip(self.Qt[k], self.Lo[k], self.Hi[k]), np.nan)
        return Y

    def _lp_point(self, j):
        """HiGHS on ``Lo - tol <= Qt + W u <= Hi + tol`` (the undecided rows), or NaN."""
        res = linprog(np.zeros(self.p), A_ub=np.vstack([self.W, -self.W]),
                      b_ub=np.concatenate([self.Hi[j] + self.tol[j] - self.Qt[j], self.Qt[j] - self.Lo[j] + self.tol[j]]),
                      bounds=[(None, None)] * self.p, method="highs",
                      options={"primal_feasibility_tolerance": 1e-10})
        if res.status != 0:
            return np.full(self.K, np.nan)
        return np.clip(self.Qt[j] + self.W @ res.x, self.Lo[j], self.Hi[j])

    def project(self, k, anchors, start, metric=None):
        """``argmin (x - a)^T P (x - a)`` over S for rows ``k`` (lifted), from feasible ``start``."""
        P = np.diag(self.metric) if metric is None else _lifted_metric(metric, self.K)
        Y = np.ascontiguousarray(start.copy())
        An = np.zeros((k.size, self.K))
        An[:, : self.d] = anchors
        status = np.zeros(k.size, dtype=np.int64)
        its = np.zeros(k.size, dtype=np.int64)
        row_blocks(k.size, 1, lambda a, b: lifted.project_metric_boxes(
            P, self.V, self.Beta[k[a:b]], self.Lo[k[a:b]], self.Hi[k[a:b]], An[a:b], Y[a:b], status[a:b], its[a:b],
            _QP_MAXIT, 1e-12))
        return Y, status == QP_OPTIMAL, its


def _lifted_metric(Pm, K):
    d = Pm.shape[0]
    P = np.zeros((K, K))
    P[:d, :d] = Pm
    return P


def _corner_radius(core, X):
    """``max_{x in box} ||x - c||``: a bound for every subset of the box."""
    return np.sqrt(np.sum(np.maximum(X - core.lo, core.hi - X) ** 2, axis=1))


def clamp(core, Lc, Uc):
    """The intervals clamped to what ``a_j^T x`` reaches over the box; rows that miss it
    (beyond the tolerance) are flagged empty. Returns ``(L', U', empty, equality mask)``."""
    reach = np.abs(core.A) @ core.hi
    rounding = 32.0 * _EPS * core.d * np.abs(core.A).sum(axis=1)
    size = np.where(np.isfinite(Lc), np.abs(Lc), 0.0) + np.where(np.isfinite(Uc), np.abs(Uc), 0.0)
    tol = core.feas_tol * (2.0 * reach + size) + rounding
    Lp, Up = np.maximum(Lc, -reach), np.minimum(Uc, reach)
    empty = np.any(Lp > Up + tol, axis=1)
    Up = np.maximum(Up, Lp)     # a gap within the tolerance closes to a point
    return Lp, Up, empty, Up <= Lp


def solve_intervals(core, Lc, Uc, name, opts):
    """Centers, radii, statuses and extras (the core's frame) of ``{x in box : Lc <= A x <= Uc}``
    for every row (finite or infinite bounds, ``Lc <= Uc``), by the estimator ``name``."""
    N, d = Lc.shape[0], core.d
    centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
    codes = np.full(N, Status.INFEASIBLE, dtype=np.int8)
    check = np.full(N, None, dtype=object)
    extras: dict[str, Any] = {"rhs_residual": np.zeros(N), "check": check}
    if name in ("exact", "auto"):
        extras["radius_lower"] = np.full(N, np.nan)
    if name == "exact":
        extras["n_vertices"] = np.full(N, -1, dtype=np.int64)
    if name == "rcc1":
        extras.update(eta=np.full(N, np.nan), route=np.full(N, None, dtype=object))
    if name == "auto":
        extras["method"] = np.full(N, None, dtype=object)
    if name in ("cls", "rcc1", "rcc2", "exact", "auto", "project"):
        extras.update(clipped=np.zeros(N), moved=np.zeros(N))
    Lp, Up, empty, eq = clamp(core, Lc, Uc)
    check[empty] = "an interval misses what its row reaches over the box"
    live = np.flatnonzero(~empty)
    patterns, inverse = np.unique(eq[live], axis=0, return_inverse=True)
    for g in range(patterns.shape[0]):
        rows = live[inverse.ravel() == g]
        grp = _Group(core, rows, patterns[g], Lp[rows], Up[rows])
        k = np.flatnonzero(grp.consistent)
        Y0 = grp.feasible_points(k) if k.size else np.zeros((0, grp.K))
        ok = np.all(np.isfinite(Y0), axis=1)
        k, Y0 = k[ok], Y0[ok]
        if k.size == 0:
            continue
        codes[rows[k]] = Status.OPTIMAL
        C, R, st, ex = _METHODS[name](core, grp, k, Y0, Lp[rows[k]], Up[rows[k]], opts)
        if name not in ("half", "ls", "half_star"):
            C, R, st = _hold_to_set(core, grp, k, Y0, C, R, st, check, rows, extras)
        at = rows[k]
        centers[at], radii[at], codes[at] = C, R, st
        for key, val in ex.items():
            extras[key][at] = val
    return centers, radii, codes, extras


def _half(core, grp, k, Y0, L, U, opts):
    X = np.zeros((k.size, core.d))
    return X, np.full(k.size, math.sqrt(core.half_diag_sq)), np.full(k.size, Status.OPTIMAL, dtype=np.int8), {}


def _midpoint(core, L, U):
    """``A^+ bbar`` for the clamped intervals' midpoints (the full A's factors)."""
    Bbar = 0.5 * (L + U)
    return ((Bbar @ core.Ur) / core.s_r) @ core.Vr if core.rank else np.zeros((L.shape[0], core.d))


def _half_star(core, grp, k, Y0, L, U, opts):
    X = _midpoint(core, L, U) + core.p_mid
    return X, _corner_radius(core, X), np.full(k.size, Status.OPTIMAL, dtype=np.int8), {}


def _ls(core, grp, k, Y0, L, U, opts):
    X = _midpoint(core, L, U) + core.p_origin
    return X, _corner_radius(core, X), np.full(k.size, Status.OPTIMAL, dtype=np.int8), {}


def _rcc2_core(core, grp, k, Y0):
    Y, ok, _ = grp.project(k, np.zeros((k.size, core.d)), Y0)
    X = grp.x_of(Y)
    R = np.sqrt(np.maximum(core.half_diag_sq - np.sum(X * X, axis=1), 0.0))
    return X, R, ok


def _rcc2(core, grp, k, Y0, L, U, opts):
    X, R, ok = _rcc2_core(core, grp, k, Y0)
    return X, R, np.where(ok, Status.OPTIMAL, Status.INACCURATE).astype(np.int8), {}


def _near(core, grp, k, Y0, anchors, metric):
    """The projection of ``anchors`` onto S (in ``metric``), with the radius bound
    ``min(corner, r_rcc2 + ||c - c_rcc2||)`` (the triangle inequality from rcc2's ball)."""
    X2, R2, ok2 = _rcc2_core(core, grp, k, Y0)
    Y, ok, _ = grp.project(k, anchors, Y0, metric)
    X = grp.x_of(Y)
    R = np.minimum(_corner_radius(core, X), R2 + np.linalg.norm(X - X2, axis=1))
    return X, R, np.where(ok & ok2, Status.OPTIMAL, Status.INACCURATE).astype(np.int8)


def _project(core, grp, k, Y0, L, U, opts):
    a = opts["anchor"]
    anchors = np.broadcast_to(a[0], (k.size, core.d)) if opts.get("shared", True) else a[grp.rows[k]]
    X, R, st = _near(core, grp, k, Y0, np.ascontiguousarray(anchors), opts["metric"])
    return X, R, st, {}


def _cls(core, grp, k, Y0, L, U, opts):
    n = k.size
    B = np.ascontiguousarray(0.5 * (L + U))
    A = np.ascontiguousarray(core.A)
    X = np.empty((n, core.d))
    its = np.zeros(n, dtype=np.int64)
    status = np.zeros(n, dtype=np.int64)
    bvls_rows(A, B, core.lo, core.hi, 1e-12, X, its, status)
    redo = np.flatnonzero(status == NEEDS_GELSD)
    if redo.size:
        Xr, itr, sr = X[redo], its[redo], status[redo]
        bvls_rows(A, B[redo], core.lo, core.hi, 1e-12, Xr, itr, sr, True)
        X[redo], its[redo], status[redo] = Xr, itr, sr
    X = np.where(np.isfinite(X), np.clip(X, core.lo, core.hi), 0.0)
    C, R, st = _near(core, grp, k, Y0, np.ascontiguousarray(X), None)
    st[status <= 0] = Status.INACCURATE
    return C, R, st, {}


def _dual_data(grp, k, Y0):
    """``C = q - mid`` and ``T = (q - lo)(q - hi)`` per lifted row, about the feasible point
    ``q = Y0`` (RCC1 does not depend on the origin of u; about a point of the set each offset
    is within its row's half-width, so nothing cancels); a lifted row that is 0 in W (constant
    on the slice, inside its interval by feasibility) cannot bind."""
    Q, Lo, Hi = np.ascontiguousarray(Y0), grp.Lo[k], grp.Hi[k]
    C = np.ascontiguousarray(Q - 0.5 * (Lo + Hi))
    T = np.ascontiguousarray((Q - Lo) * (Q - Hi))
    dead = ~np.any(grp.W != 0.0, axis=1)
    if dead.any():
        C[:, dead] = 0.0
        T[:, dead] = -(0.5 * (Hi - Lo)[:, dead]) ** 2
    return Q, Lo, Hi, C, T


def _rcc1(core, grp, k, Y0, L, U, opts):
    n = k.size
    if grp.p == 0:
        X = grp.x_of(Y0)
        return X, np.zeros(n), np.full(n, Status.OPTIMAL, dtype=np.int8), {"eta": np.zeros(n),
                                                                            "route": np.full(n, "one point", dtype=object)}
    Q, Lo, Hi, C, T = _dual_data(grp, k, Y0)
    # each lifted row scaled to a half-width of about 1 over the group (the box rows have
    # half-widths <= 1): a quadratic's weight scales like 1/width^2, and intervals much
    # narrower than the box left the barrier's weights 1e5 apart and its certificate loose.
    # The relaxation and its certificate do not change (alpha_j -> alpha_j / D_j^2).
    D = 1.0 / np.maximum(np.median(0.5 * (Hi - Lo), axis=0), 1e-300)
    D[: core.d] = 1.0
    W = np.ascontiguousarray(grp.W * D[:, None])
    Q, Lo, Hi, C, T = Q * D, Lo * D, Hi * D, np.ascontiguousarray(C * D), np.ascontiguousarray(T * D * D)
    Alpha = np.zeros((n, grp.K))
    its = np.zeros(n, dtype=np.int64)
    state = np.zeros(n, dtype=np.int64)
    chunk = int(opts.get("warm_chunk", 16))
    row_blocks(n, chunk, lambda a, b: rcc1_barrier_rows(W, C[a:b], T[a:b], Alpha[a:b], its[a:b], state[a:b],
                                                        _MU_MIN, 150, chunk, COLD_MU))
    again = np.flatnonzero(state != CONVERGED)
    if again.size:
        A2 = np.zeros((again.size, grp.K))
        i2, s2 = np.zeros(again.size, dtype=np.int64), np.zeros(again.size, dtype=np.int64)
        rcc1_barrier_rows(W, C[again], T[again], A2, i2, s2, _MU_MIN, 300, 1, ROBUST_MU)
        Alpha[again], state[again] = A2, s2
    delta = 4.0 * _EPS * (1.0 + np.max(np.abs(Q), axis=1, initial=0.0))[:, None]
    Td = np.ascontiguousarray((Q - Lo + delta) * (Q - Hi - delta))
    Xl, Eta, good = _certify(W, Q, C, Td, Alpha)
    codes = np.where((state == CONVERGED) & good, Status.OPTIMAL, Status.INACCURATE).astype(np.int8)
    bad = np.flatnonzero(~np.isfinite(Eta))
    if bad.size:   # weights 1 on the box rows, 0 on the intervals: M = N^T N = I, always certified
        Ab = np.zeros((bad.size, grp.K))
        Ab[:, : core.d] = 1.0
        Xb, Eb, _ = _certify(W, Q[bad], C[bad], Td[bad], Ab)
        Xl[bad], Eta[bad] = Xb, Eb
        codes[bad] = Status.INACCURATE
    X = grp.x_of(Xl)
    # RCC1 is the tighter relaxation (docs/theory.md §8); where the computed value is above
    # RCC2's (the barrier's gap and the rounding allowance, on sets where the two meet), the
    # row gets RCC2's answer: in S, a bound on S, and below the value it had
    X2, R2, ok2 = _rcc2_core(core, grp, k, Y0)
    worse = ok2 & np.isfinite(Eta) & (Eta > R2 * R2)
    route = np.where(worse, "rcc2's point: its value is below the computed rcc1 value", None).astype(object)
    X[worse], Eta[worse] = X2[worse], R2[worse] ** 2
    return X, np.sqrt(np.maximum(Eta, 0.0)), codes, {"eta": Eta, "route": route}


def _certify(W, Q, C, T, Alpha):
    n = Q.shape[0]
    X = np.full((n, W.shape[0]), np.nan)
    Eta = np.full(n, np.nan)
    ok = np.zeros(n, dtype=np.bool_)
    row_blocks(n, 1, lambda a, b: certify_rows(W, np.ascontiguousarray(Q[a:b]), np.ascontiguousarray(C[a:b]),
                                               np.ascontiguousarray(T[a:b]), Alpha[a:b], X[a:b], Eta[a:b], ok[a:b]))
    return X, Eta, ok


def _exact(core, grp, k, Y0, L, U, opts, capacity=None):
    n = k.size
    capacity = int(opts["max_vertices"] if capacity is None else capacity)
    X = np.full((n, core.d), np.nan)
    R, low = np.full(n, np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    nv = np.full(n, -1, dtype=np.int64)

    def block(start, stop):
        for j in range(start, stop):
            kk = k[j]
            if grp.p == 0:
                X[j], R[j], low[j], nv[j] = grp.x_of(Y0[j:j + 1])[0], 0.0, 0.0, 1
                continue
            Vt, count = enumerate_vertices(grp.V, grp.Beta[kk], grp.Lo[kk], grp.Hi[kk], capacity, grp.tol[kk], 1e-10)
            if count < 0:
                codes[j] = Status.TOO_LARGE
                continue
            grid = np.minimum(1e-11, np.maximum(1e-3 * (grp.Hi[kk] - grp.Lo[kk]), 1e-300))
            P = np.ascontiguousarray(distinct_rows(Vt[:count], grid)[:, : core.d]) if count else grp.x_of(Y0[j:j + 1])
            c, radius, lower, _, status = certified_ball(P)
            X[j], R[j], low[j], nv[j] = c, radius, min(lower, radius), P.shape[0]
            if status != 0 and radius - lower > 1e-9 * (1.0 + radius):
                codes[j] = Status.INACCURATE

    row_blocks(n, 1, block)
    return X, R, codes, {"radius_lower": low, "n_vertices": nv}


def _auto(core, grp, k, Y0, L, U, opts):
    X, R, codes, ex = _exact(core, grp, k, Y0, L, U, opts, capacity=opts["max_vertices"])
    method = np.full(k.size, "exact", dtype=object)
    big = np.flatnonzero(codes == Status.TOO_LARGE)
    if big.size:
        Xr, Rr, cr, _ = _rcc1(core, grp, k[big], Y0[big], L[big], U[big], opts)
        X[big], R[big], codes[big] = Xr, Rr, cr
        method[big] = "rcc1"
    return X, R, codes, {"radius_lower": ex["radius_lower"], "method": method}


_METHODS = {"half": _half, "ls": _ls, "half_star": _half_star, "cls": _cls, "rcc1": _rcc1, "rcc2": _rcc2,
            "exact": _exact, "auto": _auto, "project": _project}


def _hold_to_set(core, grp, k, Y0, X, R, codes, check, rows, extras):
    """Each center that claims S lies in S: one outside its tolerance is projected onto S
    (radius += the move, INACCURATE); then it is clipped into the box (``clipped``)."""
    good = np.all(np.isfinite(X), axis=1)
    Y = grp.lift(np.where(good[:, None], X, 0.0))
    lo, hi, tol = grp.Lo[k], grp.Hi[k], grp.tol[k]
    viol = np.max(np.maximum(lo - tol - Y, Y - hi - tol), axis=1, initial=0.0)
    viol[:] = np.maximum(viol, 0.0)
    if grp.AE.shape[0]:
        res = np.abs(X @ grp.AE.T - grp.bE[k])
        scale = core.feas_tol * (np.abs(grp.AE) @ (core.hi - core.lo) + np.abs(grp.bE[k])) + 32 * _EPS * core.d
        viol = np.maximum(viol, np.max(res - scale, axis=1, initial=0.0))
    off = np.flatnonzero(good & (viol > CLIP_TOL) & (codes <= Status.INACCURATE))
    if off.size:
        Yp, _, _ = grp.project(k[off], np.ascontiguousarray(X[off]), Y0[off])
        Xp = grp.x_of(Yp)
        moved = np.linalg.norm(Xp - X[off], axis=1)
        X[off], R[off] = Xp, R[off] + moved
        codes[off] = np.where(codes[off] == Status.OPTIMAL, Status.INACCURATE, codes[off])
        extras["moved"][rows[k[off]]] = moved
        check[rows[k[off]]] = "the center was outside the set (moved into it)"
    Xc = np.clip(X, core.lo, core.hi)
    extras["clipped"][rows[k]] = np.max(np.abs(np.where(good[:, None], Xc - X, 0.0)), axis=1, initial=0.0)
    return Xc, R, codes


def interval_ranges(core, Lc, Uc):
    """``(lower, upper, codes)``: the feature ranges of ``{x in box : Lc <= A x <= Uc}`` per row."""
    N, d = Lc.shape[0], core.d
    lower, upper = np.full((N, d), np.nan), np.full((N, d), np.nan)
    codes = np.full(N, Status.INFEASIBLE, dtype=np.int8)
    Lp, Up, empty, eq = clamp(core, Lc, Uc)
    live = np.flatnonzero(~empty)
    patterns, inverse = np.unique(eq[live], axis=0, return_inverse=True)
    for g in range(patterns.shape[0]):
        rows = live[inverse.ravel() == g]
        grp = _Group(core, rows, patterns[g], Lp[rows], Up[rows])
        k = np.flatnonzero(grp.consistent)
        Y0 = grp.feasible_points(k) if k.size else np.zeros((0, grp.K))
        k = k[np.all(np.isfinite(Y0), axis=1)]
        if k.size == 0:
            continue
        lo_, up_, status = _group_ranges(grp, k)
        at = rows[k]
        lower[at], upper[at] = lo_[:, :d], up_[:, :d]
        codes[at] = np.where(status == RANGES_OK, Status.OPTIMAL, Status.SOLVER_ERROR)
    return lower, upper, codes


def _group_ranges(grp, k):
    """The lifted ranges of the rows ``k`` of one group (only the first d columns are x's)."""
    lo_, up_ = np.full((k.size, grp.K), np.nan), np.full((k.size, grp.K), np.nan)
    status = np.zeros(k.size, dtype=np.int64)
    if grp.p == 0:
        point = np.clip(grp.Qt[k], grp.Lo[k], grp.Hi[k])
        return point, point.copy(), status
    V, Beta, Lo, Hi = grp.V, grp.Beta[k], grp.Lo[k], grp.Hi[k]
    row_blocks(k.size, 1, lambda a, b: lifted.range_boxes(V, Beta[a:b], Lo[a:b], Hi[a:b], lo_[a:b], up_[a:b],
                                                         status[a:b]))
    return lo_, up_, status
