"""Certified, round 2: every OPTIMAL row keeps its method's contract on degenerate families,
checked against vertices computed in exact rational arithmetic (tests/chebcenter/exact_reference.py).

The families (all data dyadic, so the reference is exact: integer A, box bounds and planted
points that are binary fractions):

* ``plain``: a unit box, planted points on a grid of eighths;
* ``aniso``: box widths 2^k with k uniform in [-20, 9] in one instance (a coordinate a
  billionth as wide as another), bounds that may be negative;
* ``faces``: points at a box corner nudged inward by 2^-k widths, k in [10, 40] (slices
  that are points, segments or slivers), and right-hand sides nudged by 2^-k (just inside
  or just outside);
* ``offset``: the unit box moved to 2^16 ... 2^26;
* ``dup``: a duplicated equation;
* ``dup_off``: a duplicated equation whose right-hand side is off by 2^-40 ... 2^-10
  (consistent at the tolerance or not: either way, all methods must agree);
* ``zeros``: a zero equation and a zero column;
* ``pinned``: one coordinate 2^-39 ... 2^-18 as wide as the widest, fixed by an equation
  at its midpoint, or 2 to 48 of its widths outside its box (before this round no method
  said INFEASIBLE there: the LP that decides emptiness ran at HiGHS's default tolerance,
  1e-7, larger than such a coordinate).

What is asserted, for every method and row:

* a row the exact reference finds empty is never OPTIMAL with a center claimed in S_F
  further than the feasibility tolerance from it ... in practice: every method agrees on
  the status of the row (all INFEASIBLE, or none);
* an OPTIMAL center of an S_F method lies in the box, and its radius bounds the distance to
  every exact vertex (so to every point of S_F), up to the rounding of the distance;
* ``radius_lower`` (exact) is at most the farthest exact vertex from the reported center
  (which is at least the true radius), so never above the true radius by more than
  rounding;
* every method agrees on emptiness: all INFEASIBLE or none (the budget is 0);
* ``exact`` answers: OPTIMAL on every nonempty row. Its budget of non-OPTIMAL rows per
  family is 0 (before this round, 29 rows had radius 0 where vertices were 1e-9 apart or
  spanned a 2^-19-wide coordinate, and about 1 in 10 face rows ended INACCURATE with
  radius_lower = 0);
* rcc1 is never above rcc2 on a row both certify.

The rounding allowance of a distance: ``1e-12`` times the box's largest width plus
``4 eps`` times the largest bound magnitude (the centers are computed in the normalised
frame and mapped back by ``mid + s z``: a few ulps of the offset, and ~1e-12 relative
for the solvers' arithmetic on O(1) numbers). Nothing is skipped: a row that fails is
counted and the count is asserted.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from exact_reference import exact_interval_vertices, exact_vertices, farthest

import chebcenter as cc
from chebcenter.methods import REGISTRY

FAMILIES = ("plain", "aniso", "faces", "offset", "dup", "dup_off", "zeros", "pinned")
METHODS = ("half", "ls", "half_star", "cls", "rcc2", "rcc1", "exact", "auto", "project")
#: rows per family and seed: the default run is short, the ci profile long
ROWS = 60 if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else 16
SEEDS = (0, 1, 2, 3) if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else (0, 1)


def instance(name, rng, d_max=7):
    """One dyadic instance of a family: ``(A, b, lo, hi)``, with 3 <= d <= ``d_max``."""
    d = int(rng.integers(3, d_max + 1))
    m = int(rng.integers(1, min(3, d - 1) + 1))
    A = rng.integers(-3, 4, (m, d)).astype(float)
    A[np.all(A == 0, axis=1), 0] = 1.0
    lo, hi = np.zeros(d), np.ones(d)
    if name == "aniso":
        k = rng.integers(-20, 10, d)
        lo = -(2.0 ** k) * rng.integers(0, 2, d)
        hi = lo + 2.0 ** k
    x = lo + (hi - lo) * rng.integers(0, 9, d) / 8.0
    if name == "faces":
        x = np.where(rng.random(d) < 0.5, lo, hi)
        k = int(rng.integers(10, 41))
        x = x + np.where(x == lo, 1.0, -1.0) * (hi - lo) * 2.0 ** -k * rng.integers(0, 2, d)
    if name == "offset":
        off = 2.0 ** int(rng.integers(16, 27))
        lo, hi, x = lo + off, hi + off, x + off
    b = A @ x
    if name in ("faces", "aniso") and rng.random() < 0.3:
        b = b + 2.0 ** -int(rng.integers(10, 41)) * rng.integers(-1, 2, m)
    if name == "dup":
        A, b = np.vstack([A, A[:1]]), np.concatenate([b, b[:1]])
    if name == "dup_off":   # a duplicated equation whose right-hand side is off by 2^-40 ... 2^-10
        A = np.vstack([A, A[:1]])
        b = np.concatenate([b, b[:1] + 2.0 ** -int(rng.integers(10, 41)) * rng.choice([-1.0, 1.0])])
    if name == "zeros":     # a zero equation (b = 0 on it) and a zero column (a coordinate A never sees)
        A = np.vstack([A, np.zeros((1, d))])
        A[:, int(rng.integers(0, d))] = 0.0
        b = A @ x
    if name == "pinned":   # a coordinate 2^-39 ... 2^-18 as wide as the widest, pinned inside or 2-48 widths out
        k = rng.integers(-3, 10, d)
        k[0] = int(rng.integers(-30, -17))
        lo, hi = np.zeros(d), 2.0 ** k
        A = np.vstack([np.eye(d)[:1], rng.integers(-3, 4, (1, d)).astype(float)])
        A[1, 1] = A[1, 1] or 1.0
        x = hi * rng.integers(0, 9, d) / 8.0
        b = A @ x
        t = [0.5, -2.0, 3.0, -48.0, 48.0][int(rng.integers(0, 5))]
        b[0] = lo[0] + t * hi[0] if t > 0 else lo[0] + t * hi[0]
        if t == 0.5:
            b[1] = A[1] @ np.r_[b[0], x[1:]]
    return A, b, lo, hi


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_optimal_rows_keep_their_contract_against_exact_vertices(family, seed):
    rng = np.random.default_rng(1000 * seed + FAMILIES.index(family))
    broken, exact_not_optimal, status_disagree, order, missed_empty = [], 0, 0, 0, 0
    for row in range(ROWS):
        A, b, lo, hi = instance(family, rng)
        V = exact_vertices(A, b, lo, hi)
        P = cc.BoxSlice(A, lo, hi)
        tol = 1e-12 * float(np.max(hi - lo)) + 4 * np.finfo(float).eps * float(np.max(np.abs(np.r_[lo, hi])))
        res = {m: P.center(b, m) for m in METHODS}
        statuses = {m: r.status for m, r in res.items()}
        if len({s is cc.Status.INFEASIBLE for s in statuses.values()}) > 1:
            status_disagree += 1
        if V.shape[0] == 0:
            # pinned rows are empty by 2 widths or more of the narrow coordinate: far past every
            # tolerance, so every method must say so (other families' empty rows are nudged by
            # as little as 2^-40 and may be nonempty at the feasibility tolerance)
            if family == "pinned":
                missed_empty += sum(st is not cc.Status.INFEASIBLE for st in statuses.values())
            continue
        if res["exact"].status is not cc.Status.OPTIMAL:
            exact_not_optimal += 1
        for m, r in res.items():
            if r.status is not cc.Status.OPTIMAL:
                continue
            far = farthest(V, r.center)
            if far > r.radius + tol:
                broken.append(f"{m} row {row}: radius {r.radius:.6e} < farthest vertex {far:.6e} by {far - r.radius:.1e}")
            if REGISTRY[m].lies_in == "S_F":   # the table says which centers lie in the set
                if np.any(r.center < lo - tol) or np.any(r.center > hi + tol):
                    broken.append(f"{m} row {row}: center outside the box")
            low = r.extras.get("radius_lower")
            if low is not None and np.isfinite(low) and low > far + tol:
                broken.append(f"{m} row {row}: radius_lower {low:.6e} above the farthest vertex {far:.6e} by {low - far:.1e}")
        if res["rcc1"].status is cc.Status.OPTIMAL and res["rcc2"].status is cc.Status.OPTIMAL:
            order += res["rcc1"].radius > res["rcc2"].radius
    assert broken == []
    assert exact_not_optimal == 0            # budget: exact answers every nonempty row
    assert status_disagree == 0              # budget: every method agrees on emptiness
    assert order == 0                        # rcc1 <= rcc2 on every certified pair
    assert missed_empty == 0                 # an empty pinned row is INFEASIBLE for every method


#: rows per family and seed on interval rows: their exact reference solves every choice of d
#: faces among 2 (d + m), so d <= 5 there
ROWS_INTERVALS = 24 if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else 8


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_interval_rows_keep_their_contract_against_exact_vertices(family, seed):
    """The same families with each equation an interval about its right-hand side: half-widths
    2^-k of the box's width, k in [1, 25], a quarter of the rows kept as equations (w = 0) and
    one row in five one-sided. The budgets are the equality case's: no broken contract (to
    the same rounding allowance), exact OPTIMAL on every nonempty row, every method agreeing
    on emptiness, rcc1 <= rcc2, and an empty pinned row INFEASIBLE for every method.

    k stops at 25: the library decides each face of a row to its tolerance tau (at most
    1e-9 (reach + |b|), 3e-8 of the box here), and an interval thinner than that is decided
    at tau, not exactly. On such rows exact's radius falls short of the farthest exact vertex
    by up to about 1e-7 of the box (measured; a known limit), and the thin family of
    test_interval_certified holds them to its derived 1e-7 instead."""
    rng = np.random.default_rng(7000 + 1000 * seed + FAMILIES.index(family))
    broken, exact_not_optimal, status_disagree, order, missed_empty = [], 0, 0, 0, 0
    for row in range(ROWS_INTERVALS):
        A, b, lo, hi = instance(family, rng, d_max=5)
        m = A.shape[0]
        w = float(np.max(hi - lo)) * 2.0 ** -rng.integers(1, 26, m) * (rng.random(m) >= 0.25)
        L, U = b - w, b + w
        if rng.random() < 0.2:     # one side of one row dropped
            j = int(rng.integers(0, m))
            if rng.random() < 0.5:
                L[j] = -np.inf
            else:
                U[j] = np.inf
        V = exact_interval_vertices(A, L, U, lo, hi)
        P = cc.BoxSlice(A, lo, hi)
        tol = 1e-12 * float(np.max(hi - lo)) + 4 * np.finfo(float).eps * float(np.max(np.abs(np.r_[lo, hi])))
        res = {meth: P.centers(method=meth, lower=L[None, :], upper=U[None, :]) for meth in METHODS}
        statuses = {meth: cc.Status(r.status_codes[0]) for meth, r in res.items()}
        if len({st is cc.Status.INFEASIBLE for st in statuses.values()}) > 1:
            status_disagree += 1
        if V.shape[0] == 0:
            # a pinned row 2 or more widths out, widened by at most half a width: past every tolerance
            if family == "pinned" and w[0] <= 0.5 * (hi[0] - lo[0]):
                missed_empty += sum(st is not cc.Status.INFEASIBLE for st in statuses.values())
            continue
        if statuses["exact"] is not cc.Status.OPTIMAL:
            exact_not_optimal += 1
        for meth, r in res.items():
            if statuses[meth] is not cc.Status.OPTIMAL:
                continue
            c, radius = r.centers[0], float(r.radii[0])
            far = farthest(V, c)
            if far > radius + tol:
                broken.append(f"{meth} row {row}: radius {radius:.6e} < farthest vertex {far:.6e} by {far - radius:.1e}")
            if meth not in ("half", "ls", "half_star", "cls") and (np.any(c < lo - tol) or np.any(c > hi + tol)):
                broken.append(f"{meth} row {row}: center outside the box")
            low = r.extras.get("radius_lower")
            if low is not None and np.isfinite(low[0]) and low[0] > far + tol:
                broken.append(f"{meth} row {row}: radius_lower {low[0]:.6e} above the farthest vertex {far:.6e}")
        if statuses["rcc1"] is cc.Status.OPTIMAL and statuses["rcc2"] is cc.Status.OPTIMAL:
            order += res["rcc1"].radii[0] > res["rcc2"].radii[0]
    assert broken == []
    assert exact_not_optimal == 0
    assert status_disagree == 0
    assert order == 0
    assert missed_empty == 0


def test_exact_reference_on_closed_forms():
    """The reference itself, on slices whose vertices are known by hand."""
    V = exact_vertices(np.array([[1.0, 1.0]]), np.array([1.0]), np.zeros(2), np.ones(2))
    assert sorted(tuple(float(x) for x in v) for v in V) == [(0.0, 1.0), (1.0, 0.0)]
    V = exact_vertices(np.array([[1.0, 1.0, 1.0]]), np.array([1.5]), np.zeros(3), np.ones(3))
    assert V.shape[0] == 6                                  # the hexagon x1 + x2 + x3 = 3/2
    assert exact_vertices(np.array([[1.0, 1.0]]), np.array([2.5]), np.zeros(2), np.ones(2)).shape[0] == 0
    V = exact_vertices(np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([1.0, 1.0]), np.zeros(2), np.ones(2))
    assert V.shape[0] == 2                                  # a repeated equation is dropped
    assert exact_vertices(np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([1.0, 1.5]), np.zeros(2),
                          np.ones(2)).shape[0] == 0         # ... unless it contradicts
    assert farthest(V, np.array([0.5, 0.5])) == pytest.approx(np.sqrt(0.5), rel=1e-15)


def test_near_point_slices_regressions():
    """Named rows from the fuzzing: a slice 4e-9 long (two vertices) got radius 0 and
    OPTIMAL; a box with a 2^-19-wide coordinate next to a 2^9-wide one got a radius 2.3e-6
    below its farthest vertex (vertices apart only along the narrow coordinate were merged
    by a de-duplication grid of 2e-8 normalised units)."""
    A = np.array([[1.0, 1.0]])
    b = np.array([2.0 - 2.0 ** -28])                        # segment from (1 - 2^-28, 1) to (1, 1 - 2^-28)
    r = cc.BoxSlice(A).center(b, "exact")
    assert r.status is cc.Status.OPTIMAL
    assert r.radius >= 2.0 ** -28 / np.sqrt(2) * (1 - 1e-9)
    assert r.radius == pytest.approx(2.0 ** -28 / np.sqrt(2), rel=1e-6)
    lo = np.array([0.0, 0.0, 0.0])
    hi = np.array([2.0 ** 9, 2.0 ** -19, 1.0])
    A = np.array([[1.0, 0.0, 1.0]])
    r = cc.BoxSlice(A, lo, hi).center([3.0], "exact")      # x0 + x2 = 3: x1 free in its narrow range
    V = exact_vertices(A, np.array([3.0]), lo, hi)
    assert r.status is cc.Status.OPTIMAL and r.radius >= farthest(V, r.center) - 1e-12 * 2.0 ** 9


def _near_parallel(seed):
    """Two equations 1e-9 ... 1e-6 apart, d - 1 of them, and 4 points with two coordinates
    on box faces: ``(A, X)``."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 6))
    A = rng.standard_normal((d - 1, d))
    A[1] = A[0] + 10.0 ** rng.uniform(-9, -6) * rng.standard_normal(d)
    X = rng.random((4, d))
    X[:, :2] = np.round(X[:, :2])
    return A, X


