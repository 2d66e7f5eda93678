"""Differential fuzz harness for chebcenter on bounded-error sets, against an exact reference.

Usage::

    python experiments/interval_fuzz.py [--seed S] [--per-family N] [--methods M ...]
                                        [--families F ...] [--json out.json] [--no-equiv]

The sets are S = {x in [lo, hi]^d : L <= A x <= U} (L, U of shape (N, m); +-inf entries make
a row one-sided or vacuous; L == U rows are equations), solved by
``BoxSlice(A, lo, hi).centers(method=M, lower=L, upper=U)`` for every method M and by
``.feature_ranges(lower=L, upper=U)``. Only the public API (BoxSlice, Status) is used.

The reference (independent of the library)
------------------------------------------
Every number the generators produce is a double, and every double is a dyadic rational, so
``fractions.Fraction(x)`` is its exact value. Most families draw data on coarse dyadic grids
(A in multiples of 1/8, the box in 1/16, the planted point in 1/2^14) so the integers stay
small; the scaled/offset/thin families end up with finer grids, which only makes the integers
longer. The reference is the *exact* set described by the doubles the library receives:

* Vertices. All data are scaled to integers (x = z / X, A -> A*D_A, bounds -> integers). A vertex
  has d linearly independent active faces; because box faces have unit normals, a basis is a
  set R of k interval rows, a set F of k free coordinates with det A[R, F] != 0 and every
  other coordinate at a box face. For each (R, F) the integer determinant D and adjugate are
  computed once (exact Fraction Gauss-Jordan), and every choice of faces gives D*z as an
  integer vector; it is kept if it satisfies every constraint, compared in integers. So the
  vertex set, emptiness (S bounded: no vertex <=> empty) and the exact feature ranges
  (coordinate-wise min/max over the vertices) carry no rounding at all. d <= 5, m <= 4.
* Chebyshev radius r* = radius of the minimum enclosing ball of the vertices (S is their
  convex hull). Solved as an SOCP by Clarabel (called directly; cvxpy as a fallback) on the
  vertices taken relative to their (rounded) exact centroid and scaled to unit size, then
  polished: the circumcenter of the support points in their affine hull, accepted when its
  barycentric weights are >= 0. It is certified by a bracket r_lo <= r* <= r_hi: r_hi =
  max_v ||v - c|| for the returned c (any c gives an upper bound) and r_lo^2 =
  sum_i lam_i ||v_i - sum_k lam_k v_k||^2 for the (clipped, normalised) dual weights lam (the
  MEB dual, any lam in the simplex gives a lower bound). Gap: ~1e-15 relative, up to ~1e-9
  on thin sets (clusters of nearly equal vertices); a row whose gap exceeds 1e-8 is not
  used for the `exact` check.
* Robust emptiness: an empty S is "robustly empty" when S relaxed by rho = 1e-6 W_eff in
  distance (each box face by rho, each row by rho*max|a_j| <= rho*||a_j||) is still empty,
  again by exact enumeration. Depth of a non-empty S: the smallest slack (distance to a face,
  rows normalised by ||a_j||; equations and fixed coordinates excluded) at the exact centroid
  of the vertices, in units of W_eff: a ball of that radius (relative) around the centroid
  is in S (restricted to the affine hull of the equations).

Units and tolerances
--------------------
W = largest box half-width max_i (hi_i - lo_i)/2; W_eff = W, or 1e-6*R when every coordinate
is fixed (R below; 1 if R = 0). R = max(|lo|, |hi|) is the coordinate magnitude: a center
reported as doubles is only known to about eps*R per coordinate (eps = 2.2e-16; an offset of
1e8 costs 2.2e-8 absolute), so every absolute comparison gets the floating-point allowance
FL = 16 * eps * sqrt(d) * max(R, W). Comparisons in units of W_eff:

  TOL = 1e-7 * W_eff + FL      bound, planted, membership, radius_lower, range containment
  GAP = 1e-6 (relative)        exact/auto optimality (r <= r*(1 + GAP) + FL), range width
                               (endpoints at most 1e-6 W_eff + FL outside the exact range),
                               scale equivariance (below).

Checks (one failure record per kind, method, row)
--------------------------------------------------
crash            the call raised. The batch is then re-run row by row; each row that raises on
                 its own is one crash (a batch that fails only as a batch counts once).
bad_output       status OPTIMAL/INACCURATE with a non-finite center or radius.
bound            OK status and r < max_v ||v - c|| - TOL (the radius does not bound S).
exact_low        exact/auto rows solved by exact with OPTIMAL: r > r_hi (1 + GAP) + FL, or
                 extras["radius_lower"] > r_hi + TOL.
planted          a planted point x* of S (the generating point if it is exactly in S, and two
                 random convex combinations of vertices) has ||x* - c|| > r + TOL.
membership       cls, rcc1, rcc2, exact, auto, project: the center violates a constraint
                 (exactly evaluated, rows normalised by ||a_j||) by more than TOL.
false_infeasible status INFEASIBLE while S is non-empty (the record keeps the depth).
false_feasible   OK status while S is robustly empty.
no_answer        TOO_LARGE / SOLVER_ERROR / INVALID_INPUT while S is non-empty (not in the brief's
                 list; recorded so that such rows are not silently dropped).
inacc_no_reason  status INACCURATE and extras["check"][i] is None (or missing).
ranges           feature_ranges OK rows: [lower, upper] misses the exact range by more than
                 TOL, or is wider than it by more than 1e-6 W_eff + FL. (false_infeasible /
                 false_feasible / crash are also counted for feature_ranges, as method "ranges".)
equiv_status,    every group also gets a mapped copy x -> s x + t (alternating between a dyadic
equiv_radius     s = 2^e with t = s * integer offset, exact, and a non-dyadic s in {1e-12,
                 1e-6, 1e6, 1e12} with t = s*F*u*v, F in 1e5..1e8, u ~ the box half-width,
                 rounded). The copy is checked in full like any instance (its own exact
                 reference, from its rounded data; the tables' "rows" count both), and
                 compared with the original row by row. The status must be
                 the same (not checked when the exact emptiness of the two sets differs or S
                 is empty but not robustly) and |r'/s - r| <= GAP*r + 1e-7*W_eff + FL + FL'/s
                 + 10*|r*'/s - r*| (the last term: the true radius change caused by rounding
                 the transformed data, computed exactly when needed). ls is exempt (its
                 center depends on the origin). Ranges: (lower' - t)/s vs lower, likewise.

Output: a table family x kind (all methods together), a table method x kind with rows tested
and status counts, the most severe failures, and (--json) up to 5 examples per
(family, kind, method) with the data to reproduce them.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import sys
import time
import warnings
import zlib
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy.optimize import nnls

from chebcenter import BoxSlice, Status

EPS = np.finfo(float).eps
TOL_REL = 1e-7
GAP = 1e-6
ROBUST_REL = 1e-6
ALL_METHODS = ("half", "ls", "half_star", "cls", "rcc1", "rcc2", "exact", "auto", "project")
IN_S_METHODS = {"cls", "rcc1", "rcc2", "exact", "auto", "project"}
KINDS = ("crash", "bad_output", "bound", "exact_low", "planted", "membership", "false_infeasible",
         "false_feasible", "no_answer", "inacc_no_reason", "ranges", "equiv_status", "equiv_radius")
OK_CODES = (int(Status.OPTIMAL), int(Status.INACCURATE))
INFEASIBLE = int(Status.INFEASIBLE)
CRASHED = -1


# ============================================================================================
# Instances
# ============================================================================================

@dataclass
class Group:
    """Rows sharing (A, lo, hi): one BoxSlice, one batch call per method."""
    A: np.ndarray            # (m, d)
    lo: np.ndarray           # (d,)
    hi: np.ndarray           # (d,)
    L: np.ndarray            # (n, m), may hold -inf
    U: np.ndarray            # (n, m), may hold +inf
    xs: np.ndarray | None    # (n, d) generating points (may not lie in S), or None
    note: str = ""
    refs: list = field(default_factory=list)
    mapped: tuple | None = None      # (s, t) when this group is the x -> s x + t copy of another

    @property
    def n(self):
        return self.L.shape[0]


def transform(g: Group, s: float, t: np.ndarray, note: str) -> Group:
    """The group mapped by x -> s x + t (s > 0): lo, hi -> s lo + t, L -> s L + A t."""
    At = g.A @ t
    with np.errstate(invalid="ignore"):
        L = s * g.L + At
        U = s * g.U + At
    return Group(g.A.copy(), s * g.lo + t, s * g.hi + t, L, U,
                 None if g.xs is None else s * g.xs + t, note)


# ============================================================================================
# Exact reference: vertex enumeration in integers
# ============================================================================================

def _fr(x):
    return None if not np.isfinite(x) else Fraction(float(x))


def _lcm_den(values):
    out = 1
    for v in values:
        if v is not None:
            out = math.lcm(out, v.denominator)
    return out


def _det_adj(M):
    """Exact determinant and adjugate (integer matrices) of a small integer matrix."""
    k = len(M)
    aug = [[Fraction(M[i][j]) for j in range(k)] + [Fraction(int(i == j)) for j in range(k)]
           for i in range(k)]
    det = Fraction(1)
    for col in range(k):
        piv = next((r for r in range(col, k) if aug[r][col] != 0), None)
        if piv is None:
            return 0, None
        if piv != col:
            aug[col], aug[piv] = aug[piv], aug[col]
            det = -det
        p = aug[col][col]
        det *= p
        aug[col] = [v / p for v in aug[col]]
        for r in range(k):
            if r != col and aug[r][col] != 0:
                f = aug[r][col]
                aug[r] = [a - f * b for a, b in zip(aug[r], aug[col])]
    D = int(det)                      # integer matrix: det is an integer
    adj = [[int(aug[i][k + j] * det) for j in range(k)] for i in range(k)]
    if D < 0:
        D, adj = -D, [[-v for v in row] for row in adj]
    return D, adj


class ExactSet:
    """S = {x : lo <= x <= hi, L <= A x <= U} with Fraction data (None = infinite bound)."""

    def __init__(self, Af, lof, hif, Lf, Uf, basis_cache=None):
        self.m, self.d = len(Af), len(Af[0])
        self.Af, self.lof, self.hif, self.Lf, self.Uf = Af, lof, hif, Lf, Uf
        DA = _lcm_den([a for row in Af for a in row])
        self.Ai = [[int(a * DA) for a in row] for row in Af]
        X = _lcm_den(list(lof) + list(hif) + [v * DA if v is not None else None for v in Lf + Uf])
        self.X = X
        self.zlo = [int(v * X) for v in lof]
        self.zhi = [int(v * X) for v in hif]
        self.Lz = [None if v is None else int(v * DA * X) for v in Lf]
        self.Uz = [None if v is None else int(v * DA * X) for v in Uf]
        self.cache = {} if basis_cache is None else basis_cache   # (R, F) -> (D, adj): depends on A only

    def vertices(self):
        d, m, Ai = self.d, self.m, self.Ai
        zlo, zhi, Lz, Uz = self.zlo, self.zhi, self.Lz, self.Uz
        if any(zlo[i] > zhi[i] for i in range(d)):
            return []
        box_faces = [sorted({zlo[i], zhi[i]}) for i in range(d)]
        row_faces = [sorted({v for v in (Lz[j], Uz[j]) if v is not None}) for j in range(m)]
        faced = [j for j in range(m) if row_faces[j]]
        out = set()
        for k in range(0, min(len(faced), d) + 1):
            for R in itertools.combinations(faced, k):
                others = [j for j in range(m) if j not in R]
                for F in itertools.combinations(range(d), k):
                    key = (R, F)
                    if key not in self.cache:
                        self.cache[key] = _det_adj([[Ai[j][i] for i in F] for j in R]) if k else (1, [])
                    D, adj = self.cache[key]
                    if D == 0:
                        continue
                    B = [i for i in range(d) if i not in F]
                    for zB in itertools.product(*(box_faces[i] for i in B)):
                        base = [sum(Ai[j][i] * z for i, z in zip(B, zB)) for j in R]
                        for rv in itertools.product(*(row_faces[j] for j in R)):
                            rhs = [rv[q] - base[q] for q in range(k)]
                            Dz = [0] * d
                            for i, z in zip(B, zB):
                                Dz[i] = D * z
                            ok = True
                            for p, i in enumerate(F):
                                v = sum(adj[p][q] * rhs[q] for q in range(k))
                                if v < D * zlo[i] or v > D * zhi[i]:
                                    ok = False
                                    break
                                Dz[i] = v
                            if not ok:
                                continue
                            for j in others:
                                s = sum(a * z for a, z in zip(Ai[j], Dz))
                                if (Lz[j] is not None and s < D * Lz[j]) or (Uz[j] is not None and s > D * Uz[j]):
                                    ok = False
                                    break
                            if ok:
                                out.add(tuple(Fraction(v, D * self.X) for v in Dz))
        return sorted(out)

    def contains(self, xf):
        if any(x < l or x > h for x, l, h in zip(xf, self.lof, self.hif)):
            return False
        for j in range(self.m):
            s = sum(a * x for a, x in zip(self.Af[j], xf))
            if (self.Lf[j] is not None and s < self.Lf[j]) or (self.Uf[j] is not None and s > self.Uf[j]):
                return False
        return True

    def violation(self, c):
        """Largest exact violation of a float point c (rows normalised by ||a_j||)."""
        cf = [Fraction(float(v)) for v in c]
        worst = 0.0
        for x, l, h in zip(cf, self.lof, self.hif):
            worst = max(worst, float(l - x), float(x - h))
        for j in range(self.m):
            s = sum(a * x for a, x in zip(self.Af[j], cf))
            nrm = math.sqrt(sum(float(a) ** 2 for a in self.Af[j]))
            if nrm == 0:                    # a zero row: satisfied or violated by every point
                if (self.Lf[j] is not None and self.Lf[j] > 0) or (self.Uf[j] is not None and self.Uf[j] < 0):
                    worst = math.inf
                continue
            if self.Lf[j] is not None:
                worst = max(worst, float(self.Lf[j] - s) / nrm)
            if self.Uf[j] is not None:
                worst = max(worst, float(s - self.Uf[j]) / nrm)
        return worst

    def slack(self, xf):
        """Smallest slack at xf (normalised), ignoring equations and fixed coordinates."""
        best = math.inf
        for x, l, h in zip(xf, self.lof, self.hif):
            if l != h:
                best = min(best, float(x - l), float(h - x))
        for j in range(self.m):
            if self.Lf[j] is not None and self.Uf[j] is not None and self.Lf[j] == self.Uf[j]:
                continue
            s = sum(a * x for a, x in zip(self.Af[j], xf))
            nrm = math.sqrt(sum(float(a) ** 2 for a in self.Af[j]))
            if nrm == 0:
                continue
            if self.Lf[j] is not None:
                best = min(best, float(s - self.Lf[j]) / nrm)
            if self.Uf[j] is not None:
                best = min(best, float(self.Uf[j] - s) / nrm)
        return best

    def relaxed(self, rho: Fraction):
        Lr = [None if v is None else v - rho * max(abs(a) for a in row) for v, row in zip(self.Lf, self.Af)]
        Ur = [None if v is None else v + rho * max(abs(a) for a in row) for v, row in zip(self.Uf, self.Af)]
        return ExactSet(self.Af, [v - rho for v in self.lof], [v + rho for v in self.hif], Lr, Ur, self.cache)


# ============================================================================================
# Minimum enclosing ball (certified bracket)
# ============================================================================================

def _meb_socp(P):
    """min r s.t. ||p_i - c|| <= r; returns (c, lam) with lam the dual weights."""
    n, d = P.shape
    try:
        import clarabel
        import scipy.sparse as sp
        q = np.zeros(d + 1)
        q[d] = 1.0
        rows = []
        b = np.zeros(n * (d + 1))
        for i in range(n):
            blk = np.zeros((d + 1, d + 1))
            blk[0, d] = -1.0                # s_0 = r
            blk[1:, :d] = np.eye(d)         # s_1: = p_i - c
            rows.append(blk)
            b[i * (d + 1) + 1:(i + 1) * (d + 1)] = P[i]
        Am = sp.csc_matrix(np.vstack(rows))
        st = clarabel.DefaultSettings()
        st.verbose = False
        st.tol_gap_abs = st.tol_gap_rel = st.tol_feas = 1e-11
        sol = clarabel.DefaultSolver(sp.csc_matrix((d + 1, d + 1)), q, Am, b,
                                     [clarabel.SecondOrderConeT(d + 1)] * n, st).solve()
        c = np.array(sol.x[:d])
        lam = np.array(sol.z).reshape(n, d + 1)[:, 0]
    except ImportError:                     # pragma: no cover - cvxpy always brings Clarabel
        import cvxpy as cp
        cv, r = cp.Variable(d), cp.Variable()
        cons = [cp.norm(P[i] - cv) <= r for i in range(n)]
        cp.Problem(cp.Minimize(r), cons).solve(solver=cp.CLARABEL)
        c = np.asarray(cv.value)
        lam = np.array([float(k.dual_value) for k in cons])
    return c, lam


def _bracket(P, c, lam):
    lam = np.clip(np.nan_to_num(lam), 0, None)
    hi = float(np.max(np.linalg.norm(P - c, axis=1)))
    if lam.sum() <= 0:
        return 0.0, hi
    lam = lam / lam.sum()
    cb = lam @ P
    lo = float(np.sqrt(max(0.0, lam @ np.sum((P - cb) ** 2, axis=1))))
    return lo, hi


def meb(P):
    """(center, r_lo, r_hi) of the minimum enclosing ball of the rows of P."""
    if len(P) == 1:
        return P[0].copy(), 0.0, 0.0
    scale = float(np.max(np.abs(P)))
    if scale == 0:
        return P[0].copy(), 0.0, 0.0
    Q = P / scale
    d = Q.shape[1]
    c, lam = _meb_socp(Q)
    best = (c,) + _bracket(Q, c, lam)
    # polish: circumcenter of a support set in its affine hull. Candidate supports: the points
    # taken by decreasing dual weight, skipping any that is (numerically) affinely dependent on
    # those already taken (near-duplicate vertices of thin sets), stopping at d + 1 points or at
    # a weight threshold; the bracket decides which candidate is kept.
    order = np.argsort(-lam)
    for thr in (1e-3, 1e-5, 1e-7, 0.0):
        sup = []
        for k in order:
            if lam[k] <= thr * lam[order[0]] or len(sup) == d + 1:
                break
            if sup:
                D = Q[sup[1:] + [k]] - Q[sup[0]]
                if np.linalg.svd(D, compute_uv=False)[-1] < 1e-7:
                    continue
            sup.append(int(k))
        if len(sup) < 2:
            continue
        S = Q[sup]
        p0, D = S[0], S[1:] - S[0]
        mu = np.linalg.lstsq(2 * D @ D.T, np.sum(D * D, axis=1), rcond=None)[0]
        cc_ = p0 + mu @ D
        # non-negative barycentric weights of cc_ over the points farthest from it (not unique
        # when the support is degenerate, e.g. more than k + 1 points on a k-flat)
        dist = np.linalg.norm(Q - cc_, axis=1)
        pool = np.where(dist >= dist.max() * (1 - 1e-9))[0]
        w = nnls(np.vstack([Q[pool].T, 1e3 * np.ones(len(pool))]), np.concatenate([cc_, [1e3]]))[0]
        full = np.zeros(len(Q))
        full[pool] = w
        cand = (cc_,) + _bracket(Q, cc_, full)
        if cand[2] - cand[1] < best[2] - best[1]:
            best = cand
    return best[0] * scale, best[1] * scale, best[2] * scale


# ============================================================================================
# Per-row reference
# ============================================================================================

class Ref:
    """Exact facts about one row's set."""

    def __init__(self, g: Group, i: int, rng=None, full=True, cache=None):
        A, lo, hi = g.A, g.lo, g.hi
        d = len(lo)
        self.d = d
        Af = [[Fraction(float(a)) for a in row] for row in A]
        self.S = ExactSet(Af, [Fraction(float(v)) for v in lo], [Fraction(float(v)) for v in hi],
                          [_fr(v) for v in g.L[i]], [_fr(v) for v in g.U[i]], cache)
        self.W = float(np.max(hi - lo)) / 2
        self.R = float(max(np.max(np.abs(lo)), np.max(np.abs(hi))))
        self.W_eff = self.W if self.W > 0 else (1e-6 * self.R if self.R > 0 else 1.0)
        self.FL = 16 * EPS * math.sqrt(d) * max(self.R, self.W)
        self.TOL = TOL_REL * self.W_eff + self.FL
        V = self.S.vertices()
        self.nv = len(V)
        self.empty = not V
        self.robust_empty = self.depth = None
        self.plants = []
        if self.empty:
            if full:
                rho = Fraction(ROBUST_REL * self.W_eff + self.FL)
                self.robust_empty = not self.S.relaxed(rho).vertices()
            return
        cen = [sum(v[k] for v in V) / len(V) for k in range(d)]
        self.ref_f = np.array([float(v) for v in cen])
        ref = [Fraction(float(v)) for v in self.ref_f]
        self.Vrel = np.array([[float(v[k] - ref[k]) for k in range(d)] for v in V])
        self.rng_lo = np.array([float(min(v[k] for v in V)) for k in range(d)])
        self.rng_hi = np.array([float(max(v[k] for v in V)) for k in range(d)])
        _, self.r_lo, self.r_hi = meb(self.Vrel)
        self.r_gap = (self.r_hi - self.r_lo) / max(self.r_hi, 1e-300)
        if not full:
            return
        self.depth = self.S.slack(cen) / self.W_eff
        if g.xs is not None:
            xf = [Fraction(float(v)) for v in g.xs[i]]
            if self.S.contains(xf):
                self.plants.append(np.array([float(x - r) for x, r in zip(xf, ref)]))
        for _ in range(2):
            k = min(len(V), d + 1)
            idx = rng.choice(len(V), size=k, replace=False)
            w = rng.dirichlet(np.ones(k))
            self.plants.append(w @ self.Vrel[idx])

    def rel(self, c):
        """c relative to the reference point (float; exact when c is close to it)."""
        return np.asarray(c, float) - self.ref_f

    def maxdist(self, c):
        return float(np.max(np.linalg.norm(self.Vrel - self.rel(c), axis=1)))


