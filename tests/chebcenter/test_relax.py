"""rcc1 and rcc2 against independent routes (primal SDP, cvxpy QP) and the facts of docs/theory.md §1.2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import brute_vertices, meb_socp, rcc1_primal_checked, rcc2_qp, worst_error
from strategies import instances, scaled
from tolerances import TOL

import chebcenter as cc
from chebcenter.methods.relax import rcc1_certificate


def test_spec_segment_example_rcc1_is_not_always_better_than_half_star():
    """docs/theory.md §1: A = [1, -2], b = 0.2: RCC1 (0.5, 0.15) errs by 0.559, half* (0.64, 0.22) by 0.492."""
    P = cc.BoxSlice([[1.0, -2.0]])
    V = np.array([[0.2, 0.0], [1.0, 0.4]])
    r1 = P.center([0.2], method="rcc1")
    hs = P.center([0.2], method="half_star")
    np.testing.assert_allclose(r1.center, [0.5, 0.15], atol=1e-6)
    np.testing.assert_allclose(hs.center, [0.64, 0.22], atol=1e-12)
    assert worst_error(V, r1.center) == pytest.approx(0.559, abs=1e-3)
    assert worst_error(V, hs.center) == pytest.approx(0.492, abs=1e-3)
    assert worst_error(V, r1.center) > worst_error(V, hs.center)
    # the certified bound sqrt(eta) is exactly RCC1's worst case here (0.3125 = 0.559^2)
    assert r1.extras["eta"] == pytest.approx(0.3125, abs=1e-6)


def _reference_trusted(viol, eta_primal, r, A, b, lo, hi):
    """Whether the primal SDP's answer can serve as the optimum to compare with.

    Always: the row keeps its contract against brute force (its certified radius covers
    every vertex, its center is in S_F). The solver's point must be feasible (violation
    1e-7; Clarabel returned garbage on some near-point slices, ci profile); then its value
    is a lower bound on the relaxation's optimum, which the certified eta must reach. It
    is taken as the optimum only if it also reaches the exact radius^2 (an SOCP on the
    vertices), which the relaxation's optimum does: once it stopped at a feasible point
    worth 0.073 on a slice whose exact radius^2 is 0.61 (ci profile)."""
    V = brute_vertices(A, b, lo, hi)
    assert worst_error(V, r.center) <= r.radius * (1 + 1e-9) + 1e-9
    assert r.in_slice(TOL["rcc1_primal_dual"])
    if not viol <= 1e-7:
        return False
    assert r.extras["eta"] >= eta_primal * (1 - 1e-5) - 1e-6
    _, t = meb_socp(V)
    return eta_primal >= t ** 2 * (1 - 1e-6) - 1e-9


@settings(max_examples=scaled(15))
@given(instances(max_d=6, min_p=1, general_box=False))
def test_rcc1_dual_matches_primal_sdp(inst):
    A, lo, hi, x = inst
    b = A @ x
    x_primal, eta_primal, viol = rcc1_primal_checked(A, b, lo, hi)
    for fast in (True, False):
        r = cc.BoxSlice(A, lo, hi).center(b, method="rcc1", fast_path=fast)
        assert r.status is cc.Status.OPTIMAL
        if not _reference_trusted(viol, eta_primal, r, A, b, lo, hi):
            continue
        np.testing.assert_allclose(r.center, np.clip(x_primal, lo, hi), atol=TOL["rcc1_primal_dual"])
        assert r.extras["eta"] == pytest.approx(eta_primal, rel=TOL["ordering"], abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_rcc1_solvers_agree(seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((1, 4))
    x = rng.random(4)
    x[:2] = [0.0, 1.0]
    P = cc.BoxSlice(A)
    ra = P.center(A @ x, method="rcc1", solver="clarabel", fast_path=False)
    rb = P.center(A @ x, method="rcc1", solver="scs", fast_path=False)
    np.testing.assert_allclose(ra.center, rb.center, atol=TOL["rcc1_primal_dual"])
    assert ra.extras["eta"] == pytest.approx(rb.extras["eta"], rel=1e-5)


def test_rcc1_certificate_is_a_valid_bound_for_any_feasible_alpha():
    """For ANY alpha >= 0 (rescaled to M >= I) the center x(alpha) errs by at most sqrt(eta(alpha))."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 5))
    x = rng.random(5)
    P = cc.BoxSlice(A)
    q = P.A_pinv @ (A @ x)
    V = brute_vertices(A, A @ x, P.lo, P.hi)
    for _ in range(50):
        alpha = rng.exponential(size=5)
        c, eta, alpha_s = rcc1_certificate(P.W, q, P.lo, P.hi, alpha)
        assert np.linalg.eigvalsh((P.W.T * alpha_s) @ P.W)[0] >= 1 - 1e-12
        assert worst_error(V, c) ** 2 <= eta + 1e-12
    # alpha = 1 is half* with eta = R^2
    c, eta, _ = rcc1_certificate(P.W, q, P.lo, P.hi, np.ones(5))
    hs = P.center(A @ x, method="half_star")
    np.testing.assert_allclose(c, hs.center, atol=1e-12)
    # the radius carries the proven forward-error widening (docs/theory.md §6.8); eta does not
    assert eta == pytest.approx((hs.radius - hs.extras["forward_error"]) ** 2, rel=1e-12)