def test_feature_ranges_on_near_parallel_equations_are_never_inverted():
    """Two equations 1e-9 ... 1e-6 apart (cond 1e6 ... 1e9) and points on box faces: the
    computed slice sits about eps ||b|| / sigma_min off the true one, and the compiled LPs
    returned lower > upper on 754 of 8 000 rows, OPTIMAL. Now every interval has lower <=
    upper. The rows the compiled LPs could not answer are INACCURATE with outer intervals at
    the equations' own tolerances, and those hold the planted point (which meets A x = b to
    rounding). (An OPTIMAL row's intervals are those of the slice of the computed b, which
    on such A can lie 1e-7 from a point that meets A x = b to rounding: the forward
    sensitivity of the problem, not an error of the LPs.)"""
    inverted = outside = rows = inaccurate = 0
    for seed in range(150):
        A, X = _near_parallel(seed)
        r = cc.BoxSlice(A).feature_ranges(X @ A.T)
        ok = r.ok
        rows += ok.sum()
        inverted += np.sum(np.any(r.lower[ok] > r.upper[ok], axis=1))
        outer = r.status_codes == cc.Status.INACCURATE
        inaccurate += outer.sum()
        outside += np.sum(np.any((X[outer] < r.lower[outer] - 1e-9) | (X[outer] > r.upper[outer] + 1e-9), axis=1))
    assert rows == 600 and inverted == 0 and outside == 0 and inaccurate > 0


