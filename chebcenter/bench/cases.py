"""The rows of ``python -m chebcenter bench``: each case builds its data and returns a
:class:`Case`, with the candidates for its baseline.

Private module, read by :mod:`chebcenter.bench.runner`. A row's baseline is the fastest thing a
user would write for the same answer at the same accuracy: every case names its
candidates (the formulations, the solvers and their settings a user would try, each built
once with cvxpy Parameters where cvxpy allows it, cold per row where it does not), the
bench times them all, measures each one's error against our answer on a sample of rows,
and reports the fastest candidate within the case's tolerance as the baseline
(:func:`chebcenter.bench.runner.choose`). :func:`qhull_vertices` and :func:`highs_ranges` are
also used by ``benchmarks/``. Nothing here runs on import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CASES", "DEFAULT", "Candidate", "Case", "highs_ranges", "qhull_vertices"]

#: the accuracy a baseline candidate must reach to count: its answer (a radius, a center, a
#: range, a vertex set) within this relative error of ours, measured on the case's sample rows
MATCHED = 1e-6


@dataclass
class Candidate:
    """One way a user would compute the row's answer: ``run()`` does ``n`` rows (timed);
    ``answer()`` returns its answer on the case's sample rows (compared with ours)."""

    name: str
    run: Callable[[], Any]
    n: int
    answer: Callable[[], np.ndarray] | None = None


@dataclass
class Case:
    """One row of the table: ``ours()`` does ``n_ours`` rows; ``reference()`` is our answer on
    the sample rows, compared with each candidate's by ``error(candidate, ours)`` (relative,
    against :data:`MATCHED`); ``agree()`` adds a line on the agreement; ``note`` says why a
    ratio is what it is (a closed form against a solver)."""

    what: str
    unit: str
    ours: Callable[[], Any]
    n_ours: int
    candidates: list = field(default_factory=list)
    reference: Callable[[], np.ndarray] | None = None
    error: Callable[[np.ndarray, np.ndarray], float] | None = None
    agree: Callable[[], str] | None = None
    note: str = ""


def _relative(cand, ours):
    """``max |cand - ours| / max |ours|`` (radii, centers): the relative error of an answer."""
    cand, ours = np.asarray(cand, dtype=float), np.asarray(ours, dtype=float)
    if cand.shape != ours.shape or not np.all(np.isfinite(cand)):
        return float("inf")
    return float(np.max(np.abs(cand - ours)) / max(float(np.max(np.abs(ours))), 1e-300))