def test_rcc1_equals_half_star_often_when_nullity_is_large():
    """docs/theory.md §1: RCC1 = half* in 95-100 % of instances once d - r >= 5."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((2, 9))
    X = rng.random((40, 9))
    P = cc.BoxSlice(A)
    r1 = P.centers(X @ A.T, method="rcc1")
    hs = P.centers(X @ A.T, method="half_star")
    same = np.all(np.abs(r1.centers - hs.centers) < 1e-9, axis=1)
    assert same.mean() >= 0.9


@settings(max_examples=scaled(25))
@given(instances(max_d=7, min_p=1))
def test_rcc2_numba_matches_qp(inst):
    A, lo, hi, x = inst
    b = A @ x
    ref = rcc2_qp(A, b, lo, hi)
    P = cc.BoxSlice(A, lo, hi)
    r = P.center(b, method="rcc2")
    r_cvx = P.center(b, method="rcc2", solver="clarabel")
    assert r.status is cc.Status.OPTIMAL
    # The compiled projection against Clarabel's (the reference QP and the cvxpy route), by
    # strong convexity rather than a fixed distance: f(c) = ||c - m||^2 has modulus 1 on the
    # convex S_F, so f(c) - f* >= ||c - x*||^2 for every c in S_F. Clarabel stops at a 1e-8
    # gap, i.e. centers up to ~1e-4 apart (measured 2.8e-6 with the ci profile, above the
    # old fixed 2e-6). The compiled center must be no worse than either, to delta = 1e-8
    # (1 + f): Clarabel's relative tolerance, for its gap and for its infeasibility, which
    # can put its f below f* (measured 6e-10 below ours at f = 2.7); and both lie within
    # 2 sqrt(gap + delta) of it.
    mid = 0.5 * (lo + hi)
    f = lambda c: float(np.sum((c - mid) ** 2))  # noqa: E731
    delta = 1e-8 * (1.0 + f(r.center))
    for other in (ref, r_cvx.center):
        assert f(r.center) <= f(other) + delta
        assert np.linalg.norm(r.center - other) <= 2.0 * np.sqrt(max(f(other) - f(r.center), 0.0) + delta)
    assert r.residual <= TOL["membership"]
    # it is the projection: no point of S_F is closer to the midpoint. The projection is
    # often a vertex, and the brute-force vertices come from LU solves accurate to
    # TOL["vertex"] (one was 2.9e-9 closer than the projection, ci profile)
    V = brute_vertices(A, b, lo, hi)
    assert np.linalg.norm(r.center - mid) <= np.min(np.linalg.norm(V - mid, axis=1)) + TOL["vertex"]


def test_rcc1_reports_clipping():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((1, 3))
    x = np.array([0.0, 1.0, 0.3])
    r = cc.BoxSlice(A).center(A @ x, method="rcc1", fast_path=False, solver="scs")
    assert "clipped" in r.extras and r.extras["clipped"] >= 0
    assert r.box_violation == 0.0


@pytest.mark.parametrize("d,m", [(6, 1), (10, 3), (16, 5)])
def test_compiled_rcc1_matches_the_cvxpy_reference(d, m):
    """Issue target: eta within 1e-6 relative and centers within 1e-6 of the reference."""
    rng = np.random.default_rng(d)
    A = rng.standard_normal((m, d))
    X = rng.random((3, d))
    X[:, :2] = [0.0, 1.0]  # coordinates at the bounds: the alpha = 1 shortcut rarely applies
    B = X @ A.T
    P = cc.BoxSlice(A)
    got = P.centers(B, method="rcc1", solver="numba", fast_path=False)
    assert all(r.startswith("numba barrier (") for r in got.extras["route"])
    # Newton's method with the exact Hessian: ~20-40 steps over 10 decades of mu
    steps = [int(r.split("(")[1].split()[0]) for r in got.extras["route"]]
    assert max(steps) <= 60
    for solver in ("clarabel", "scs"):
        ref = P.centers(B, method="rcc1", solver=solver, fast_path=False)
        np.testing.assert_allclose(got.centers, ref.centers, atol=1e-6)
        np.testing.assert_allclose(got.extras["eta"], ref.extras["eta"], rtol=1e-6)
    # both are rigorous upper bounds; the barrier stops at mu = 1e-10, a duality gap of about
    # mu (d + p) <= 3e-9 here, so its certificate is within 1e-8 of (or below) SCS's
    assert np.all(got.extras["eta"] <= P.centers(B, method="rcc1", solver="scs", fast_path=False).extras["eta"] + 1e-8)


def test_compiled_rcc1_d200_is_solved():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 200))
    x = rng.random(200)
    x[:20] = 0.0
    r = cc.BoxSlice(A).center(A @ x, method="rcc1", fast_path=False)
    assert r.status is cc.Status.OPTIMAL and r.extras["route"].startswith("numba barrier (")
    # the radius is sqrt(eta) plus its forward-error widening (docs/theory.md §6.8): a few
    # eps of the radius here, through the local (Slater) bound; the global one was 8e-6
    fe = r.extras["forward_error"]
    assert r.in_slice(1e-8) and (r.radius - fe) ** 2 == pytest.approx(r.extras["eta"])
    assert fe <= 1e-9 * r.radius


@st.composite
def segments(draw):
    """(A, lo, hi, x, steep) with p = d - rank A = 1: S_F is a segment (or a point at a
    corner); ``steep``: column 0 scaled by 1e-3 (a nearly free coordinate, steep chords)."""
    d = draw(st.integers(2, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    A = rng.standard_normal((d - 1, d))
    if draw(st.booleans()):  # a repeated row: m = d, rank d - 1
        A = np.vstack([A, -3.0 * A[:1]])
    steep = draw(st.booleans())
    if steep:
        A[:, 0] *= 1e-3
    lo = rng.uniform(-2.0, 0.5, d) if draw(st.booleans()) else np.zeros(d)
    hi = lo + (rng.uniform(0.2, 2.0, d) if draw(st.booleans()) else 1.0)
    x = lo + (hi - lo) * rng.random(d)
    hits = rng.random(d) < draw(st.sampled_from([0.0, 0.3, 0.7]))
    x[hits] = np.where(rng.random(hits.sum()) < 0.5, lo[hits], hi[hits])
    return A, lo, hi, x, steep


@settings(max_examples=scaled(20))
@given(segments())
def test_segment_closed_form_matches_the_primal_sdp(inst):
    """p = 1: RCC1 in closed form (bisection on h(u) = min_i chord_i(u) - u^2) against the
    primal SDP (Clarabel, tolerance TOL['rcc1_primal_dual'] for its interior-point output).
    eta: 1e-5 relative, or 1e-6 absolute -- with a nearly free coordinate the dual weights
    are ~1/w_i^2 ~ 1e6-1e12 and eta = v^T M^-1 v - alpha^T t cancels (the certificate check
    admits up to 1e8-fold cancellation, i.e. ~1e-8 relative to those terms). The closed form
    is the route unless a steep chord made the certificate cancel too much (then the
    cvxpy fallback is the documented behaviour; how rare it is: the next test)."""
    A, lo, hi, x, steep = inst
    b = A @ x
    r = cc.BoxSlice(A, lo, hi).center(b, method="rcc1", fast_path=False)
    x_primal, eta_primal, viol = rcc1_primal_checked(A, b, lo, hi)
    if not _reference_trusted(viol, eta_primal, r, A, b, lo, hi):
        return
    # eta is a certified bound: never below the relaxation's value, and above it by at most
    # its rounding allowance 16 (d + p) eps (sum alpha |c| ||a||)^2 -- with a nearly free
    # coordinate (alpha ~ 1e8) that reaches a few 1e-6 (measured 2.8e-6, ci profile seed 22)
    assert r.extras["eta"] >= eta_primal * (1 - 1e-5) - 1e-6
    assert r.extras["eta"] <= eta_primal * (1 + 1e-5) + 5e-6
    if r.status is cc.Status.INACCURATE:
        # the contract check moved a steep-chord row into S_F and said so (ci profile, rare;
        # the next test measures how rare): it keeps the contract, not the SDP's point
        assert r.extras.get("check") and r.in_slice(TOL["rcc1_primal_dual"])
        return
    assert r.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(r.center, np.clip(x_primal, lo, hi), atol=TOL["rcc1_primal_dual"])
    closed = r.extras["route"].startswith("segment closed form (")
    # the closed form lands on S_F to rounding; the cvxpy fallback's output is clipped by up
    # to its interior-point accuracy
    assert r.in_slice(1e-9 if closed else TOL["rcc1_primal_dual"])


def test_segment_closed_form_is_used_for_almost_every_row():
    """The p = 1 rows (60% fell back to cvxpy with the barrier: the dual optimum is at
    infinity) are solved in closed form; measured: 2 999 of 3 000 random segments, the
    other a point S_F pinned by a chord of slope ~1e6 whose certificate cancels."""
    rng = np.random.default_rng(3)
    routes = []
    for _ in range(300):
        d = int(rng.integers(2, 9))
        A = rng.standard_normal((d - 1, d))
        if rng.random() < 0.5:
            A = np.vstack([A, -3.0 * A[:1]])
        X = rng.random((2, d))
        X[rng.random((2, d)) < rng.choice([0.0, 0.3, 0.7, 1.0])] = 1.0
        got = cc.BoxSlice(A).centers(X @ A.T, method="rcc1", fast_path=False)
        assert got.counts() == {"OPTIMAL": 2}
        routes += [s.startswith("segment closed form") for s in got.extras["route"]]
    assert np.mean(routes) >= 0.99
    A = rng.standard_normal((5, 6))
    X = rng.random((6, 6))
    X[:, :3] = rng.integers(0, 2, (6, 3))
    got = cc.BoxSlice(A).centers(X @ A.T, method="rcc1", fast_path=False)
    ref = cc.BoxSlice(A).centers(X @ A.T, method="rcc1", fast_path=False, solver="clarabel")
    np.testing.assert_allclose(got.centers, ref.centers, atol=TOL["rcc1_primal_dual"])


def test_warm_starts_and_thread_count_never_change_the_answer():
    """Warm starts (chunks of rows) move the barrier's end point within its accuracy: eta to
    1e-8 relative (duality gap ~1e-9); centers to 1e-5, because on rows whose optimum has
    M - I nearly singular the center is that ill-determined by eta -- Clarabel and SCS differ
    from each other by 1e-5 on the same rows (measured). The thread count changes nothing."""
    import numba

    rng = np.random.default_rng(11)
    A = rng.standard_normal((3, 12))
    X = rng.random((40, 12))
    X[::3, :4] = 1.0
    P = cc.BoxSlice(A)
    cold = P.centers(X @ A.T, method="rcc1", fast_path=False, warm_chunk=1)
    warm = P.centers(X @ A.T, method="rcc1", fast_path=False, warm_chunk=16)
    np.testing.assert_allclose(warm.centers, cold.centers, atol=1e-5)
    np.testing.assert_allclose(warm.extras["eta"], cold.extras["eta"], rtol=1e-8)
    warm_steps = [int(s.split("(")[1].split()[0]) for s in warm.extras["route"]]
    cold_steps = [int(s.split("(")[1].split()[0]) for s in cold.extras["route"]]
    assert sum(warm_steps) < sum(cold_steps)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = P.centers(X @ A.T, method="rcc1", fast_path=False, warm_chunk=16)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(single.centers, warm.centers)


def test_compiled_nnls_certifies_alpha_one_exactly_where_scipy_does():
    """The alpha = 1 test (docs/theory.md §1: (P o P) delta = s, delta >= 0) in the compiled batch kernel
    against scipy.optimize.nnls on the same systems: same decision on every row (measured
    3 000 of 3 000), and every certified row's residual is recomputed <= 1e-10 ||s||."""
    from scipy.optimize import nnls

    from chebcenter.kernels.nnls import nnls_rows

    rng = np.random.default_rng(0)
    decisions = []
    for _ in range(30):
        d = int(rng.integers(2, 30))
        A = rng.standard_normal((int(rng.integers(1, d)), d))
        P = cc.BoxSlice(A)
        PP = np.ascontiguousarray(P.null_projector ** 2)
        X = rng.random((8, d))
        X[:, :int(rng.integers(0, d))] = 1.0
        H = np.clip(P.centers(X @ A.T, "half_star").centers, 0, 1)
        S = np.ascontiguousarray(H * (1 - H))
        ok, res = np.zeros(8, dtype=bool), np.empty(8)
        nnls_rows(PP, S, 1e-10, 50 * d, ok, res)
        for k in range(8):
            delta, r = nnls(PP, S[k], maxiter=50 * d)
            decisions.append(ok[k])
            assert ok[k] == (r <= 1e-10 * max(np.linalg.norm(S[k]), 1e-300))
            if ok[k]:
                assert res[k] <= 1e-10
    assert 0 < np.mean(decisions) < 1  # both outcomes occur