def test_the_metric_projection_converges_or_says_why():
    """project with an anchor outside the box and an ill-conditioned metric on the families
    above: 3 of 300 rows used to end INACCURATE with extras["check"] = None, the active
    set's iterate up to 1.6 s from the projection. Now a row the compiled active set does not
    finish is solved as a QP (cvxpy, Clarabel), and its route is named. Every row is
    OPTIMAL and its objective is within 1e-6 relative of an independent QP solver's (OSQP,
    polished, or Clarabel where OSQP does not finish; on the problem in the user's
    coordinates)."""
    import cvxpy as cp

    routes, worse, not_optimal, no_reference = set(), 0, 0, 0
    for family in ("plain", "aniso", "faces", "offset", "dup", "zeros"):
        rng = np.random.default_rng(7)
        for _ in range(40):
            A, b, lo, hi = instance(family, rng)
            d = A.shape[1]
            L = rng.standard_normal((d, d)) * 10.0 ** rng.uniform(-2, 2, d)
            S = L @ L.T + 1e-6 * np.eye(d)
            a = lo + (hi - lo) * rng.uniform(-1, 2, d)
            r = cc.BoxSlice(A, lo, hi).center(b, "project", anchor=a, metric=S)
            if r.status is cc.Status.INFEASIBLE and exact_vertices(A, b, lo, hi).shape[0] == 0:
                continue          # empty: nothing to project onto (the exact reference agrees)
            not_optimal += r.status is not cc.Status.OPTIMAL
            routes |= set(r.extras["route"] if np.ndim(r.extras["route"]) else [r.extras["route"]])
            if r.extras.get("check") is not None:
                assert "cvxpy QP" in r.extras["check"]
            Pi = np.linalg.inv(S)
            R = np.linalg.cholesky(0.5 * (Pi + Pi.T) / np.abs(Pi).max()).T
            x = cp.Variable(d)
            ref = cp.Problem(cp.Minimize(cp.sum_squares(R @ (x - a))), [A @ x == b, x >= lo, x <= hi])
            refs = []
            for solver, kw in (("OSQP", dict(eps_abs=1e-10, eps_rel=1e-10, polishing=True, max_iter=200_000)),
                               ("CLARABEL", {})):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        ref.solve(solver=solver, **kw)
                    except cp.error.SolverError:
                        continue
                if ref.status == "optimal" and x.value is not None:
                    refs.append(ref.value)
            if not refs:
                no_reference += 1
                continue
            f_ours = float(np.sum((R @ (r.center - a)) ** 2))
            worse += f_ours > min(refs) * (1 + 1e-6) + 1e-9 * float(np.max(hi - lo)) ** 2
    assert not_optimal == 0 and worse == 0
    assert no_reference <= 2          # stated budget: rows no reference solver finished (counted, not hidden)
    # since the active set stopped letting dependent rounding-level components block (kernels/qp.py),
    # it finishes every row here; the fallback is exercised below
    assert "compiled active set" in routes and routes <= {"compiled active set", "cvxpy QP (Clarabel)"}


