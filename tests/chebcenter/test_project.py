"""``method="project"``: the projection of an anchor onto S_F in a metric.

References: a cvxpy QP (Clarabel) written here; rcc2 for anchor = midpoint, Sigma = I; the
Gaussian conditional mean's closed form. Tolerance 1e-6: Clarabel's default accuracy.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import instances, scaled

import chebcenter as cc

AGREE = 1e-6


def qp_reference(A, b, lo, hi, a, S):
    x = cp.Variable(lo.size)
    Pi = np.linalg.inv(S)
    Pi = 0.5 * (Pi + Pi.T)
    cons = [x >= lo, x <= hi] + ([A @ x == b] if A.shape[0] else [])
    cp.Problem(cp.Minimize(cp.quad_form(x - a, Pi)), cons).solve(solver="CLARABEL")
    return x.value


def _metric(rng, d):
    L = rng.standard_normal((d, d))
    return L @ L.T / d + 0.1 * np.eye(d)


@settings(max_examples=scaled(25), deadline=None)
@given(instances(max_d=6, min_p=1), st.integers(0, 2**31 - 1))
def test_project_matches_a_cvxpy_qp(inst, seed):
    A, lo, hi, x = inst
    rng = np.random.default_rng(seed)
    d = lo.size
    S = _metric(rng, d)
    anchors = lo + (hi - lo) * rng.uniform(-0.5, 1.5, (2, d))   # inside and outside the box
    B = np.vstack([A @ x, A @ x])
    r = cc.BoxSlice(A, lo, hi).centers(B, "project", anchor=anchors, metric=S)
    assert r.counts() == {"OPTIMAL": 2}
    Pi = np.linalg.inv(S)
    side = np.abs(hi - lo).max()
    for n in range(2):
        ref = qp_reference(A, B[n], lo, hi, anchors[n], S)
        c = r.centers[n]
        slack = 1e-12 * (1 + np.abs(lo).max() + np.abs(hi).max())   # the map back to the user's box rounds
        assert np.all(c >= lo - slack) and np.all(c <= hi + slack)
        if A.shape[0]:
            np.testing.assert_allclose(A @ c, B[n], atol=1e-9 * (1 + np.abs(B[n]).max()))
        # optimality: our objective is no worse than the reference's (Clarabel's objective is
        # accurate to ~1e-9; its point only to ~sqrt(1e-9 / lambda_min) on flat instances, so
        # the points are compared loosely and the objectives tightly)
        f_ours = (c - anchors[n]) @ Pi @ (c - anchors[n])
        f_ref = (ref - anchors[n]) @ Pi @ (ref - anchors[n])
        assert f_ours <= f_ref + 1e-8 * (1 + f_ref)
        np.testing.assert_allclose(c, ref, atol=1e-4 * (1 + side))
    # the radius is a bound: the planted point lies within it
    assert np.all(np.linalg.norm(r.centers - x, axis=1) <= r.radii + 1e-9)


@settings(max_examples=scaled(25), deadline=None)
@given(instances(max_d=7))
def test_project_defaults_are_rcc2(inst):
    A, lo, hi, x = inst
    P = cc.BoxSlice(A, lo, hi)
    b = (A @ x)[None, :]
    np.testing.assert_allclose(P.centers(b, "project").centers, P.centers(b, "rcc2").centers, atol=1e-9)
    mid = 0.5 * (lo + hi)
    got = P.centers(b, "project", anchor=mid, metric=np.full(lo.size, 7.0)).centers   # a scaled identity
    np.testing.assert_allclose(got, P.centers(b, "rcc2").centers, atol=1e-9)


def test_fixed_coordinates_condition_the_anchor():
    """x_1 fixed: the answer is the QP's with the fixed coordinate in place."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((1, 4))
    lo, hi = np.array([0.0, 0.4, 0.0, 0.0]), np.array([1.0, 0.4, 1.0, 1.0])
    x = np.array([0.3, 0.4, 0.7, 0.2])
    S = _metric(rng, 4)
    a = rng.random(4)
    r = cc.BoxSlice(A, lo, hi).center(A @ x, "project", anchor=a, metric=S)
    np.testing.assert_allclose(r.center, qp_reference(A, A @ x, lo, hi, a, S), atol=AGREE)
    assert r.center[1] == 0.4


@pytest.mark.parametrize("s", [1e-12, 1e-6, 1.0, 1e6, 1e12])
def test_project_scale_and_translate(s):
    rng = np.random.default_rng(8)
    A = rng.standard_normal((2, 5))
    x = rng.random(5)
    S = _metric(rng, 5)
    a = rng.random(5)
    ref = cc.BoxSlice(A).center(A @ x, "project", anchor=a, metric=S)
    t = s * rng.uniform(-3, 3, 5)
    got = cc.BoxSlice(A, t, s + t).center(A @ (s * x + t), "project", anchor=s * a + t, metric=s * s * S)
    assert got.status is cc.Status.OPTIMAL
    np.testing.assert_allclose((got.center - t) / s, ref.center, atol=1e-8)
    assert got.radius / s == pytest.approx(ref.radius, rel=1e-7)


def test_gaussian_conditional_mean_projects_to_the_prior_projection():
    """With x ~ N(mu, Sigma): the conditional mean given A x = b, projected onto S_F in the
    metric Sigma, equals the Sigma-projection of mu (Pythagoras in the Sigma^-1 inner product)."""
    rng = np.random.default_rng(11)
    d = 5
    A = rng.standard_normal((2, d))
    S = _metric(rng, d)
    mu = rng.random(d)
    x = rng.random(d)
    b = A @ x
    cond = mu + S @ A.T @ np.linalg.solve(A @ S @ A.T, b - A @ mu)   # closed form, lies in S
    np.testing.assert_allclose(A @ cond, b, atol=1e-12)
    P = cc.BoxSlice(A)
    via_cond = P.center(b, "project", anchor=cond, metric=S).center
    via_mu = P.center(b, "project", anchor=mu, metric=S).center
    np.testing.assert_allclose(via_cond, via_mu, atol=1e-9)


def test_bad_options_are_named():
    P = cc.BoxSlice([[1.0, 1.0, 1.0]])
    with pytest.raises(cc.InvalidInputError, match="metric must be positive definite"):
        P.center([1.0], "project", metric=-np.eye(3))
    with pytest.raises(cc.InvalidInputError, match="metric as a diagonal must be positive"):
        P.center([1.0], "project", metric=[1.0, 0.0, 1.0])
    with pytest.raises(cc.InvalidInputError, match="anchor must have 3 columns"):
        P.center([1.0], "project", anchor=[0.5, 0.5])
    with pytest.raises(cc.InvalidInputError, match=r"anchor must have one row per row of B \(2\)"):
        P.centers([[1.0], [2.0]], "project", anchor=np.zeros((3, 3)))
    with pytest.raises(cc.InvalidInputError, match="metric must be symmetric"):
        P.center([1.0], "project", metric=np.triu(np.ones((3, 3))) + np.eye(3))
