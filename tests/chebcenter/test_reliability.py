"""Regression tests: each reproduction of the reliability report, numbered as there.

Every expected value here comes from an independent route (brute-force vertices, the
SOCP enclosing ball, a closed form), never from the library's own output.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from reference import brute_vertices, meb_socp

import chebcenter as cc


def _worst(A, b, lo, hi, c):
    V = brute_vertices(np.asarray(A, float), np.asarray(b, float), np.asarray(lo, float), np.asarray(hi, float))
    return float(np.max(np.linalg.norm(V - c, axis=1)))


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_1_rcc1_radius_is_a_bound_with_determined_coordinates(zero):
    """Coordinates 3, 4 are fixed by A x = b (W's rows there are rounding noise); rcc1 used
    to lean on their box constraints and report 0.335 for a worst-case error of 0.855."""
    lo = [-1.6779217762711038, -1.6916463691857744, -1.6433155081214077, -1.7379863040913879]
    hi = [-1.1265615754601472, -0.8488732484822651, 0.843065009045936, -1.1861232330097309]
    A = [[zero, zero, -0.4770003752146489, 1.6103536406539656], [zero, zero, -1.192320014490662, zero]]
    b = [-1.2466143170050286, 1.9593579704560464]
    r = cc.BoxSlice(A, lo, hi).center(b, "rcc1")
    assert r.ok
    assert r.radius >= _worst(A, b, lo, hi, r.center) - 1e-12
    assert r.in_slice(1e-9)


@pytest.mark.parametrize("s", [1.0, 1e-8, 1e-9, 1e-12, 1e12])
def test_2_exact_is_scale_equivariant(s):
    """x1 + 2 x2 + 3 x3 = 2 s in [0, s]^3: radius / s is the same at every s (it was 0 at 1e-9)."""
    V = brute_vertices(np.array([[1.0, 2, 3]]), np.array([2.0]), np.zeros(3), np.ones(3))
    rstar = meb_socp(V)[1]
    r = cc.BoxSlice([[1, 2, 3]], 0, s).center([2 * s], "exact")
    assert r.status is cc.Status.OPTIMAL
    assert r.radius / s == pytest.approx(rstar, rel=2e-6)


def test_3_cls_with_a_fixed_coordinate_lies_in_the_slice():
    r = cc.BoxSlice([[2, -2]], lo=[0.2, 0], hi=[0.2, 1]).center([0.2], "cls")
    np.testing.assert_allclose(r.center, [0.2, 0.1], atol=1e-15)
    assert r.in_slice(1e-12)


def test_3_fixed_coordinates_random_draws_every_method():
    rng = np.random.default_rng(5)
    for _ in range(200):
        d = int(rng.integers(2, 6))
        A = rng.standard_normal((1, d))
        lo = rng.uniform(-1, 0, d)
        hi = lo + rng.uniform(0.1, 1, d)
        k = rng.integers(d)
        hi[k] = lo[k]
        x = lo + (hi - lo) * rng.random(d)
        for method in ("cls", "rcc1", "rcc2", "exact"):
            r = cc.BoxSlice(A, lo, hi).center(A @ x, method)
            assert r.status is cc.Status.OPTIMAL and r.in_slice(1e-9), (method, r.max_violation)
            assert r.center[k] == lo[k]


def test_5_batch_rows_equal_rows_solved_alone():
    """Warm starts inside a chunk may save steps but never change an answer."""
    rng = np.random.default_rng(21)
    A = rng.standard_normal((4, 20))
    X = rng.random((600, 20))
    mask = rng.random(X.shape) < 0.7
    X[mask] = np.round(X[mask])
    B = X @ A.T
    P = cc.BoxSlice(A)
    batch = P.centers(B, "rcc1")
    alone = P.centers(B, "rcc1", warm_chunk=1)
    ok = (batch.status_codes == 0) & (alone.status_codes == 0)
    assert ok.mean() > 0.95
    assert np.max(batch.box_violations[batch.ok]) == 0.0
    rel = batch.residuals / (np.linalg.norm(A, 2) * (np.linalg.norm(batch.centers, axis=1) + 1) + np.linalg.norm(B, axis=1))
    assert np.max(rel[batch.ok]) <= 1e-9
    # the RCC1 optimum is unique in eta; centers agree where the certificate is tight
    np.testing.assert_allclose(batch.radii[ok], alone.radii[ok], rtol=1e-6, atol=1e-8)


def test_6_cvxpy_route_keeps_the_contract_on_corner_slices():
    """Slices through a box corner on the cvxpy route: OPTIMAL rows lie in S_F and keep the
    ordering r_rcc1 <= r_rcc2; the first call equals later identical calls."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((2, 5))
    X = rng.random((8, 5))
    X[:, :3] = 1.0
    B = X @ A.T
    P = cc.BoxSlice(A)
    first = P.centers(B, "rcc1", solver="clarabel")
    again = P.centers(B, "rcc1", solver="clarabel")
    np.testing.assert_array_equal(first.status_codes, again.status_codes)
    np.testing.assert_allclose(first.radii, again.radii, rtol=1e-9)
    r2 = P.centers(B, "rcc2")
    for k in np.flatnonzero(first.status_codes == cc.Status.OPTIMAL):
        assert first[k].in_slice(1e-9)
        assert first.radii[k] <= r2.radii[k] * (1 + 1e-7) + 1e-5


@pytest.mark.parametrize("s", [1e-6, 1e-2, 1e3, 1e6])
def test_7_8_rcc1_scale_equivariant_and_below_R(s):
    A = np.random.default_rng(3).standard_normal((2, 4))
    ref = cc.BoxSlice(A).center(A @ np.full(4, 0.5), "rcc1")
    r = cc.BoxSlice(A, 0, s).center(A @ np.full(4, 0.5 * s), "rcc1")
    assert r.status is cc.Status.OPTIMAL and ref.status is cc.Status.OPTIMAL
    assert r.radius / s == pytest.approx(ref.radius, rel=1e-7)
    R = cc.BoxSlice(A, 0, s).center(A @ np.full(4, 0.5 * s), "half_star").radius
    assert r.radius <= R * (1 + 1e-9)


def test_9_exact_on_cospherical_vertices_is_certified():
    A = [[-2, 0, -1, 0, 0, 1], [-1, 1, -2, 0, 1, 0]]
    b = [-1.0219827735632854, 0.177382542530941]
    V = brute_vertices(np.array(A, float), np.array(b), np.zeros(6), np.ones(6))
    rstar = meb_socp(V)[1]
    r = cc.BoxSlice(A).center(b, "exact")
    assert r.status is cc.Status.OPTIMAL
    assert r.radius == pytest.approx(rstar, rel=2e-6)
    assert r.extras["radius_lower"] <= r.radius <= r.extras["radius_lower"] * (1 + 1e-9) + 1e-12
    assert r.in_slice(1e-9)


@pytest.mark.parametrize("method", cc.METHODS)
def test_10_empty_batch_returns_empty_arrays(method):
    r = cc.BoxSlice(np.ones((1, 3))).centers(np.zeros((0, 1)), method)
    assert len(r) == 0 and r.centers.shape == (0, 3) and r.radii.shape == (0,) and r.counts() == {}


def test_11_polytope_without_inequalities():
    r = cc.Polytope(np.zeros((0, 2)), np.zeros(0), A_eq=np.eye(2), b_eq=[.3, .4]).center("exact")
    assert r.status is cc.Status.OPTIMAL
    np.testing.assert_allclose(r.center, [.3, .4])
    assert r.radius == 0.0
    with pytest.raises(cc.InvalidInputError, match="unbounded"):
        cc.Polytope(np.zeros((0, 2)), np.zeros(0))


def test_12_threads_on_every_route_give_the_serial_result():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((2, 5))
    X = rng.random((6, 5))
    X[:, :3] = 1.0  # corner slices: the compiled route hands some rows to cvxpy
    B = X @ A.T
    P = cc.BoxSlice(A)
    calls = [("rcc1", {}), ("rcc1", {"solver": "clarabel"}), ("rcc2", {"solver": "clarabel"}),
             ("rcc2", {}), ("exact", {}), ("exact", {"algorithm": "bnb"}), ("cls", {}), ("half_star", {}),
             ("half", {}), ("ls", {}), ("auto", {})]
    _threads_agree(calls, lambda m, o: P.centers(B, m, **o), copies=4)


def _threads_agree(calls, solve, copies):
    """Each call ``solve(method, options)`` run ``copies`` times at once on user threads: no
    error, and the same statuses and centers (1e-9) as the call run alone."""
    serial = {i: solve(m, o) for i, (m, o) in enumerate(calls)}
    results, errors = {}, []

    def work(i, m, o):
        try:
            results[i] = solve(m, o)
        except Exception as exc:  # pragma: no cover - the failure this test guards
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(copies * i + k, m, o))
               for i, (m, o) in enumerate(calls) for k in range(copies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for j, r in results.items():
        ref = serial[j // copies]
        np.testing.assert_array_equal(r.status_codes, ref.status_codes)
        np.testing.assert_allclose(r.centers, ref.centers, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("method", cc.METHODS)
def test_13_nonfinite_rows_get_their_own_status(method):
    A = np.array([[1.0, 2.0, 3.0]])
    B = np.array([[2.0], [np.nan], [np.inf], [1.0], [7.0]])
    r = cc.BoxSlice(A).centers(B, method)
    assert r.status[1] is cc.Status.INVALID_INPUT and r.status[2] is cc.Status.INVALID_INPUT
    assert np.all(np.isnan(r.centers[1:3])) and np.all(np.isnan(r.radii[1:3]))
    assert r.status[4] is cc.Status.INFEASIBLE
    alone = cc.BoxSlice(A).centers(B[[0, 3]], method)
    np.testing.assert_array_equal(r.centers[[0, 3]], alone.centers)
    with pytest.raises(cc.InvalidInputError, match="b must be finite"):
        cc.BoxSlice(A).center([np.nan], method)


def test_14_empty_rows_are_certified_without_an_lp(monkeypatch):
    """Rows that miss the box are proven empty by the compiled dual (no HiGHS call)."""
    import scipy.optimize

    def no_lp(*args, **kwargs):  # pragma: no cover - the failure this test guards
        raise AssertionError("HiGHS was called")

    monkeypatch.setattr(scipy.optimize, "linprog", no_lp)   # chebcenter imports it where it calls it
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 10))
    X = rng.random((2000, 10))
    B = X @ A.T
    B[::50] += 50.0  # consistent (rank 3 = m) but far outside the box
    r = cc.BoxSlice(A).centers(B, "half_star")
    assert np.all(r.status_codes[::50] == cc.Status.INFEASIBLE)
    assert r.counts()["OPTIMAL"] == 2000 - 40


def test_contract_violation_is_downgraded_and_moved_into_the_slice():
    """A method whose center leaves S_F is never OPTIMAL: the row is moved into S_F, its
    radius grows by the move (still a bound) and the reason is recorded."""
    import dataclasses

    from chebcenter.methods import REGISTRY

    def broken(ctx):
        out = REGISTRY["rcc2"].run(ctx)   # whichever route the rows take
        out.centers[:, 0] += 0.3  # a solver bug: off S
        return out

    spec = dataclasses.replace(REGISTRY["rcc2"], name="broken", func=broken, routes=())
    A = np.array([[1.0, 1.0, 1.0]])
    P = cc.BoxSlice(A)
    B = np.array([[1.5], [1.0]])
    Bc = (B - P._offset) / P.scale
    opts = dict(spec.options)
    from chebcenter.methods.dispatch import solve

    centers, radii, codes, extras = solve(P._core, Bc, Bc, None, None, spec, opts, "status")
    assert np.all(codes == cc.Status.INACCURATE)
    assert all("moved into S_F" in s for s in extras["check"])
    X = P._to_original(centers)
    for k, b in enumerate(B):
        assert abs(X[k].sum() - b[0]) <= 1e-9 and np.all(X[k] >= 0) and np.all(X[k] <= 1)
        assert radii[k] * P.scale >= _worst(A, b, np.zeros(3), np.ones(3), X[k]) - 1e-9


@pytest.mark.parametrize("method", ["rcc2", "exact", "rcc1"])
def test_contract_violation_on_interval_rows_is_moved_into_the_set(method):
    """The one contract check holds interval rows too: a method whose center leaves
    S = {x in [0, 1]^3 : 1 <= x1 + x2 + x3 <= 1.5} is never OPTIMAL; the row is moved into S,
    its radius grows by the move and stays a bound (checked against the vertices of the two
    bounding slices, which with the box corners inside S, none here, are S's vertices)."""
    import dataclasses

    from chebcenter.methods import REGISTRY

    def broken(ctx):
        out = REGISTRY[method].run(ctx)   # whichever route the rows take
        out.centers += 0.6  # a solver bug: x1 + x2 + x3 grows by 1.8 half-widths, off S
        return out

    spec = dataclasses.replace(REGISTRY[method], name="broken", func=broken, routes=())
    A = np.array([[1.0, 1.0, 1.0]])
    P = cc.BoxSlice(A)
    L, U = np.array([[1.0], [0.2]]), np.array([[1.5], [0.9]])
    Lc, Uc = (L - P._offset) / P.scale, (U - P._offset) / P.scale
    tau = P._core.bound_tol(Lc, Uc, P._user_magnitude(L, U))
    from chebcenter.methods.dispatch import solve

    centers, radii, codes, extras = solve(P._core, Lc, Uc, tau, None, spec, dict(spec.options), "status")
    assert np.all(codes == cc.Status.INACCURATE), codes
    assert all("outside the set" in s for s in extras["check"])
    assert np.all(extras["moved"] > 0.0)
    X = P._to_original(centers)
    for k in range(2):
        assert L[k, 0] - 1e-9 <= X[k].sum() <= U[k, 0] + 1e-9 and np.all(X[k] >= 0) and np.all(X[k] <= 1)
        V = np.vstack([brute_vertices(A, b, np.zeros(3), np.ones(3)) for b in (L[k], U[k])])
        assert radii[k] * P.scale >= float(np.max(np.linalg.norm(V - X[k], axis=1))) - 1e-9


def test_a_method_that_answers_without_a_number_is_a_solver_error():
    """An OPTIMAL row with a NaN center is not an answer: the contract check makes it
    SOLVER_ERROR and says why (slices and interval rows alike)."""
    import dataclasses

    from chebcenter.methods import REGISTRY

    def silent(ctx):
        out = REGISTRY["rcc2"].run(ctx)   # whichever route the rows take
        out.centers[0] = np.nan
        return out

    spec = dataclasses.replace(REGISTRY["rcc2"], name="silent", func=silent, routes=())
    P = cc.BoxSlice(np.array([[1.0, 1.0, 1.0]]))
    from chebcenter.methods.dispatch import solve

    for L, U in ((np.array([[0.5], [0.2]]), np.array([[0.5], [0.2]])), (np.array([[0.5], [0.2]]), np.array([[0.9], [0.7]]))):
        Lc, Uc = (L - P._offset) / P.scale, (U - P._offset) / P.scale
        tau = P._core.bound_tol(Lc, Uc, None)
        _, radii, codes, extras = solve(P._core, Lc, Uc, tau, None, spec, dict(spec.options), "status")
        assert codes.tolist() == [cc.Status.SOLVER_ERROR, cc.Status.OPTIMAL]
        assert np.isnan(radii[0]) and "no center" in extras["check"][0]


_BOX = (np.vstack([np.eye(2), -np.eye(2)]), np.ones(4))
BAD_INPUT = [
    ("rank_tol", lambda: cc.BoxSlice([[1.0, 2.0]], rank_tol="abc")),
    ("fast_path", lambda: cc.BoxSlice([[1.0, 2.0]]).center([1.0], "rcc1", fast_path="no")),
    ("return_vertices", lambda: cc.BoxSlice([[1.0, 2.0]]).center([1.0], "exact", return_vertices="no")),
    ("feas_tol", lambda: cc.Polytope(*_BOX, feas_tol=-1)),
    ("h", lambda: cc.Polytope(_BOX[0], _BOX[1] + 1j)),
    ("b_eq", lambda: cc.Polytope(*_BOX, b_eq=[1.0])),
    ("A_eq", lambda: cc.Polytope(*_BOX, A_eq=[[1.0, 0.0]])),
    ("h", lambda: cc.Polytope(_BOX[0], "abcd")),
    ("Qs", lambda: cc.QuadraticSet("abc", [[0, 0]], [1])),
    ("gs", lambda: cc.QuadraticSet([np.eye(2)], [[0, 1j]], [-1])),
    ("ts", lambda: cc.QuadraticSet([np.eye(2)], [[0, 0]], [np.nan])),
    ("lo", lambda: cc.BoxSlice([[1.0, 2.0]], lo="abc")),
    ("method", lambda: cc.BoxSlice([[1.0, 2.0]]).center([1.0], 3)),
]


@pytest.mark.parametrize("name,call", BAD_INPUT, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BAD_INPUT)])
def test_15_options_and_set_inputs_are_checked_and_named(name, call):
    with pytest.raises(cc.InvalidInputError, match=name):
        call()


