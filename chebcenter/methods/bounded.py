r"""The estimators on bounded-error sets ``S = {x in [lo, hi] : L <= A x <= U}``
(docs/theory.md §8), one function per method, each the ``bounded`` entry of its
:class:`~chebcenter.methods.MethodSpec` (assembled in :mod:`chebcenter.methods`).

Each takes ``(core, group, k, Y0, L, U, options)``: the normalised core, one lifted group of
rows (:class:`chebcenter.lifting.LiftedGroup`), the positions ``k`` of the group's nonempty
rows, a point ``Y0`` of each row's lifted set, the rows' clamped intervals and the options,
and returns ``(centers, radii, codes, extras)`` in the core's frame. The dispatcher
(:func:`chebcenter.dispatch.solve_bounded`) decides emptiness before, and holds each center
that claims S to it after (:func:`chebcenter.dispatch.hold_to_set`).

``half`` (the box midpoint), ``ls`` and ``half_star`` (the slice formulas on the interval
midpoint, which need not lie in S; their radius is the distance to the farthest box corner),
``rcc2`` (the projection of the box midpoint onto S: the metric QP in the lifted coordinates,
with the metric zero on ``A_I x``), ``project`` (the same in the user's metric, from the
user's anchor), ``cls`` (the box least-squares point of ``A x =`` the interval midpoint,
projected onto S), ``rcc1`` (the EBT dual with every box row and every interval row a
quadratic: the compiled barrier on the rows of W, certified at its weights for any weights),
``exact`` (the minimum enclosing ball of the vertices, found by the route of least cost,
docs/theory.md §8.7) and ``auto``.
"""

from __future__ import annotations

import math

import numpy as np

from .._cvxpy import EbtDual, status_of
from .._parallel import row_blocks
from ..core import _Core, corner_radius
from ..kernels.ball import certified_ball, working_set_ball
from ..kernels.bvls import NEEDS_GELSD, bvls_rows
from ..kernels.linalg import rows_times
from ..kernels.rcc1 import COLD_MU, CONVERGED, NUMERICAL_FAILURE, ROBUST_MU, rcc1_barrier_rows
from ..kernels.rcc1_certificate import certify_rows
from ..kernels.rcc2_intervals import RCC2_OPTIMAL, rcc2_interval_rows
from ..lifting import ROUTE_SLAB, SLAB_MAX_D, vertices_of
from ..results import Status
from ._batch_exact import batch_slab
from .auto import exact_options
from .bnb import bnb_center
from .exact import _lower_in_slice
from .relax import alpha_one_certified

__all__ = ["auto", "cls", "exact", "half", "half_star", "ls", "project", "rcc1", "rcc2"]

_EPS = np.finfo(np.float64).eps
_MU_MIN = 1e-9

def half(core, grp, k, Y0, L, U, opts):
    X = np.zeros((k.size, core.d))
    return X, np.full(k.size, math.sqrt(core.half_diag_sq)), np.full(k.size, Status.OPTIMAL, dtype=np.int8), {}


def _midpoint(core, L, U):
    """``A^+ bbar`` for the clamped intervals' midpoints (the full A's factors)."""
    Bbar = 0.5 * (L + U)
    return rows_times(rows_times(Bbar, core.Ur.T) / core.s_r, core.Vr.T) if core.rank else np.zeros((L.shape[0], core.d))


def half_star(core, grp, k, Y0, L, U, opts):
    X = _midpoint(core, L, U) + core.p_mid
    return X, corner_radius(core, X), np.full(k.size, Status.OPTIMAL, dtype=np.int8), {}


def ls(core, grp, k, Y0, L, U, opts):
    X = _midpoint(core, L, U) + core.p_origin
    return X, corner_radius(core, X), np.full(k.size, Status.OPTIMAL, dtype=np.int8), {}


#: the dual coordinate ascent of rcc2 without equation rows: sweeps, and the gap between
#: ||c||^2 and its Lagrangian bound (relative to 1 + H) at which a row is OPTIMAL
_DUAL_SWEEPS = 200
_DUAL_GAP = 1e-12
#: why an unconverged projection's row is INACCURATE, and what its radius is then
_NO_QP = "the projection onto S did not converge: the radius is the farthest box corner's distance"


def _rcc2_core(core, grp, k, Y0):
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


def rcc2(core, grp, k, Y0, L, U, opts):
    X, R, ok = _rcc2_core(core, grp, k, Y0)
    return X, R, np.where(ok, Status.OPTIMAL, Status.INACCURATE).astype(np.int8), _reasons(~ok, _NO_QP)


