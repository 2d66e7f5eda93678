"""The center of a linear image ``L S`` (``of=``) against brute force, the theory's bounds and
the planted record (docs/theory.md, "The center of a linear image").

Brute force here is independent of the code under test: vertices by solving every choice of
d active constraints with ``numpy.linalg.solve``, the smallest enclosing ball as the smallest
enclosing circumball of 1 to q + 1 of the image points.

Tolerances (derived): exact's radius is an enclosing radius within ``1e-9 (1 + r)`` of its
dual lower bound (the OPTIMAL test of the enclosing ball), plus rounding ~1e-15; the brute
force's vertices carry ~1e-13. So the radii agree within ``RADIUS_TOL (1 + r)``, 1e-8 for
margin. For the centers: for any c, ``max_p ||p - c||^2 >= r*^2 + ||c - c*||^2`` (c* lies in
the convex hull of its support), so a center whose radius is r has ``||c - c*|| <= sqrt(r^2 -
r*^2)``, checked with the measured radii (plus 1e-9 for the brute force's own rounding).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial import ConvexHull, QhullError

import chebcenter as cc
from chebcenter.methods.image import as_image_map

RADIUS_TOL = 1e-8
#: the rounding a planted point of S carries (a convex combination of computed vertices)
PLANT_TOL = 1e-12


# -- brute force -------------------------------------------------------------------------------
def brute_vertices(A, lo, hi, lower, upper):
    """Every vertex of ``{x in [lo, hi] : lower <= A x <= upper}``: d active constraints at a time."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    d = A.shape[1]
    lo, hi = np.broadcast_to(np.asarray(lo, dtype=float), (d,)), np.broadcast_to(np.asarray(hi, dtype=float), (d,))
    rows = [(np.eye(d)[i], v) for i in range(d) for v in (lo[i], hi[i])]
    rows += [(A[j], v) for j in range(A.shape[0]) for v in (lower[j], upper[j]) if np.isfinite(v)]
    scale = 1.0 + float(np.max(np.abs(np.concatenate([lo, hi]))))
    found = []
    for combo in itertools.combinations(range(len(rows)), d):
        G = np.array([rows[k][0] for k in combo])
        if abs(np.linalg.det(G)) < 1e-9:
            continue
        x = np.linalg.solve(G, np.array([rows[k][1] for k in combo]))
        ax = A @ x
        tol = 1e-9 * scale
        if np.all(x >= lo - tol) and np.all(x <= hi + tol) and np.all(ax >= lower - tol) and np.all(ax <= upper + tol):
            if not any(np.linalg.norm(x - y) <= 1e-9 * scale for y in found):
                found.append(x)
    return np.array(found)


def brute_ball(P):
    """The smallest ball enclosing the rows of P: the smallest enclosing circumball of 1..q+1 points."""
    P = np.unique(np.round(P, 12), axis=0)
    n, q = P.shape
    if q == 1:
        return np.array([0.5 * (P.min() + P.max())]), 0.5 * float(P.max() - P.min())
    if n > q + 2:   # the ball of a set is the ball of its hull's vertices (fewer subsets to try)
        try:
            P = P[ConvexHull(P).vertices]
            n = P.shape[0]
        except QhullError:   # a flat set: keep every point
            pass
    best = (None, np.inf)
    for k in range(1, min(n, q + 1) + 1):
        for S in itertools.combinations(range(n), k):
            p0 = P[S[0]]
            B = (P[list(S[1:])] - p0).T
            if k > 1:
                G = B.T @ B
                if np.linalg.matrix_rank(G) < k - 1:
                    continue
                c = p0 + B @ np.linalg.solve(2.0 * G, np.diag(G))
            else:
                c = p0
            r = float(np.linalg.norm(c - p0))
            if r < best[1] and np.all(np.linalg.norm(P - c, axis=1) <= r * (1 + 1e-12) + 1e-12):
                best = (c, r)
    return best


def _problem(seed, d, m):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    return rng, A, A @ rng.random(d)


CASES = [(seed, d, m, q) for seed, (d, m, q) in enumerate([(2, 1, 1), (3, 1, 1), (3, 1, 2), (4, 1, 2), (4, 2, 2),
                                                             (5, 2, 2), (5, 2, 1), (4, 2, 3)])]


