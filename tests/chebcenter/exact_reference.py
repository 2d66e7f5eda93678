"""Vertices of a box slice in exact rational arithmetic (never imported by chebcenter).

For dyadic data (integer A, box bounds and right-hand sides that are binary fractions) the
vertices of S_F = {x : A x = b, lo <= x <= hi} are computed with :class:`fractions.Fraction`:
every basis B of r = rank A columns with A_B nonsingular, every assignment of the other
columns to a bound, x_B = A_B^{-1} (b - A_N x_N) by exact Gaussian elimination, kept when
lo_B <= x_B <= hi_B holds exactly. No tolerance anywhere: a vertex is in S_F or it is not,
and S_F is empty exactly when there is none (a bounded polytope has a vertex if nonempty).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def _solve(M, rhs):
    """Exact solution of the square system M z = rhs (lists of Fractions), or None if singular."""
    n = len(M)
    a = [row[:] + [rhs[i]] for i, row in enumerate(M)]
    for col in range(n):
        piv = next((r for r in range(col, n) if a[r][col] != 0), None)
        if piv is None:
            return None
        a[col], a[piv] = a[piv], a[col]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[i][n] / a[i][i] for i in range(n)]


def _independent_rows(A):
    """Indices of a maximal set of linearly independent rows (exact elimination)."""
    rows, basis = [], []
    for i, row in enumerate(A):
        v = row[:]
        for piv, b in basis:
            if v[piv] != 0:
                f = v[piv] / b[piv]
                v = [x - f * y for x, y in zip(v, b)]
        piv = next((j for j, x in enumerate(v) if x != 0), None)
        if piv is not None:
            basis.append((piv, v))
            rows.append(i)
    return rows


def exact_vertices(A, b, lo, hi):
    """Distinct vertices of S_F as an array of Fractions (object dtype), shape (n, d); an
    inconsistent system gives (0, d). ``A``, ``b``, ``lo``, ``hi`` must be exactly
    representable (floats are converted exactly)."""
    A = [[Fraction(float(x)) for x in row] for row in np.atleast_2d(A)]
    b = [Fraction(float(x)) for x in np.atleast_1d(b)]
    lo = [Fraction(float(x)) for x in lo]
    hi = [Fraction(float(x)) for x in hi]
    d = len(lo)
    keep = _independent_rows(A) if A and A[0] else []
    # consistency of the dropped rows is checked on every candidate below
    Ar, br = [A[i] for i in keep], [b[i] for i in keep]
    r = len(Ar)
    found = set()
    for basis in itertools.combinations(range(d), r):
        M = [[row[j] for j in basis] for row in Ar]
        others = [j for j in range(d) if j not in basis]
        if r and _solve(M, [Fraction(0)] * r) is None:
            continue
        for sides in itertools.product((0, 1), repeat=len(others)):
            x = [Fraction(0)] * d
            for j, s in zip(others, sides):
                x[j] = hi[j] if s else lo[j]
            rhs = [br[i] - sum(Ar[i][j] * x[j] for j in others) for i in range(r)]
            z = _solve(M, rhs) if r else []
            if z is None:
                continue
            for j, v in zip(basis, z):
                x[j] = v
            if all(lo[j] <= x[j] <= hi[j] for j in range(d)) and \
                    all(sum(a * v for a, v in zip(row, x)) == bi for row, bi in zip(A, b)):
                found.add(tuple(x))
    out = np.empty((len(found), d), dtype=object)
    for k, v in enumerate(sorted(found)):
        out[k] = v
    return out


def farthest(V, c):
    """max_j ||v_j - c|| for exact vertices V (Fractions) and a float center c, evaluated in
    exact arithmetic and rounded once (a float c is an exact rational)."""
    cf = [Fraction(float(x)) for x in c]
    best = Fraction(0)
    for v in V:
        s = sum((vi - ci) ** 2 for vi, ci in zip(v, cf))
        best = max(best, s)
    return float(best) ** 0.5


def half_diameter(V):
    """A lower bound on the Chebyshev radius: half the largest distance between two vertices
    (both in S_F), exact up to the final square root."""
    best = Fraction(0)
    for i in range(len(V)):
        for j in range(i + 1, len(V)):
            best = max(best, sum((a - b) ** 2 for a, b in zip(V[i], V[j])))
    return 0.5 * float(best) ** 0.5


def exact_interval_vertices(A, L, U, lo, hi):
    """Distinct vertices of the bounded-error set ``{x : lo <= x <= hi, L <= A x <= U}`` in
    exact rational arithmetic (object array of Fractions, shape (n, d); (0, d) when the set is
    empty). Infinite bounds are absent faces; the data must be exactly representable (floats
    are converted exactly). Every choice of d faces among the 2 d box faces and the finite
    interval faces ``a_j^T x = L_j`` / ``U_j`` with a nonsingular system is solved exactly and
    kept when it meets every constraint exactly: no tolerance anywhere."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    d = A.shape[1]
    Af = [[Fraction(float(x)) for x in row] for row in A]
    lo = [Fraction(float(x)) for x in lo]
    hi = [Fraction(float(x)) for x in hi]
    Lf = [None if not np.isfinite(v) else Fraction(float(v)) for v in np.atleast_1d(L)]
    Uf = [None if not np.isfinite(v) else Fraction(float(v)) for v in np.atleast_1d(U)]
    unit = [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]
    faces = [(unit[i], lo[i]) for i in range(d)] + [(unit[i], hi[i]) for i in range(d)]
    for j, row in enumerate(Af):
        faces += [(row, v) for v in (Lf[j], Uf[j]) if v is not None]

    def inside(x):
        if not all(lo[i] <= x[i] <= hi[i] for i in range(d)):
            return False
        for j, row in enumerate(Af):
            ax = sum(a * v for a, v in zip(row, x))
            if (Lf[j] is not None and ax < Lf[j]) or (Uf[j] is not None and ax > Uf[j]):
                return False
        return True

    found = set()
    for choice in itertools.combinations(range(len(faces)), d):
        z = _solve([faces[c][0][:] for c in choice], [faces[c][1] for c in choice])
        if z is not None and tuple(z) not in found and inside(z):
            found.add(tuple(z))
    out = np.empty((len(found), d), dtype=object)
    for k, v in enumerate(sorted(found)):
        out[k] = v
    return out