def test_a_row_the_active_set_does_not_finish_is_solved_as_a_qp(monkeypatch):
    """The fallback route, forced: the compiled active set stops after one iteration and reports
    QP_MAX_ITERATIONS on every row; each is then solved as a cvxpy QP (Clarabel), named in
    extras, OPTIMAL, and its objective matches the finished compiled answer's to Clarabel's
    default relative duality-gap tolerance, 1e-8."""
    from chebcenter.kernels.qp import QP_MAX_ITERATIONS
    from chebcenter.methods import project as project_module

    rng = np.random.default_rng(3)
    A, lo, hi = rng.standard_normal((2, 6)), np.zeros(6), np.ones(6)
    B = rng.random((4, 6)) @ A.T
    L = rng.standard_normal((6, 6))
    S = L @ L.T + 0.1 * np.eye(6)
    a = rng.uniform(-1, 2, 6)
    ok = cc.BoxSlice(A, lo, hi).centers(B, "project", anchor=a, metric=S)
    real = project_module.project_metric_rows

    def unfinished(*args):             # one iteration, then "did not converge"
        real(*args[:9], 1, args[10])
        args[7][:] = QP_MAX_ITERATIONS

    monkeypatch.setattr(project_module, "project_metric_rows", unfinished)
    got = cc.BoxSlice(A, lo, hi).centers(B, "project", anchor=a, metric=S)
    assert list(got.extras["route"]) == ["cvxpy QP (Clarabel)"] * 4
    assert np.all(got.status_codes == cc.Status.OPTIMAL)
    Pi = np.linalg.inv(S)
    f = [np.einsum("ni,ij,nj->n", r.centers - a, Pi, r.centers - a) for r in (ok, got)]
    np.testing.assert_allclose(f[1], f[0], rtol=1e-8)