def _maps(rng, d, q):
    return [sorted(rng.choice(d, size=q, replace=False).tolist()), rng.standard_normal((q, d))]


def _check_against(res, V, L):
    c_bf, r_bf = brute_ball(V @ L.T)
    assert res.status == cc.Status.OPTIMAL
    assert abs(res.radius - r_bf) <= RADIUS_TOL * (1.0 + r_bf), (res.radius, r_bf)
    assert res.radius >= r_bf * (1.0 - 1e-12)          # an enclosing radius is never below r*
    assert np.linalg.norm(res.center - c_bf) <= np.sqrt(max(res.radius ** 2 - r_bf ** 2, 0.0)) + 1e-9
    assert res.extras["radius_lower"] <= r_bf * (1.0 + 1e-12) + 1e-15


@pytest.mark.parametrize("seed, d, m, q", CASES)
def test_exact_equality_rows_match_brute_force(seed, d, m, q):
    rng, A, b = _problem(seed, d, m)
    V = brute_vertices(A, 0.0, 1.0, b, b)
    P = cc.BoxSlice(A)
    for of in _maps(rng, d, q):
        L = as_image_map(of, d)
        _check_against(P.center(b, "exact", of=of), V, L)
        _check_against(P.center(b, "auto", of=of), V, L)


@pytest.mark.parametrize("seed, d, m, q", CASES[:6])
def test_exact_interval_rows_match_brute_force(seed, d, m, q):
    rng, A, b = _problem(100 + seed, d, m)
    lower, upper = b - 0.3, b + 0.2
    if m > 1:
        upper[1] = np.inf                                # a one-sided row
    V = brute_vertices(A, 0.0, 1.0, lower, upper)
    P = cc.BoxSlice(A)
    for of in _maps(rng, d, q):
        _check_against(P.center(method="exact", lower=lower, upper=upper, of=of), V, as_image_map(of, d))
    # noise= is the same set as lower/upper = b -+ noise
    r = P.center(b, "exact", noise=0.25, of=[0])
    _check_against(r, brute_vertices(A, 0.0, 1.0, b - 0.25, b + 0.25), as_image_map([0], d))


def test_whole_space_image_is_todays_center():
    """of=range(d) and of=I are the x-space center, to round-off (the same vertices, the same ball)."""
    rng, A, _ = _problem(7, 5, 2)
    P = cc.BoxSlice(A, lo=-1.0, hi=[1.0, 2.0, 1.0, 1.0, 3.0])
    B = rng.uniform(-1, 1, (6, 5)) @ A.T
    today = P.centers(B, "exact")
    for of in (range(5), np.eye(5)):
        img = P.centers(B, "exact", of=of)
        assert np.array_equal(img.status_codes, today.status_codes)
        assert np.allclose(img.centers, today.centers, rtol=0, atol=1e-9)
        assert np.allclose(img.radii, today.radii, rtol=1e-10, atol=0)
    # of=None is today's path itself
    again = P.centers(B, "exact", of=None)
    assert np.array_equal(again.centers, today.centers) and np.array_equal(again.radii, today.radii)


@pytest.mark.parametrize("scale, offset", [(1e-6, 0.0), (1e6, 0.0), (1.0, 1e3), (1e-6, 1e3)])
def test_units_and_offsets(scale, offset):
    """x' = s x + t: the image center moves to s c + L t, the radius to s r (equality and interval rows)."""
    rng, A, b = _problem(11, 4, 2)
    L = rng.standard_normal((2, 4))
    t = offset * np.arange(1.0, 5.0)
    base = cc.BoxSlice(A)
    moved = cc.BoxSlice(A, lo=t, hi=t + scale)
    for kw, kw2 in (({"b": b}, {"b": scale * b + A @ t}),
                    ({"lower": b - 0.2, "upper": b + 0.1}, {"lower": scale * (b - 0.2) + A @ t,
                                                            "upper": scale * (b + 0.1) + A @ t})):
        r0 = base.center(method="exact", of=L, **kw)
        r1 = moved.center(method="exact", of=L, **kw2)
        assert r1.status == cc.Status.OPTIMAL
        tol = 1e-9 * scale * (1 + r0.radius) + 64 * np.finfo(float).eps * float(np.linalg.norm(np.abs(L) @ np.abs(t + scale)))
        # and each frame's proven forward error (docs/theory.md §6.8): at an offset of 1e9
        # box widths the data's rounding is 1e-7 of the box, and the radius counts it
        fe = np.nan_to_num(r1.extras.get("forward_error", 0.0)) + scale * np.nan_to_num(r0.extras.get("forward_error", 0.0))
        assert abs(r1.radius - scale * r0.radius) <= tol + fe
        assert np.linalg.norm(r1.center - (scale * r0.center + L @ t)) <= tol + np.sqrt(tol * scale * r0.radius)