def _planted(d, m, n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    X = rng.random((n, d))
    return A, X, X @ A.T


# -- the baselines a user writes ------------------------------------------------------------
def qhull_vertices(W, lo, hi, q):
    """The baseline of vertex enumeration: SciPy's qhull (``HalfspaceIntersection``) on the
    null-space rewrite ``{u : W u <= hi - q, -W u <= q - lo}``, from the center of its
    largest inscribed ball (one HiGHS LP). benchmarks/test_exact.py uses it too."""
    G = np.vstack([W, -W])
    h = np.concatenate([hi - q, q - lo])
    return q + _qhull(G, h) @ W.T


def _qhull(G, h):
    """The vertices of the full-dimensional polytope ``{u : G u <= h}`` by qhull, from the
    center of its largest inscribed ball (HiGHS)."""
    from scipy.optimize import linprog
    from scipy.spatial import HalfspaceIntersection

    p = G.shape[1]
    nrm = np.linalg.norm(G, axis=1)
    res = linprog(np.r_[np.zeros(p), -1.0], A_ub=np.hstack([G, nrm[:, None]]), b_ub=h,
                  bounds=[(None, None)] * p + [(0, None)], method="highs")
    return HalfspaceIntersection(np.hstack([G, -h[:, None]]), res.x[:-1]).intersections


def highs_ranges(A, B, lo=0.0, hi=1.0):
    """The baseline of feature ranges: HiGHS (``linprog``) per LP, 2 d per row; shape
    (N, 2, d) with the minima then the maxima. benchmarks/test_ranges.py uses it too."""
    from scipy.optimize import linprog

    d = A.shape[1]
    bounds = list(zip(np.broadcast_to(lo, d), np.broadcast_to(hi, d)))
    out = np.empty((B.shape[0], 2, d))
    for k, b in enumerate(B):
        for i in range(d):
            e = np.zeros(d)
            e[i] = 1.0
            out[k, 0, i] = linprog(e, A_eq=A, b_eq=b, bounds=bounds, method="highs").fun
            out[k, 1, i] = -linprog(-e, A_eq=A, b_eq=b, bounds=bounds, method="highs").fun
    return out


def _highs_ranges_stacked(A, B, lo=0.0, hi=1.0):
    """Feature ranges as one LP per row: its 2 d LPs stacked block-diagonally (2 d copies of
    x, each with its own objective ``+-x_i``), one HiGHS call per row."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    m, d = A.shape
    K = 2 * d
    Aeq = sp.block_diag([sp.csr_matrix(A)] * K, format="csr")
    c = np.zeros(K * d)
    for i in range(d):
        c[i * d + i] = 1.0
        c[(d + i) * d + i] = -1.0
    bounds = list(zip(np.tile(np.broadcast_to(lo, d), K), np.tile(np.broadcast_to(hi, d), K)))
    out = np.empty((B.shape[0], 2, d))
    for k, b in enumerate(B):
        x = linprog(c, A_eq=Aeq, b_eq=np.tile(b, K), bounds=bounds, method="highs").x.reshape(K, d)
        out[k, 0] = np.diag(x[:d])
        out[k, 1] = np.diag(x[d:])
    return out


def _rcc1_primal(A, kind, lo, hi, solver, **settings):
    """The EBT relaxation (RCC1) as a user writes it: the primal SDP in cvxpy, built once with
    Parameters, ``max tr X - ||x||^2`` over ``[[X, x], [x^T, 1]] >= 0`` with every box row as
    the quadratic ``X_ii - (lo_i + hi_i) x_i + lo_i hi_i <= 0``, and either ``A x = b`` with
    ``tr(A X A^T) - 2 b^T A x + ||b||^2 <= 0`` (``kind="equality"``) or each interval row
    ``a^T X a - (l + u) a^T x + l u <= 0`` (``kind="intervals"``). Returns
    ``radius(first, second)`` (b and None, or l and u): the square root of the optimal value."""
    import cvxpy as cp

    m, d = A.shape
    x, X = cp.Variable(d), cp.Variable((d, d), symmetric=True)
    cons = [cp.bmat([[X, cp.reshape(x, (d, 1), order="F")], [cp.reshape(x, (1, d), order="F"), np.ones((1, 1))]]) >> 0,
            cp.diag(X) - cp.multiply(lo + hi, x) + lo * hi <= 0]
    if kind == "equality":
        b, bb = cp.Parameter(m), cp.Parameter(nonneg=True)
        cons += [A @ x == b, cp.trace(A @ X @ A.T) - 2 * b @ (A @ x) + bb <= 0]
    else:
        lpu, lu = cp.Parameter(m), cp.Parameter(m)
        cons += [cp.diag(A @ X @ A.T) - cp.multiply(lpu, A @ x) + lu <= 0]
    prob = cp.Problem(cp.Maximize(cp.trace(X) - cp.sum_squares(x)), cons)

    def radius(first, second=None):
        if kind == "equality":
            b.value, bb.value = first, float(first @ first)
        else:
            lpu.value, lu.value = first + second, first * second
        prob.solve(solver=solver, **settings)
        return np.sqrt(max(prob.value, 0.0)) if prob.value is not None else np.nan
    return radius


def _rcc2_qp(A, kind, lo, hi, solver, **settings):
    """RCC2 as a user writes it: the projection of the box midpoint, a cvxpy QP built once
    (Parameters), with its radius ``sqrt(sum ((hi - lo) / 2)^2 - ||x - mid||^2)``."""
    import cvxpy as cp

    m, d = A.shape
    mid = 0.5 * (lo + hi)
    R2 = float(np.sum((0.5 * (hi - lo)) ** 2))
    x = cp.Variable(d)
    first, second = cp.Parameter(m), cp.Parameter(m)
    rows = [A @ x == first] if kind == "equality" else [A @ x >= first, A @ x <= second]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - mid)), rows + [x >= lo, x <= hi])

    def radius(f, s=None):
        first.value = f
        if kind != "equality":
            second.value = s
        prob.solve(solver=solver, **settings)
        if x.value is None:
            return np.nan
        return np.sqrt(max(R2 - float(np.sum((x.value - mid) ** 2)), 0.0))
    return radius


def _rcc2_candidates(A, kind, timed, sample):
    """The candidates of an rcc2 row: the QP of :func:`_rcc2_qp` with Clarabel, OSQP at its
    defaults and OSQP at eps 1e-10 (polished); ``timed`` and ``sample`` are the argument
    tuples of the timed rows and of the rows compared with ours."""
    d = A.shape[1]
    solvers = [("cvxpy QP + Clarabel, built once (Parameters)", "CLARABEL", {}),
               ("cvxpy QP + OSQP at eps 1e-10 (polished), built once", "OSQP",
                {"eps_abs": 1e-10, "eps_rel": 1e-10, "polish": True, "max_iter": 100_000}),
               ("cvxpy QP + OSQP at its defaults, built once", "OSQP", {})]
    out = []
    for name, solver, settings in solvers:
        fn = _rcc2_qp(A, kind, np.zeros(d), np.ones(d), solver, **settings)
        out.append(Candidate(name, (lambda fn=fn: [fn(*p) for p in timed]), len(timed),
                             (lambda fn=fn: _sample_radii(fn, sample))))
    return out


def _meb(V, how):
    """The radius of the smallest ball enclosing the rows of V, in cvxpy (cold: V changes size
    from row to row): ``"socp"`` is ``min r`` s.t. ``||v_i - c|| <= r`` with Clarabel,
    ``"socp-scs"`` the same with SCS at its defaults, ``"qp"`` the dual QP
    ``max sum_i w_i ||v_i||^2 - ||V^T w||^2`` over the simplex (Clarabel)."""
    import cvxpy as cp

    n, d = V.shape
    if how.startswith("socp"):
        c, r = cp.Variable(d), cp.Variable()
        prob = cp.Problem(cp.Minimize(r), [cp.SOC(r * np.ones(n), (V - np.ones((n, 1)) @ cp.reshape(c, (1, d), order="F")).T,
                                                  axis=0)])
        prob.solve(solver="SCS" if how == "socp-scs" else "CLARABEL")
        return float(r.value)
    w = cp.Variable(n, nonneg=True)
    sq = np.sum(V * V, axis=1)
    prob = cp.Problem(cp.Maximize(sq @ w - cp.sum_squares(V.T @ w)), [cp.sum(w) == 1])
    prob.solve(solver="CLARABEL")
    return float(np.sqrt(max(prob.value, 0.0)))


def _meb_candidates(verts, timed, sample, scs=True):
    """The candidates of an exact row: qhull's vertices (``verts(*args)``), then the smallest
    enclosing ball as an SOCP (Clarabel; SCS where ``scs``) or as its dual QP (Clarabel), per
    row."""
    ways = (("SOCP, Clarabel", "socp"),) + ((("SOCP, SCS", "socp-scs"),) if scs else ()) + (("dual QP, Clarabel", "qp"),)
    return [Candidate(f"SciPy qhull, then the smallest ball in cvxpy ({label}), per row",
                      (lambda how=how: [_meb(verts(*p), how) for p in timed]), len(timed),
                      (lambda how=how: np.array([_meb(verts(*p), how) for p in sample])))
            for label, how in ways]


def _sample_radii(fn, pairs):
    return np.array([fn(*p) for p in pairs])


# -- the rows ----------------------------------------------------------------------------
def _case_half_star():
    import chebcenter as cc

    d, m, n = 32, 5, 20_000
    A, _, B = _planted(d, m, n)
    P = cc.BoxSlice(A)
    pinv = np.linalg.pinv(A)
    mid = np.full(d, 0.5)
    shift = mid - pinv @ (A @ mid)
    R2 = d * 0.25

    def vectorised(rows=slice(None)):
        C = B[rows] @ pinv.T + shift
        D = C - mid
        return C, np.sqrt(np.maximum(R2 - np.einsum("ij,ij->i", D, D), 0.0))

    def loop(rows=slice(0, 2000)):
        return np.array([pinv @ b + shift for b in B[rows]])

    sample = slice(0, 200)
    return Case(
        f"`half_star`, N = {n}, d = {d}, m = {m} (with the emptiness test and the certified radius)", "row",
        lambda: P.centers(B, "half_star"), n,
        [Candidate("NumPy, whole batch: C = B pinv(A)^T + P m and R (no emptiness test)", vectorised, n,
                   lambda: vectorised(sample)[0]),
         Candidate("NumPy loop: pinv(A) b + P m per row", loop, 2000, lambda: loop(sample))],
        reference=lambda: P.centers(B[sample], "half_star").centers,
        note="a closed form on both sides: ours adds the emptiness test of every row")


def _case_rcc2():
    import chebcenter as cc

    d, m, n = 32, 5, 4000
    A, _, B = _planted(d, m, n, seed=1)
    P = cc.BoxSlice(A)
    sample = B[:10]
    cands = _rcc2_candidates(A, "equality", [(b,) for b in B[:20]], [(b,) for b in sample])
    return Case(f"`rcc2` (projection of the midpoint onto S_F), N = {n}, d = {d}, m = {m}", "row",
                lambda: P.centers(B, "rcc2"), n, cands, reference=lambda: P.centers(sample, "rcc2").radii,
                note="ours is a compiled projection (dual Newton on m unknowns), the baseline a general QP solver")


def _case_cls():
    from scipy.optimize import lsq_linear

    import chebcenter as cc

    d, m, n = 32, 5, 4000
    A, _, B = _planted(d, m, n, seed=2)
    P = cc.BoxSlice(A)
    lo, hi = np.zeros(d), np.ones(d)

    def solve(method, rows, **kw):
        return np.array([lsq_linear(A, b, bounds=(lo, hi), method=method, tol=1e-12, **kw).x for b in B[rows]])

    def residual(X, rows):
        return np.linalg.norm(X @ A.T - B[rows], axis=1) / np.linalg.norm(B[rows], axis=1)

    sample = slice(0, 20)
    return Case(f"`cls` (box least squares), N = {n}, d = {d}, m = {m}", "row", lambda: P.centers(B, "cls"), n,
                [Candidate("SciPy `lsq_linear`, BVLS, per row", lambda: solve("bvls", slice(0, 40)), 40,
                           lambda: residual(solve("bvls", sample), sample)),
                 Candidate("SciPy `lsq_linear`, TRF, per row", lambda: solve("trf", slice(0, 40)), 40,
                           lambda: residual(solve("trf", sample), sample))],
                reference=lambda: residual(P.centers(B[sample], "cls").centers, sample),
                note="both are BVLS; ours is compiled and runs the rows in one call",
                # the minimiser is not unique (m < d): the answers are compared by their residual
                # ||A x - b|| / ||b||, 0 for a point of the slice
                error=lambda cand, ours: float(np.max(np.abs(cand - ours))))


def _rcc1_candidates(A, kind, pairs, lo, hi, full):
    """The candidates of an rcc1 row: the primal SDP with SCS (defaults, and eps 1e-8) and
    Clarabel, and the EBT dual in cvxpy (chebcenter's own ``solver=`` routes)."""
    import chebcenter as cc

    P = cc.BoxSlice(A, lo, hi)
    out = []
    settings = [("SCS at its defaults", "SCS", {}), ("SCS at eps 1e-8", "SCS", {"eps_abs": 1e-8, "eps_rel": 1e-8}),
                ("Clarabel", "CLARABEL", {})]
    for label, solver, kw in settings:
        fn = _rcc1_primal(A, kind, lo, hi, solver, **kw)
        n = 1 if (solver == "CLARABEL" and A.shape[1] > 20) else 2
        out.append(Candidate(f"cvxpy primal SDP + {label}, built once (Parameters)",
                             (lambda fn=fn, n=n: [fn(*p) for p in pairs[:n]]), n,
                             (lambda fn=fn: _sample_radii(fn, pairs))))
    # the EBT dual in cvxpy: with SCS at chebcenter's eps 1e-9 on slices (on interval sets,
    # 3-4 s per row at d = 10, only in --full runs), with Clarabel up to d = 20 (about 1 s per
    # row at d = 50, only in --full runs); neither is the fastest where both run
    duals = [name for name, keep in (("scs", full or kind == "equality"), ("clarabel", full or A.shape[1] <= 20)) if keep]
    for solver in duals:
        def run(rows, solver=solver):
            if kind == "equality":
                return P.centers(np.array([p[0] for p in rows]), "rcc1", fast_path=False, solver=solver).radii
            return P.centers(lower=np.array([p[0] for p in rows]), upper=np.array([p[1] for p in rows]),
                             method="rcc1", fast_path=False, solver=solver).radii
        out.append(Candidate(f"cvxpy EBT dual + {'SCS at eps 1e-9' if solver == 'scs' else 'Clarabel'}, built once "
                             f"(chebcenter's `solver={solver!r}`)", (lambda run=run: run(pairs[:1])), 1,
                             (lambda run=run: run(pairs))))
    return out


def _case_rcc1(d, m, n, sample=2, full=False):
    import chebcenter as cc

    A, _, B = _planted(d, m, n, seed=3)
    P = cc.BoxSlice(A)
    lo, hi = np.zeros(d), np.ones(d)
    pairs = [(b,) for b in B[:sample]]
    return Case(f"`rcc1` (EBT relaxation), N = {n}, d = {d}, m = {m} (`fast_path=False`: the barrier on every row)",
                "row", lambda: P.centers(B, "rcc1", fast_path=False), n,
                _rcc1_candidates(A, "equality", pairs, lo, hi, full),
                reference=lambda: P.centers(B[:sample], "rcc1", fast_path=False).radii)


def _case_rcc1_alone(d, m, n):
    """rcc1 past where cvxpy answers in minutes: no baseline."""
    import chebcenter as cc

    A, _, B = _planted(d, m, n, seed=3)
    P = cc.BoxSlice(A)

    def agree():
        r = P.centers(B[:1], "rcc1", fast_path=False)
        return f"{r.status[0].name} (certified from its weights)"
    return Case(f"`rcc1` barrier, d = {d}, m = {m}, cold rows (`fast_path=False`)", "row",
                lambda: P.centers(B, "rcc1", fast_path=False), n, agree=agree,
                note="no baseline: cvxpy takes minutes per row at d >= 200")


def _case_exact(d, m, n, sample=3):
    """``exact`` on a batch sharing A against what a user writes: qhull's vertices, then the
    smallest enclosing ball in cvxpy, per row."""
    import chebcenter as cc

    A, _, B = _planted(d, m, n, seed=11 * d + m)
    P = cc.BoxSlice(A)
    lo, hi = np.zeros(d), np.ones(d)
    Vt = np.linalg.svd(A)[2]
    W = Vt[m:].T

    def verts(b):
        q = np.linalg.lstsq(A, b, rcond=None)[0]
        return qhull_vertices(W, lo, hi, q)

    cands = _meb_candidates(verts, [(b,) for b in B[:2]], [(b,) for b in B[:sample]])
    return Case(f"`exact` (vertices + smallest enclosing ball), N = {n}, d = {d}, rank {m}", "row",
                lambda: P.centers(B, "exact", return_support=False), n, cands,
                reference=lambda: P.centers(B[:sample], "exact").radii)


def _case_enumeration():
    import chebcenter as cc
    from chebcenter.methods.exact import slice_vertices

    d, m = 14, 5
    A, _, B = _planted(d, m, 1, seed=d * m)
    P = cc.BoxSlice(A)
    core = P._core
    q = core.q_of((B[0] - P._offset) / P.scale)
    cands = [Candidate("SciPy qhull (`HalfspaceIntersection`)", lambda: qhull_vertices(core.W, core.lo, core.hi, q), 1,
                       lambda: qhull_vertices(core.W, core.lo, core.hi, q))]
    try:
        import cdd  # noqa: F401  (pycddlib, where installed)

        cands.append(Candidate("pycddlib (double description)", lambda: _cdd_vertices(core.W, core.lo, core.hi, q), 1,
                               lambda: _cdd_vertices(core.W, core.lo, core.hi, q)))
    except ImportError:
        pass

    def hausdorff(cand, ours):
        if cand.ndim != 2 or cand.shape[1] != ours.shape[1]:
            return float("inf")
        D = np.linalg.norm(cand[:, None, :] - ours[None, :, :], axis=2)
        return float(max(D.min(axis=0).max(), D.min(axis=1).max()))

    return Case(f"vertex enumeration (exact's edge walk), d = {d}, m = {m}", "call",
                lambda: slice_vertices(core, q, 10**6), 1, cands, reference=lambda: slice_vertices(core, q, 10**6),
                error=hausdorff, note="the error is the Hausdorff distance of the two vertex sets")


def _cdd_vertices(W, lo, hi, q):
    import cdd

    G = np.vstack([W, -W])
    h = np.concatenate([hi - q, q - lo])
    mat = cdd.matrix_from_array(np.hstack([h[:, None], -G]), rep_type=cdd.RepType.INEQUALITY)
    gen = np.array(cdd.copy_generators(cdd.polyhedron_from_matrix(mat)).array)
    return q + gen[:, 1:] @ W.T


def _case_ranges():
    import chebcenter as cc

    d, r, n = 10, 3, 4000
    A, _, B = _planted(d, r, n, seed=4)
    P = cc.BoxSlice(A)
    sample = slice(0, 3)

    def ours_sample():
        res = P.feature_ranges(B[sample])
        return np.stack([res.lower, res.upper], axis=1)

    return Case(f"feature ranges, N = {n}, d = {d}, rank {r} (2 d LPs per row)", "row",
                lambda: P.feature_ranges(B), n,
                [Candidate("HiGHS (`linprog`) per LP", lambda: highs_ranges(A, B[:5]), 5,
                           lambda: highs_ranges(A, B[sample])),
                 Candidate("HiGHS, one LP per row (its 2 d LPs stacked)", lambda: _highs_ranges_stacked(A, B[:5]), 5,
                           lambda: _highs_ranges_stacked(A, B[sample]))],
                reference=ours_sample, error=lambda cand, ours: float(np.max(np.abs(cand - ours))),
                note="ours is a compiled simplex warm-started from one coordinate's LP to the next")


def _interval_data(d, m, n, delta=0.01, seed=7):
    A, _, B = _planted(d, m, n, seed=seed)
    return A, B - delta, B + delta


def _case_interval_rcc1(d, m, n, sample=2, full=False):
    import chebcenter as cc

    A, L, U = _interval_data(d, m, n)
    P = cc.BoxSlice(A)
    pairs = list(zip(L[:sample], U[:sample]))
    return Case(f"`rcc1` on bounded-error sets (b ± 0.01), N = {n}, d = {d}, m = {m}", "row",
                lambda: P.centers(lower=L, upper=U, method="rcc1"), n,
                _rcc1_candidates(A, "intervals", pairs, np.zeros(d), np.ones(d), full),
                reference=lambda: P.centers(lower=L[:sample], upper=U[:sample], method="rcc1").radii)


def _case_interval_rcc2(d, m, n, sample=10):
    import chebcenter as cc

    A, L, U = _interval_data(d, m, n)
    P = cc.BoxSlice(A)
    cands = _rcc2_candidates(A, "intervals", list(zip(L[:20], U[:20])), list(zip(L[:sample], U[:sample])))
    return Case(f"`rcc2` on bounded-error sets (b ± 0.01), N = {n}, d = {d}, m = {m}", "row",
                lambda: P.centers(lower=L, upper=U, method="rcc2"), n, cands,
                reference=lambda: P.centers(lower=L[:sample], upper=U[:sample], method="rcc2").radii)


def _case_interval_exact(d, m, n, sample=3, full=False):
    import chebcenter as cc

    A, L, U = _interval_data(d, m, n)
    P = cc.BoxSlice(A)
    G = np.vstack([np.eye(d), -np.eye(d), A, -A])

    def verts(l, u):
        return _qhull(G, np.concatenate([np.ones(d), np.zeros(d), u, -l]))

    # the SOCP with SCS only in --full runs: 6 s a row on these vertex lists, 1.3e-5 off ours
    cands = _meb_candidates(verts, list(zip(L[:2], U[:2])), list(zip(L[:sample], U[:sample])), scs=full)
    return Case(f"`exact` on bounded-error sets (b ± 0.01), N = {n}, d = {d}, m = {m}", "row",
                lambda: P.centers(lower=L, upper=U, method="exact"), n, cands,
                reference=lambda: P.centers(lower=L[:sample], upper=U[:sample], method="exact").radii)


def _case_bnb():
    import chebcenter as cc

    d = 31
    A, _, B = _planted(d, 1, 1, seed=d)
    P = cc.BoxSlice(A)

    def ours():
        return P.centers(B, "exact", algorithm="bnb", gap_tol=1e-6)

    def agree():
        r = ours()
        gap = float(r.radii[0] - r.extras["radius_lower"][0]) / float(r.radii[0])
        return f"{r.status[0].name}, relative gap {gap:.1e}"

    return Case("`exact` by branch and bound, rank 1, d − rank = 30, gap 1e-6", "row", ours, 1, agree=agree,
                note="no baseline: the enumeration would list about 10⁹ vertices")


def _case_against_equality(method, d, m, n):
    """A bounded-error batch (b ± 0.01) beside the equality case A x = b on the same rows:
    what the intervals cost (not a baseline a user would write instead)."""
    import chebcenter as cc

    A, _, B = _planted(d, m, n, seed=7)
    P = cc.BoxSlice(A)
    call = {"ranges": lambda **kw: P.feature_ranges(B, **kw)}.get(method, lambda **kw: P.centers(B, method, **kw))

    def agree():
        return f"{int(np.sum(call(noise=0.01).status_codes == 0))} of {n} OPTIMAL"
    what = {"ranges": "feature ranges"}.get(method, f"`{method}`")
    return Case(f"{what} on bounded-error sets (b ± 0.01) beside the equality case, N = {n}, d = {d}, m = {m}", "row",
                lambda: call(noise=0.01), n,
                [Candidate("the equality case A x = b on the same rows (chebcenter)", lambda: call(), n)],
                agree=agree, note="a comparison, not a baseline: the ratio is what the intervals cost")


def _thin_data(n, d=13, m=4, seed=1):
    """Float32 bounds on a d-dimensional embedding: four random rows over features in [0, 1]
    (30 % of them at 1), each published value +- 4 float32 ulp (+ 1e-7), the way a float32
    client's output bounds what produced it (tests/chebcenter/test_thin_intervals.py)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, d))
    X = rng.uniform(size=(n, d))
    X[rng.uniform(size=(n, d)) < 0.3] = 1.0
    B = (X.astype(np.float32) @ A.astype(np.float32).T).astype(np.float64)
    return A, B, np.abs(B) * 2.0 ** -23 * 4 + 1e-7


def _case_thin(method, n):
    """Thin intervals (float32 bounds) beside the equality case on the same published values."""
    import chebcenter as cc

    A, B, w = _thin_data(n)
    P = cc.BoxSlice(A, 0.0, 1.0)

    def agree():
        r = P.centers(lower=B - w, upper=B + w, method=method)
        return f"{int(np.sum(r.status_codes == 0))} of {n} OPTIMAL (the equality case: " \
               f"{int(np.sum(P.centers(B, method).status_codes == 0))})"
    return Case(f"`{method}` on float32 bounds (b ± 4 ulp) beside the equality case, N = {n}, d = 13, m = 4", "row",
                lambda: P.centers(lower=B - w, upper=B + w, method=method), n,
                [Candidate("the equality case A x = b on the same rows (chebcenter)", lambda: P.centers(B, method), n)],
                agree=agree, note="a comparison, not a baseline: the ratio is what the intervals cost")


#: the rows of the default run (about 5 minutes on 2 cores), in the README's table
DEFAULT: dict[str, Callable[[], Case]] = {
    "half_star": _case_half_star,
    "rcc2": _case_rcc2,
    "cls": _case_cls,
    "rcc1_10_3": lambda: _case_rcc1(10, 3, 2000),
    "rcc1_50_3": lambda: _case_rcc1(50, 3, 64),
    "exact_10_3": lambda: _case_exact(10, 3, 4000),
    "enumeration": _case_enumeration,
    "ranges": _case_ranges,
    "interval_rcc1_10_3": lambda: _case_interval_rcc1(10, 3, 2000),
    "interval_rcc2_10_3": lambda: _case_interval_rcc2(10, 3, 10_000),
    "interval_exact_10_3": lambda: _case_interval_exact(10, 3, 200),
    "bnb": _case_bnb,
}
#: the long rows, run with ``--full`` (and by name with ``--only``)
FULL: dict[str, Callable[[], Case]] = {
    "rcc1_200": lambda: _case_rcc1_alone(200, 5, 4),
    "rcc1_1000": lambda: _case_rcc1_alone(1000, 5, 1),
    "exact_10_1": lambda: _case_exact(10, 1, 20_000),
    "interval_rcc1_50_3": lambda: _case_interval_rcc1(50, 3, 32, sample=1, full=True),
    "interval_exact_10_1": lambda: _case_interval_exact(10, 1, 400, full=True),
    "equality_vs_rcc1_10_3": lambda: _case_against_equality("rcc1", 10, 3, 10_000),
    "equality_vs_rcc2_10_1": lambda: _case_against_equality("rcc2", 10, 1, 10_000),
    "equality_vs_rcc2_10_3": lambda: _case_against_equality("rcc2", 10, 3, 10_000),
    "equality_vs_exact_10_1": lambda: _case_against_equality("exact", 10, 1, 200),
    "equality_vs_exact_10_3": lambda: _case_against_equality("exact", 10, 3, 200),
    "equality_vs_ranges_10_3": lambda: _case_against_equality("ranges", 10, 3, 10_000),
    "equality_vs_cls_10_3": lambda: _case_against_equality("cls", 10, 3, 10_000),
    "equality_vs_project_10_3": lambda: _case_against_equality("project", 10, 3, 10_000),
    "thin_exact_13_4": lambda: _case_thin("exact", 100),
    "thin_auto_13_4": lambda: _case_thin("auto", 300),
}
CASES: dict[str, Callable[[], Case]] = {**DEFAULT, **FULL}