def test_exact_answers_on_near_parallel_equations():
    """The same near-parallel family: the computed slice can miss the box by its forward
    error (eps ||b|| / sigma_min), and exact ended SOLVER_ERROR on 187 of 1 200 rows (no
    vertex). It now enumerates at that tolerance and reports INACCURATE with the radius
    widened by it, naming the reason: every row answers, and the widened balls hold the
    planted point. (A row the enumeration answers directly is certified for the slice of
    the computed b, which on such A can lie 1e-7 from the planted point: the forward
    sensitivity that docs/theory.md §6.2 names and the issue tracker keeps open.)"""
    errors = missed = widened = 0
    for seed in range(100):
        A, X = _near_parallel(seed)
        r = cc.BoxSlice(A).centers(X @ A.T, "exact")
        errors += np.sum(r.status_codes > cc.Status.INACCURATE)
        check = r.extras.get("check")
        wide = np.array([c is not None and "forward error" in c for c in check]) if check is not None else np.zeros(4, bool)
        widened += wide.sum()
        missed += np.sum(np.linalg.norm(X[wide] - r.centers[wide], axis=1) > r.radii[wide])
    assert errors == 0 and widened > 0 and missed == 0


def test_integer_ties_at_rank_one_are_certified():
    """Integer coefficients and dyadic points at rank 1 (vertex sets with thousands of ties
    at equal distance): at d = 16 ``auto`` ran the branch and bound into its 2e7-node budget
    (5-35 s) and ended INACCURATE on 24 of 40 rows. Now a short search is followed by the
    enumeration, whose lower bound adds convex weights on the nearly farthest vertices. Every
    row is OPTIMAL; at d = 11-12 the radius is checked against exact rational vertices."""
    not_optimal = broken = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        d = 16 if seed < 8 else int(rng.integers(11, 13))
        A = rng.integers(-3, 4, (1, d)).astype(float)
        A[0, 0] = A[0, 0] or 1.0
        x = rng.integers(0, 9, d) / 8.0
        if seed % 2:
            x[:6] = np.round(x[:6])
        r = cc.BoxSlice(A).center(A @ x, "exact")
        not_optimal += r.status is not cc.Status.OPTIMAL
        assert r.extras["radius_lower"] <= r.radius
        if d <= 12:
            V = exact_vertices(A, A @ x, np.zeros(d), np.ones(d))
            far = farthest(V, r.center)
            broken += far > r.radius + 1e-12 or r.extras["radius_lower"] > far + 1e-12
    assert not_optimal == 0 and broken == 0


