"""method="auto": exact where enumeration is cheap, rcc1 elsewhere, row by row."""

from __future__ import annotations

import numpy as np
import pytest

import chebcenter as cc


@pytest.mark.parametrize("seed,shape,rows,expected", [
    (0, (2, 7), 5, "exact"),   # small slices: enumeration is cheap
    (1, (5, 40), 4, "rcc1"),   # C(40, 5) 2^35: far past any enumeration
])
def test_auto_picks_exact_for_small_slices_and_rcc1_for_large(seed, shape, rows, expected):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal(shape)
    B = rng.random((rows, shape[1])) @ A.T
    P = cc.BoxSlice(A)
    auto, ref = P.centers(B, method="auto"), P.centers(B, method=expected)
    assert list(auto.extras["method"]) == [expected] * rows
    np.testing.assert_array_equal(auto.centers, ref.centers)
    np.testing.assert_array_equal(auto.radii, ref.radii)


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


def test_rank_one_switches_to_the_branch_and_bound_where_enumeration_would_not_do():
    """auto and exact's own "auto" pick the branch and bound for rank 1 from d = 14, where it
    is faster than the edge walk (and auto's vertex limit, 2e4, would likely be passed);
    below, the enumeration. The radii agree with enumeration's to the certified gap 1e-6."""
    rng = np.random.default_rng(9)
    A = rng.standard_normal((1, 17))
    for d, rows in ((16, 3), (17, 1)):
        Ad = A[:, :d]
        B = rng.random((rows, d)) @ Ad.T
        P = cc.BoxSlice(Ad)
        enum = P.centers(B, "exact", algorithm="enumerate")
        au = P.centers(B, "auto")
        ex = P.centers(B, "exact")
        assert list(au.extras["method"]) == ["exact"] * rows
        assert "n_vertices" in enum.extras and enum.counts() == {"OPTIMAL": rows}
        assert "bnb_nodes" in ex.extras
        for r in (au, ex):
            assert r.counts() == {"OPTIMAL": rows}
            np.testing.assert_allclose(r.radii, enum.radii, rtol=2e-6)
            assert np.all(r.extras["radius_lower"] <= r.radii)
            assert np.all(r.radii - r.extras["radius_lower"] <= 1e-6 * r.radii + 1e-12)
    with_vertices = P.centers(B, "exact", return_vertices=True)      # vertices need the enumeration
    assert "n_vertices" in with_vertices.extras
    small = cc.BoxSlice(A[:, :12]).centers(rng.random((2, 12)) @ A[:, :12].T, "exact")
    assert "n_vertices" in small.extras                               # d < 14: enumeration
    for d in (12, 13):                                                # auto: below its vertex limit
        au = cc.BoxSlice(A[:, :d]).centers(rng.random((1, d)) @ A[:, :d].T, "auto")
        assert "bnb_nodes" not in au.extras and au.extras["method"][0] == "exact"
