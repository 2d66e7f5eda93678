"""cc.theory against direct computations and closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import chebcenter as cc


def test_uniform_features_expected_half_star_mse():
    """i.i.d. U[0,1] features: E K = I/12, so E MSE(half*) = (d - r)/(12 d) (papers.md §1.6)."""
    rng = np.random.default_rng(0)
    d, r = 10, 3
    A = rng.standard_normal((r, d))
    X = rng.random((20000, d))
    rep = cc.theory.check(A, X)
    # std of the MSE estimate is ~ 1e-4 here; 5e-4 is > 4 sigma
    assert rep.mse_half_star == pytest.approx((d - r) / (12 * d), abs=5e-4)
    assert rep.mse_half == pytest.approx(1 / 12, abs=5e-4)
    assert all(rep.holds().values())
    assert "T1a" in str(rep) and "FAILS" not in str(rep)


def test_eigenvalue_bounds_are_tight_for_aligned_data():
    """Data varying only in Null(A) make the upper bound exact; only in Row(A), the lower."""
    A = np.array([[1.0, 0.0, 0.0]])
    X = np.full((4, 3), 0.5)
    X[:, 1] = [0.0, 1.0, 0.0, 1.0]  # varies along e2 in Null(A)
    low, up, loose = cc.theory.eigenvalue_bounds(A, X)
    mse = cc.theory.check(A, X).mse_half_star
    assert mse == pytest.approx(up) and low == pytest.approx(0.0)
    X2 = np.full((4, 3), 0.5)
    X2[:, 0] = [0.0, 1.0, 0.0, 1.0]  # varies along e1 = Row(A): half* is exact
    low2, up2, _ = cc.theory.eigenvalue_bounds(A, X2)
    assert cc.theory.check(A, X2).mse_half_star == pytest.approx(0.0, abs=1e-15)
    assert low2 == pytest.approx(0.0, abs=1e-15)  # the lower bound is attained
    assert up2 == pytest.approx(0.25 / 3)  # top d - r eigenvalues (0.25, 0) over d


def test_worst_case_radius_matches_half_star_result_and_vertices():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((2, 5))
    X = rng.random((6, 5))
    B = X @ A.T
    R = cc.theory.worst_case_radius(A, B)
    br = cc.BoxSlice(A).centers(B, method="half_star")
    np.testing.assert_allclose(R, br.radii, rtol=1e-12)
    assert cc.theory.worst_case_radius(A, B[0]) == pytest.approx(R[0])


def test_theory_rejects_data_outside_the_box_and_bad_shapes():
    with pytest.raises(cc.InvalidInputError, match="X must lie in the box"):
        cc.theory.check([[1.0, 1.0]], [[2.0, 0.0]])
    with pytest.raises(cc.InvalidInputError, match="X must have 2 columns"):
        cc.theory.half_star_gain([[1.0, 1.0]], [[0.5, 0.5, 0.5]])
    with pytest.raises(cc.InvalidInputError, match="estimator must be one of"):
        cc.theory.eigenvalue_bounds([[1.0, 1.0]], [[0.5, 0.5]], estimator="exact")