def _reasons(where, text):
    """``{"check": ...}`` naming ``text`` on the rows ``where`` (none when no row)."""
    if not where.any():
        return {}
    check = np.full(where.size, None, dtype=object)
    check[where] = text
    return {"check": check}


def _near(core, grp, k, Y0, anchors, metric):
    """The projection of ``anchors`` onto S (in ``metric``), with the radius bound
    ``min(corner, r_rcc2 + ||c - c_rcc2||)`` (the triangle inequality from rcc2's ball; the
    corner alone where rcc2's projection did not converge). Returns ``(X, R, codes, ok)``."""
    X2, R2, ok2 = _rcc2_core(core, grp, k, Y0)
    Y, ok, _ = grp.project(k, anchors, Y0, metric)
    X = grp.invert(Y)
    R = np.minimum(corner_radius(core, X), R2 + np.linalg.norm(X - X2, axis=1))
    return X, R, np.where(ok & ok2, Status.OPTIMAL, Status.INACCURATE).astype(np.int8), ok & ok2


def project(core, grp, k, Y0, L, U, opts):
    a = opts["anchor"]
    anchors = np.broadcast_to(a[0], (k.size, core.d)) if opts.get("shared", True) else a[grp.rows[k]]
    X, R, st, ok = _near(core, grp, k, Y0, np.ascontiguousarray(anchors), opts["metric"])
    return X, R, st, _reasons(~ok, "a projection onto S did not converge")


def cls(core, grp, k, Y0, L, U, opts):
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
    C, R, st, ok = _near(core, grp, k, Y0, np.ascontiguousarray(X), None)
    st[status <= 0] = Status.INACCURATE
    out = _reasons(~ok | (status <= 0), "the box least-squares solver did not converge")
    if out:
        out["check"][~ok] = "a projection onto S did not converge"
    return C, R, st, out


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


