"""Relaxed Chebyshev centers: ``rcc1`` (Eldar-Beck-Teboulle) and ``rcc2``.

RCC1 (SPEC §1), in u-space ``x = q + W u``: each box row is one quadratic
``(a_i^T u + q_i - lo_i)(a_i^T u + q_i - hi_i) <= 0``. The dual (EBT Thm III.1)

    minimise_{alpha >= 0, tau}  tau - sum_i alpha_i t_i
    s.t. [[M, v], [v^T, tau]] >= 0,  M >= I,
    M = W^T D_alpha W,  v = W^T D_alpha (q - m),  t_i = (q_i - lo_i)(q_i - hi_i)

gives ``u = -M^{-1} v``. ``solver="auto"`` (= ``"numba"``) solves it with the compiled
kernels of :mod:`chebcenter._rcc1_kernel`: in closed form when ``p = d - rank A = 1``,
else by the barrier method, rows in parallel with warm starts inside fixed chunks
(option ``warm_chunk``); rows the kernels cannot certify go to cvxpy. ``"clarabel"`` and
``"scs"`` build the cvxpy problem once (Parameters) and are the reference routes. For ANY ``alpha >= 0`` with ``M > I`` one has
``max_{x in S_F} ||x - x(alpha)||^2 <= eta(alpha) = v^T M^{-1} v - alpha^T t``,
so the radius we report is recomputed from the solver's alpha (rescaled to
make ``M >= I`` hold exactly) and is a certificate independent of the solver's
accuracy. ``alpha = 1`` gives half* with ``eta = R^2``; it is optimal iff some
``Z >= 0`` has ``a_i^T Z a_i = (h_i - lo_i)(hi_i - h_i)``, which we test first
with NNLS on ``(P o P) delta = s`` (``Z = W^T D_delta W``).

RCC2: the projection of the box midpoint onto S_F (the relaxation taken in
x-space with ``A x = b`` kept linear); its value
``sum_i ((hi_i-lo_i)/2)^2 - ||x - m||^2`` bounds the squared worst-case error
of its own center.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._errors import MissingBackendError
from .._jit import row_blocks
from .._nnls_kernel import nnls_rows
from .._rcc1_kernel import (CONVERGED, NUMERICAL_FAILURE, certify_rows, rcc1_barrier_rows,
                            rcc1_segment_rows)
from .._validate import as_positive_int, check_choice
from ..results import Status
from . import Context, MethodOutput, MethodSpec

__all__ = ["RCC1", "RCC2", "rcc1_certificate"]

#: the cvxpy reference routes (solver="clarabel" / "scs"): at d = 50 Clarabel took 9-15 s
#: per solve and SCS 0.1-0.5 s on this machine; "auto" uses the compiled barrier solver.


def _import_cvxpy():
    try:
        import cvxpy as cp
    except ImportError as exc:  # pragma: no cover - cvxpy is a runtime dependency
        raise MissingBackendError(
            "method 'rcc1' needs cvxpy; install it with: pip install cvxpy clarabel scs") from exc
    return cp


def rcc1_certificate(W, q, lo, hi, alpha):
    """Center and certified bound of the RCC1 dual at a given ``alpha``.

    Returns ``(x, eta, alpha_scaled)``: ``alpha`` is clipped at 0 and scaled by
    ``1/lambda_min(M)`` when ``lambda_min(M) < 1`` so that ``M >= I``; then
    ``x = q - W M^{-1} v`` and ``eta = v^T M^{-1} v - alpha^T t`` with
    ``max_{x' in S_F} ||x' - x||^2 <= eta``. Returns ``(None, nan, alpha)`` if
    ``M`` is not positive definite. (One row of the batch kernel
    :func:`chebcenter._rcc1_kernel.certify_rows`.)
    """
    W = np.ascontiguousarray(W, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    Alpha = np.array(alpha, dtype=np.float64, ndmin=2)  # clipped and rescaled in place
    X = np.full((1, q.size), np.nan)
    Eta = np.full(1, np.nan)
    certify_rows(W, q[None, :], 0.5 * (lo + hi), lo, hi, Alpha, X, Eta, np.zeros(1, dtype=np.bool_))
    if np.isnan(Eta[0]):
        return None, float("nan"), Alpha[0]
    return X[0], float(Eta[0]), Alpha[0]


class _Rcc1Problem:
    """The RCC1 dual built once per (A, box, solver) with cvxpy Parameters."""

    def __init__(self, W, solver):
        cp = _import_cvxpy()
        d, p = W.shape
        self.solver = solver
        self.qm = cp.Parameter(d)
        self.t = cp.Parameter(d)
        self.alpha = cp.Variable(d, nonneg=True)
        tau = cp.Variable((1, 1))
        M = W.T @ cp.diag(self.alpha) @ W
        v = cp.reshape(W.T @ cp.multiply(self.qm, self.alpha), (p, 1), order="F")
        big = cp.bmat([[M, v], [v.T, tau]])
        cons = [(big + big.T) / 2 >> 0, (M + M.T) / 2 >> np.eye(p)]
        self.prob = cp.Problem(cp.Minimize(tau[0, 0] - self.t @ self.alpha), cons)

    def solve(self, q, lo, hi):
        cp = _import_cvxpy()
        self.qm.value = q - 0.5 * (lo + hi)
        self.t.value = (q - lo) * (q - hi)
        kwargs = {"eps": 1e-9, "max_iters": 100_000} if self.solver == "SCS" else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                self.prob.solve(solver=self.solver, **kwargs)
            except cp.error.SolverError:
                return None, "solver_error"
        return self.alpha.value, self.prob.status


def rcc1(ctx: Context) -> MethodOutput:
    """Eldar-Beck-Teboulle relaxed Chebyshev center (see the module docstring)."""
    prob = ctx.problem
    opts = ctx.options
    n, d = ctx.rows.size, prob.d
    W, lo, hi = prob.W, prob.lo, prob.hi
    solver = opts["solver"]
    if solver == "auto":
        solver = "numba"
    centers = np.full((n, d), np.nan)
    radii = np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    alphas = np.full((n, d), np.nan)
    etas = np.full(n, np.nan)
    route = np.empty(n, dtype=object)
    PP = np.ascontiguousarray(prob.null_projector ** 2) if opts["fast_path"] else None
    if prob.p == 0:  # a single point: nothing to relax
        return MethodOutput(ctx.Q.copy(), np.zeros(n), codes,
                            {"alpha": np.zeros((n, d)), "eta": np.zeros(n),
                             "route": np.full(n, "unique solution", dtype=object)})
    one = np.zeros(n, dtype=np.bool_)
    if opts["fast_path"]:  # the NNLS test of alpha = 1 on rows whose half* point is in the box
        inside = np.flatnonzero(np.all((ctx.H >= lo - prob.box_tol) & (ctx.H <= hi + prob.box_tol), axis=1))
        Hc = np.clip(ctx.H[inside], lo, hi)
        S = np.ascontiguousarray((Hc - lo) * (hi - Hc))
        ok = np.zeros(inside.size, dtype=np.bool_)
        res = np.empty(inside.size)
        row_blocks(inside.size, 1, lambda a, b: nnls_rows(PP, S[a:b], 1e-10, 50 * d, ok[a:b], res[a:b]))
        one[inside[ok]] = True
        centers[one], alphas[one] = ctx.H[one], 1.0
        etas[one] = ctx.radius_ball[one] ** 2
        radii[one] = ctx.radius_ball[one]
        route[one] = "alpha=1 (nnls certificate)"
    todo = np.flatnonzero(~one)
    if solver == "numba":
        _rcc1_numba(ctx, np.array(todo, dtype=np.int64), centers, radii, codes, alphas, etas, route)
        return MethodOutput(centers, radii, codes, {"alpha": alphas, "eta": etas, "route": route})
    for k in todo:
        solved = prob._rcc1_problem(solver.upper())
        alpha, status = solved.solve(ctx.Q[k], lo, hi)
        route[k] = solver
        if alpha is None or status not in ("optimal", "optimal_inaccurate"):
            codes[k] = Status.SOLVER_ERROR
            continue
        x, eta, alpha = rcc1_certificate(W, ctx.Q[k], lo, hi, alpha)
        if x is None:
            codes[k] = Status.SOLVER_ERROR
            continue
        centers[k], alphas[k], etas[k] = x, alpha, eta
        radii[k] = np.sqrt(max(eta, 0.0))
        if status != "optimal":
            codes[k] = Status.INACCURATE
    return MethodOutput(centers, radii, codes, {"alpha": alphas, "eta": etas, "route": route})


def _rcc1_numba(ctx, rows, centers, radii, codes, alphas, etas, route):
    """The compiled solvers on ``rows``: the closed form when ``p = 1``, else the barrier
    kernel over the whole batch on all cores; eta is certified from alpha as for cvxpy."""
    if rows.size == 0:
        return
    prob = ctx.problem
    Q = ctx.Q[rows]
    C = np.ascontiguousarray(Q - prob.mid)
    T = np.ascontiguousarray((Q - prob.lo) * (Q - prob.hi))
    A = np.zeros_like(C)
    its = np.zeros(rows.size, dtype=np.int64)
    state = np.zeros(rows.size, dtype=np.int64)
    W = np.ascontiguousarray(prob.W)
    if prob.p == 1:
        ustar = np.full(rows.size, np.nan)
        rcc1_segment_rows(np.ascontiguousarray(W[:, 0]), C, T, A, ustar, its)
        state[its < 0] = NUMERICAL_FAILURE
        label = "segment closed form ({} bisection steps)"
    else:
        # warm-start chunks of up to warm_chunk rows, but at least 8 chunks for the cores
        chunk = max(1, min(ctx.options["warm_chunk"], rows.size // 8))
        row_blocks(rows.size, chunk, lambda a, b: rcc1_barrier_rows(
            W, C[a:b], T[a:b], A[a:b], its[a:b], state[a:b], 1e-10, 150, chunk))
        label = "numba barrier ({} Newton steps)"
    Alpha, X, Eta = A.copy(), np.full_like(C, np.nan), np.full(rows.size, np.nan)
    reliable = np.zeros(rows.size, dtype=np.bool_)
    Qc = np.ascontiguousarray(Q)
    row_blocks(rows.size, 1, lambda a, b: certify_rows(W, Qc[a:b], prob.mid, prob.lo, prob.hi, Alpha[a:b],
                                                       X[a:b], Eta[a:b], reliable[a:b]))
    reliable &= state == CONVERGED
    if prob.p == 1:  # the dual weights must reproduce the bisection's u*
        far = np.linalg.norm(X - Q - np.outer(ustar, W[:, 0]), axis=1)
        reliable &= far <= 1e-9 * (1.0 + np.linalg.norm(Q, axis=1))
    good = rows[reliable]
    centers[good], alphas[good], etas[good] = X[reliable], Alpha[reliable], Eta[reliable]
    radii[good] = np.sqrt(np.maximum(Eta[reliable], 0.0))
    route[good] = [label.format(i) for i in its[reliable]]
    for j in np.flatnonzero(~reliable):
        k = rows[j]
        # near-degenerate slice (the dual optimum at or near infinity: Newton stalls or
        # cancels) -- use the reference
        alpha, status = prob._rcc1_problem("CLARABEL" if prob.p <= 12 else "SCS").solve(Q[j], prob.lo, prob.hi)
        if alpha is None or status not in ("optimal", "optimal_inaccurate"):
            codes[k] = Status.SOLVER_ERROR
            route[k] = "compiled solver failed; cvxpy failed"
            continue
        route[k] = "compiled solver unreliable (degenerate slice); cvxpy fallback"
        x, eta, alpha = rcc1_certificate(prob.W, Q[j], prob.lo, prob.hi, alpha)
        if x is None:
            codes[k] = Status.SOLVER_ERROR
            continue
        centers[k], alphas[k], etas[k], radii[k] = x, alpha, eta, np.sqrt(max(eta, 0.0))
        if status != "optimal":
            codes[k] = Status.INACCURATE


def _rcc2_cvxpy(prob, b):
    """Reference route: the QP ``min ||x - m||^2, A x = b, lo <= x <= hi`` in cvxpy/Clarabel."""
    cp = _import_cvxpy()
    x = cp.Variable(prob.d)
    qp = cp.Problem(cp.Minimize(cp.sum_squares(x - prob.mid)),
                    [prob.Vr @ x == prob.Vr @ b, x >= prob.lo, x <= prob.hi])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            qp.solve(solver="CLARABEL")
        except cp.error.SolverError:
            return None, "solver_error"
    return x.value, qp.status


def rcc2(ctx: Context) -> MethodOutput:
    """Projection of the box midpoint onto S_F (compiled dual Newton; cvxpy on request)."""
    prob = ctx.problem
    n = ctx.rows.size
    centers = ctx.projection()
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    todo = np.arange(n) if ctx.options["solver"] == "cvxpy" else np.flatnonzero(np.isnan(centers[:, 0]))
    for k in todo:
        x, status = _rcc2_cvxpy(prob, ctx.Q[k])
        if x is None or status not in ("optimal", "optimal_inaccurate"):
            codes[k] = Status.SOLVER_ERROR
            centers[k] = np.nan
            continue
        centers[k] = np.clip(x, prob.lo, prob.hi)
        if status != "optimal":
            codes[k] = Status.INACCURATE
    dev = centers - prob.mid
    radii = np.sqrt(np.maximum(prob.half_diag_sq - np.einsum("ij,ij->i", dev, dev), 0.0))
    return MethodOutput(centers, radii, codes)


RCC1 = MethodSpec(
    "rcc1", rcc1, lies_in="S_F",
    certifies="sqrt(eta): the RCC1 dual value, recomputed from alpha (>= exact radius)",
    options={"solver": "auto", "fast_path": True, "warm_chunk": 16},
    validators={"solver": lambda name, v: check_choice(name, v, ("auto", "numba", "clarabel", "scs")),
                "fast_path": lambda name, v: bool(v), "warm_chunk": as_positive_int},
)
RCC2 = MethodSpec(
    "rcc2", rcc2, lies_in="S_F",
    certifies="sqrt(sum((hi-lo)^2)/4 - ||x - m||^2): the RCC2 relaxation value",
    options={"solver": "numba"},
    validators={"solver": lambda name, v: check_choice(name, v, ("numba", "cvxpy"))},
)
