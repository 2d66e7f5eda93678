"""numba kernels against plain numpy."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import TOL

import chebcenter as cc
from chebcenter.kernels import closed_forms, linalg, projection


@pytest.mark.parametrize("m,d,N", [(1, 5, 10), (3, 8, 100), (6, 6, 7), (9, 32, 50)])
def test_prepare_rows_matches_numpy(m, d, N):
    rng = np.random.default_rng(m * d)
    A = rng.standard_normal((m, d))
    B = rng.standard_normal((N, m))
    lo, hi = np.zeros(d), np.ones(d)
    P = cc.BoxSlice(A, lo, hi)
    Q, H = np.empty((N, d)), np.empty((N, d))
    res, viol = np.empty(N), np.empty(N)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = int(np.sum(s > s[0] * max(m, d) * np.finfo(float).eps))
    closed_forms.prepare_rows(B, np.ascontiguousarray(U[:, :r]), s[:r], np.ascontiguousarray(Vt[:r]), P.p_mid, lo, hi,
                   Q, H, res, viol)
    pinv = np.linalg.pinv(A)
    Qn = B @ pinv.T
    Hn = Qn + 0.5 - 0.5 * (pinv @ A @ np.ones(d))
    np.testing.assert_allclose(Q, Qn, atol=TOL["closed_form"])
    np.testing.assert_allclose(H, Hn, atol=TOL["closed_form"])
    np.testing.assert_allclose(res, np.linalg.norm(Qn @ A.T - B, axis=1), atol=TOL["closed_form"])
    np.testing.assert_allclose(viol, np.maximum(np.max(np.maximum(lo - Hn, Hn - hi), axis=1), 0),
                               atol=TOL["closed_form"])


def test_ball_radii_and_box_violation_match_numpy():
    rng = np.random.default_rng(0)
    H = rng.standard_normal((20, 4))
    mid = np.full(4, 0.5)
    out = np.empty(20)
    closed_forms.ball_radii(H, mid, 1.0, out)
    np.testing.assert_allclose(out, np.sqrt(np.maximum(1.0 - np.sum((H - mid) ** 2, axis=1), 0)))
    for h in H:
        assert closed_forms.box_violation(h, np.zeros(4), np.ones(4)) == pytest.approx(max(0.0, np.max(np.maximum(-h, h - 1))))


def test_forward_substitution_both_layouts():
    rng = np.random.default_rng(1)
    L = np.tril(rng.standard_normal((5, 5))) + 5 * np.eye(5)
    rhs = rng.standard_normal(5)
    out = np.empty(5)
    linalg.forward_substitute(L, rhs, out, 5, False)
    np.testing.assert_allclose(L @ out, rhs, atol=1e-12)
    linalg.forward_substitute(L.T.copy(), rhs, out, 5, True)   # the upper factor's transpose is L
    np.testing.assert_allclose(L @ out, rhs, atol=1e-12)


def test_projection_kernel_certifies_empty_sets():
    """x1 + x2 = t misses the unit square for t > 2: the dual grows past the largest primal
    value, which proves emptiness; t = 2 (a corner) is projected, not called empty."""
    Vr = np.array([[1.0, 1.0]]) / np.sqrt(2)
    X = np.empty((4, 2))
    state = np.full(4, -1, dtype=np.int64)
    its = np.zeros(4, dtype=np.int64)
    beta = np.array([[3.0], [2.0 + 1e-6], [2.0], [1e6]]) / np.sqrt(2)
    projection.project_rows(np.full(2, 0.5), Vr, beta, np.zeros(2), np.ones(2), X, state, its, 200, 1e-11)
    assert state.tolist() == [projection.EMPTY, projection.EMPTY, projection.PROJECTED, projection.EMPTY]
    np.testing.assert_allclose(X[2], [1.0, 1.0], atol=1e-11)


def test_closed_forms_batch_equals_numpy():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((3, 10))
    X = rng.random((1000, 10))
    B = X @ A.T
    P = cc.BoxSlice(A)
    pinv = np.linalg.pinv(A)
    proj = np.eye(10) - pinv @ A
    np.testing.assert_allclose(P.centers(B, "ls").centers, B @ pinv.T, atol=TOL["closed_form"])
    np.testing.assert_allclose(P.centers(B, "half_star").centers, B @ pinv.T + proj @ np.full(10, 0.5),
                               atol=TOL["closed_form"])
    np.testing.assert_array_equal(P.centers(B, "half").centers, 0.5)


def test_check_rows_matches_numpy_and_skips_nan_rows():
    rng = np.random.default_rng(4)
    A, C, B = rng.standard_normal((3, 6)), rng.uniform(-0.5, 1.5, (10, 6)), rng.standard_normal((10, 3))
    C[3] = np.nan
    res, viol = np.full(10, -1.0), np.full(10, -1.0)
    closed_forms.check_rows(C, A, B, np.zeros(6), np.ones(6), res, viol)
    ok = np.arange(10) != 3
    np.testing.assert_allclose(res[ok], np.linalg.norm(C[ok] @ A.T - B[ok], axis=1), atol=TOL["closed_form"])
    np.testing.assert_allclose(viol[ok], np.maximum(np.max(np.maximum(-C[ok], C[ok] - 1), axis=1), 0))
    assert res[3] == -1.0 and viol[3] == -1.0


def test_row_threads_hold_blas_to_one_thread_and_restore_it_with_overlapping_batches():
    """While row_blocks runs its threads BLAS is limited to one thread (no 2 x 2 threads on
    2 cores); afterwards BLAS's own setting is back, also when batches of two user threads
    overlap (they take turns), and a row_blocks inside a row thread runs inline."""
    import threading

    import numba
    from threadpoolctl import threadpool_info

    from chebcenter.kernels.parallel import row_blocks

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread: row_blocks runs inline")

    def blas_threads():
        return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})

    before = blas_threads()
    seen, nested = [], []
    entered, hold = threading.Event(), threading.Event()

    def held(a, b):
        entered.set()
        assert hold.wait(timeout=60)

    old = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        row_blocks(4, 1, lambda a, b: seen.append(blas_threads()))
        assert len(seen) == 2 and all(s == [1] for s in seen)
        assert blas_threads() == before
        row_blocks(2, 1, lambda a, b: row_blocks(4, 1, lambda c, e: nested.append((c, e))))
        assert sorted(nested) == [(0, 4), (0, 4)]                        # inline: one call per row thread
        other = threading.Thread(target=row_blocks, args=(2, 1, held))   # batch A holds its threads
        other.start()
        assert entered.wait(timeout=60)
        later = threading.Thread(target=row_blocks, args=(4, 1, lambda a, b: seen.append(blas_threads())))
        later.start()                                                    # batch B waits for its turn
        later.join(timeout=0.5)
        assert later.is_alive()
        hold.set()
        other.join(timeout=60)
        later.join(timeout=60)
        assert all(s == [1] for s in seen)
    finally:
        hold.set()
        numba.set_num_threads(old)
    assert blas_threads() == before


@pytest.mark.parametrize("r", [1, 3, 8])
def test_gauss_jordan_inverse_matches_numpy_and_flags_singular_bases(r):
    """The bases' inverse (Gauss-Jordan with partial pivoting by the simplex's pivot): on a
    well-scaled matrix whose diagonal is zero (every column needs a row swap), the error is
    within the textbook bound ``r^3 kappa eps ||M^-1||`` (kappa the matrix's condition, the
    growth factor taken at its worst, r); a rank-deficient matrix returns False."""
    from chebcenter.kernels.vertices import _lu_inverse

    rng = np.random.default_rng(r)
    Q, _ = np.linalg.qr(rng.standard_normal((r, r)))
    M = Q @ np.diag(rng.uniform(1.0, 2.0, r))
    M = M[np.roll(np.arange(r), 1)] if r > 1 else M
    M[np.arange(r), np.arange(r)] = 0.0 if r > 1 else M[0, 0]
    kappa = np.linalg.cond(M)
    out = np.empty((r, r))
    assert _lu_inverse(M, out, 1e-14)
    ref = np.linalg.inv(M)
    bound = r ** 3 * kappa * np.finfo(float).eps * np.linalg.norm(ref, 2)
    assert np.max(np.abs(out - ref)) <= bound
    if r > 1:
        S = M.copy()
        S[-1] = S[0]   # two equal rows
        assert not _lu_inverse(S, out, 1e-14)


def test_distinct_rows_keeps_the_first_of_each_grid_key_in_order():
    """Against the definition, by brute force: row i is kept when no earlier row rounds to
    the same key ``round(v / tol)`` (tol per coordinate), and the kept rows keep their order;
    clustered rows, exact copies, and -0.0 beside 0.0 (one key)."""
    from chebcenter.kernels.vertices import distinct_rows

    rng = np.random.default_rng(4)
    base = rng.integers(-3, 4, size=(40, 5)).astype(float)
    V = base[rng.integers(0, 40, size=400)] * 1e-3
    V[::7] += 1e-15 * rng.standard_normal((V[::7].shape[0], 5))
    V[5, :], V[6, :] = 0.0, -0.0
    tol = np.array([1e-9, 1e-9, 2e-9, 1e-9, 5e-10])
    keys = np.round(V / tol)
    keys[keys == 0.0] = 0.0
    want = [i for i in range(V.shape[0]) if not any(np.array_equal(keys[i], keys[j]) for j in range(i))]
    np.testing.assert_array_equal(distinct_rows(V, tol), V[want])
    np.testing.assert_array_equal(distinct_rows(V[:1], tol), V[:1])