def test_fixed_coordinates_and_duplicated_rows():
    rng, A, _ = _problem(3, 4, 1)
    lo, hi = np.array([0.0, 0.3, 0.0, -1.0]), np.array([1.0, 0.3, 2.0, 1.0])   # x1 fixed
    x = np.array([0.4, 0.3, 1.1, 0.2])
    A2 = np.vstack([A, A])                                                   # a duplicated equation
    b2 = A2 @ x
    V = brute_vertices(A, lo, hi, A @ x, A @ x)
    P = cc.BoxSlice(A2, lo=lo, hi=hi)
    for of in ([1, 2], [0, 3], rng.standard_normal((2, 4))):
        _check_against(P.center(b2, "exact", of=of), V, as_image_map(of, 4))
    # every coordinate fixed: the set is one point, its image the image of lo
    Q = cc.BoxSlice(A, lo=x, hi=x)
    r = Q.center(A @ x, "exact", of=[[1.0, 2.0, 0.0, 0.0]])
    assert r.ok and r.center == pytest.approx([1.0], abs=1e-12)       # 0.4 + 2 * 0.3
    assert r.radius <= 1e-12


def test_statuses_per_row():
    rng, A, b = _problem(5, 4, 2)
    P = cc.BoxSlice(A)
    B = np.array([b, b + 100.0, [np.nan, 0.0]])
    for method in ("exact", "auto", "rcc2"):
        r = P.centers(B, method, of=[0, 3])
        assert r.centers.shape == (3, 2)
        assert [s.name for s in r.status] == ["OPTIMAL", "INFEASIBLE", "INVALID_INPUT"]
        assert np.all(np.isnan(r.centers[1:])) and np.all(np.isnan(r.radii[1:]))
        assert np.all(np.isnan(r.residuals)) and np.all(np.isnan(r.box_violations))   # no x-space center
    empty = P.centers(np.zeros((0, 2)), "exact", of=[1])
    assert empty.centers.shape == (0, 1)
    r = P.centers(lower=np.array([b - 0.1, b + 100.0]), upper=np.array([b + 0.1, b + 101.0]), method="exact", of=[2])
    assert [s.name for s in r.status] == ["OPTIMAL", "INFEASIBLE"]


def test_past_the_vertex_budget():
    """exact: TOO_LARGE (a status, not a crash); auto: rcc1's center with its certified image bound."""
    rng, A, b = _problem(9, 6, 1)
    P = cc.BoxSlice(A)
    r = P.center(b, "exact", of=[0, 1], max_vertices=2)
    assert r.status == cc.Status.TOO_LARGE and np.all(np.isnan(r.center))
    a = P.center(b, "auto", of=[0, 1], max_vertices=2)
    assert a.ok and a.extras["method"] == "rcc1"
    V = brute_vertices(A, 0.0, 1.0, b, b)
    _, r_bf = brute_ball(V[:, :2])
    assert a.radius >= r_bf * (1 - 1e-12)
    assert np.max(np.linalg.norm(V[:, :2] - a.center, axis=1)) <= a.radius


