"""docs/theory.md §2 as hypothesis properties over random (rank-deficient) A, planted x, boxes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import brute_vertices, worst_error
from strategies import instances, scaled
from tolerances import TOL

import chebcenter as cc


@st.composite
def datasets(draw):
    A, lo, hi, _ = draw(instances(max_d=8))
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(seed)
    X = lo + (hi - lo) * rng.random((n, A.shape[1]))
    return A, lo, hi, X


@given(datasets())
def test_theorem1_identities_hold_exactly(data):
    A, lo, hi, X = data
    P = cc.BoxSlice(A, lo, hi)
    B = X @ A.T
    mse = {m: np.mean((X - P.centers(B, method=m).centers) ** 2) for m in ("half_star", "ls")}
    # Theorem 1 is about the midpoint itself (method "half" returns the unique solution
    # when rank A = d, docs/theory.md §1), so use the definition here
    mse["half"] = np.mean((X - 0.5 * (lo + hi)) ** 2)
    # item 1: per sample ||X - h||^2 = ||X - m||^2 - ||A^+A(X - m)||^2
    H = P.centers(B, method="half_star").centers
    mid = 0.5 * (lo + hi)
    rowproj = (X - mid) @ (np.linalg.pinv(A) @ A).T if A.shape[0] else np.zeros_like(X)
    lhs = np.sum((X - H) ** 2, axis=1)
    rhs = np.sum((X - mid) ** 2, axis=1) - np.sum(rowproj ** 2, axis=1)
    np.testing.assert_allclose(lhs, rhs, atol=TOL["identity"])
    assert mse["half_star"] <= mse["half"] + TOL["identity"]
    assert abs(mse["half"] - mse["half_star"] - cc.theory.half_star_gain(A, X, lo, hi)) <= TOL["identity"]
    # item 2: MSE(ls) - MSE(half*) exact
    assert abs(mse["ls"] - mse["half_star"] - cc.theory.ls_minus_half_star(A, X, lo, hi)) <= TOL["identity"]


@given(datasets())
def test_theorem2_von_neumann_bounds(data):
    A, lo, hi, X = data
    P = cc.BoxSlice(A, lo, hi)
    B = X @ A.T
    for est in ("half_star", "ls"):
        got = np.mean((X - P.centers(B, method=est).centers) ** 2)
        low, up, loose = cc.theory.eigenvalue_bounds(A, X, est, lo, hi)
        assert low - TOL["identity"] <= got <= up + TOL["identity"]
        assert up <= loose + TOL["identity"]
    assert all(cc.theory.check(A, X, lo, hi).holds().values())


def test_unit_box_ls_formula_matches_spec():
    """docs/theory.md §2.2 for [0,1]^d: MSE(ls) - MSE(half*) = (1/(Nd)) sum 1^T P (X_n - 1/4)."""
    rng = np.random.default_rng(3)
    A, X = rng.standard_normal((2, 6)), rng.random((50, 6))
    P = np.eye(6) - np.linalg.pinv(A) @ A
    spec = float(np.sum((X - 0.25) @ P @ np.ones(6)) / X.size)
    assert abs(cc.theory.ls_minus_half_star(A, X) - spec) <= TOL["identity"]


@settings(max_examples=scaled(20))
@given(instances(max_d=6, min_p=1))
def test_worst_case_bounds_and_exact_optimality(inst):
    """Items 4-5: ||x - h|| <= R on every vertex; exact beats every method's worst case;
    every certified radius bounds its own center's worst-case error; S_F methods in S_F;
    and r^2 <= eta_rcc1 <= eta_rcc2 <= R^2."""
    A, lo, hi, x = inst
    b = A @ x
    V = brute_vertices(A, b, lo, hi)
    assert V.shape[0] >= 1
    P = cc.BoxSlice(A, lo, hi)
    res = {m: P.center(b, method=m) for m in cc.METHODS}
    R = res["half_star"].radius
    point_like = res["exact"].radius <= 1e-4 * np.max(hi - lo)   # S_F is nearly a point
    for name, r in res.items():
        if name == "rcc1" and point_like and r.status is not cc.Status.OPTIMAL:
            # a slice through a box corner that is nearly a point: rcc1's dual weights grow
            # like 1/eta and its certificate is accurate only to ~1e-5 half-widths (the
            # documented floor); no route certifies it and the row is downgraded with its
            # reason -- never a wrong OPTIMAL (seen once in the ci profile, seed 4242)
            assert r.extras.get("check"), r.status
            del res[name]
            break
    for name, r in res.items():
        assert r.status is cc.Status.OPTIMAL, (name, r.status)
    assert worst_error(V, res["half_star"].center) <= R + 1e-9
    exact_worst = worst_error(V, res["exact"].center)
    assert abs(exact_worst - res["exact"].radius) <= 1e-9
    slack = 1e-7 * (1 + R)
    for name, r in res.items():
        assert exact_worst <= worst_error(V, r.center) + 1e-9, name
        assert worst_error(V, r.center) <= r.radius + slack, name
        if cc.methods.REGISTRY[name].in_feasible_set:
            assert r.box_violation <= TOL["membership"]
            assert r.residual <= TOL["membership"] * (1 + np.linalg.norm(b)), name
    eta2 = res["rcc2"].radius ** 2
    tol = TOL["ordering"] * (1 + R ** 2)
    if "rcc1" in res:
        eta1 = res["rcc1"].extras["eta"]
        assert res["exact"].radius ** 2 <= eta1 + tol
        assert eta1 <= eta2 + tol
    assert eta2 <= R ** 2 + tol
    # any estimate in S_F errs by at most 2R
    for name in [n for n in ("cls", "rcc1", "rcc2", "exact") if n in res]:
        assert worst_error(V, res[name].center) <= 2 * R + 1e-9


@given(datasets(), st.sampled_from(["ls", "half_star", "half"]))
def test_clipping_never_increases_any_coordinate_error(data, method):
    A, lo, hi, X = data
    C = cc.BoxSlice(A, lo, hi).centers(X @ A.T, method=method).centers
    clipped = np.clip(C, lo, hi)
    assert np.all(np.abs(clipped - X) <= np.abs(C - X) + 1e-15)