# ============================================================================================
# Generators (every number dyadic unless the family says otherwise)
# ============================================================================================

def _A(rng, m, d, k=3):
    while True:
        A = rng.integers(-2 ** k, 2 ** k + 1, size=(m, d)) / 2 ** k
        if np.all(np.abs(A).sum(1) > 0):
            return A


def _box(rng, d):
    lo = rng.integers(-16, 17, d) / 16
    return lo, lo + rng.integers(4, 33, d) / 16


def _point(rng, lo, hi):
    return lo + (hi - lo) * rng.integers(0, 1025, len(lo)) / 1024


def _reach(A, lo, hi):
    return np.minimum(A * lo, A * hi).sum(1), np.maximum(A * lo, A * hi).sum(1)


def _dims(rng):
    return int(rng.integers(2, 6)), int(rng.integers(1, 5))


def _plain_group(rng, n, d=None, m=None, A=None, lo=None, hi=None, note="plain"):
    if d is None:
        d, m = _dims(rng)
    A = _A(rng, m, d) if A is None else A
    if lo is None:
        lo, hi = _box(rng, d)
    rmin, rmax = _reach(A, lo, hi)
    xs = np.array([_point(rng, lo, hi) for _ in range(n)])
    ax = xs @ A.T
    w = (rmax - rmin)[None, :]
    L = ax - w * rng.integers(0, 65, (n, len(A))) / 256
    U = ax + w * rng.integers(0, 65, (n, len(A))) / 256
    return Group(A, lo, hi, L, U, xs, note)


