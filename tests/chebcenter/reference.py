"""Independent routes the library is checked against (never imported by chebcenter).

Each is written from the definitions in docs/theory.md with different algorithms than
the library: brute-force vertex enumeration in u-space over p-subsets of the 2d
box faces, the minimum enclosing ball as an SOCP, the RCC1 *primal* SDP, and
the RCC2 projection as a cvxpy QP.
"""

from __future__ import annotations

import itertools
import warnings

import cvxpy as cp
import numpy as np


def null_space(A, d):
    """Orthonormal basis of Null(A) and q-map, by numpy's SVD (tolerance as numpy)."""
    if A.shape[0] == 0:
        return np.eye(d), np.zeros((d, 0)), 0
    r = np.linalg.matrix_rank(A)
    _, _, Vt = np.linalg.svd(A)
    return Vt[r:].T, np.linalg.pinv(A), r


def brute_vertices(A, b, lo, hi, tol=1e-9):
    """Vertices of S_F: u-space, every p-subset of faces a_i^T u = lo_i - q_i or hi_i - q_i."""
    d = A.shape[1]
    W, pinv, r = null_space(A, d)
    q = pinv @ b if A.shape[0] else np.zeros(d)
    p = d - r
    if p == 0:
        inside = np.all(q >= lo - tol) and np.all(q <= hi + tol)
        return q[None, :] if inside else np.zeros((0, d))
    found = []
    for rows in itertools.combinations(range(d), p):
        M = W[list(rows)]
        if abs(np.linalg.det(M)) < 1e-9:
            continue
        for sides in itertools.product((0, 1), repeat=p):
            rhs = np.array([(lo if s == 0 else hi)[i] - q[i] for i, s in zip(rows, sides)])
            x = q + W @ np.linalg.solve(M, rhs)
            if np.all(x >= lo - tol) and np.all(x <= hi + tol):
                found.append(np.clip(x, lo, hi))
    if not found:
        return np.zeros((0, d))
    V = np.array(found)
    keep = []
    for v in V:
        if not any(np.max(np.abs(v - w)) < 1e-7 for w in keep):
            keep.append(v)
    return np.array(keep)


def meb_socp(V):
    """Minimum enclosing ball of the rows of V: min t s.t. ||v_j - c|| <= t (Clarabel)."""
    c = cp.Variable(V.shape[1])
    t = cp.Variable()
    prob = cp.Problem(cp.Minimize(t), [cp.norm(V[j] - c) <= t for j in range(V.shape[0])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL")
    return c.value, float(t.value)


def rcc1_primal(A, b, lo, hi):
    """RCC1 from the primal SDP (docs/theory.md §1 / papers.md §1.5): max Tr(D) - ||u||^2.

    Constraints ``a_i^T D a_i + 2 (q_i - m_i) a_i^T u + (q_i - lo_i)(q_i - hi_i) <= 0``
    and ``[[D, u], [u^T, 1]] >= 0``. Returns (x, eta).
    """
    x, eta, _ = rcc1_primal_checked(A, b, lo, hi)
    return x, eta


def rcc1_primal_checked(A, b, lo, hi):
    """:func:`rcc1_primal` with its point's largest constraint violation: ``(x, eta, viol)``.

    On near-point slices with a nearly free coordinate the solver can return garbage
    (measured: eta = -4e28 with constraints violated by 9e16, one instance in 600 of the
    segment strategy). A point whose violation is at rounding level is feasible, so its
    value is a true lower bound on the relaxation's optimum, which every certified eta
    must reach."""
    d = A.shape[1]
    W, pinv, r = null_space(A, d)
    q = pinv @ b
    p = d - r
    mid = 0.5 * (lo + hi)
    Z = cp.Variable((p + 1, p + 1), PSD=True)
    D, u = Z[:p, :p], Z[:p, p]
    cons = [Z[p, p] == 1]
    for i in range(d):
        a = W[i]
        cons.append(a @ D @ a + 2 * (q[i] - mid[i]) * (a @ u) + (q[i] - lo[i]) * (q[i] - hi[i]) <= 0)
    prob = cp.Problem(cp.Maximize(cp.trace(D) - cp.sum_squares(u)), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="CLARABEL")
        except cp.error.SolverError:
            pass
        if u.value is None:  # Clarabel gives up on some point-like slices; SCS does not
            prob.solve(solver="SCS", eps=1e-10, max_iters=200_000)
    if Z.value is None:  # both solvers gave up: no reference at all
        return np.full(d, np.nan), np.nan, np.inf
    Zv = 0.5 * (Z.value + Z.value.T)
    Dv, uv = Zv[:p, :p], Zv[:p, p]
    viol = max(-np.linalg.eigvalsh(Zv)[0], abs(Zv[p, p] - 1.0))
    for i in range(d):
        a = W[i]
        viol = max(viol, a @ Dv @ a + 2 * (q[i] - mid[i]) * (a @ uv) + (q[i] - lo[i]) * (q[i] - hi[i]))
    return q + W @ u.value, float(prob.value), float(viol)


def rcc2_qp(A, b, lo, hi):
    """RCC2 as the QP ``min ||x - m||^2 s.t. A x = b, lo <= x <= hi`` (Clarabel)."""
    x = cp.Variable(A.shape[1])
    mid = 0.5 * (lo + hi)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - mid)), [A @ x == b, x >= lo, x <= hi])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL")
    return x.value


def worst_error(V, c):
    """max_j ||v_j - c||: the worst-case error of estimate c over the vertices V."""
    return float(np.max(np.linalg.norm(V - c, axis=1)))


def assert_center_close(V, c, lower, c_ref, slack=1e-12):
    """Strong convexity of f(c) = max_j ||v_j - c||^2 (modulus 1) gives, with a lower
    bound ``lower`` on the optimal radius, ``||c - c*|| <= sqrt(f(c) - lower^2)``. So
    two near-optimal centers are close by ``sqrt(f(c) - l^2) + sqrt(f(c_ref) - l^2)``.
    Also checks that ``c`` is not worse than ``c_ref`` (up to ``slack``)."""
    f = worst_error(V, c) ** 2
    f_ref = worst_error(V, c_ref) ** 2
    assert np.sqrt(f) <= np.sqrt(f_ref) + slack
    bound = np.sqrt(max(f - lower ** 2, 0.0)) + np.sqrt(max(f_ref - lower ** 2, 0.0)) + 1e-12
    assert np.linalg.norm(c - c_ref) <= bound