def _rank_one_farthest(a, beta, c):
    """max ||x - c|| over the vertices of {x in [0, 1]^d : a x = beta}, by brute force: every
    vertex has d - 1 coordinates at 0 or 1 and the last one solved from the equation, so all
    d 2^(d-1) candidates are listed, the infeasible ones dropped (a route independent of the
    library's enumeration and of its enclosing ball)."""
    d = a.size
    bits = ((np.arange(2 ** (d - 1))[:, None] >> np.arange(d - 1)) & 1).astype(float)
    best = 0.0
    for j in np.flatnonzero(a):
        others = np.delete(np.arange(d), j)
        xj = (beta - bits @ a[others]) / a[j]
        ok = (xj >= -1e-12) & (xj <= 1 + 1e-12)
        X = np.empty((int(ok.sum()), d))
        X[:, others], X[:, j] = bits[ok], np.clip(xj[ok], 0.0, 1.0)
        best = max(best, float(np.sqrt(np.max(np.sum((X - c) ** 2, axis=1)))) if X.size else 0.0)
    return best


def test_enclosing_balls_of_vertex_sets_full_of_ties():
    """Integer rank-1 slices at d = 16 whose 80 000-100 000 vertices sit on a few spheres:
    the enclosing-ball walk stopped on a dependent support in every point order, so the
    enumeration was INACCURATE (gap up to 3.5 %) and the branch and bound, which takes the
    same ball of its working set every round, ran past 2e7 nodes (5-36 s, INACCURATE on 22
    of 40 rows). Now the walk is rerun on jittered points and judged on the true ones: the
    enumeration certifies these rows, the branch and bound certifies them within 1e6 nodes (4e5 at most on 40 such rows)
    and without its enumeration fallback, and each radius is checked against a brute-force
    list of the vertices."""
    for seed in (10, 12, 13, 28):
        rng = np.random.default_rng(seed)
        d = 16
        A = rng.integers(-3, 4, (1, d)).astype(float)
        A[0, 0] = A[0, 0] or 1.0
        x = rng.integers(0, 9, d) / 8.0
        if seed % 2:
            x[:6] = np.round(x[:6])
        P, b = cc.BoxSlice(A), A @ x
        for opts in ({"algorithm": "enumerate"}, {"algorithm": "bnb", "max_nodes": 1_000_000}):
            r = P.center(b, "exact", **opts)
            assert r.status is cc.Status.OPTIMAL, (seed, opts, r.status)
            if opts["algorithm"] == "bnb":
                assert r.extras.get("check") is None  # certified by the search itself
            far = _rank_one_farthest(A[0], b[0], r.center)
            # 1e-12: the brute force's own rounding (coordinates solved from one equation)
            assert far <= r.radius + 1e-12 and r.extras["radius_lower"] <= far + 1e-12, (seed, opts)
            assert r.radius <= r.extras["radius_lower"] * (1 + 1e-6) + 1e-12


