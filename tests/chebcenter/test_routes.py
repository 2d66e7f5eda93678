"""Fast paths are routes: every method's general body solves slice rows too, and each
declared route gives that body's answer.

A method's function is its general body, on the lifted box slice of any rows; a slice batch
is the trivial lifting (K = d, no interval coordinate). Its "box slice" route reads the
slice's own factors instead. Here both run on the same slice rows (the body through the
dispatcher's lifted path, ``dispatch._sets`` with ``L = U = B``; the route through
``dispatch._slices``), and both are held to the contract against brute-force vertices
(tests/chebcenter/reference.py, another algorithm), and to each other:

* the same status on every row;
* every radius at least the farthest vertex from its center (a true bound), less the
  contract's rounding allowance ``1e-9`` of the box scale;
* the same center, to the solver's own accuracy: ``1e-9`` of the box scale (the enclosing
  ball's walk stops at a 1e-9 relative gap; BVLS and the active-set QP at 1e-12 on a box of
  half-width 1; the closed forms at rounding). rcc1's barrier stops at mu = 1e-9, which fixes
  its value to about 1e-9 relative but its center only to about sqrt(1e-9): its radii are
  compared instead, to its checks' own ``1e-7`` relative (relax._ORDER_CHECK);
* for exact, auto and rcc2, whose radius is the estimator's own value on both routes, the
  same radius to those accuracies. The other methods' general bodies bound the radius
  without the slice's R (the farthest box corner, or rcc2's ball plus the distance between
  the centers), so their radius is only required to be a bound.

A second test lists the routes the table declares and fails if one is never taken.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference import brute_vertices

import chebcenter as cc
from chebcenter.methods import REGISTRY, dispatch
from chebcenter.methods.ranges import RANGES
from chebcenter.methods.spec import GENERAL

#: methods whose two routes compute the same radius (the estimator's own value)
SAME_RADIUS = {"exact": 1e-9, "auto": 1e-9, "rcc2": 1e-9, "rcc1": 1e-7}
#: methods whose center is compared (rcc1's is fixed only to about sqrt of its value's accuracy)
SAME_CENTER = {"half", "ls", "half_star", "cls", "rcc2", "exact", "auto", "project", "ranges"}


def _slices(d, m, n, seed, scale=1.0, offset=0.0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, d))
    lo, hi = offset + scale * np.zeros(d), offset + scale * np.ones(d)
    X = lo + (hi - lo) * rng.uniform(size=(n, d))
    X[:, 0] = lo[0] + 0.999 * (hi[0] - lo[0])   # a record near a face: vertices close to it
    return A, lo, hi, X, X @ A.T


def _both(P, spec, B, opts):
    core = P._core
    Bc = np.ascontiguousarray((B - P._offset) / P.scale)
    user = (np.abs(B) + P._abs_offset) / P.scale
    tau = core.bound_tol(Bc, Bc, user)
    n = B.shape[0]
    fast = dispatch._slices(core, Bc, user, spec, opts, "status", np.arange(n))
    body = dispatch._sets(core, Bc, Bc.copy(), tau, spec, opts, np.arange(n), user)
    return fast, body


@pytest.mark.parametrize("scale, offset", [(1.0, 0.0), (1e-6, 3e2), (1e6, -1e7)])
@pytest.mark.parametrize("name", [*REGISTRY, "ranges"])
def test_the_general_body_solves_slices_as_the_route_does(name, scale, offset):
    d, m, n = 5, 2, 8
    A, lo, hi, X, B = _slices(d, m, n, seed=11, scale=scale, offset=offset)
    P = cc.BoxSlice(A, lo, hi)
    spec = RANGES if name == "ranges" else REGISTRY[name]
    opts = dict(spec.options)
    if spec.to_frame is not None:
        opts = spec.to_frame(P, opts, np.arange(n), n)
    fast, body = _both(P, spec, B, opts)
    route = "box slice" if "box slice" in spec.route_names() else GENERAL   # half has one body only
    assert set(fast[3]["path"]) == {route} and set(body[3]["path"]) == {GENERAL}
    np.testing.assert_array_equal(fast[2], body[2], err_msg=f"{name}: statuses")
    unit = P.scale   # the core's frame: the box's largest half-width is 1
    for k in range(n):
        V = brute_vertices(A, B[k], lo, hi)
        assert V.shape[0] > 0
        for C, R, codes, _ in (fast, body):
            if codes[k] > cc.Status.INACCURATE or spec.lies_in == "none":
                continue
            c = P._to_original(C[k:k + 1])[0]
            far = float(np.max(np.linalg.norm(V - c, axis=1)))
            assert R[k] * unit >= far - 1e-9 * unit, (name, k, R[k] * unit, far)
    ok = (fast[2] == 0) & (body[2] == 0)
    assert ok.sum() >= n - 1, (name, fast[2], body[2])
    if name in SAME_CENTER:
        np.testing.assert_allclose(body[0][ok], fast[0][ok], rtol=0, atol=1e-9, err_msg=f"{name}: centers")
    # the dispatcher widens each path by its own forward error (a slice's from its factors, an
    # interval set's from the rows' Hoffman constant: larger at an offset), after the method:
    # the bodies are compared before it
    fe_fast, fe_body = fast[3]["forward_error"][ok], body[3]["forward_error"][ok]
    if name == "ranges":
        for key in ("lower", "upper"):
            np.testing.assert_allclose(body[3][key][ok], fast[3][key][ok], rtol=0,
                                       atol=1e-9 + np.max(fe_fast + fe_body), err_msg=key)
    if name in SAME_RADIUS:
        np.testing.assert_allclose(body[1][ok] - fe_body, fast[1][ok] - fe_fast, rtol=SAME_RADIUS[name], atol=1e-12,
                                   err_msg=f"{name}: radii")


def _runs(spec, P, B, W):
    """Every path the public API takes on a slice batch and on bounded-error batches (a group
    of intervals, one with an equation too, a slab)."""
    def call(**kw):
        return P.centers(method=spec.name, **kw)
    seen = set()
    E = W.copy()
    E[:, 0] = 0.0   # one equation beside an interval: a lifted group no fast path of a bounded-error set takes
    for kw in ({"B": B}, {"lower": B - W, "upper": B + W}, {"lower": B - E, "upper": B + E},
               {"lower": np.c_[B[:, :1] - W[:, :1], np.full((B.shape[0], 1), -np.inf)],
                "upper": np.c_[B[:, :1] + W[:, :1], np.full((B.shape[0], 1), np.inf)]}):
        res = call(**kw)
        seen |= {p for p in res.extras["path"] if p is not None}
    return seen


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_declared_route_is_taken(name):
    """Through the public API (the feature ranges' result has no extras: their two paths are
    taken in the test above)."""
    spec = REGISTRY[name]
    A, lo, hi, X, B = _slices(5, 2, 6, seed=3)
    P = cc.BoxSlice(A, lo, hi)
    W = np.full(B.shape, 0.05)
    assert _runs(spec, P, B, W) == set(spec.route_names()), spec.route_names()


@pytest.mark.parametrize("rows", ["one", "three", "duplicated"])
@pytest.mark.parametrize("scale, offset", [(1.0, 0.0), (1e-9, 5.0), (1e9, 1e10)])
def test_rcc2_fast_routes_are_the_general_body(scale, offset, rows):
    """Interval rows without equations: rcc2's slab route (one row: the slice at the clamped
    value) and its unboxed route (up to four rows: the projection onto the rows alone, where
    it lies in the box) give the general body's projection, and the QP reference's (cvxpy,
    another algorithm, on the unit box only: its absolute accuracy, about 1e-8, is the
    tolerance there, and at 1e-9 or offsets of 1e10 it cannot resolve the box). Duplicated
    rows (G singular) go to the body whole. Rows whose intervals hold A m get the box midpoint."""
    from interval_reference import rcc2_qp

    rng = np.random.default_rng(5)
    d, n = 6, 16
    a = rng.normal(size=({"one": 1, "three": 3, "duplicated": 2}[rows], d))
    if rows == "duplicated":
        a[1] = a[0]
    P, lo, hi, L, U, fast, body = _route_and_body("rcc2", a, rng, n, scale, offset)
    expected = {"one": {"slab"}, "three": {"unboxed", GENERAL}, "duplicated": {GENERAL}}[rows]
    assert set(fast[3]["path"]) <= expected and set(body[3]["path"]) == {GENERAL}
    if rows == "three":
        assert "unboxed" in set(fast[3]["path"])
    assert np.all(fast[2] == 0) and np.all(body[2] == 0)
    # the same point: the projection is unique; the body's dual ascent stops at a 1e-12 gap
    np.testing.assert_allclose(fast[0], body[0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast[1], body[1], rtol=1e-9, atol=1e-12)
    C = P._to_original(fast[0])
    mid = 0.5 * (lo + hi)
    for k in range(n):
        if scale == 1.0:
            assert np.max(np.abs(C[k] - rcc2_qp(a, L[k], U[k], lo, hi))) <= 1e-6, k
        if np.all((L[k] <= a @ mid) & (a @ mid <= U[k])):
            assert np.max(np.abs(C[k] - mid)) <= 1e-12 * (scale + abs(offset))


@pytest.mark.parametrize("scale, offset", [(1.0, 0.0), (1e-9, 5.0), (1e9, 1e10)])
def test_exact_slab_route_is_the_general_body(scale, offset):
    """One interval row: exact's slab route (the two bounding slices and the box corners
    between, tables shared by the group) and its general body (the lifted vertices row by
    row) give the same status, center and radius, to the enclosing ball's 1e-9 relative
    gap; the radius is at least the farthest brute-force vertex (tests/chebcenter/
    interval_reference.py, every d-subset of the faces) from the center, less the rounding
    allowance of the box scale, and radius_lower at most it."""

    from interval_reference import brute_vertices as interval_vertices

    rng = np.random.default_rng(9)
    d, n = 5, 12
    a = rng.normal(size=(1, d))
    P, lo, hi, L, U, fast, body = _route_and_body("exact", a, rng, n, scale, offset)
    assert set(fast[3]["path"]) == {"slab"} and set(body[3]["path"]) == {GENERAL}
    assert np.all(fast[2] == 0) and np.all(body[2] == 0)
    np.testing.assert_allclose(fast[1], body[1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fast[0], body[0], rtol=0, atol=1e-9)
    if scale == 1.0 and offset == 0.0:   # the brute force's absolute tolerances are the unit box's
        C = P._to_original(fast[0])
        for k in range(n):
            V = interval_vertices(a, L[k], U[k], lo, hi)
            far = float(np.max(np.linalg.norm(V - C[k], axis=1)))
            assert fast[1][k] * P.scale >= far - 1e-9
            assert fast[3]["radius_lower"][k] * P.scale <= far + 1e-9


def _route_and_body(name, a, rng, n, scale, offset):
    """Random interval rows ``a`` over a box of ``scale`` at ``offset`` (records drawn in it,
    half-widths 1-30 % of each row's reach), solved by the method ``name`` through its routes
    and by its general body alone: ``(P, lo, hi, L, U, fast, body)``."""
    import dataclasses

    d = a.shape[1]
    lo, hi = offset + scale * np.zeros(d), offset + scale * np.ones(d)
    X = lo + (hi - lo) * rng.uniform(size=(n, d))
    b = X @ a.T
    half = (np.abs(a) @ (0.5 * (hi - lo)))[None, :] * rng.uniform(0.01, 0.3, size=(n, a.shape[0]))
    P = cc.BoxSlice(a, lo, hi)
    spec = REGISTRY[name]
    L, U = b - half, b + half
    Lc, Uc = P._normalised_bounds(L, U)
    tau = P._core.bound_tol(Lc, Uc, P._user_magnitude(L, U))
    fast = dispatch._sets(P._core, Lc, Uc, tau, spec, dict(spec.options), np.arange(n))
    body = dispatch._sets(P._core, Lc, Uc, tau, dataclasses.replace(spec, routes=()), dict(spec.options), np.arange(n))
    return P, lo, hi, L, U, fast, body
