"""exact's batch route on slabs ``{x in [lo, hi] : l <= a^T x <= u}`` (one interval row per
batch row; chebcenter.kernels.batch_slab), by two independent routes:

* exact rational vertices (tests/chebcenter/exact_reference.py) on dyadic slabs: every
  OPTIMAL radius bounds every true vertex, and is the minimum ball's (the SOCP on the exact
  vertices) to the gap;
* the row-by-row route of the same method (the batch route switched off): the same
  statuses, and radii within the two certificates' gaps of each other.

The families are those the row route was hardened on: offsets 1e5 and 1e8, scales 2^-40
and 2^40, thin intervals (2^-20 to 2^-40 of a unit box), a fixed coordinate, one-sided
rows, a slab through a box corner, and empty rows beside nonempty ones. Each batch shares
its row ``a`` (the kernel's case), with right-hand sides in random order (the kernel sorts
them by their midpoint and warm-starts each row from the last).

Tolerance, as in test_interval_certified: ``TOL = 1e-7`` of the box's largest half-width
(the library decides a vertex to ``tau <= 1e-8`` there, which moves a vertex by at most
``tau / |a_j|``, below 1e-7 for a on the 1/8 grid); the radii of the two routes agree to
``2 gap (1 + r)`` (gap 1e-9: each is within gap of the minimum ball's).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from exact_reference import exact_interval_vertices, farthest
from reference import meb_socp

import chebcenter as cc
from chebcenter import Status
from chebcenter._core.lifting import ROUTE_SLAB
from chebcenter.methods import exact_batch as _batch_exact

TOL = 1e-7
GAP = 1e-9
FAMILIES = ("plain", "offset1e5", "offset1e8", "scale-40", "scale40", "thin", "fixed", "one_sided", "corner",
            "empty")


def family(name, d, n=12, seed=0):
    """One batch: ``(a, lo, hi, L, U, X)``, n rows sharing the row ``a`` (dyadic), planted
    records X (NaN where the row's set is empty)."""
    rng = np.random.default_rng(seed + 97 * d)
    a = rng.integers(-8, 9, size=d) / 8.0
    a[a == 0] = 0.375
    lo = np.zeros(d)
    hi = rng.integers(4, 17, size=d) / 8.0
    X = np.floor(rng.random((n, d)) * hi * 64) / 64
    b = X @ a
    L = b - rng.integers(0, 17, size=n) / 64.0
    U = b + rng.integers(1, 17, size=n) / 64.0
    if name.startswith("offset"):
        t = np.round(float(name[6:]) * (1.0 + rng.random(d)))
        return a, lo + t, hi + t, L + a @ t, U + a @ t, X + t
    if name.startswith("scale"):
        s = 2.0 ** int(name[5:])
        return a, s * lo, s * hi, s * L, s * U, s * X
    if name == "thin":
        w = 2.0 ** -rng.integers(20, 41, size=n)
        return a, lo, hi, b - w, b + w, X
    if name == "fixed":
        hi2 = hi.copy()
        hi2[0] = lo[0] = 0.0
        X2 = X.copy()
        X2[:, 0] = 0.0
        b2 = X2 @ a
        return a, lo, hi2, b2 - (b - L), b2 + (U - b), X2
    if name == "one_sided":
        L2, U2 = L.copy(), U.copy()
        L2[::2] = -np.inf
        U2[1::2] = np.inf
        return a, lo, hi, L2, U2, X
    if name == "corner":
        top = float(np.maximum(a * lo, a * hi).sum())
        X2 = np.broadcast_to(np.where(a > 0, hi, lo), X.shape).copy()
        L2 = np.full(n, top - 1.0 / 64)
        L2[::3] = top          # the slab is the corner itself
        return a, lo, hi, L2, np.full(n, np.inf), X2
    if name == "empty":
        reach = float(np.abs(a) @ hi)
        L2, U2, X2 = L.copy(), U.copy(), X.copy()
        L2[:3], U2[:3] = reach + 0.25, reach + 0.5
        X2[:3] = np.nan
        return a, lo, hi, L2, U2, X2
    assert name == "plain"
    return a, lo, hi, L, U, X


def _solve(a, lo, hi, L, U, batch):
    enabled = _batch_exact.ENABLED
    _batch_exact.ENABLED = batch
    try:
        return cc.BoxSlice(a[None, :], lo, hi).centers(method="exact", lower=L[:, None], upper=U[:, None])
    finally:
        _batch_exact.ENABLED = enabled


def _meb_radius(V, lo, s_box):
    if len(V) < 2:
        return 0.0
    shift = [Fraction(float(x)) for x in lo]
    Vn = np.array([[float((v - o) / Fraction(s_box)) for v, o in zip(row, shift)] for row in V])
    return meb_socp(Vn)[1] * s_box


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("d", [2, 3, 5])
def test_the_batch_route_bounds_the_exact_vertices_and_is_the_minimum_ball(name, d):
    a, lo, hi, L, U, X = family(name, d, n=8)
    s_box = float(np.max(0.5 * (hi - lo)))
    res = _solve(a, lo, hi, L, U, batch=True)
    batched = 0
    for i in range(L.size):
        V = exact_interval_vertices(a[None, :], [L[i]], [U[i]], lo, hi)
        st = Status(res.status_codes[i])
        where = f"{name} d={d} row {i}: {st.name}"
        if len(V) == 0:
            assert st == Status.INFEASIBLE, where
            continue
        assert st == Status.OPTIMAL, where
        c, r = res.centers[i], res.radii[i]
        assert r >= farthest(V, c) - TOL * s_box, f"{where}: radius {r} below a vertex"
        if not np.isnan(X[i, 0]):
            assert np.linalg.norm(X[i] - c) <= r + TOL * s_box, where + ": the planted record is outside"
        ref = _meb_radius(V, lo, s_box)
        # plus the proven forward-error widening the row reports (docs/theory.md §6.8)
        fe = float(np.nan_to_num(res.extras["forward_error"][i])) if "forward_error" in res.extras else 0.0
        assert r <= ref * (1 + 2e-6) + TOL * s_box + fe, f"{where}: radius {r} above the minimum ball's {ref}"
        assert res.extras["radius_lower"][i] <= ref * (1 + 2e-6) + TOL * s_box, where
        batched += res.extras["route"][i] == ROUTE_SLAB
    assert batched > 0 or name == "corner", "no row took the slab route"


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("d", [3, 8, 11])
def test_the_batch_route_agrees_with_the_row_route(name, d):
    a, lo, hi, L, U, _ = family(name, d, n=40, seed=5)
    fast, slow = _solve(a, lo, hi, L, U, batch=True), _solve(a, lo, hi, L, U, batch=False)
    np.testing.assert_array_equal(fast.status_codes, slow.status_codes)
    ok = fast.status_codes == Status.OPTIMAL
    r1, r2 = fast.radii[ok], slow.radii[ok]
    scale = float(np.max(hi - lo))
    assert np.all(np.abs(r1 - r2) <= 2 * GAP * (scale + r2) + 1e-15 * scale), np.max(np.abs(r1 - r2))
    np.testing.assert_array_equal(fast.extras["n_vertices"][ok] > 0, True)


def test_every_row_of_a_large_batch_is_certified_by_the_batch_route():
    """At d = 10 with 400 right-hand sides (the bench's case), the kernel certifies nearly
    every row itself (measured: 397 to 399; a degenerate support leaves a row to the row
    route): a kernel that never certified would hide behind the row route's correct but
    slow answers."""
    rng = np.random.default_rng(3)
    d = 10
    a = rng.standard_normal(d)
    X = rng.random((400, d))
    b = X @ a
    calls = []
    orig = _batch_exact.batch_slab

    def spy(core, grp, k, *args):
        done = orig(core, grp, k, *args)
        calls.append(int(done.sum()))
        return done

    import chebcenter.methods.exact as exact
    exact.batch_slab, saved = spy, exact.batch_slab
    try:
        res = cc.BoxSlice(a[None, :]).centers(method="exact", lower=(b - 0.02)[:, None], upper=(b + 0.02)[:, None])
    finally:
        exact.batch_slab = saved
    assert np.all(res.status_codes == Status.OPTIMAL)
    assert len(calls) == 1 and calls[0] >= 380, calls
    r = np.linalg.norm(X - res.centers, axis=1)
    assert np.all(r <= res.radii * (1 + 1e-12))


def test_a_slabs_feasible_point_is_in_the_slab_in_closed_form():
    """The lifting's point of a slab (no LP, no projection: x = t sign(a) w with t the
    interval's midpoint over the row's reach) lies in the box and on the interval's
    midpoint, for intervals anywhere in the reach, at its ends included."""
    import chebcenter._core.lifting as lifting

    rng = np.random.default_rng(8)
    a = rng.standard_normal(7)
    P = cc.BoxSlice(a[None, :], -rng.random(7), 1 + rng.random(7))
    P.centers(method="half", lower=[[0.0]], upper=[[0.1]])      # builds the core
    core = P._core
    reach = float(np.abs(core.A[0]) @ core.hi)
    mids = np.r_[np.linspace(-reach, reach, 11), -reach, reach]
    L, U = (mids - 0.01 * reach)[:, None], (mids + 0.01 * reach)[:, None]
    tau = core.bound_tol(L, U)
    Lp, Up, empty, eq, _ = lifting.clamp(core, L, U, tau)
    (rows, grp), = list(lifting.groups(core, Lp, Up, tau, eq, empty))
    Y = grp.feasible_points(np.arange(rows.size))
    X = grp.invert(Y)
    assert np.all(np.abs(X) <= core.hi * (1 + 1e-15))
    ax = X @ grp.AI[0]
    np.testing.assert_allclose(ax, 0.5 * (grp.Lo[:, core.d] + grp.Hi[:, core.d]), atol=1e-14 * reach)