def test_branch_and_bound_by_name_falls_back_to_the_enumeration():
    """Near-point rank-1 slices on a box moved to 4e6: ``algorithm="bnb"`` ended INACCURATE
    on 8 of 200 rows (a gap at the rounding level of the offset) and, in the fuzzing,
    SOLVER_ERROR. At its budget it now enumerates where that is affordable, as ``auto``
    does: every row is OPTIMAL, and its radius bounds the exact rational vertices."""
    fell_back = not_optimal = broken = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(3, 7))
        A = rng.integers(-3, 4, (1, d)).astype(float)
        A[0, 0] = A[0, 0] or 1.0
        x = np.where(rng.random(d) < 0.5, 0.0, 1.0)
        x = x + np.where(x == 0, 1, -1) * 2.0 ** -int(rng.integers(10, 41)) * rng.integers(0, 2, d)
        lo, hi = np.full(d, 4e6), np.full(d, 4e6 + 1.0)
        b = A @ (x + 4e6)                           # dyadic: exact in binary
        r = cc.BoxSlice(A, lo, hi).center(b, "exact", algorithm="bnb")
        fell_back += r.extras.get("check") is not None
        not_optimal += r.status is not cc.Status.OPTIMAL
        if r.status is cc.Status.OPTIMAL:
            V = exact_vertices(A, b, lo, hi)
            # tol: 4 ulps of the offset (the center is rounded to doubles near 4e6)
            broken += farthest(V, r.center) > r.radius + 4 * np.finfo(float).eps * 4e6
    assert not_optimal == 0 and broken == 0 and fell_back > 0