def test_a_center_the_projection_cannot_move_goes_to_a_point_of_the_slice():
    """A slice that is a point at the feasibility tolerance, through a box corner (found by
    the ci profile): no rcc1 route certifies it and the compiled projection does not
    converge. The row used to end SOLVER_ERROR; it is now moved to a point of S_F,
    INACCURATE with the reason, its radius grown by the distance moved (still a bound).

    A is ill-conditioned (sigma_min 4e-9), so an LP point that meets ``Vr x = beta`` to
    HiGHS's 1e-7 can be 5e-8 off ``A x = b`` (measured on an AVX2 machine): more than the
    library's own membership test (each equation within its tau) allows. The point is now
    the box least-squares one, whose residual is at rounding level; the test holds it to
    ``1e-9 (sigma_max (||c|| + 1) + ||b||)``, on any machine."""
    A = np.array([[0.57103451, 1.43966201, -0.08314044, -1.19325978],
                  [0.48822934, 1.42404352, -0.13048956, -1.22439821],
                  [0.29557776, -0.69707931, 0.40056131, 0.9069587]])
    lo = np.array([-0.71564277, -0.57101178, 0.09799127, -0.72237015])
    hi = np.array([0.99245078, 1.13034463, 1.61778484, -0.01697137])
    x = np.array([0.99245078, 1.13034463, 1.61778484, -0.5939642])
    b = A @ x
    r = cc.BoxSlice(A, lo, hi).center(b, "rcc1")
    assert r.status is cc.Status.INACCURATE
    assert "point of S_F" in r.extras["check"]
    assert r.box_violation == 0.0
    sigma_max = np.linalg.norm(A, 2)
    assert r.residual <= 1e-9 * (sigma_max * (np.linalg.norm(r.center) + 1.0) + np.linalg.norm(b))
    # the radius bounds the distance to the planted point, which lies in S_F to rounding
    assert np.linalg.norm(r.center - x) <= r.radius