@pytest.mark.parametrize("rows", ["equality", "interval"])
def test_planted_record_is_inside_every_certified_ball(rows):
    """Points of S (convex combinations of its vertices, the vertices too): ||L x - c|| <= radius
    for every row and every method that takes of=."""
    rng, A, _ = _problem(21, 5, 2)
    P = cc.BoxSlice(A, lo=[0, 0, -1, 0, 0], hi=[1, 2, 1, 1, 1])
    X = rng.uniform([0, 0, -1, 0, 0], [1, 2, 1, 1, 1], (4, 5))
    B = X @ A.T
    kw = [{"B": B}] if rows == "equality" else [{"lower": B - 0.2, "upper": B + 0.3}]
    L = rng.standard_normal((2, 5))
    planted = []
    for n in range(B.shape[0]):
        lo_n, up_n = (B[n], B[n]) if rows == "equality" else (B[n] - 0.2, B[n] + 0.3)
        V = brute_vertices(A, P.lo, P.hi, lo_n, up_n)
        planted.append(np.vstack([V, rng.dirichlet(np.ones(V.shape[0]), 20) @ V]))
    for method in cc.METHODS:
        for of in ([1, 4], L):
            res = P.centers(method=method, of=of, **kw[0])
            Lm = as_image_map(of, 5)
            for n in range(B.shape[0]):
                assert res.status[n].ok, (method, n)
                pts = planted[n] @ Lm.T
                far = np.max(np.linalg.norm(pts - res.centers[n], axis=1))
                assert far <= res.radii[n] + PLANT_TOL * (1 + np.max(np.abs(pts))), (method, n, far, res.radii[n])
            if "x_radius" in res.extras and method != "auto":   # never looser than ||L|| r(the method's own ball)
                bound = cc.theory.image_radius_bound(Lm, res.extras["x_radius"])
                assert np.all(res.radii <= bound * (1 + 1e-12) + 1e-12), method


def test_theory_bounds_hold():
    """r(L S) <= ||L|| r(S) (image_radius_bound); for coordinate blocks r_p <= r(S) <= sqrt(sum r_p^2)."""
    for seed in range(4):
        rng, A, b = _problem(40 + seed, 5, 2)
        P = cc.BoxSlice(A)
        r = P.center(b, "exact").radius
        L = rng.standard_normal((2, 5))
        assert P.center(b, "exact", of=L).radius <= cc.theory.image_radius_bound(L, r) * (1 + 1e-9)
        blocks = np.array_split(rng.permutation(5), 2 + seed % 2)
        rp = [P.center(b, "exact", of=blk).radius for blk in blocks]
        assert max(rp) <= r * (1 + 1e-9)
        assert r <= cc.theory.block_radius_bound(rp) * (1 + 1e-9)


def test_parties_worst_points_differ():
    """docs/theory.md §10: on the segment {x1 = x2} the parties' worst records coincide and
    r = sqrt(sum r_p^2); on the diamond |x1 - 1/2| + |x2 - 1/2| <= 1/2 they differ and r = max r_p."""
    P = cc.BoxSlice([[1.0, -1.0]])
    assert P.center([0.0], "exact", of=[0]).radius == pytest.approx(0.5)
    assert P.center([0.0], "exact").radius == pytest.approx(cc.theory.block_radius_bound([0.5, 0.5]))
    D = cc.BoxSlice([[1.0, 1.0], [1.0, -1.0]])
    kw = {"lower": [0.5, -0.5], "upper": [1.5, 0.5]}
    rp = [D.center(method="exact", of=[i], **kw).radius for i in (0, 1)]
    assert rp == pytest.approx([0.5, 0.5])
    assert D.center(method="exact", **kw).radius == pytest.approx(0.5)


@pytest.mark.parametrize("of, match", [([3], "out of range"), ([-1], "out of range"), ([0, 0], "distinct"),
                                       (np.ones((1, 4)), r"\(q, 3\)"), ([[np.nan, 0.0, 0.0]], "finite"),
                                       ([0.5], "integer"), ([], "at least one"), (np.ones((1, 1, 3)), "1-D"),
                                       ("ab", "of must")])
def test_bad_of(of, match):
    P = cc.BoxSlice([[1.0, 1.0, 1.0]])
    with pytest.raises(cc.InvalidInputError, match=match) as err:
        P.center([1.0], "exact", of=of)
    assert "of" in str(err.value)


def test_bad_options_with_of():
    P = cc.BoxSlice([[1.0, 1.0, 1.0]])
    with pytest.raises(cc.InvalidInputError, match="of"):
        P.center([1.0], "exact", of=[0], algorithm="bnb")
    with pytest.raises(cc.InvalidInputError, match="of"):
        P.center([1.0], "exact", of=[0], return_vertices=True)