def assert_same_certified_ball(c1, r1, low1, c2, r2, low2):
    """Two certified answers for one slice agree as far as their certificates force: each
    radius is at least the other's lower bound (both bound r* from their side), and each
    center is within sqrt(radius^2 - low^2) of the unique optimal center, low the larger
    lower bound (max over S_F of ||x - c||^2 >= r*^2 + ||c - c*||^2, S_F being convex and
    c* its Chebyshev center), so the two are within the sum of those distances."""
    low = max(low1, low2)
    assert r1 >= low2 - 1e-15 and r2 >= low1 - 1e-15
    apart = np.sqrt(max(r1 ** 2 - low ** 2, 0.0)) + np.sqrt(max(r2 ** 2 - low ** 2, 0.0))
    assert np.linalg.norm(np.asarray(c1) - np.asarray(c2)) <= apart + 1e-15


@pytest.mark.parametrize("family", ["plain", "faces", "zeros"])
def test_mixed_batches_with_nan_and_inf_equal_the_rows_alone(family):
    """A batch of one family's rows (one A, several right-hand sides) with NaN and inf rows
    among them: the bad rows are INVALID_INPUT, and every other row gets the status, center
    and radius it gets alone (bit for bit where the method has no warm start; rcc1
    warm-starts along the batch, so to its solver tolerance; exact starts each row's ball
    from its neighbour's support, so to its certificate, docs/theory.md §6.7)."""
    rng = np.random.default_rng(11)
    A, b, lo, hi = instance(family, rng)
    rows = [b]
    for _ in range(7):   # more planted points of the same slice family (dyadic, on the box's grid of eighths)
        x = lo + (hi - lo) * rng.integers(0, 9, A.shape[1]) / 8.0
        rows.append(A @ x)
    B = np.array(rows)
    B = np.insert(B, [2, 5], [[np.nan] * B.shape[1], [np.inf] * B.shape[1]], axis=0)
    P = cc.BoxSlice(A, lo, hi)
    for m in METHODS:
        batch = P.centers(B, m)
        assert batch.status[2] is cc.Status.INVALID_INPUT and batch.status[6] is cc.Status.INVALID_INPUT
        for k in np.flatnonzero(np.all(np.isfinite(B), axis=1)):
            alone = P.center(B[k], m)
            assert batch.status[k] is alone.status, (m, k)
            used = batch.extras["method"][k] if m == "auto" else m
            if used == "rcc1":
                np.testing.assert_allclose(batch.radii[k], alone.radius, rtol=1e-6, atol=1e-12, equal_nan=True)
            elif used == "exact":
                assert_same_certified_ball(batch.centers[k], batch.radii[k], batch.extras["radius_lower"][k],
                                           alone.center, alone.radius, alone.extras["radius_lower"])
            else:
                np.testing.assert_array_equal(batch.centers[k], alone.center)
                np.testing.assert_array_equal(batch.radii[k], alone.radius)