def _audit_like(d, m, seed):
    """``A``: differences of consecutive rows of a random (m + 1) x d weight matrix, as a
    softmax model's scores give (seed None: the second matrix drawn from seed 0, the
    passive weights of the log-audit benchmark's model at k = 4)."""
    rng = np.random.default_rng(0 if seed is None else seed)
    if seed is None:
        rng.standard_normal((m + 1, d))
    return np.diff(rng.standard_normal((m + 1, d)), axis=0), rng


@pytest.mark.parametrize("d,m,seed", [(10, 3, None), (10, 3, 0), (6, 3, 4)])
def test_alpha_one_test_with_pair_generators_agrees_with_the_primal_sdp(d, m, seed):
    """docs/theory.md §1: Z = sum_g delta_g W^T g g^T W over g = e_j (the coordinate
    generators) and g = e_i +- e_j (the pairs) is PSD, so a solution delta >= 0 proves
    alpha = 1 optimal. Against the primal SDP (Clarabel, an independent route), on rows
    whose half* point is in the box: every row the test certifies reaches eta(1) = R^2
    there (relative 1e-6, the SDP's accuracy), and the test certifies no row where the SDP
    is 1e-4 below. Measured (rows with half* in the box; certified by the coordinate
    generators, by both; SDP 1e-4 below R^2): the benchmark model's A 36, 8, 36, 0 (the 28
    rows only the pairs prove went to the barrier before); seed 0: 39, 36, 39, 0; the
    d = 6 family 39, 0, 3, 32 (alpha = 1 mostly not optimal: where a wrong proof would show)."""
    from chebcenter.kernels.nnls import nnls_rows
    from chebcenter.methods.relax import alpha_one_certified

    A, rng = _audit_like(d, m, seed)
    P = cc.BoxSlice(A)
    B = rng.random((40, d)) @ A.T
    hs = P.centers(B, "half_star")
    inside = np.flatnonzero(np.all((hs.centers >= 0) & (hs.centers <= 1), axis=1))
    S = np.ascontiguousarray(hs.centers[inside] * (1 - hs.centers[inside]))
    ok = alpha_one_certified(P.null_projector, S)
    coord, res = np.zeros(inside.size, dtype=bool), np.empty(inside.size)
    nnls_rows(np.ascontiguousarray(P.null_projector ** 2), S, 1e-10, 50 * d, coord, res)
    assert np.all(ok[coord])  # the coordinate generators are among the pairs' columns
    # every certified row has an explicit witness: Z = W^T (sum_g delta_g g g^T) W >= 0 with
    # a_i^T Z a_i = s_i, delta from scipy's NNLS over the generator vectors g themselves
    from scipy.optimize import nnls
    E = np.eye(d)
    gens = [E[i] for i in range(d)] + [E[i] + sg * E[j] for sg in (1, -1) for i in range(d) for j in range(i + 1, d)]
    Wg = np.array([P.W.T @ g for g in gens])  # one generator per row, p columns
    cols = np.array([(P.W @ wg) ** 2 for wg in Wg]).T
    for j in np.flatnonzero(ok):
        delta, _ = nnls(cols, S[j], maxiter=50 * d)
        Z = (Wg.T * delta) @ Wg
        assert np.linalg.norm(np.einsum("ik,kl,il->i", P.W, Z, P.W) - S[j]) <= 1e-9 * np.linalg.norm(S[j])
    below = 0
    for j, k in enumerate(inside):
        _, eta_primal, viol = rcc1_primal_checked(A, B[k], P.lo, P.hi)
        if not viol <= 1e-7:
            continue
        R2 = hs.radii[k] ** 2
        if ok[j]:
            assert eta_primal >= R2 * (1 - 1e-6) - 1e-9, (k, eta_primal, R2)
        below += eta_primal < R2 * (1 - 1e-4)
    if seed is None:
        assert (ok & ~coord).sum() >= inside.size // 2
    if seed == 4:
        assert below >= inside.size // 2 and 0 < ok.sum() < inside.size