def test_module_level_function_takes_of():
    r = cc.chebyshev_center([[1.0, 1.0]], [1.0], method="exact", of=[1])
    assert r.center.tolist() == pytest.approx([0.5]) and r.radius == pytest.approx(0.5)


# -- rcc1 with of=: the weighted EBT relaxation (docs/theory.md §10, "rcc1 with of=") ---------
@pytest.mark.parametrize("seed, d, m, rows", [(2, 4, 2, "equality"), (3, 5, 2, "interval"), (4, 6, 2, "equality"),
                                              (5, 3, 1, "interval")])
def test_rcc1_weighted_between_exact_and_mapped(seed, d, m, rows):
    """exact radius <= weighted rcc1 radius <= the mapped center's bound, and every planted
    record (the vertices, random points of S) inside the returned ball."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    B = rng.random((2, d)) @ A.T
    P = cc.BoxSlice(A)
    kw = {"B": B} if rows == "equality" else {"lower": B - 0.2, "upper": B + 0.2}
    for of in ([0, 1], rng.standard_normal((2, d))):
        Lm = as_image_map(of, d)
        res = P.centers(method="rcc1", of=of, **kw)
        ex = P.centers(method="exact", of=of, **kw)
        assert all(s == cc.Status.OPTIMAL for s in res.status), res.extras.get("check")
        assert np.all(res.radii >= ex.radii * (1.0 - 1e-12))
        assert np.all(res.radii <= res.extras["radius_mapped"])
        assert np.all(res.radii == np.fmin(res.extras["radius_weighted"], res.extras["radius_mapped"]))
        for n in range(2):
            lo_n, up_n = (B[n], B[n]) if rows == "equality" else (B[n] - 0.2, B[n] + 0.2)
            V = brute_vertices(A, 0.0, 1.0, lo_n, up_n)
            pts = np.vstack([V, rng.dirichlet(np.ones(V.shape[0]), 30) @ V]) @ Lm.T
            far = np.max(np.linalg.norm(pts - res.centers[n], axis=1))
            assert far <= res.radii[n] + PLANT_TOL * (1 + np.max(np.abs(pts))), (n, far, res.radii[n])


def test_rcc1_weighted_strictly_tighter_than_mapped():
    """A general L on a segment of the unit cube (d = 3, one equation): the weighted relaxation
    is the exact image radius 0.559269, the mapped rcc1 center's bound 0.808973."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((1, 3))
    b = A @ rng.random((3, 3))[0]
    L = rng.standard_normal((2, 3))
    P = cc.BoxSlice(A)
    r = P.center(b, "rcc1", of=L)
    e = P.center(b, "exact", of=L)
    assert r.status == cc.Status.OPTIMAL and r.extras["image_route"] == "weighted"
    assert abs(r.radius - 0.559269) < 1e-6 and abs(r.extras["radius_mapped"] - 0.808973) < 1e-6
    assert e.radius <= r.radius <= e.radius * (1 + 1e-6)


def test_weighted_certificate_holds_at_any_weights():
    """The bound of docs/theory.md §10 holds for any alpha >= 0 (here alpha = 1 and a random
    one), not only at the solver's optimum: sampled points of the set lie within it."""
    from chebcenter.methods.image import weighted_certificate

    rng = np.random.default_rng(7)
    d, p = 5, 3
    W, _ = np.linalg.qr(rng.standard_normal((d, p)))
    x0 = rng.uniform(-0.5, 0.5, d)                       # a point of the box [-1, 1]^d
    Lx = rng.standard_normal((2, d))
    K = Lx @ W
    U = rng.standard_normal((20_000, p)) * 0.6
    Xs = x0 + U @ W.T
    inside = np.all(np.abs(Xs) <= 1.0, axis=1)
    for alpha in (np.ones(d), rng.uniform(0.1, 3.0, d)):
        z, eta = weighted_certificate(W, K, Lx, x0, x0, (x0 + 1.0) * (x0 - 1.0), alpha, 2.0 * np.sqrt(d))
        far = np.max(np.linalg.norm((U[inside] - z) @ K.T, axis=1))
        assert far ** 2 <= eta
