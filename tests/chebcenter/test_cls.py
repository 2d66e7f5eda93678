"""cls: the compiled BVLS port against SciPy's ``lsq_linear(method="bvls")`` itself."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear
from strategies import instances, scaled

import chebcenter as cc

#: the port takes SciPy's decisions; its subproblems are solved by Householder QR instead of
#: gelsd when safely full rank (unique minimum-norm solution), so the two differ by rounding:
#: measured <= 1.5e-13 on 1 500 random rows. 1e-9 leaves room for cond(A) up to ~1e4.
AGREE = 1e-9


@st.composite
def batches(draw):
    A, lo, hi, _ = draw(instances(max_d=10))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 12))
    X = lo + (hi - lo) * rng.random((n, A.shape[1]))
    hits = rng.random(X.shape) < draw(st.sampled_from([0.0, 0.3, 0.8]))
    X[hits] = np.where(rng.random(hits.sum()) < 0.5, np.broadcast_to(lo, X.shape)[hits],
                       np.broadcast_to(hi, X.shape)[hits])
    return A, lo, hi, X


@settings(max_examples=scaled(60))
@given(batches())
def test_compiled_bvls_matches_scipy_row_by_row(data):
    A, lo, hi, X = data
    B = X @ A.T
    got = cc.BoxSlice(A, lo, hi).centers(B, method="cls")
    for k, b in enumerate(B):
        if not got.ok[k]:
            continue
        np.testing.assert_allclose(got.centers[k], scipy_cls(A, b, lo, hi), atol=AGREE, rtol=0)


def scipy_cls(A, b, lo, hi):
    """The documented cls: SciPy's BVLS on the normalised problem (free coordinates only,
    translated to the box midpoint and divided by the largest half-width), mapped back."""
    free = lo < hi
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    s = half[free].max()
    x = np.where(free, mid, lo)
    if A.shape[0] == 0:
        return x
    bn = (b - A @ x) / s
    sol = lsq_linear(A[:, free], bn, bounds=(-half[free] / s, half[free] / s), method="bvls", tol=1e-12)
    x[free] += s * np.clip(sol.x, -half[free] / s, half[free] / s)
    return x


def test_compiled_and_scipy_routes_agree_including_rank_deficient_A():
    """Repeated rows make the subproblems rank deficient: the gelsd fallback decides those."""
    rng = np.random.default_rng(4)
    for m, d, repeat in [(1, 6, False), (3, 8, True), (5, 5, False), (6, 4, False), (4, 9, True)]:
        A = rng.standard_normal((m, d))
        if repeat:
            A = np.vstack([A, 2.5 * A[0]])
        X = rng.random((30, d))
        X[::2, :2] = 1.0
        P = cc.BoxSlice(A)
        fast = P.centers(X @ A.T, method="cls")
        ref = P.centers(X @ A.T, method="cls", solver="scipy")
        np.testing.assert_array_equal(fast.status, ref.status)
        np.testing.assert_allclose(fast.centers, ref.centers, atol=AGREE, rtol=0)
        assert np.all(fast.residuals <= 1e-9)


def test_unconstrained_solution_in_the_box_is_returned_as_is():
    """SciPy's first test: lstsq(A, b) inside the box is the answer (no BVLS iterations)."""
    A = np.array([[1.0, 1.0]])
    r = cc.BoxSlice(A).centers([[1.0]], method="cls")
    np.testing.assert_allclose(r.centers[0], [0.5, 0.5], atol=1e-15)
    assert r.extras["iterations"][0] == 0


def test_solver_option_is_validated():
    with pytest.raises(cc.InvalidInputError, match="solver"):
        cc.BoxSlice([[1.0, 1.0]]).centers([[1.0]], method="cls", solver="lapack")