# --- the batch-level guarantees on interval rows (bounded-error sets, docs/theory.md §8) ---


@pytest.mark.parametrize("method, m", [("exact", 1), ("rcc2", 1), ("rcc2", 3), ("rcc1", 2)])
def test_interval_batch_rows_equal_rows_solved_alone(method, m):
    """The batch routes of interval rows (exact's slab kernel warm-starts each row from the
    last; rcc2's dual sweeps rows in blocks) never change an answer: the same statuses, and
    radii and centers as each row solved alone, to the certificates' gap (1e-9 relative;
    rcc1 to its documented 1e-6 on radii)."""
    rng = np.random.default_rng(31 + m)
    d = 8
    A = rng.standard_normal((m, d))
    X = rng.random((120, d))
    X[rng.random(X.shape) < 0.3] = 1.0     # records at box faces: degenerate supports
    B = X @ A.T
    P = cc.BoxSlice(A)
    batch = P.centers(method=method, lower=B - 0.05, upper=B + 0.05)
    alone = [P.centers(method=method, lower=B[i:i + 1] - 0.05, upper=B[i:i + 1] + 0.05) for i in range(B.shape[0])]
    codes = np.array([r.status_codes[0] for r in alone])
    np.testing.assert_array_equal(batch.status_codes, codes)
    ok = codes == cc.Status.OPTIMAL
    assert ok.mean() > 0.95
    radii = np.array([r.radii[0] for r in alone])
    rtol = 1e-6 if method == "rcc1" else 1e-9
    np.testing.assert_allclose(batch.radii[ok], radii[ok], rtol=rtol)
    if method != "rcc1":
        centers = np.array([r.centers[0] for r in alone])
        np.testing.assert_allclose(batch.centers[ok], centers[ok], atol=1e-7)
    assert np.all(np.linalg.norm(X - batch.centers, axis=1)[ok] <= batch.radii[ok] * (1 + 1e-9))


def test_interval_rows_on_threads_give_the_serial_result():
    """Calls from several user threads at once (each batch uses every core) on interval rows:
    the same statuses and centers as one at a time."""
    rng = np.random.default_rng(5)
    A = rng.standard_normal((1, 6))
    X = rng.random((40, 6))
    B = X @ A.T
    P = cc.BoxSlice(A)
    calls = [("exact", {}), ("rcc2", {}), ("rcc1", {}), ("cls", {}), ("auto", {})]
    _threads_agree(calls, lambda m, o: P.centers(method=m, lower=B - 0.1, upper=B + 0.1, **o), copies=3)
