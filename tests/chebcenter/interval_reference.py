"""Independent routes for the bounded-error sets ``S = {x in [lo, hi] : L <= A x <= U}``
(never imported by chebcenter), written from docs/theory.md §8 with other algorithms than
the library's lifted box slices:

* the vertices by brute force in x-space: every choice of d active constraints among the
  2 d box faces and the finite interval faces (``a_j^T x = L_j`` or ``U_j``), solved with
  numpy, kept when they satisfy every constraint;
* their minimum enclosing ball as an SOCP (tests/chebcenter/reference.py);
* the RCC1 primal SDP in x-space with every box row and every interval row a quadratic
  ``(a^T x - l)(a^T x - u) <= 0`` (an infinite side replaced by what ``a^T x`` reaches over
  the box, as docs/theory.md §8.3 defines it);
* RCC2 as a cvxpy QP; the feature ranges by HiGHS.
"""

from __future__ import annotations

import itertools
import warnings

import cvxpy as cp
import numpy as np
from scipy.optimize import linprog


def clamped(A, L, U, lo, hi):
    """The intervals with an infinite side replaced by the box's reach (same set)."""
    low = np.minimum(A * lo, A * hi).sum(axis=1)
    high = np.maximum(A * lo, A * hi).sum(axis=1)
    return np.maximum(L, low), np.minimum(U, high)


def brute_vertices(A, L, U, lo, hi, tol=1e-9):
    """Every vertex of S: d independent active constraints, feasible within ``tol``."""
    d = A.shape[1]
    faces = [(np.eye(d)[i], lo[i]) for i in range(d)] + [(np.eye(d)[i], hi[i]) for i in range(d)]
    for j in range(A.shape[0]):
        for v in (L[j], U[j]):
            if np.isfinite(v):
                faces.append((A[j], v))
    found = []
    scale = 1.0 + np.abs(A).sum(axis=1) * np.max(np.abs(np.concatenate([lo, hi])))
    for choice in itertools.combinations(range(len(faces)), d):
        M = np.array([faces[c][0] for c in choice])
        if abs(np.linalg.det(M)) < 1e-10:
            continue
        x = np.linalg.solve(M, np.array([faces[c][1] for c in choice]))
        ax = A @ x
        if np.all(x >= lo - tol) and np.all(x <= hi + tol) and np.all(ax >= L - tol * scale) and np.all(ax <= U + tol * scale):
            if not any(np.linalg.norm(x - f) <= 1e-9 * (1 + np.linalg.norm(x)) for f in found):
                found.append(x)
    return np.array(found).reshape(-1, d)


def rcc1_sdp(A, L, U, lo, hi, origin=None):
    """``max tr(D) - ||u||^2`` over ``[[D, u], [u^T, 1]] >= 0`` and the quadratic rows, in the
    coordinates ``x = q + N u`` of the rows with ``L = U`` and the fixed coordinates (an SDP
    with a zero-width row has no interior), by Clarabel at a 1e-10 gap (its defaults where that fails).
    With ``origin`` (a point of the set) u is measured from it and each row is divided by its
    squared half-width: the same SDP (RCC1 does not depend on the origin, and a scaled
    constraint has the same feasible set), well scaled on sets 1e-4 thin. Returns ``(x, eta)``."""
    d = A.shape[1]
    Lc, Uc = clamped(A, L, U, lo, hi)
    eq = Lc == Uc
    fixed = lo == hi
    E = np.vstack([A[eq], np.eye(d)[fixed]])
    e = np.concatenate([Lc[eq], lo[fixed]])
    if E.shape[0] and origin is not None:
        q = np.asarray(origin, dtype=float)
        _, s, Vt = np.linalg.svd(E)
        N = Vt[int(np.sum(s > 1e-12 * s[0])):].T
    elif E.shape[0]:
        q = np.linalg.lstsq(E, e, rcond=None)[0]
        _, s, Vt = np.linalg.svd(E)
        N = Vt[int(np.sum(s > 1e-12 * s[0])):].T
    else:
        q, N = (np.zeros(d) if origin is None else np.asarray(origin, dtype=float)), np.eye(d)
    p = N.shape[1]
    rows = [(np.eye(d)[i], lo[i], hi[i]) for i in range(d) if not fixed[i]]
    rows += [(A[j], Lc[j], Uc[j]) for j in range(A.shape[0]) if not eq[j]]
    Z = cp.Variable((p + 1, p + 1), PSD=True)
    D, u = Z[:p, :p], Z[:p, p]
    cons = [Z[p, p] == 1]
    for a, l, h in rows:   # (a^T x - l)(a^T x - h) <= 0 with a^T x = a^T q + (N^T a)^T u
        g, o = N.T @ a, a @ q
        w2 = 1.0 if origin is None else (0.5 * (h - l)) ** 2
        cons.append((g @ D @ g + (2 * o - l - h) * (g @ u) + (o - l) * (o - h)) / w2 <= 0)
    prob = cp.Problem(cp.Maximize(cp.trace(D) - cp.sum_squares(u)), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        except cp.error.SolverError:   # sets 1e-4 wide (a box corner): its default tolerances
            prob.solve(solver="CLARABEL")
    return q + N @ np.asarray(u.value), float(prob.value)


def rcc2_qp(A, L, U, lo, hi):
    """``argmin ||x - m||^2`` over S (Clarabel)."""
    x = cp.Variable(A.shape[1])
    cons = [x >= lo, x <= hi]
    fin_l, fin_u = np.isfinite(L), np.isfinite(U)
    if fin_l.any():
        cons.append(A[fin_l] @ x >= L[fin_l])
    if fin_u.any():
        cons.append(A[fin_u] @ x <= U[fin_u])
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - 0.5 * (lo + hi))), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL")
    return np.asarray(x.value)


def highs_ranges(A, L, U, lo, hi):
    """``[min x_i, max x_i]`` over S by HiGHS, or None if S is empty."""
    d = A.shape[1]
    fin_l, fin_u = np.isfinite(L), np.isfinite(U)
    G = np.vstack([A[fin_u], -A[fin_l]])
    h = np.concatenate([U[fin_u], -L[fin_l]])
    out = np.empty((2, d))
    for i in range(d):
        for k, sign in enumerate((1.0, -1.0)):
            c = np.zeros(d)
            c[i] = sign
            res = linprog(c, A_ub=G if G.size else None, b_ub=h if G.size else None, bounds=list(zip(lo, hi)),
                          method="highs")
            if res.status != 0:
                return None
            out[k, i] = res.x[i]
    return out