def rcc1(core, grp, k, Y0, L, U, opts):
    n = k.size
    if grp.p == 0:
        X = grp.invert(Y0)
        return X, np.zeros(n), np.full(n, Status.OPTIMAL, dtype=np.int8), {"eta": np.zeros(n),
                                                                            "route": np.full(n, "one point", dtype=object)}
    X2, R2, ok2 = _rcc2_core(core, grp, k, Y0)
    X, Eta = np.full((n, core.d), np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    route = np.full(n, None, dtype=object)
    fast = np.zeros(n, dtype=bool)
    if opts.get("fast_path", True) and opts.get("solver", "auto") in ("auto", "numba"):
        fast = ok2 & _rcc2_is_rcc1(core, grp, k, X2)
        X[fast], Eta[fast] = X2[fast], R2[fast] ** 2
        route[fast] = "rcc2's point, proved RCC1-optimal (a primal point of the relaxation with its value)"
    rest = np.flatnonzero(~fast)
    check = np.full(n, None, dtype=object)
    if rest.size:
        X[rest], Eta[rest], codes[rest], check[rest] = _rcc1_dual(core, grp, k[rest], Y0[rest], opts)
    # RCC1 is the tighter relaxation (docs/theory.md §8.5); where the computed value is above
    # RCC2's (the barrier's gap and the rounding allowance, on sets where the two meet), the
    # row gets RCC2's answer: in S, a bound on S, and below the value it had
    worse = ~fast & ok2 & np.isfinite(Eta) & (Eta > R2 * R2)
    route[worse] = "rcc2's point: its value is below the computed rcc1 value"
    X[worse], Eta[worse] = X2[worse], R2[worse] ** 2
    out = {"eta": Eta, "route": route}
    if any(c is not None for c in check):
        out["check"] = check
    return X, np.sqrt(np.maximum(Eta, 0.0)), codes, out


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
        r = int(np.sum(sv > sv[0] * max(rows.shape) * _EPS))
        ok[todo] = alpha_one_certified(Vt[r:].T @ Vt[r:], s[todo], rank=r)
    return ok


def _rcc1_dual(core, grp, k, Y0, opts):
    """The RCC1 dual of the rows ``k`` (the barrier, or cvxpy on request), certified at its
    weights: ``(centers, eta, codes)``."""
    n = k.size
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
    solver = opts.get("solver", "auto")
    if solver in ("clarabel", "scs"):   # the reference route: the EBT dual in cvxpy, built once
        _cvxpy_weights(solver, W, C, T, Alpha, state)
    else:
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
    check = np.full(n, None, dtype=object)
    check[state != CONVERGED] = "the rcc1 dual solver did not converge (its weights are certified as they are)"
    check[(state == CONVERGED) & ~good] = "the rcc1 certificate at the solver's weights is not optimal"
    bad = np.flatnonzero(~np.isfinite(Eta))
    if bad.size:   # weights 1 on the box rows, 0 on the intervals: M = N^T N = I, always certified
        Ab = np.zeros((bad.size, grp.K))
        Ab[:, : core.d] = 1.0
        Xb, Eb, _ = _certify(W, Q[bad], C[bad], Td[bad], Ab)
        Xl[bad], Eta[bad] = Xb, Eb
        codes[bad] = Status.INACCURATE
        check[bad] = "no certificate at the solver's weights: the box's own (weights 1 on the box rows)"
    return grp.invert(Xl), Eta, codes, check


def _cvxpy_weights(solver, W, C, T, Alpha, state):
    """The dual weights of every row from cvxpy (Clarabel or SCS) on the EBT dual with the
    lifted rows as rank-one quadratics (:class:`chebcenter._cvxpy.EbtDual`); the radius is
    still the certificate at those weights."""
    dual = EbtDual(solver, factors=W)
    for j in range(C.shape[0]):
        alpha, status = dual.solve(C[j][:, None] * W, T[j])
        ok = alpha is not None and status_of(status, dual=True) <= Status.INACCURATE
        Alpha[j] = alpha if ok else 0.0
        state[j] = CONVERGED if status_of(status, dual=True) == Status.OPTIMAL else NUMERICAL_FAILURE


def _certify(W, Q, C, T, Alpha):
    n = Q.shape[0]
    X = np.full((n, W.shape[0]), np.nan)
    Eta = np.full(n, np.nan)
    ok = np.zeros(n, dtype=np.bool_)
    row_blocks(n, 1, lambda a, b: certify_rows(W, np.ascontiguousarray(Q[a:b]), np.ascontiguousarray(C[a:b]),
                                               np.ascontiguousarray(T[a:b]), Alpha[a:b], X[a:b], Eta[a:b], ok[a:b]))
    return X, Eta, ok


def exact(core, grp, k, Y0, L, U, opts, capacity=None):
    n = k.size
    capacity = int(opts["max_vertices"] if capacity is None else capacity)
    X = np.full((n, core.d), np.nan)
    R, low = np.full(n, np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    nv = np.full(n, -1, dtype=np.int64)
    route = np.full(n, None, dtype=object)

    algorithm = opts.get("algorithm", "enumerate")
    done = np.zeros(n, dtype=bool)
    if grp.p and grp.AE.shape[0] == 0 and grp.K == core.d + 1 and core.d <= SLAB_MAX_D and algorithm != "bnb":
        done = batch_slab(core, grp, k, capacity, X, R, low, nv)
        route[done] = ROUTE_SLAB

    def block(start, stop):
        for j in range(start, stop):
            kk = k[j]
            if done[j]:
                continue
            if grp.p == 0:
                X[j], R[j], low[j], nv[j], route[j] = grp.invert(Y0[j:j + 1])[0], 0.0, 0.0, 1, "one point"
                continue
            one_row = grp.AE.shape[0] == 0 and grp.K == core.d + 1   # the branch and bound's rank 1
            P, route[j] = (None, "branch and bound") if (algorithm == "bnb" and one_row) else vertices_of(
                core, grp, kk, capacity, opts.get("max_candidates"))
            if P is None and one_row and algorithm != "enumerate":
                route[j] = "branch and bound"
                _, r2, _ = _rcc2_core(core, grp, k[j:j + 1], Y0[j:j + 1])
                X[j], R[j], low[j], codes[j] = _lifted_bnb(core, grp, kk, opts, float(r2[0]))
                continue
            if P is None:
                codes[j] = Status.TOO_LARGE
                continue
            if P.shape[0] == 0:
                P = grp.invert(Y0[j:j + 1])
            # the walk starts from the vertices' centroid: 3x fewer steps than from the first
            # vertex on the thousands of vertices of a full-dimensional set (measured, d = 10)
            # a slab's vertices are mostly box corners, many on one sphere: its ball goes
            # through a working set (3x faster there); vertices in general position (the
            # lifted walk, the cuts) are walked all at once from their centroid, which is
            # faster on them (measured: 509 against 655 us a row at d = 10, m = 3)
            if route[j] == ROUTE_SLAB:
                c, radius, lower, _, status = working_set_ball(P)
            else:
                c, radius, lower, _, status = certified_ball(P, start=P.mean(axis=0))
            X[j], R[j], low[j], nv[j] = c, radius, min(lower, radius), P.shape[0]
            if status != 0 and radius - lower > 1e-9 * (1.0 + radius):
                codes[j] = Status.INACCURATE
                check[j] = "the enclosing ball's walk stopped short: radius and radius_lower bracket the optimum"

    check = np.full(n, None, dtype=object)
    row_blocks(n, 1, block)
    for j in np.flatnonzero((codes == Status.INACCURATE) & (check == None)):  # noqa: E711  (object array)
        check[j] = "the branch and bound stopped short of its gap: radius and radius_lower bracket the optimum"
    out = {"radius_lower": low, "n_vertices": nv, "route": route}
    if any(c is not None for c in check):
        out["check"] = check
    return X, R, codes, out


#: the lifted coordinate of the interval row is shrunk to a half-width of _SHRINK times
#: rcc2's radius (a bound on the set's) for the branch and bound: see _lifted_bnb
_SHRINK = 1e-4


def _lifted_bnb(core, grp, kk, opts, r2):
    """The certified branch and bound of box slices (:func:`chebcenter.methods.bnb.bnb_center`)
    on one interval row ``l <= a^T x <= u`` (docs/theory.md §8.4).

    Lifted with its coordinate shrunk, ``y = (x, (a^T x - c) / lam)`` with c the interval's
    midpoint and ``lam = (u - l) / (2 eps)``, the set is the rank-1 box slice
    ``{y : a^T x - lam y_s = c, x in box, |y_s| <= eps}``. Distances there are at least
    x's, so the slice's certified radius bounds S; and a ball of radius r(S) about
    ``(c_x, 0)`` holds the lifted set within ``sqrt(r(S)^2 + eps^2)``, so its certified lower
    bound L gives ``r(S) >= sqrt(L^2 - eps^2)``. ``eps = 1e-4 r2`` (r2: rcc2's radius, at
    least r(S)) costs the lower bound at most 5e-9 of r2; a smaller eps would let the slice's
    own feasibility tolerance on y_s (1e-13 absolute) grow by lam into x's interval.
    Returns ``(center, radius, lower, status)``."""
    d = core.d
    lo_s, hi_s = grp.Lo[kk, d], grp.Hi[kk, d]
    eps = _SHRINK * max(r2, 1e-12)
    lam = (hi_s - lo_s) / (2.0 * eps)
    a = grp.AI[0]
    A_l = np.ascontiguousarray(np.append(a, -lam)[None, :] / math.hypot(1.0, lam))
    lifted = _Core(A_l, np.append(core.hi, eps), np.zeros(d + 1), None, core.feas_tol)
    q = lifted.q_of(np.array([0.5 * (lo_s + hi_s) / math.hypot(1.0, lam)]))
    # half the gap for the search: the lower bound then loses up to 5e-9 (eps) and the
    # projection of its support (_lower_in_slice), and the row is judged at the full gap
    c, up, low, sup, info = bnb_center(lifted, q, gap_tol=0.5 * opts["gap_tol"], max_nodes=opts["max_nodes"])
    if c is None or not np.isfinite(up):
        return np.full(d, np.nan), np.nan, np.nan, Status.SOLVER_ERROR if c is None else Status.TOO_LARGE
    low = _lower_in_slice(lifted, q, sup, low)
    lower = math.sqrt(max(low * low - eps * eps, 0.0))
    certified = info["complete"] and up <= lower * (1.0 + opts["gap_tol"]) + 1e-12
    return c[:d], up, min(lower, up), Status.OPTIMAL if certified else Status.INACCURATE


def auto(core, grp, k, Y0, L, U, opts):
    """exact where its work is within auto's limits, else rcc1: the policy of equality rows
    (:func:`chebcenter.methods.auto.exact_options`), on the lifted set's dimension and rank."""
    ex_opts = exact_options(opts, grp.K, grp.K - grp.p)
    X, R, codes, ex = exact(core, grp, k, Y0, L, U, ex_opts)
    method = np.full(k.size, "exact", dtype=object)
    big = np.flatnonzero(codes == Status.TOO_LARGE)
    if big.size:
        Xr, Rr, cr, exr = rcc1(core, grp, k[big], Y0[big], L[big], U[big], opts)
        X[big], R[big], codes[big] = Xr, Rr, cr
        method[big] = "rcc1"
        if "check" in exr:
            ex.setdefault("check", np.full(k.size, None, dtype=object))[big] = exr["check"]
    out = {"radius_lower": ex["radius_lower"], "method": method, "route": ex["route"]}
    if "check" in ex:
        out["check"] = ex["check"]
    return X, R, codes, out