def _groups(rng, N):
    return max(1, N // 4), 4


def _family(make):
    """Turn a per-group generator make(rng, n) into a family generator fam(rng, N)."""
    @functools.wraps(make)
    def fam(rng, N):
        G, n = _groups(rng, N)
        return [make(rng, n) for _ in range(G)]
    return fam


def _plain_family(note):
    """Decorator: a family of plain groups (noted `note`), each then edited in place by edit(rng, g)."""
    def deco(edit):
        @functools.wraps(edit)
        def make(rng, n):
            g = _plain_group(rng, n, note=note)
            edit(rng, g)
            return g
        return _family(make)
    return deco


@_family
def fam_plain(rng, n):
    return _plain_group(rng, n)


def _fam_offset(F):
    @_family
    def f(rng, n):
        g = _plain_group(rng, n)
        t = np.round(F * rng.uniform(-1, 1, len(g.lo)))      # integers: the map is exact
        return transform(g, 1.0, t, f"offset {F:g}")
    return f


def _scaled(g, s):
    return transform(g, s, np.zeros(len(g.lo)), f"scale {s:g}")


def _fam_scale(s):
    def f(rng, N):
        return [_scaled(g, s) for g in fam_plain(rng, N)]
    return f


@_plain_family("thin")
def fam_thin(rng, g):
    rmin, rmax = _reach(g.A, g.lo, g.hi)
    ax = g.xs @ g.A.T
    w = (rmax - rmin)[None, :] * 10.0 ** rng.uniform(-12, -6, g.L.shape)
    g.L, g.U = ax - w / 2, ax + w / 2


@_family
def fam_fixed_some(rng, n):
    d, m = _dims(rng)
    lo, hi = _box(rng, d)
    k = int(rng.integers(1, d))
    idx = rng.choice(d, k, replace=False)
    v = _point(rng, lo, hi)
    lo[idx] = hi[idx] = v[idx]
    return _plain_group(rng, n, d, m, lo=lo, hi=hi, note=f"fixed {sorted(idx.tolist())}")


@_family
def fam_fixed_all(rng, n):
    d, m = _dims(rng)
    A = _A(rng, m, d)
    lo, hi = _box(rng, d)
    x = _point(rng, lo, hi)
    ax = A @ x
    L = np.repeat(ax[None], n, 0) - rng.integers(0, 9, (n, m)) / 64
    U = np.repeat(ax[None], n, 0) + rng.integers(0, 9, (n, m)) / 64
    for i in range(n):
        if i % 3 == 2:                  # miss the point: empty
            j = int(rng.integers(m))
            L[i, j], U[i, j] = ax[j] + 1 / 32, ax[j] + 1 / 16
    return Group(A, x.copy(), x.copy(), L, U, np.repeat(x[None], n, 0), "all fixed")


@_family
def fam_duplicate(rng, n):
    d, m = _dims(rng)
    m = max(m, 2)
    A = _A(rng, m, d)
    A[1] = A[0] if rng.random() < 0.5 else -A[0]
    g = _plain_group(rng, n, d, m, A=A, note="duplicate rows")
    if rng.random() < 0.5:              # identical intervals too (up to the sign)
        s = 1 if np.array_equal(A[1], A[0]) else -1
        g.L[:, 1], g.U[:, 1] = (g.L[:, 0], g.U[:, 0]) if s == 1 else (-g.U[:, 0], -g.L[:, 0])
    return g


@_family
def fam_near_parallel(rng, n):
    d, m = _dims(rng)
    m = max(m, 2)
    A = _A(rng, m, d)
    A[1] = A[0]
    A[1, int(rng.integers(d))] += 2.0 ** -int(rng.integers(12, 30))
    return _plain_group(rng, n, d, m, A=A, note="near-parallel rows 0, 1")


@_plain_family("one-sided")
def fam_one_sided(rng, g):
    side = rng.integers(0, 3, g.L.shape)          # 0: lower only, 1: upper only, 2: both
    g.U[side == 0] = np.inf
    g.L[side == 1] = -np.inf


@_family
def fam_corner(rng, n):
    d, m = _dims(rng)
    A = _A(rng, m, d)
    nz = np.flatnonzero(A[0])
    if len(nz) >= 2 and rng.random() < 0.5:
        A[0, int(rng.choice(nz))] = 0.0         # the touched set is an edge, not a corner
    lo, hi = _box(rng, d)
    rmin, rmax = _reach(A, lo, hi)
    corner = np.where(A[0] > 0, hi, lo)         # argmax of a_0 x over the box
    g = _plain_group(rng, n, d, m, A=A, lo=lo, hi=hi, note="row 0 touches a box corner")
    g.xs[:] = corner
    ax = corner @ A.T
    w = (rmax - rmin)[None, :]
    g.L = ax - w * rng.integers(0, 65, (n, m)) / 256
    g.U = ax + w * rng.integers(0, 65, (n, m)) / 256
    g.L[:, 0] = rmax[0]
    g.U[:, 0] = np.where(rng.random(n) < 0.5, np.inf, rmax[0] + w[0, 0] * rng.integers(0, 9, n) / 8)
    return g


@_plain_family("vacuous rows")
def fam_vacuous(rng, g):
    rmin, rmax = _reach(g.A, g.lo, g.hi)
    for i, j in itertools.product(range(len(g.L)), range(len(g.A))):
        u = rng.random()
        if u < 0.3:
            g.L[i, j], g.U[i, j] = -np.inf, np.inf
        elif u < 0.6:
            g.L[i, j], g.U[i, j] = rmin[j] - rng.integers(0, 5) / 8, rmax[j] + rng.integers(0, 5) / 8


@_plain_family("a row misses its reach")
def fam_empty(rng, g):
    rmin, rmax = _reach(g.A, g.lo, g.hi)
    for i in range(len(g.L)):
        j = int(rng.integers(len(g.A)))
        w = rmax[j] - rmin[j]
        gap = w * 2.0 ** -int(rng.integers(0, 8))
        if rng.random() < 0.5:
            g.L[i, j], g.U[i, j] = rmax[j] + gap, (rmax[j] + gap + w / 4) if rng.random() < 0.7 else np.inf
        else:
            g.L[i, j], g.U[i, j] = (rmin[j] - gap - w / 4) if rng.random() < 0.7 else -np.inf, rmin[j] - gap
    g.xs = None


@_plain_family("random intervals")
def fam_random_intervals(rng, g):
    """Intervals placed at random inside each row's reach: often jointly empty."""
    rmin, rmax = _reach(g.A, g.lo, g.hi)
    w = rmax - rmin
    a = rng.integers(0, 257, g.L.shape) / 256
    b = rng.integers(0, 65, g.L.shape) / 256
    g.L = rmin + w * a * 0.9
    g.U = g.L + w * b
    g.xs = None


@_plain_family("equations mixed with intervals")
def fam_mixed_eq(rng, g):
    ax = g.xs @ g.A.T
    eq = rng.random(g.L.shape) < 0.5
    g.L[eq] = g.U[eq] = ax[eq]


@_family
def fam_pin_thin(rng, n):
    """d (or d-1 plus one equation) thin rows that pin x: the lifted problem has no free variable."""
    d = int(rng.integers(2, 4))
    while True:
        A = _A(rng, d, d)
        if abs(np.linalg.det(A)) > 0.05:
            break
    g = _plain_group(rng, n, d, d, A=A, note="thin rows pinning x")
    rmin, rmax = _reach(A, g.lo, g.hi)
    ax = g.xs @ A.T
    rel = rng.choice([0.0, 2.0 ** -52, 1e-14, 1e-12, 1e-10], size=g.L.shape)
    w = (rmax - rmin)[None, :] * rel
    g.L, g.U = ax - w / 2, ax + w / 2
    return g


def fam_known(rng, N):
    A = np.array([[.25, .75, .375], [.125, .25, .125], [.875, .375, -1], [-.25, -.25, -.125]])
    lo = np.array([99999991.25, 100000002.6875, 100000001.75])
    hi = np.array([99999992.625, 100000004.25, 100000002.125])
    L = np.array([[137500001.17382812, 50000000.224609375, 24999992.36328125, -62499999.287109375]])
    U = np.array([[137500001.73632812, 50000000.474609375, 24999992.67578125, -62499999.162109375]])
    return [Group(A, lo, hi, L, U, None, "known example (exact said radius 0.221, true 0.622)")]


FAMILIES = {
    "plain": fam_plain,
    **{f"offset_{F:.0e}": _fam_offset(F) for F in (1e5, 1e6, 1e7, 1e8)},
    "scale_2^-40": _fam_scale(2.0 ** -40),
    **{f"scale_{s:.0e}": _fam_scale(s) for s in (1e-12, 1e-6, 1e6, 1e12)},
    "thin": fam_thin,
    "fixed_some": fam_fixed_some,
    "fixed_all": fam_fixed_all,
    "duplicate": fam_duplicate,
    "near_parallel": fam_near_parallel,
    "one_sided": fam_one_sided,
    "corner": fam_corner,
    "vacuous": fam_vacuous,
    "empty": fam_empty,
    "random_intervals": fam_random_intervals,
    "mixed_eq": fam_mixed_eq,
    "pin_thin": fam_pin_thin,
    "known": fam_known,
}


def equiv_transform(rng, g: Group, k: int) -> tuple[Group, float, np.ndarray]:
    """Alternately an exact dyadic map and a rounded non-dyadic one."""
    d = len(g.lo)
    F = float(rng.choice([1e5, 1e6, 1e7, 1e8]))
    # the offset is F box half-widths (u = a power of two near the half-width), so that the
    # mapped data resolve the set to about F * eps of its size whatever the group's own scale
    W = float(np.max(g.hi - g.lo)) / 2 or float(np.max(np.abs(g.lo))) or 1.0
    u = 2.0 ** math.floor(math.log2(W))
    if k % 2 == 0:
        s = 2.0 ** int(rng.integers(-30, 31))
        t = s * u * np.round(F * rng.uniform(-1, 1, d))
    else:
        s = float(rng.choice([1e-12, 1e-6, 1e6, 1e12]))
        t = s * u * F * rng.uniform(-1, 1, d)
    return transform(g, s, t, f"s={s:g}, |t|/(s W)~{F:g}"), s, t


# ============================================================================================
# Calling the library
# ============================================================================================

class Outcome:
    """Per-row results of one method on one group (crashed rows have status CRASHED)."""

    def __init__(self, n, d):
        self.centers = np.full((n, d), np.nan)
        self.radii = np.full(n, np.nan)
        self.status = np.full(n, CRASHED, dtype=int)
        self.check = [None] * n
        self.has_check = True
        self.rlow = np.full(n, np.nan)
        self.sub = [None] * n
        self.lower = np.full((n, d), np.nan)
        self.upper = np.full((n, d), np.nan)
        self.errors = []            # (row or None, message)


def _fill(out, res, rows, is_ranges):
    out.status[rows] = np.asarray(res.status_codes, dtype=int)
    if is_ranges:
        out.lower[rows], out.upper[rows] = res.lower, res.upper
        return
    out.centers[rows], out.radii[rows] = res.centers, res.radii
    ex = res.extras
    if "check" not in ex:
        out.has_check = False
    for k, r in enumerate(rows):
        if "check" in ex:
            out.check[r] = ex["check"][k]
        if "radius_lower" in ex:
            out.rlow[r] = float(ex["radius_lower"][k])
        if "method" in ex:
            out.sub[r] = ex["method"][k]


def call(g: Group, method: str) -> Outcome:
    n, d = g.n, len(g.lo)
    out = Outcome(n, d)
    is_ranges = method == "ranges"

    def run(rows):
        P = BoxSlice(g.A, g.lo, g.hi)
        L, U = g.L[rows], g.U[rows]
        if is_ranges:
            return P.feature_ranges(lower=L, upper=U)
        return P.centers(method=method, lower=L, upper=U)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _fill(out, run(list(range(n))), list(range(n)), is_ranges)
            return out
        except Exception as e:                       # noqa: BLE001 - a crash is a finding
            out.errors.append((None, f"{type(e).__name__}: {e}"[:300]))
        for i in range(n):                           # localise: row by row
            try:
                _fill(out, run([i]), [i], is_ranges)
            except Exception as e:                   # noqa: BLE001
                out.errors.append((i, f"{type(e).__name__}: {e}"[:300]))
    return out


# ============================================================================================
# Checks
# ============================================================================================

def _jl(a):
    return np.asarray(a, float).tolist()


class Recorder:
    def __init__(self, families, methods):
        self.counts = {}                 # (family, kind, method) -> count
        self.examples = {}               # "family|kind|method" -> [example]
        self.tested = {}                 # method -> rows
        self.status_counts = {}          # method -> {name: count}
        self.empty_infeasible = {}       # method -> INFEASIBLE rows whose set is exactly empty
        self.family_rows = {}
        self.family_empty = {}

    def add(self, fam, kind, method, g, i, severity, **info):
        key = (fam, kind, method)
        self.counts[key] = self.counts.get(key, 0) + 1
        lst = self.examples.setdefault(f"{fam}|{kind}|{method}", [])
        ex = {"family": fam, "kind": kind, "method": method, "severity": float(severity), **info}
        if g is not None:
            rows = [i] if i is not None else list(range(g.n))
            ex.update(A=_jl(g.A), lo=_jl(g.lo), hi=_jl(g.hi), L=_jl(g.L[rows]), U=_jl(g.U[rows]),
                      note=g.note)
            if g.mapped is not None:
                ex["mapped_copy"] = {"s": g.mapped[0], "t": _jl(g.mapped[1])}
            call_ = ("feature_ranges(lower=L, upper=U)" if method == "ranges"
                     else f"centers(method={method!r}, lower=L, upper=U)")
            ex["repro"] = ("import numpy as np, chebcenter as cc; inf = np.inf; "
                           f"P = cc.BoxSlice(np.array(A), np.array(lo), np.array(hi)); "
                           f"r = P.{call_}  # with A, lo, hi, L, U from this record")
        if len(lst) < 5:
            lst.append(ex)
        else:                            # keep the 5 most severe
            worst = min(range(5), key=lambda k: lst[k]["severity"])
            if lst[worst]["severity"] < ex["severity"]:
                lst[worst] = ex


def _answered_rows(rec, fam, g, M, out: Outcome):
    """Record the call's crashes, then yield ``(i, ref, status)`` for every row that did not
    crash, counting it and its status."""
    for e_row, msg in out.errors:
        if e_row is not None or not np.any(out.status == CRASHED):
            rec.add(fam, "crash", M, g, e_row, 1.0, error=msg, batch_only=e_row is None)
    for i in range(g.n):
        st = int(out.status[i])
        if st == CRASHED:
            continue
        rec.tested[M] = rec.tested.get(M, 0) + 1
        sc = rec.status_counts.setdefault(M, {})
        sc[Status(st).name] = sc.get(Status(st).name, 0) + 1
        yield i, g.refs[i], st


def check_centers(rec, fam, g, M, out: Outcome):
    for i, ref, st in _answered_rows(rec, fam, g, M, out):
        name = Status(st).name
        c, r = out.centers[i], float(out.radii[i])
        base = dict(row=i, status=name, center=_jl(c), radius=r)
        if st == INFEASIBLE:
            if ref.empty:
                rec.empty_infeasible[M] = rec.empty_infeasible.get(M, 0) + 1
            else:
                rec.add(fam, "false_infeasible", M, g, i, max(ref.depth, 1e-300), depth=ref.depth,
                        true_radius=ref.r_hi, n_vertices=ref.nv, **base)
            continue
        if st not in OK_CODES:
            if not ref.empty:
                rec.add(fam, "no_answer", M, g, i, 0.5, depth=ref.depth, true_radius=ref.r_hi,
                        n_vertices=ref.nv, check=str(out.check[i]), **base)
            continue
        if st == int(Status.INACCURATE) and out.check[i] is None:
            rec.add(fam, "inacc_no_reason", M, g, i, 0.0, has_check_key=out.has_check, **base)
        if ref.empty:
            if ref.robust_empty:
                rec.add(fam, "false_feasible", M, g, i, 1.0, **base)
            continue
        if not (np.all(np.isfinite(c)) and np.isfinite(r)):
            rec.add(fam, "bad_output", M, g, i, 1.0, **base)
            continue
        W = ref.W_eff
        md = ref.maxdist(c)
        info = dict(true_radius=ref.r_hi, max_dist_vertices=md, n_vertices=ref.nv, W=W, **base)
        if r < md - ref.TOL:
            rec.add(fam, "bound", M, g, i, (md - r) / W, shortfall_rel=(md - r) / W, **info)
        for p in ref.plants:
            dp = float(np.linalg.norm(ref.rel(c) - p))
            if dp > r + ref.TOL:
                rec.add(fam, "planted", M, g, i, (dp - r) / W, planted=_jl(ref.ref_f + p),
                        dist=dp, **info)
                break
        if M in IN_S_METHODS:
            v = ref.S.violation(c)
            if v > ref.TOL:
                rec.add(fam, "membership", M, g, i, v / W, violation_rel=v / W, **info)
        if M in ("exact", "auto") and st == int(Status.OPTIMAL) and (out.sub[i] in (None, "exact")):
            if ref.r_gap < 1e-8:
                over = r > ref.r_hi * (1 + GAP) + ref.FL
                rl = out.rlow[i]
                low_bad = np.isfinite(rl) and rl > ref.r_hi + ref.TOL
                if over or low_bad:
                    rec.add(fam, "exact_low", M, g, i, abs(r - ref.r_hi) / max(ref.r_hi, W * 1e-9) + (
                        (rl - ref.r_hi) / W if low_bad else 0), radius_lower=float(rl),
                        true_radius_bracket=[ref.r_lo, ref.r_hi], **info)


def check_ranges(rec, fam, g, out: Outcome):
    M = "ranges"
    for i, ref, st in _answered_rows(rec, fam, g, M, out):
        base = dict(row=i, status=Status(st).name, lower=_jl(out.lower[i]), upper=_jl(out.upper[i]))
        if st == INFEASIBLE:
            if ref.empty:
                rec.empty_infeasible[M] = rec.empty_infeasible.get(M, 0) + 1
            else:
                rec.add(fam, "false_infeasible", M, g, i, max(ref.depth, 1e-300), depth=ref.depth, **base)
            continue
        if st not in OK_CODES:
            if not ref.empty:
                rec.add(fam, "no_answer", M, g, i, 0.5, depth=ref.depth, **base)
            continue
        if ref.empty:
            if ref.robust_empty:
                rec.add(fam, "false_feasible", M, g, i, 1.0, **base)
            continue
        lo_, up_ = out.lower[i], out.upper[i]
        miss = np.maximum(lo_ - ref.rng_lo, ref.rng_hi - up_)            # > 0: exact range not covered
        wide = np.maximum(ref.rng_lo - lo_, up_ - ref.rng_hi)            # > 0: wider than exact
        bad_miss = np.nan_to_num(miss, nan=np.inf) > ref.TOL
        bad_wide = np.nan_to_num(wide, nan=np.inf) > GAP * ref.W_eff + ref.FL
        if np.any(bad_miss | bad_wide):
            sev = float(np.nanmax(np.concatenate([miss, wide]))) / ref.W_eff
            rec.add(fam, "ranges", M, g, i, sev, exact_lower=_jl(ref.rng_lo), exact_upper=_jl(ref.rng_hi),
                    misses=bool(np.any(bad_miss)), too_wide=bool(np.any(bad_wide)), excess_rel=sev, **base)


def check_equiv(rec, fam, g, tg, s, t, M, out, tout):
    """Compare a method's rows on g with its rows on tg = (x -> s x + t)(g)."""
    for i in range(g.n):
        a, b = int(out.status[i]), int(tout.status[i])
        if a == CRASHED or b == CRASHED:
            continue
        ref: Ref = g.refs[i]
        if ref.empty and not ref.robust_empty:
            continue

        tr = tg.refs[i]                 # the mapped copy's own exact reference
        info = dict(row=i, s=s, t=_jl(t), status=Status(a).name, status_transformed=Status(b).name,
                    transformed=dict(lo=_jl(tg.lo), hi=_jl(tg.hi), L=_jl(tg.L[[i]]), U=_jl(tg.U[[i]])))
        if a != b:
            if tr.empty == ref.empty:
                rec.add(fam, "equiv_status", M, g, i, 1.0, **info)
            continue
        if a not in OK_CODES or ref.empty:
            continue
        W = ref.W_eff
        FLt = 16 * EPS * math.sqrt(ref.d) * float(max(np.max(np.abs(tg.lo)), np.max(np.abs(tg.hi)))) / s
        base_allow = TOL_REL * W + ref.FL + FLt
        if M == "ranges":
            lo_b = (tout.lower[i] - t) / s
            up_b = (tout.upper[i] - t) / s
            diff = float(np.max(np.maximum(np.abs(lo_b - out.lower[i]), np.abs(up_b - out.upper[i]))))
            allow = GAP * W + base_allow
            if not diff <= allow:
                if not tr.empty:
                    true_ch = max(np.max(np.abs((tr.rng_lo - t) / s - ref.rng_lo)),
                                  np.max(np.abs((tr.rng_hi - t) / s - ref.rng_hi)))
                    allow += 10 * float(true_ch)
                if not diff <= allow:
                    rec.add(fam, "equiv_radius", M, g, i, diff / W, diff_rel=diff / W,
                            lower=_jl(out.lower[i]), lower_back=_jl(lo_b), **info)
            continue
        r, r2 = float(out.radii[i]), float(tout.radii[i]) / s
        diff = abs(r2 - r)
        allow = GAP * abs(r) + base_allow
        if not diff <= allow:
            if not tr.empty:
                allow += 10 * abs(tr.r_hi / s - ref.r_hi)
            if not diff <= allow:
                rec.add(fam, "equiv_radius", M, g, i, diff / max(abs(r), W), radius=r, radius_back=r2,
                        diff_rel=diff / max(abs(r), W), **info)


# ============================================================================================
# Driver
# ============================================================================================

def run(args):
    rec = Recorder(args.families, args.methods)
    t_ref = t_lib = 0.0
    for fam in args.families:
        t0 = time.perf_counter()
        rng = np.random.default_rng([args.seed, zlib.crc32(fam.encode())])
        groups = FAMILIES[fam](rng, args.per_family)
        for g in groups:
            cache = {}
            g.refs = [Ref(g, i, rng, cache=cache) for i in range(g.n)]
        t1 = time.perf_counter()
        t_ref += t1 - t0
        rec.family_rows[fam] = sum(g.n for g in groups)
        rec.family_empty[fam] = sum(r.empty for g in groups for r in g.refs)
        calls = list(args.methods) + ["ranges"]
        outs = {M: [call(g, M) for g in groups] for M in calls}
        t_lib += time.perf_counter() - t1
        for M in args.methods:
            for g, o in zip(groups, outs[M]):
                check_centers(rec, fam, g, M, o)
        for g, o in zip(groups, outs["ranges"]):
            check_ranges(rec, fam, g, o)
        if not args.no_equiv:
            # the x -> s x + t copy of every group: checked in full like any instance (its
            # reference is computed from its own rounded data) and compared with the original
            for k, g in enumerate(groups):
                tg, s, t = equiv_transform(rng, g, k)
                tg.mapped = (s, t)
                t2 = time.perf_counter()
                cache = {}
                tg.refs = [Ref(tg, i, rng, cache=cache) for i in range(tg.n)]
                t3 = time.perf_counter()
                t_ref += t3 - t2
                touts = {M: call(tg, M) for M in calls}
                t_lib += time.perf_counter() - t3
                rec.family_rows[fam] += tg.n
                rec.family_empty[fam] += sum(r.empty for r in tg.refs)
                for M in args.methods:
                    check_centers(rec, fam, tg, M, touts[M])
                check_ranges(rec, fam, tg, touts["ranges"])
                for M in calls:
                    if M != "ls":
                        check_equiv(rec, fam, g, tg, s, t, M, outs[M][k], touts[M])
        print(f"  {fam:18s} {rec.family_rows[fam]:3d} rows ({rec.family_empty[fam]} empty) "
              f"{time.perf_counter() - t0:6.1f} s", file=sys.stderr, flush=True)
    return rec, t_ref, t_lib


def report(rec, args):
    kinds = KINDS
    short = {"crash": "crash", "bad_output": "badout", "bound": "bound", "exact_low": "exact",
             "planted": "plant", "membership": "member", "false_infeasible": "f_inf",
             "false_feasible": "f_feas", "no_answer": "no_ans", "inacc_no_reason": "inacc", "ranges": "ranges",
             "equiv_status": "eq_st", "equiv_radius": "eq_r"}
    hdr = f"{'family':18s} {'rows':>4s} {'empty':>5s} " + " ".join(f"{short[k]:>6s}" for k in kinds)
    print("\nFailures by family (all methods and feature_ranges together)")
    print(hdr)
    for fam in args.families:
        cnt = [sum(v for (f, k, m), v in rec.counts.items() if f == fam and k == kind) for kind in kinds]
        print(f"{fam:18s} {rec.family_rows[fam]:4d} {rec.family_empty[fam]:5d} "
              + " ".join(f"{c:6d}" for c in cnt))
    tot = [sum(v for (f, k, m), v in rec.counts.items() if k == kind) for kind in kinds]
    print(f"{'TOTAL':18s} {sum(rec.family_rows.values()):4d} {sum(rec.family_empty.values()):5d} "
          + " ".join(f"{c:6d}" for c in tot))

    print("\nFailures by method; rows tested (not crashed) and status counts")
    print(f"{'method':10s} " + " ".join(f"{short[k]:>6s}" for k in kinds)
          + f" | {'tested':>6s} {'OPT':>5s} {'INACC':>5s} {'INFEAS':>6s} {'(empty)':>7s} {'other':>5s}")
    for M in list(args.methods) + ["ranges"]:
        cnt = [sum(v for (f, k, m), v in rec.counts.items() if m == M and k == kind) for kind in kinds]
        sc = rec.status_counts.get(M, {})
        other = sum(v for k, v in sc.items() if k not in ("OPTIMAL", "INACCURATE", "INFEASIBLE"))
        print(f"{M:10s} " + " ".join(f"{c:6d}" for c in cnt)
              + f" | {rec.tested.get(M, 0):6d} {sc.get('OPTIMAL', 0):5d} {sc.get('INACCURATE', 0):5d} "
              f"{sc.get('INFEASIBLE', 0):6d} {rec.empty_infeasible.get(M, 0):7d} {other:5d}"
              + (f"  {dict((k, v) for k, v in sc.items() if k not in ('OPTIMAL', 'INACCURATE', 'INFEASIBLE'))}"
                 if other else ""))

    weight = {"bound": 4, "planted": 4, "false_feasible": 4, "membership": 3, "exact_low": 3,
              "crash": 3, "bad_output": 3, "false_infeasible": 2, "no_answer": 2, "ranges": 2, "equiv_radius": 1,
              "equiv_status": 1, "inacc_no_reason": 0}
    allex = [e for lst in rec.examples.values() for e in lst]
    allex.sort(key=lambda e: (weight[e["kind"]], min(e["severity"], 1e6)), reverse=True)
    print("\nMost severe examples (severity in units of W_eff, see the docstring)")
    seen = set()
    shown = 0
    for e in allex:
        key = (e["family"], e["kind"], e["method"])
        if key in seen:
            continue
        seen.add(key)
        extra = {k: e[k] for k in ("error", "depth", "shortfall_rel", "violation_rel", "diff_rel",
                                   "excess_rel", "radius", "true_radius", "status", "status_transformed")
                 if k in e}
        print(f"  [{e['kind']}] {e['family']} / {e['method']}: sev={e['severity']:.3g} {extra}")
        shown += 1
        if shown >= args.show:
            break


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-family", type=int, default=96, help="rows per family (groups of 4 rows)")
    ap.add_argument("--methods", nargs="+", default=list(ALL_METHODS), choices=ALL_METHODS)
    ap.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    ap.add_argument("--json", default=None, help="write up to 5 examples per (family, kind, method)")
    ap.add_argument("--no-equiv", action="store_true", help="skip the x -> s x + t comparisons")
    ap.add_argument("--show", type=int, default=12, help="severe examples to print")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rec, t_ref, t_lib = run(args)
    report(rec, args)
    print(f"\nwall time {time.perf_counter() - t0:.1f} s (reference {t_ref:.1f} s, library calls {t_lib:.1f} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "tolerances": {"TOL_REL": TOL_REL, "GAP": GAP, "ROBUST_REL": ROBUST_REL},
                       "counts": [{"family": f, "kind": k, "method": m, "count": v}
                                  for (f, k, m), v in sorted(rec.counts.items())],
                       "examples": rec.examples}, fh, indent=1, default=str)
        print(f"examples written to {args.json}")


if __name__ == "__main__":
    main()
