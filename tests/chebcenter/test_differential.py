"""Differential tests: every OPTIMAL row keeps its method's contract, at every scale.

Each family below builds small instances (d <= 6) whose answer is checked against the
independent routes of ``tests/chebcenter/reference.py`` (brute-force vertices of S_F over p-subsets
of box faces, the minimum enclosing ball as an SOCP in cvxpy/Clarabel), never against the
library itself. The same base instance is then mapped by ``x -> s x + t`` for box widths
from 1e-12 to 1e12 (``t = s t0``: offsets proportional to the width, so that the data
stay representable) and solved again; the answers mapped back must agree.

What is checked, for each method and each OPTIMAL row (tolerances in units of the
largest box half-width of the base instance, with the reason):

* membership: methods that claim S_F return centers in S_F (``MEMBER``: rounding of a
  few dozen flops plus the mapping back from scale s, ~1e-12 relative);
* bound: the radius is at least the largest distance to a brute-force vertex
  (``BOUND``: the vertices are computed by LU solves of O(1)-conditioned bases, 1e-8);
* exact: the radius equals the SOCP radius (``TOL['exact_radius_vs_socp']``);
* ordering: ``r* <= r_rcc1 <= r_rcc2 <= R`` (``ORDER``: 1e-5 absolute, the documented
  floor of the rcc1 checks on point-like slices);
* equivariance: the outcome is the same at every scale, and centers and radii mapped back
  agree with those at s = 1 (``EQUI``: 1e-6; rcc1 centers 1e-4 where the relaxation's
  optimum is flat, as against the primal SDP; radii ``RADIUS_EQUI``) -- see
  :func:`_check_equivariance` for the two documented exceptions.

All checks of the first list run at every scale.

``HYPOTHESIS_PROFILE=ci`` (or ``-m slow``) runs ten times more instances.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from interval_reference import brute_vertices as interval_vertices
from interval_reference import clamped
from reference import brute_vertices, meb_socp
from tolerances import TOL

import chebcenter as cc
from chebcenter.methods import REGISTRY

SCALES = (1e-12, 1e-6, 1e-2, 1.0, 1e3, 1e6, 1e12)
METHODS = ("half_star", "ls", "cls", "rcc1", "rcc2", "exact", "project")
MEMBER = 1e-9
BOUND = 1e-8
ORDER = 1e-5
EQUI = 1e-6
RADIUS_EQUI = 1e-5
ROWS = 6 * (10 if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else 1)


def _box(rng, d, general):
    if not general:
        return np.zeros(d), np.ones(d)
    lo = rng.uniform(-2.0, 0.5, d)
    return lo, lo + rng.uniform(0.2, 2.0, d)


def family(name, seed, rows):
    """(A, lo, hi, X): a base instance of the family with ``rows`` planted points."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 7))
    m = int(rng.integers(1, d))
    lo, hi = _box(rng, d, general=rng.random() < 0.5)
    if name == "gaussian":
        A = rng.standard_normal((m, d))
    elif name == "integer":
        A = rng.integers(-3, 4, (m, d)).astype(float)
        A[0, rng.integers(d)] = 1.0
    elif name == "sparse":
        A = rng.standard_normal((m, d)) * (rng.random((m, d)) < 0.4)
        A[:, 0] += (np.abs(A).sum(axis=1) == 0)
    elif name == "lowrank":
        k = max(1, m - 1)
        A = rng.standard_normal((m + 1, k)) @ rng.standard_normal((k, d))
    elif name == "signed_zeros":
        A = rng.standard_normal((m, d))
        A[:, :2] = -0.0
    elif name == "near_parallel":
        a = rng.standard_normal(d)
        A = np.vstack([a, a + 1e-7 * rng.standard_normal(d)])
    elif name == "fixed":
        A = rng.standard_normal((m, d))
        k = rng.choice(d, size=max(1, d // 3), replace=False)
        hi[k] = lo[k]
    else:  # corners / edges: planted points on the box boundary
        A = rng.standard_normal((m, d))
    X = lo + (hi - lo) * rng.random((rows, d))
    if name == "corners":
        X = np.where(rng.random((rows, d)) < 0.5, lo, hi)
    elif name == "edges":
        hits = rng.random((rows, d)) < 0.7
        X = np.where(hits, np.where(rng.random((rows, d)) < 0.5, lo, hi), X)
    elif name == "signed_zeros":
        X[:, 2:3] = lo[2]
    return A, lo, hi, X


FAMILIES = ("gaussian", "integer", "sparse", "lowrank", "signed_zeros", "near_parallel",
            "fixed", "corners", "edges")


def _reference(A, lo, hi, b, w=None):
    """Brute-force vertices and the SOCP radius; with ``w``, of the interval set
    ``b - w <= A x <= b + w`` (interval_reference: x-space faces, another algorithm than the
    library's lifting and routes)."""
    V = brute_vertices(A, b, lo, hi) if w is None else interval_vertices(A, b - w, b + w, lo, hi)
    if V.shape[0] == 0:
        return V, np.nan
    if V.shape[0] == 1:
        return V, 0.0
    return V, meb_socp(V)[1]


def _solve_all(A, lo, hi, B, s, t0, W=None):
    """Every method on the instance mapped by x -> s x + s t0; answers mapped back. With
    ``W``, the rows are the intervals ``B -/+ W`` (mapped to ``s B + A t -/+ s W``)."""
    t = s * t0
    P = cc.BoxSlice(A, s * lo + t, s * hi + t)
    Bs = s * B + (A @ t)
    bounds = {} if W is None else {"lower": Bs - s * W, "upper": Bs + s * W}
    out = {}
    d = A.shape[1]
    # project: an anchor off the midpoint and a full metric, both mapped with the box
    a0 = lo + (hi - lo) * (0.3 + 0.1 * np.sin(np.arange(d)))
    S0 = np.diag(1.0 + np.arange(d) / d) + 0.3 * np.ones((d, d)) / d
    for method in METHODS:
        opts = {"anchor": s * a0 + t, "metric": s * s * S0} if method == "project" else {}
        r = P.centers(None if W is not None else Bs, method=method, **opts, **bounds)
        out[method] = ((r.centers - t) / s, r.radii / s, r.status_codes.copy())
        fe = r.extras.get("forward_error")
        out[f"_{method}_fe"] = np.zeros(r.radii.shape) if fe is None else np.nan_to_num(fe / s)
    fr = P.feature_ranges(None if W is not None else Bs, **bounds)
    out["_ranges"] = ((fr.lower - t) / s, (fr.upper - t) / s, fr.status_codes.copy())
    fe = fr.forward_error
    out["_ranges_fe"] = np.full(fr.lower.shape[0], np.nan) if fe is None else fe / s
    return out


def _check_base(A, lo, hi, B, out, found, refs, W=None):
    """Contract checks of one scale's answers against the brute-force references (with
    ``W``: of the interval sets ``B -/+ W``, where membership is ``|A c - b| <= w`` and
    ls and half_star, which solve on the interval's midpoint, meet ``A c =`` the midpoint of
    the interval clamped to what the row reaches over the box).

    The vertices of an ill-conditioned slice are only determined to about eps cond(A)
    (forward error, the same for the reference and the library), so the bound test allows
    ``BOUND + 100 eps cond(A)``."""
    half = 0.5 * (hi - lo)
    unit = max(half.max(), 1e-300)
    sv = np.linalg.svd(A, compute_uv=False)
    sv = sv[sv > sv[0] * 1e-13]
    bound = BOUND + 100 * np.finfo(float).eps * sv[0] / sv[-1]
    for n, b in enumerate(B):
        w = None if W is None else W[n]
        if n not in refs:
            refs[n] = _reference(A, lo, hi, b, w)
        V, rstar = refs[n]
        if V.shape[0] == 0:
            found["reference empty"] += 1
            continue
        lower, upper, rcodes = out["_ranges"]
        found["ranges rows"] += 1
        if rcodes[n] == cc.Status.OPTIMAL:  # the feature ranges are the vertices' extremes,
            # widened by the row's proven forward error (docs/theory.md §6.8) and no more
            fe = out["_ranges_fe"][n] if np.isfinite(out["_ranges_fe"][n]) else 0.0
            np.testing.assert_allclose(lower[n], V.min(axis=0), atol=bound * unit + fe, rtol=0)
            np.testing.assert_allclose(upper[n], V.max(axis=0), atol=bound * unit + fe, rtol=0)
        else:
            found[f"ranges {cc.Status(rcodes[n]).name}"] += 1
        for method in METHODS:
            C, R, codes = out[method]
            found[f"{method} rows"] += 1
            if codes[n] != cc.Status.OPTIMAL:
                # a nonempty set is never INFEASIBLE; any other status is counted (a budget)
                assert codes[n] != cc.Status.INFEASIBLE, (method, n, "INFEASIBLE on a nonempty set")
                found[f"{method} {cc.Status(codes[n]).name}"] += 1
                continue
            c, radius = C[n], R[n]
            scale_b = np.linalg.norm(A, 2) * (np.linalg.norm(c) + 1) + np.linalg.norm(b)
            mid = b if w is None else 0.5 * np.add(*clamped(A, b - w, b + w, lo, hi))
            res = np.linalg.norm(A @ c - mid) / scale_b
            inside = res if w is None else np.linalg.norm(np.maximum(np.abs(A @ c - b) - w, 0.0)) / scale_b
            if REGISTRY[method].lies_in == "S_F":   # the table says where each center lies
                viol = max(np.max(lo - c), np.max(c - hi), 0.0) / unit
                assert viol <= MEMBER and inside <= MEMBER, (method, n, viol, inside)
            if REGISTRY[method].lies_in == "S":
                assert res <= MEMBER, (method, n, res)
            worst = np.max(np.linalg.norm(V - c, axis=1))
            assert radius >= worst - bound * unit, (method, n, radius, worst)
            if method == "exact":
                # the radius is widened by the row's proven forward error (docs/theory.md §6.8)
                fe = out[f"_{method}_fe"][n]
                assert radius == pytest.approx(rstar + fe, rel=TOL["exact_radius_vs_socp"], abs=bound * unit + fe)
        ok = [out[m][2][n] == cc.Status.OPTIMAL for m in ("rcc1", "rcc2", "half_star")]
        if all(ok):
            r1, r2, R = out["rcc1"][1][n], out["rcc2"][1][n], out["half_star"][1][n]
            assert rstar <= r1 + ORDER * unit and r1 <= r2 + ORDER * unit and r2 <= R + ORDER * unit, \
                (n, rstar, r1, r2, R)


def _check_equivariance(ref, got, unit, s, rank_deficient):
    """Same outcome class at every scale (a center or not; INFEASIBLE stays INFEASIBLE),
    and rows OPTIMAL at both scales agree. OPTIMAL may become INACCURATE on a degenerate
    row where a certificate misses its tolerance by rounding; both keep the contract,
    which :func:`_check_base` verifies at every scale. Radii agree to ``RADIUS_EQUI``: on
    point-like slices ``sqrt(sum w^2 - ||x - m||^2)`` cancels to ~sqrt(d eps)."""
    for method in METHODS:
        Cr, Rr, cr = ref[method]
        Cg, Rg, cg = got[method]
        np.testing.assert_array_equal(cg <= cc.Status.INACCURATE, cr <= cc.Status.INACCURATE,
                                      err_msg=f"{method} outcome at s = {s}")
        np.testing.assert_array_equal(cg == cc.Status.INFEASIBLE, cr == cc.Status.INFEASIBLE,
                                      err_msg=f"{method} infeasibility at s = {s}")
        if method == "cls" and rank_deficient:
            # BVLS on a rank-deficient A (m > rank) breaks ties between equally good points
            # of S_F by eps-level differences: its point is not a continuous function of
            # the data (a documented limitation); the contract still holds at every scale
            continue
        ok = (cr == cc.Status.OPTIMAL) & (cg == cc.Status.OPTIMAL)
        tol = (1e-4 if method == "rcc1" else EQUI) * unit
        np.testing.assert_allclose(Rg[ok], Rr[ok], atol=RADIUS_EQUI * unit, rtol=1e-6,
                                   err_msg=f"{method} radius at s = {s}")
        if method == "ls":  # the minimum-norm solution depends on the origin: scale only
            continue
        np.testing.assert_allclose(Cg[ok], Cr[ok], atol=tol, rtol=0, err_msg=f"{method} center at s = {s}")


#: the most rows of a family (over its scales) that one method may leave non-OPTIMAL. A
#: non-OPTIMAL row keeps its contract (checked above), but it is a weaker answer; what the
#: budget catches is a family going INACCURATE or TOO_LARGE wholesale, the way interval
#: rows once went INFEASIBLE at offsets. A quarter: rcc1's certificate misses its gap on
#: the relaxation's flat optima (slices through box corners, 7 of 28 rows on one instance
#: of the corners family); every other method leaves none on these families.
BUDGET = 0.25


def _assert_budget(found):
    for method in METHODS + ("ranges",):
        rows = found[f"{method} rows"]
        missed = sum(v for k, v in found.items() if k.startswith(f"{method} ") and not k.endswith(" rows"))
        assert missed <= BUDGET * max(rows, 1), (method, missed, rows, dict(found))


def _run(fam, seed, rows, found, intervals=False):
    A, lo, hi, X = family(fam, seed, rows)
    rng = np.random.default_rng(seed + 1)
    t0 = rng.uniform(-5, 5, A.shape[1])
    B = X @ A.T
    W = None
    if intervals:
        # half-widths 0.5 % to 5 % of what each row reaches over the box, one row in four
        # an equation (w = 0): the planted record stays inside its set
        reach = np.abs(A) @ np.maximum(np.abs(lo), np.abs(hi))
        W = reach * rng.uniform(0.005, 0.05, B.shape) * (rng.random(B.shape) >= 0.25)
    refs = {}
    ref = _solve_all(A, lo, hi, B, 1.0, t0, W)
    _check_base(A, lo, hi, B, ref, found, refs, W)
    unit = max(0.5 * (hi - lo).max(), 1e-300)
    rank_deficient = np.linalg.matrix_rank(A) < A.shape[0]
    for s in SCALES:
        if s == 1.0:
            continue
        got = _solve_all(A, lo, hi, B, s, t0, W)
        _check_base(A, lo, hi, B, got, found, refs, W)
        _check_equivariance(ref, got, unit, s, rank_deficient)


@pytest.mark.parametrize("fam", FAMILIES)
@pytest.mark.parametrize("seed", [0, 1])
def test_differential_family(fam, seed):
    from collections import Counter

    found = Counter()
    _run(fam, 100 * seed + FAMILIES.index(fam), ROWS, found)
    assert found["ranges rows"] > 0, "every reference set was empty: nothing was checked"
    _assert_budget(found)


@pytest.mark.parametrize("fam", FAMILIES)
@pytest.mark.parametrize("seed", [0, 1])
def test_differential_family_on_interval_rows(fam, seed):
    """The same families with every row an interval (a quarter of them equations), at every
    scale, against the x-space brute force of interval_reference."""
    from collections import Counter

    found = Counter()
    _run(fam, 100 * seed + FAMILIES.index(fam), 4, found, intervals=True)
    assert found["ranges rows"] > 0, "every reference set was empty: nothing was checked"
    _assert_budget(found)


@pytest.mark.slow
@pytest.mark.parametrize("fam", FAMILIES)
def test_differential_family_many(fam):
    from collections import Counter

    found = Counter()
    for seed in range(2, 22):
        _run(fam, 100 * seed + FAMILIES.index(fam), 6, found)
    assert found["ranges rows"] > 0, "every reference set was empty: nothing was checked"
    _assert_budget(found)


@pytest.mark.parametrize("cond_exp", [3, 6, 9, 10, 12])
def test_ill_conditioned_consistent_rows_are_feasible(cond_exp):
    """b = A x with x interior and cond(A) up to 1e12: consistency is decided from
    orthogonal factors, so no such row is INFEASIBLE, and every OPTIMAL center has a
    small backward error (relative residual)."""
    rng = np.random.default_rng(cond_exp)
    d, m = 6, 3
    U, _ = np.linalg.qr(rng.standard_normal((m, m)))
    V, _ = np.linalg.qr(rng.standard_normal((d, m)))
    A = U @ np.diag(np.logspace(0, -cond_exp, m)) @ V.T
    X = 0.1 + 0.8 * rng.random((300, d))
    B = X @ A.T
    for method in METHODS:
        r = cc.BoxSlice(A).centers(B, method=method)
        assert not np.any(r.status_codes == cc.Status.INFEASIBLE), (method, r.counts())
        ok = r.status_codes == cc.Status.OPTIMAL
        rel = r.residuals[ok] / (np.linalg.norm(A, 2) * (np.linalg.norm(r.centers[ok], axis=1) + 1))
        assert np.all(rel <= MEMBER), (method, rel.max())


def test_issue_example_near_parallel_rows_are_consistent():
    """Rows parallel to 1e-9: never INFEASIBLE. Their difference is a direction b cannot
    resolve (singular value below feas_tol sigma_max, docs/theory.md §6.8), so each row is
    INACCURATE with that reason, and the record is inside its radius."""
    A = np.array([[1, 1, 1, .5], [1, 1 + 1e-9, 1, .5]])
    x = np.array([.2, .4, .6, .8])
    for method in METHODS:
        r = cc.BoxSlice(A).center(A @ x, method=method)
        assert r.status is cc.Status.INACCURATE and "near-dependent" in r.extras["check"], method
        assert np.linalg.norm(r.center - x) <= r.radius, method


@pytest.mark.parametrize("fam", ["gaussian", "near_parallel", "corners"])
def test_an_interval_rows_status_is_the_same_alone_and_in_a_batch(fam):
    """Each bounded-error row alone gets the status it gets in its batch, for every method that
    solves in batches (warm starts, shared groups, the routes picked per group)."""
    A, lo, hi, X = family(fam, 7 + FAMILIES.index(fam), 6)
    rng = np.random.default_rng(8)
    B = X @ A.T
    reach = np.abs(A) @ np.maximum(np.abs(lo), np.abs(hi))
    W = reach * rng.uniform(0.005, 0.05, B.shape) * (rng.random(B.shape) >= 0.25)
    P = cc.BoxSlice(A, lo, hi)
    for method in ("rcc1", "rcc2", "exact", "auto", "cls", "project"):
        batch = P.centers(lower=B - W, upper=B + W, method=method).status
        alone = [P.centers(lower=B[i:i + 1] - W[i:i + 1], upper=B[i:i + 1] + W[i:i + 1], method=method).status[0]
                 for i in range(B.shape[0])]
        assert list(batch) == alone, method