@pytest.mark.parametrize("seed", range(8))
def test_bvls_port_matches_scipy_on_inconsistent_systems(seed):
    """Inside chebcenter b is always consistent, so BVLS mostly stops after its initial
    loop; noisy, over- and underdetermined systems drive Stark-Parker's loops A and B (free
    the best bound variable, interpolate back to the first violated bound). The kernel must
    take SciPy's path there too: same solution, cost and status."""
    from chebcenter.kernels.bvls import bvls_rows

    rng = np.random.default_rng(seed)
    m, d = [(3, 8), (8, 5), (6, 6), (12, 10), (2, 12), (5, 20), (20, 6), (4, 4)][seed]
    A = rng.standard_normal((m, d))
    lo = rng.uniform(-1.0, 0.0, d)
    hi = lo + rng.uniform(0.1, 1.0, d)
    B = rng.standard_normal((6, m)) * 3.0
    X = np.empty((6, d))
    nit = np.zeros(6, dtype=np.int64)
    status = np.zeros(6, dtype=np.int64)
    bvls_rows(A, B, lo, hi, 1e-12, X, nit, status)
    loop_b = 0
    for k, b in enumerate(B):
        sol = lsq_linear(A, b, bounds=(lo, hi), method="bvls", tol=1e-12)
        np.testing.assert_allclose(X[k], sol.x, atol=AGREE, rtol=0)
        assert 0.5 * np.sum((A @ X[k] - b) ** 2) == pytest.approx(sol.cost, rel=1e-10, abs=1e-12)
        assert status[k] == sol.status
        loop_b += sol.nit > 2
    assert loop_b > 0  # the main loops were exercised


def test_svd_subproblem_matches_gelsd_where_safe_and_hands_over_where_not():
    """The Jacobi-SVD least squares (compiled without LAPACK's lstsq) equals NumPy's gelsd to
    rounding on safely full-rank matrices, tall and wide, and refuses (NaN) rank-deficient
    ones, whose rows the batch re-runs with gelsd."""
    from chebcenter.kernels.bvls import _svd_lstsq

    rng = np.random.default_rng(5)
    for m, n in [(1, 1), (1, 7), (3, 9), (6, 6), (9, 4), (12, 1)]:
        for _ in range(20):
            A = rng.standard_normal((m, n))
            b = rng.standard_normal(m)
            z = _svd_lstsq(A, b, -1.0)
            ref = np.linalg.lstsq(A, b, rcond=-1)[0]
            assert np.abs(z - ref).max() <= 1e-12 * (1 + np.abs(ref).max()) * np.linalg.cond(A)
    A = rng.standard_normal((3, 8))
    A = np.vstack([A, 2.5 * A[0]])
    assert np.all(np.isnan(_svd_lstsq(A, rng.standard_normal(4), -1.0)))


def test_rows_near_rank_deficient_subproblems_take_gelsd_and_only_those():
    """Without gelsd (the default compile) a full-rank A never needs it; with a repeated row
    every row does, and the batch result then equals SciPy's (gelsd's own decisions)."""
    from chebcenter.kernels.bvls import NEEDS_GELSD, bvls_rows

    rng = np.random.default_rng(6)
    d = 8
    for A, expect in [(rng.standard_normal((3, d)), False), (np.vstack([np.ones(d), 2 * np.ones(d)]), True)]:
        X = rng.random((20, d))
        X[::2, :3] = 1.0
        B = np.ascontiguousarray(X @ A.T)
        out, nit, st = np.empty((20, d)), np.zeros(20, dtype=np.int64), np.zeros(20, dtype=np.int64)
        bvls_rows(np.ascontiguousarray(A), B, np.zeros(d), np.ones(d), 1e-12, out, nit, st)
        assert np.any(st == NEEDS_GELSD) == expect
        got = cc.BoxSlice(A).centers(B, method="cls")
        for k in range(20):
            np.testing.assert_allclose(got.centers[k], scipy_cls(A, B[k], np.zeros(d), np.ones(d)), atol=AGREE, rtol=0)