@pytest.mark.parametrize("seed", range(3))
def test_alpha_one_proofs_never_undercut_the_barriers_certified_value(seed):
    """A second route for the alpha = 1 test (coordinate and pair generators, no rank
    gate): the barrier's certified eta (fast_path=False) bounds RCC1's optimum from above,
    so wherever the test proves alpha = 1 optimal, eta(1) = R^2 <= the barrier's eta, to
    the checks' own accuracy (_ORDER_CHECK, 1e-7 relative, plus 1e-9). Shapes d = 3..16,
    rank 1..d/3: Gaussian, softmax-difference, integer and zero-column A, records with
    coordinates at 0 or 1 (9 000 rows in 3 x 120 trials: 7 900 proved, no violation;
    here 3 x 25 trials)."""
    from chebcenter.methods.relax import alpha_one_certified

    rng = np.random.default_rng(seed)
    proved = 0
    for trial in range(25):
        d = int(rng.integers(3, 17))
        m = int(rng.integers(1, max(2, d // 3 + 1)))
        A = [rng.standard_normal((m, d)), np.diff(rng.standard_normal((m + 1, d)), axis=0),
             rng.integers(-2, 3, (m, d)).astype(float), rng.standard_normal((m, d))][trial % 4]
        if trial % 4 == 3:
            A[:, rng.integers(0, d)] = 0.0
        if np.linalg.matrix_rank(A) == 0:
            continue
        P = cc.BoxSlice(A)
        X = rng.random((30, d))
        X[:, :int(rng.integers(0, 3))] = rng.integers(0, 2, (30, 1))
        B = X @ A.T
        hs = P.centers(B, "half_star")
        inside = np.flatnonzero(np.all((hs.centers >= 0) & (hs.centers <= 1), axis=1))
        if inside.size == 0:
            continue
        ok = alpha_one_certified(P.null_projector, hs.centers[inside] * (1 - hs.centers[inside]))
        barrier = P.centers(B[inside], "rcc1", fast_path=False)
        for j in np.flatnonzero(ok & (barrier.status_codes == 0)):
            R2 = hs.radii[inside[j]] ** 2
            assert barrier.extras["eta"][j] >= R2 * (1 - 1e-7) - 1e-9, (trial, d, m, barrier.extras["eta"][j], R2)
            proved += 1
    assert proved >= 300


def test_compiled_nnls_on_wide_generator_matrices_matches_scipy():
    """The NNLS kernel on the pair generators' matrix (d rows, d^2 columns: at most d
    passive columns, w updated from them) decides like scipy.optimize.nnls on every row,
    and its recomputed residual is <= 1e-10 ||s|| where it certifies."""
    from scipy.optimize import nnls

    from chebcenter.kernels.nnls import nnls_rows

    rng = np.random.default_rng(5)
    decisions = []
    for trial in range(12):
        d = int(rng.integers(3, 12))
        A, _ = _audit_like(d, int(rng.integers(1, d - 1)), 100 + trial)
        N = cc.BoxSlice(A).null_projector
        i, j = np.triu_indices(d, 1)
        PP = np.ascontiguousarray(np.hstack([N, N[:, i] + N[:, j], N[:, i] - N[:, j]]) ** 2)
        S = np.ascontiguousarray(rng.random((10, d)) * rng.random((10, 1)))
        ok, res = np.zeros(10, dtype=bool), np.empty(10)
        nnls_rows(PP, S, 1e-10, 50 * d, ok, res)
        for k in range(10):
            _, r = nnls(PP, S[k], maxiter=50 * d)
            assert ok[k] == (r <= 1e-10 * np.linalg.norm(S[k])), (trial, k, r, res[k])
            decisions.append(ok[k])
            if ok[k]:
                assert res[k] <= 1e-10
    assert 0 < np.mean(decisions) < 1


def test_remembered_passive_sets_decide_like_a_fresh_nnls_and_never_depend_on_threads():
    """nnls_rows first tries the square passive sets of earlier rows of its chunk
    (chebcenter.kernels.nnls.CACHE), then NNLS. On 1 200 rows of the benchmark model's
    slice (pair generators): the same decisions as NNLS on every row alone (chunk = 1:
    nothing remembered), residuals recomputed <= 1e-10; and rcc1 on 1 200 rows gives the
    same bits on one thread and on two (the row blocks are whole chunks)."""
    import numba

    from chebcenter.kernels.nnls import nnls_rows

    A, rng = _audit_like(10, 3, None)
    P = cc.BoxSlice(A)
    B = rng.random((1200, 10)) @ A.T
    H = np.clip(P.centers(B, "half_star").centers, 0, 1)
    S = np.ascontiguousarray(H * (1 - H))
    N = P.null_projector
    i, j = np.triu_indices(10, 1)
    PP = np.ascontiguousarray(np.hstack([N, N[:, i] + N[:, j], N[:, i] - N[:, j]]) ** 2)
    out = {}
    for chunk in (1, 256):
        ok, res = np.zeros(S.shape[0], dtype=bool), np.empty(S.shape[0])
        nnls_rows(PP, S, 1e-10, 500, ok, res, chunk)
        assert np.all(res[ok] <= 1e-10)
        out[chunk] = ok
    np.testing.assert_array_equal(out[1], out[256])
    assert 0.5 < out[1].mean() < 1
    threads = numba.get_num_threads()
    try:
        runs = []
        for t in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(t)
            runs.append(P.centers(B, "rcc1"))
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(runs[0].centers, runs[1].centers)
    np.testing.assert_array_equal(runs[0].radii, runs[1].radii)


def test_the_barrier_predictor_halves_the_newton_steps():
    """The predictor along the central path's tangent (chebcenter.kernels.rcc1) cuts cold rows
    here from 24.8 Newton steps on average to 15.9 (measured with and without it, cold starts
    at mu = 0.1; from mu = 1 it was 29 to 21). A broken predictor would still give right
    answers, only slower: so the step count is bounded."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 30))
    B = rng.random((16, 30)) @ A.T
    r = cc.BoxSlice(A).centers(B, "rcc1", fast_path=False, warm_chunk=1)
    steps = [int(route.split("(")[1].split()[0]) for route in r.extras["route"]]
    assert r.counts() == {"OPTIMAL": 16}
    assert np.mean(steps) <= 19, steps



def test_warm_rows_start_close_to_their_answer():
    """Rows after the first of a chunk start from 0.99 x the previous row's weights (plus
    0.01 x the cold start). That cut them here from 11.8 Newton steps on average (with 0.9)
    to 9.0, measured both ways; a regression would give the same answers more slowly, so
    the warm rows' mean step count is bounded (64 rows: chunks of 8)."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 30))
    B = rng.random((64, 30)) @ A.T
    r = cc.BoxSlice(A).centers(B, "rcc1", fast_path=False)
    steps = np.array([int(route.split("(")[1].split()[0]) for route in r.extras["route"]])
    assert r.counts() == {"OPTIMAL": 64}
    warm = steps[np.arange(64) % 8 != 0]
    assert warm.mean() <= 10.5, steps

def _with_spectrum(lams, seed):
    """A symmetric matrix with the eigenvalues ``lams`` (up to its own rounding)."""
    Q = np.linalg.qr(np.random.default_rng(seed).standard_normal((lams.size, lams.size)))[0]
    M = (Q * lams) @ Q.T
    return np.ascontiguousarray(0.5 * (M + M.T))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.floats(-6, 6), st.floats(-14, 0), st.integers(0, 2**31 - 1))
def test_verified_cholesky_bound_is_never_wrong_and_usually_decides(p, log_spread, log_gap, seed):
    """``_verified_above(M, s)`` is True only if ``lambda_min(M) >= s``, checked against
    eigvalsh on matrices whose smallest eigenvalue sits just above or just below s, over
    spreads of the other eigenvalues from 1e-6 to 1e6. The eigensolver's own error is at most
    ``p eps ||M||``, so "below" is placed 100 times further below than that. Above s by a
    relative 1e-9 or more it must decide (the barrier's optima sit about 1e-9 above 1)."""
    from chebcenter.kernels.rcc1_certificate import _verified_above

    rng = np.random.default_rng(seed)
    s = 1.0
    big = 10.0 ** log_spread
    norm = max(big, s) * p
    gap = 10.0 ** log_gap
    others = s + rng.random(max(p - 1, 0)) * big
    for sign in (+1, -1):
        lam_min = s + sign * max(gap, 100.0 * p * 2.2e-16 * norm) if sign < 0 else s + gap * norm
        M = _with_spectrum(np.concatenate([[lam_min], others]), seed)
        true_min = np.linalg.eigvalsh(M)[0]
        err = 8.0 * p * 2.2e-16 * np.linalg.norm(M, 2)
        decided = _verified_above(M, s)
        if decided:
            assert true_min >= s - err, (true_min, s)
        if sign < 0:
            assert not decided
        elif gap * norm >= 1e-9 * norm and true_min - err > s + 1e-11 * norm:
            assert decided


def test_verified_cholesky_spares_the_eigensolver_at_the_barrier_optimum():
    """At the barrier's answers lambda_min(M) - 1 is about mu (8e-10 here), far above the
    Cholesky bound's slack (about 1e-12): every row is certified without eigvalsh, and the
    radii are those of the eigenvalue route (f = 1 either way)."""
    from chebcenter.kernels.rcc1_certificate import _verified_above

    rng = np.random.default_rng(5)
    A = rng.standard_normal((3, 40))
    B = rng.random((16, 40)) @ A.T
    P = cc.BoxSlice(A)
    r = P.centers(B, "rcc1", fast_path=False)
    W = P.W
    fro = [np.linalg.norm((W.T * a) @ W) for a in r.extras["alpha"]]
    margins = [16 * (P.p + 1) * 2.220446049250313e-16 * f for f in fro]
    assert all(_verified_above(np.ascontiguousarray((W.T * a) @ W), 1.0 + mg)
               for a, mg in zip(r.extras["alpha"], margins))


def test_rcc1_on_a_slice_that_meets_the_box_in_one_corner_point():
    """Found by the ci profile: this slice meets the box in one point (three coordinates at
    their bounds). The relaxation has no interior there: the barrier's value was 1e17 and
    Clarabel's center left the box by 1e-6, so the row ended INACCURATE. It is now answered
    from its LP ranges: OPTIMAL, the point itself, and a radius below the checks' floor
    that still covers every vertex (brute force)."""
    A = np.array([[0.66532797, -0.94097223, -1.73062758, 0.70384837],
                  [0.46977519, 0.84481686, -0.73808656, -0.1166983]])
    x = np.array([0.0, 0.0, 1.0, 0.43857153])
    lo, hi = np.zeros(4), np.ones(4)
    b = A @ x
    V = brute_vertices(A, b, lo, hi)
    for fast in (True, False):
        r = cc.BoxSlice(A, lo, hi).center(b, method="rcc1", fast_path=fast)
        assert r.status is cc.Status.OPTIMAL
        assert "one point" in r.extras["route"]
        np.testing.assert_allclose(r.center, x, atol=1e-9)
        assert worst_error(V, r.center) <= r.radius <= 1e-5


@pytest.mark.parametrize("n", [5, 60, 95, 96, 150])
def test_barrier_cholesky_on_both_sides_of_the_lapack_switch(n):
    """The barrier's factorisations (chebcenter.kernels.rcc1._cholesky) are the project's own
    below LAPACK_FROM = 96 and LAPACK's dpotrf from there on: both give numpy's factor on a
    positive definite matrix, and both say False (never raise) on an indefinite one, a
    semidefinite one and a NaN diagonal."""
    from chebcenter.kernels.rcc1 import LAPACK_FROM, _cholesky

    assert LAPACK_FROM == 96
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, n))
    M = X @ X.T + n * np.eye(n)
    H = np.ascontiguousarray(M.copy())
    assert _cholesky(H, n)
    np.testing.assert_allclose(np.tril(H), np.linalg.cholesky(M), rtol=0, atol=1e-12 * np.abs(M).max())
    for bad in (M - 2 * np.linalg.eigvalsh(M)[-1] * np.eye(n),   # indefinite
                X[:, :n // 2] @ X[:, :n // 2].T):                  # singular
        assert not _cholesky(np.ascontiguousarray(bad.copy()), n)
    nan = M.copy()
    nan[0, 0] = np.nan
    assert not _cholesky(np.ascontiguousarray(nan), n)


@pytest.mark.parametrize("p,n", [(7, 9), (95, 100), (96, 3), (150, 160), (200, 1)])
def test_barrier_triangular_solve_by_blocks(p, n):
    """``_forward_rows`` (L^-1 B) runs by blocks of 48 rows from p = 96 on (the rows above a
    block update it through one matrix product): the same answer as SciPy's triangular solve
    on both sides of the switch, including a last block shorter than 48."""
    from scipy.linalg import solve_triangular

    from chebcenter.kernels.rcc1 import _forward_rows

    rng = np.random.default_rng(p)
    L = np.tril(rng.standard_normal((p, p))) + p * np.eye(p)
    B = rng.standard_normal((p, n))
    G = _forward_rows(np.ascontiguousarray(L), np.ascontiguousarray(B), p)
    ref = solve_triangular(L, B, lower=True)
    np.testing.assert_allclose(G, ref, rtol=0, atol=1e-13 * np.abs(ref).max())


def test_rcc1_is_never_above_rcc2_on_near_point_slices():
    """eta_RCC1 <= eta_RCC2 on every row both certify (docs/theory.md §1.3), also on slices
    a few 1e-9 to 1e-3 wide around a box corner, where the checks' accuracy floor used to
    let rcc1 through up to 8 % above rcc2 (245 of 1 200 OPTIMAL pairs on these families
    before; the row now takes rcc2's point and value there)."""
    bad = total = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        m, d = int(rng.integers(1, 4)), int(rng.integers(4, 9))
        A = rng.standard_normal((m, d))
        corner = rng.integers(0, 2, (40, d)).astype(float)
        X = corner + np.where(corner == 1, -1.0, 1.0) * rng.random((40, d)) * 10.0 ** rng.uniform(-9, -3, (40, 1))
        P = cc.BoxSlice(A)
        r1, r2 = P.centers(X @ A.T, "rcc1"), P.centers(X @ A.T, "rcc2")
        both = (r1.status_codes == 0) & (r2.status_codes == 0)
        total += both.sum()
        bad += np.sum(both & (r1.radii > r2.radii))
        # the contract of the row that took rcc2's point: it lies in S_F, its radius bounds the planted x
        assert np.all(np.linalg.norm(r1.centers[both] - X[both], axis=1) <= r1.radii[both] * (1 + 1e-9) + 1e-12)
    assert total >= 300 and bad == 0
