"""method="auto": exact where enumeration is cheap, rcc1 elsewhere, row by row."""

from __future__ import annotations

import numpy as np
import pytest

import chebcenter as cc


def test_small_slices_get_the_exact_center():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 7))
    B = rng.random((5, 7)) @ A.T
    P = cc.BoxSlice(A)
    auto, ex = P.centers(B, method="auto"), P.centers(B, method="exact")
    assert list(auto.extras["method"]) == ["exact"] * 5
    np.testing.assert_array_equal(auto.centers, ex.centers)
    np.testing.assert_array_equal(auto.radii, ex.radii)


def test_large_slices_get_rcc1():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((5, 40))  # C(40, 5) 2^35: far past any enumeration
    B = rng.random((4, 40)) @ A.T
    P = cc.BoxSlice(A)
    auto, rc = P.centers(B, method="auto"), P.centers(B, method="rcc1")
    assert list(auto.extras["method"]) == ["rcc1"] * 4
    np.testing.assert_array_equal(auto.centers, rc.centers)
    np.testing.assert_array_equal(auto.radii, rc.radii)


def test_rows_past_the_vertex_budget_fall_to_rcc1_and_the_rest_stay_exact():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((1, 9))
    X = rng.random((6, 9))
    X[:3] = 0.5 + 0.01 * rng.standard_normal((3, 9))  # central slices: many vertices
    X[3:, :7] = 1.0  # near a corner: few vertices
    B = X @ A.T
    P = cc.BoxSlice(A)
    nv = P.centers(B, method="exact").extras["n_vertices"]
    budget = int(np.sort(nv)[2])  # the three smallest slices fit, the rest do not
    auto = P.centers(B, method="auto", max_vertices=budget)
    exact_rows = np.flatnonzero(nv <= budget)
    assert set(np.flatnonzero(auto.extras["method"] == "exact")) == set(exact_rows)
    rc = P.centers(B, method="rcc1")
    other = np.setdiff1d(np.arange(6), exact_rows)
    assert other.size > 0
    np.testing.assert_allclose(auto.centers[other], rc.centers[other], atol=1e-12)
    # every radius is a certified bound; the exact ones are never above rcc1's
    assert np.all(auto.radii[exact_rows] <= rc.radii[exact_rows] + 1e-9)
    assert auto.counts() == {"OPTIMAL": 6}


def test_auto_options_are_validated_by_name():
    P = cc.BoxSlice([[1.0, 1.0, 1.0]])
    with pytest.raises(cc.InvalidInputError, match="max_vertices"):
        P.center([1.0], method="auto", max_vertices=0)
    with pytest.raises(cc.InvalidInputError, match="solver"):
        P.center([1.0], method="auto", solver="mosek")
