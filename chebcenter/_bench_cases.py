"""The rows of ``python -m chebcenter bench``: each case builds its data and returns
``(what, unit, ours(), n_ours, baseline(), n_base, baseline name, check())``.

Private module, read by :mod:`chebcenter._bench`. The baselines are what a user would
otherwise write (a NumPy loop, SciPy's BVLS, HiGHS, qhull, cvxpy with Clarabel or SCS);
:func:`qhull_vertices` and :func:`highs_ranges` are also used by ``benchmarks/``.
Nothing here runs on import.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["CASES", "highs_ranges", "qhull_vertices"]


def _planted(d, m, n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    X = rng.random((n, d))
    return A, X, X @ A.T


# -- the rows ---------------------------------------------------------------------------
def qhull_vertices(W, lo, hi, q):
    """The baseline of vertex enumeration: SciPy's qhull (``HalfspaceIntersection``) on the
    null-space rewrite ``{u : W u <= hi - q, -W u <= q - lo}``, from the center of its
    largest inscribed ball (one HiGHS LP). benchmarks/test_exact.py uses it too."""
    from scipy.optimize import linprog
    from scipy.spatial import HalfspaceIntersection

    p = W.shape[1]
    G = np.vstack([W, -W])
    h = np.concatenate([hi - q, q - lo])
    nrm = np.linalg.norm(G, axis=1)
    res = linprog(np.r_[np.zeros(p), -1.0], A_ub=np.hstack([G, nrm[:, None]]), b_ub=h,
                  bounds=[(None, None)] * p + [(0, None)], method="highs")
    return q + HalfspaceIntersection(np.hstack([G, -h[:, None]]), res.x[:-1]).intersections @ W.T


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


# each case returns (what, unit, ours(), n_ours, baseline(), n_base, baseline name, check())
def _case_half_star():
    import chebcenter as cc

    d, m, n = 32, 5, 20_000
    A, _, B = _planted(d, m, n)
    P = cc.BoxSlice(A)
    pinv = np.linalg.pinv(A)
    shift = 0.5 - pinv @ (A @ np.full(d, 0.5))

    def base():
        return np.array([pinv @ b + shift for b in B[:5000]])

    def check():
        return f"max dev. {np.max(np.abs(P.centers(B[:200], 'half_star').centers - base()[:200])):.0e}"

    return (f"`half_star`, N = {n}, d = {d}, m = {m} (statuses and certified radii included)", "row",
            lambda: P.centers(B, "half_star"), n, base, 5000, "NumPy loop: pinv(A) b + P m per row", check)


def _bvls_rows(A, B, lo, hi):
    from scipy.optimize import lsq_linear

    return np.array([lsq_linear(A, b, bounds=(lo, hi), method="bvls", tol=1e-12).x for b in B])


def _case_rcc2():
    import cvxpy as cp

    import chebcenter as cc

    d, m, n = 32, 5, 4000
    A, _, B = _planted(d, m, n, seed=1)
    P = cc.BoxSlice(A)
    x, b = cp.Variable(d), cp.Parameter(m)
    qp = cp.Problem(cp.Minimize(cp.sum_squares(x - 0.5)), [A @ x == b, x >= 0, x <= 1])

    def base(k=20):
        out = []
        for row in B[:k]:
            b.value = row
            qp.solve(solver="CLARABEL")
            out.append(x.value)
        return np.array(out)

    def check():
        return f"max dev. {np.max(np.abs(P.centers(B[:10], 'rcc2').centers - base(10))):.0e}"

    return (f"`rcc2` (projection of the midpoint onto S_F), N = {n}, d = {d}, m = {m}", "row",
            lambda: P.centers(B, "rcc2"), n, base, 20, "cvxpy QP + Clarabel, built once (Parameters), per row", check)


def _case_cls():
    import chebcenter as cc

    d, m, n = 32, 5, 4000
    A, _, B = _planted(d, m, n, seed=2)
    P = cc.BoxSlice(A)

    def base(rows=slice(0, 40)):
        return _bvls_rows(A, B[rows], np.zeros(d), np.ones(d))

    def check():
        return f"max residual {np.max(P.centers(B[:200], 'cls').residuals):.0e}"

    return (f"`cls`, N = {n}, d = {d}, m = {m}", "row", lambda: P.centers(B, "cls"), n, base, 40,
            "SciPy `lsq_linear` (BVLS) per row", check)


def _case_rcc1(d, m, n, n_base):
    import chebcenter as cc
    from chebcenter._cvxpy import EbtDual  # noqa: F401  (imported for its cost outside the timing)

    A, _, B = _planted(d, m, n, seed=3)
    P = cc.BoxSlice(A)

    def ours():
        return P.centers(B, "rcc1", fast_path=False)

    if n_base == 0:
        def check():
            r = P.centers(B[:1], "rcc1", fast_path=False)
            return f"{r.status[0].name} (certified from its weights)"
        return (f"`rcc1` barrier, d = {d}, m = {m}, cold rows (`fast_path=False`)", "row", ours, n, None, 0,
                "— (cvxpy takes minutes per row at d ≥ 100)", check)

    def base():
        return P.centers(B[:n_base], "rcc1", fast_path=False, solver="scs")

    def check():
        r1 = P.centers(B[:n_base], "rcc1", fast_path=False)
        r2 = base()
        at_rcc2 = sum("rcc2's point" in str(r) for r in r1.extras["route"])
        note = f"; {at_rcc2} of {n_base} rows at rcc2's lower value" if at_rcc2 else ""
        return (f"max dev. {np.max(np.abs(r1.centers - r2.centers)):.0e}, radii "
                f"{np.max(np.abs(r1.radii - r2.radii)):.0e}{note}")

    return (f"`rcc1` barrier, N = {n}, d = {d}, m = {m} (`fast_path=False`)", "row", ours, n, base, n_base,
            "cvxpy + SCS, the problem built once (Parameters), per row", check)


def _case_rcc1_batch(d, m, n, n_base):
    """``rcc1`` (the default route: the alpha = 1 test first) on the slices a softmax model
    with m + 1 classes gives (A: differences of consecutive weight rows, drawn as the log
    audit's benchmark model, seed 0), against the same route without the pair generators
    (the alpha = 1 test with coordinate generators only, then the barrier)."""
    import chebcenter as cc
    from chebcenter.methods import relax

    rng = np.random.default_rng(0)
    rng.standard_normal((m + 1, d))  # the active party's weights
    A = np.diff(rng.standard_normal((m + 1, d)), axis=0)
    B = rng.random((n, d)) @ A.T
    P = cc.BoxSlice(A)

    def base(rows=slice(0, n_base)):
        before, relax.PAIR_GENERATORS_TO_D = relax.PAIR_GENERATORS_TO_D, 0
        try:
            return P.centers(B[rows], "rcc1")
        finally:
            relax.PAIR_GENERATORS_TO_D = before

    def check():
        r1, r2 = P.centers(B[:n_base], "rcc1"), base()
        ok = int(np.sum((r1.status_codes == 0) & (r2.status_codes == 0)))
        barrier = sum("barrier" in str(r) for r in r1.extras["route"])
        return (f"{ok} of {n_base} rows OPTIMAL both ways, radii within {float(np.max(np.abs(r1.radii - r2.radii))):.0e}; "
                f"{barrier} rows reach the barrier")

    return (f"`rcc1`, N = {n}, d = {d}, rank {m} (softmax-model slices)", "row", lambda: P.centers(B, "rcc1"), n,
            base, n_base, "the alpha = 1 test with coordinate generators only, then the barrier", check)


def _case_enumeration():

    import chebcenter as cc
    from chebcenter.methods.exact import slice_vertices

    d, m = 14, 5
    A, _, B = _planted(d, m, 1, seed=d * m)
    P = cc.BoxSlice(A)
    core = P._core
    q = core.q_of((B[0] - P._offset) / P.scale)

    def base():
        return qhull_vertices(core.W, core.lo, core.hi, q)

    def check():
        V1 = slice_vertices(core, q, 10**6)
        V2 = base()
        d12 = max(np.min(np.linalg.norm(V2[:, None, :] - v, axis=2)) for v in V1[:200])
        return f"{V1.shape[0]} vertices, qhull's within {d12:.0e}"

    return (f"vertex enumeration (exact's edge walk), d = {d}, m = {m}", "call",
            lambda: slice_vertices(core, q, 10**6), 1, base, 1, "SciPy qhull (`HalfspaceIntersection`)", check)


def _case_exact_batch(d, m, n, n_base):
    """``exact`` on a batch that shares A (the batch route) against the row-by-row route
    (the edge walk and the walking ball per row: ``exact`` before the batch route)."""
    import chebcenter as cc
    from chebcenter.methods import _batch_exact

    A, _, B = _planted(d, m, n, seed=11 * d + m)
    P = cc.BoxSlice(A)

    def ours():
        return P.centers(B, "exact", return_support=False)

    def base(rows=slice(0, n_base)):
        _batch_exact.ENABLED = False
        try:
            return P.centers(B[rows], "exact", return_support=False)
        finally:
            _batch_exact.ENABLED = True

    def check():
        r1, r2 = P.centers(B[:200], "exact"), base(slice(0, 200))
        ok = int(np.sum((r1.status_codes == 0) & (r2.status_codes == 0)))
        return f"{ok} of 200 rows OPTIMAL both ways, radii within {float(np.max(np.abs(r1.radii - r2.radii))):.0e}"

    return (f"`exact`, N = {n}, d = {d}, rank {m} (batch route)", "row", ours, n, base, n_base,
            "the row-by-row route (edge walk + walking ball per row)", check)


def _case_ranges():

    import chebcenter as cc

    d, r, n = 10, 3, 4000
    A, _, B = _planted(d, r, n, seed=4)
    P = cc.BoxSlice(A)

    def base(rows=slice(0, 5)):
        return highs_ranges(A, B[rows])

    def check():
        res = P.feature_ranges(B[:3])
        ref = base(slice(0, 3))
        return f"max dev. {max(np.max(np.abs(res.lower - ref[:, 0])), np.max(np.abs(res.upper - ref[:, 1]))):.0e}"

    return (f"feature ranges, N = {n}, d = {d}, rank {r} (2 d LPs per row)", "row",
            lambda: P.feature_ranges(B), n, base, 5, "HiGHS (`linprog`) per LP", check)


def _case_bnb():
    import chebcenter as cc

    d = 31
    A, _, B = _planted(d, 1, 1, seed=d)
    P = cc.BoxSlice(A)

    def ours():
        return P.centers(B, "exact", algorithm="bnb", gap_tol=1e-6)

    def check():
        r = ours()
        gap = float(r.radii[0] - r.extras["radius_lower"][0]) / float(r.radii[0])
        return f"{r.status[0].name}, relative gap {gap:.1e}"

    return ("`exact` by branch and bound, rank 1, d − rank = 30, gap 1e-6", "row", ours, 1, None, 0,
            "— (enumeration: ~10⁹ vertices)", check)


def _case_interval(method, d, m, n, n_base, against):
    """A bounded-error batch (|A x - b| <= 0.01 per row, the unknown inside) against the
    equality case on the same rows, or against cvxpy + SCS on the same interval sets."""
    import chebcenter as cc

    A, _, B = _planted(d, m, n, seed=7)
    P = cc.BoxSlice(A)
    delta = 0.01
    call = {"ranges": lambda rows, **kw: P.feature_ranges(B[rows], **kw)}.get(
        method, lambda rows, **kw: P.centers(B[rows], method, **kw))

    def ours():
        return call(slice(None), noise=delta)

    if against == "scs":
        def base():
            return call(slice(0, n_base), noise=delta, solver="scs")

        def check():
            r1, r2 = call(slice(0, n_base), noise=delta), base()
            return (f"radii: ours {float(np.max(r1.radii)):.4f}, SCS's certified {float(np.max(r2.radii)):.4f} "
                    f"(max over {n_base} rows)")
        name = "cvxpy + SCS on the same interval sets (EBT dual built once, Parameters), per row"
    else:
        def base():
            return call(slice(0, n_base))

        def check():
            r = ours()
            codes = r.status_codes
            return f"{int(np.sum(codes == 0))} of {n} OPTIMAL"
        name = "the equality case A x = b on the same rows (today's cost)"
    what = {"ranges": "feature ranges"}.get(method, f"`{method}`")
    return (f"{what} on a bounded-error set (`noise={delta:g}`: b ± {delta:g}), N = {n}, d = {d}, m = {m}", "row", ours,
            n, base, n_base, name, check)


CASES: dict[str, Callable] = {
    "half_star": _case_half_star,
    "rcc2": _case_rcc2,
    "cls": _case_cls,
    "rcc1_50": lambda: _case_rcc1(50, 3, 64, 4),
    "rcc1_200": lambda: _case_rcc1(200, 5, 4, 0),
    "rcc1_1000": lambda: _case_rcc1(1000, 5, 1, 0),
    "rcc1_10_1": lambda: _case_rcc1_batch(10, 1, 20_000, 4_000),
    "rcc1_10_3": lambda: _case_rcc1_batch(10, 3, 20_000, 4_000),
    "enumeration": _case_enumeration,
    "exact_10_1": lambda: _case_exact_batch(10, 1, 100_000, 200),
    "exact_10_3": lambda: _case_exact_batch(10, 3, 100_000, 100),
    "ranges": _case_ranges,
    "bnb": _case_bnb,
    "interval_rcc1_10_1": lambda: _case_interval("rcc1", 10, 1, 10_000, 10_000, "equality"),
    "interval_rcc1_10_3": lambda: _case_interval("rcc1", 10, 3, 10_000, 10_000, "equality"),
    "interval_rcc1_scs_10_1": lambda: _case_interval("rcc1", 10, 1, 500, 2, "scs"),
    "interval_rcc1_scs_10_3": lambda: _case_interval("rcc1", 10, 3, 500, 2, "scs"),
    "interval_rcc1_scs_50_3": lambda: _case_interval("rcc1", 50, 3, 32, 1, "scs"),
    "interval_rcc2_10_1": lambda: _case_interval("rcc2", 10, 1, 10_000, 10_000, "equality"),
    "interval_rcc2_10_3": lambda: _case_interval("rcc2", 10, 3, 10_000, 10_000, "equality"),
    "interval_exact_10_1": lambda: _case_interval("exact", 10, 1, 200, 200, "equality"),
    "interval_exact_10_3": lambda: _case_interval("exact", 10, 3, 200, 200, "equality"),
    "interval_ranges_10_1": lambda: _case_interval("ranges", 10, 1, 10_000, 10_000, "equality"),
    "interval_ranges_10_3": lambda: _case_interval("ranges", 10, 3, 10_000, 10_000, "equality"),
}
