r"""H-polytopes ``{x : G x <= h, A_eq x = b_eq}`` (bounded; checked), one set at a time.

The methods are the table's that serve polytopes (:func:`chebcenter.methods.set_methods`):
``"exact"`` (vertex enumeration after the null-space reduction, then the minimum enclosing
ball), ``"rcc1"`` (the EBT relaxation: pairs of parallel rows ``l <= a^T x <= u`` become one
quadratic ``(a^T x - l)(a^T x - u) <= 0``, lone rows stay linear; if the paired rows do not
span every direction, redundant bounding-box rows computed by LP are added so the relaxation
is well posed) and ``"inscribed"``: the center of the largest INSCRIBED ball (one LP), the
other notion, for comparison only. Their routes live in :mod:`chebcenter.methods.general_sets`;
this module holds the set: its validation, its normalised frame, its vertices and its
quadratic form. Results are :class:`chebcenter.CenterResult` with the statuses of
:class:`chebcenter.BoxSlice`.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import numpy as np
from scipy.optimize import linprog

from .._core.validate import as_matrix, as_positive_float, as_vector
from .._errors import InvalidInputError
from ..kernels.linalg import EPS, numerical_rank
from ..kernels.vertices import distinct_rows
from ..methods import choose_set_method, set_methods
from ..methods.general_sets import nan_result
from ..results import CenterResult, Status

__all__ = ["Polytope"]


class Polytope:
    """``{x in R^n : G x <= h, A_eq x = b_eq}``, bounded.

    The set is normalised at construction (see ``docs/theory.md``): rows of ``G`` and
    ``A_eq`` are scaled to unit norm, and coordinates are translated to the center of the
    set's bounding box and divided by its largest half-width (found by LPs, refined until
    the normalised box is about ``[-1, 1]``). Every method runs in that frame and maps its
    answer back, so ``x -> s x + t`` moves centers and scales radii exactly, for ``s`` from
    1e-12 to 1e12. ``feas_tol`` is relative to that frame (a fraction of the set's size).

    Examples
    --------
    >>> import numpy as np, chebcenter as cc
    >>> simplex = cc.Polytope(np.vstack([-np.eye(3), np.ones((1, 3))]), np.r_[np.zeros(3), 1.0])
    >>> simplex.center("exact").center.round(4).tolist()          # minimax: 1/3
    [0.3333, 0.3333, 0.3333]
    >>> simplex.center("inscribed").center.round(4).tolist()      # inscribed: 1/(3 + sqrt 3)
    [0.2113, 0.2113, 0.2113]
    """


    #: the methods of the table that serve polytopes (:func:`chebcenter.methods.set_methods`)
    METHODS = tuple(set_methods("polytope"))

    def __init__(self, G: Any, h: Any, A_eq: Any = None, b_eq: Any = None, *, feas_tol: float = 1e-9):
        G = as_matrix("G", G)
        self.G, self.h = G, as_vector("h", h, G.shape[0])
        n = G.shape[1]
        if A_eq is None and b_eq is not None:
            raise InvalidInputError("b_eq was given without A_eq: pass both (the equalities A_eq x = b_eq) or neither")
        if A_eq is not None and b_eq is None:
            raise InvalidInputError("A_eq was given without b_eq: pass both (the equalities A_eq x = b_eq) or neither")
        feas_tol = as_positive_float("feas_tol", feas_tol)
        if A_eq is None:
            self.A_eq, self.b_eq = np.zeros((0, n)), np.zeros(0)
        else:
            self.A_eq = as_matrix("A_eq", A_eq)
            if self.A_eq.shape[1] != n:
                raise InvalidInputError(f"A_eq must have {n} columns like G; got shape {self.A_eq.shape}")
            self.b_eq = as_vector("b_eq", b_eq, self.A_eq.shape[0])
        self.d = n
        self.feas_tol = feas_tol
        # unit rows; a zero row is either vacuous (dropped) or a contradiction (remembered)
        gn, an = np.linalg.norm(G, axis=1), np.linalg.norm(self.A_eq, axis=1)
        gk, ak = gn > 0, an > 0
        self._contradiction = bool(np.any(self.h[~gk] < 0) or np.any(self.b_eq[~ak] != 0))
        self._G1, self._h1 = G[gk] / gn[gk, None], self.h[gk] / gn[gk]
        self._A1, self._b1 = self.A_eq[ak] / an[ak, None], self.b_eq[ak] / an[ak]
        if self._A1.shape[0]:
            _, sv, Vt = np.linalg.svd(self._A1)
            r = numerical_rank(sv, self._A1.shape)
            self._Ur = np.linalg.svd(self._A1, full_matrices=False)[0][:, :r]
            self._sr, self._Vr, self.W = sv[:r], Vt[:r].T, Vt[r:].T
        else:
            self._Ur, self._sr, self._Vr, self.W = np.zeros((0, 0)), np.zeros(0), np.zeros((n, 0)), np.eye(n)
        self.p = self.W.shape[1]
        magnitude = max(np.abs(self._h1).max(initial=0.0), np.abs(self._b1).max(initial=0.0))
        self._set_frame(np.zeros(n), magnitude if magnitude > 0 else 1.0)
        self._check_bounded()
        self._point_radius = None  # set when the set is one point up to the feasibility tolerance
        self._refine_frame()

    # -- the normalised frame x = t + s y ----------------------------------------------------
    def _set_frame(self, t, s):
        """Data of the set in the frame ``x = t + s y``, reduced to ``y = x0 + W u``."""
        self._t, self._s = t, float(s)
        eps = EPS
        Gt, At = self._G1 @ t, self._A1 @ t
        h, b = (self._h1 - Gt) / s, (self._b1 - At) / s
        # rounding in forming h and b is about eps * (|h1| + |G t|) / s: the data's own precision
        noise = 16 * eps * (np.abs(self._h1).max(initial=0.0) + np.abs(Gt).max(initial=0.0)
                            + np.abs(self._b1).max(initial=0.0) + np.abs(At).max(initial=0.0)) / s
        self._tol = self.feas_tol + noise
        if self._Ur.size:
            c = self._Ur.T @ b
            self.x0 = self._Vr @ (c / self._sr)
            resid = np.linalg.norm(b - self._Ur @ c)
            self.consistent = (not self._contradiction) and resid <= self._tol * (1 + np.linalg.norm(b))
        else:
            self.x0 = np.zeros(self.d)
            self.consistent = (not self._contradiction) and not (self._b1.size and np.any(np.abs(b) > self._tol))
        self._hy = h
        self.Gu = self._G1 @ self.W                    # u-space rows: Gu u <= hu
        self.hu = h - self._G1 @ self.x0

    def _refine_frame(self, rounds=4):
        """Move the frame to the bounding box's center and half-width until both are ~ (0, 1)."""
        for _ in range(rounds):
            box = self._bounding_box()
            if box is None:
                return
            lo, hi = box
            mid, w = (lo + hi) / 2, float(np.max(hi - lo)) / 2
            # the LPs ran with the feasibility tolerance, so a box this thin is a single point
            # (up to that tolerance): keep the scale, move to the point, stop refining
            if w <= 10 * self._tol * (1 + np.abs(self.hu).max(initial=0.0)):
                self._set_frame(self._t + self._s * mid, self._s)
                # the box (computed with the tolerance) contains the set, and its middle is
                # now the frame's origin: its half-diagonal bounds every distance from there
                self._point_radius = float(np.linalg.norm(hi - lo)) / 2
                return
            done = np.abs(mid).max() <= 0.25 and 0.5 <= w <= 2.0
            self._set_frame(self._t + self._s * mid, self._s * w)
            if done:
                return

    def _bounding_box(self):
        """``[lo, hi]`` of the set in the current frame (2 n LPs), None if it is empty."""
        if not self.consistent:
            return None
        if self.Gu.shape[0] == 0 or self.p == 0:
            return (self.x0, self.x0) if self.p == 0 else None
        lo, hi = self.x0.copy(), self.x0.copy()
        b_ub = self.hu + self._tol * (1 + np.abs(self.hu))
        for i in range(self.d):
            c = self.W[i]
            if not np.any(c):
                continue
            for sgn, out in ((1.0, lo), (-1.0, hi)):
                res = linprog(sgn * c, A_ub=self.Gu, b_ub=b_ub, bounds=[(None, None)] * self.p, method="highs")
                if res.status != 0:
                    return None
                out[i] = self.x0[i] + c @ res.x
        return lo, hi

    def _to_x(self, y):
        return self._t + self._s * y

    def _check_bounded(self):
        """The recession cone {d : Gu d <= 0} must be {0}: 2p small LPs."""
        if self.Gu.shape[0] == 0 and self.p > 0:
            raise InvalidInputError(
                f"the polytope is unbounded: with no inequalities it is an affine set of dimension {self.p}"
                " (add constraints, e.g. bounds on every coordinate)")
        for i in range(self.p if self.Gu.shape[0] else 0):
            for sgn in (1.0, -1.0):
                c = np.zeros(self.p)
                c[i] = -sgn
                res = linprog(c, A_ub=self.Gu, b_ub=np.zeros(self.Gu.shape[0]), bounds=[(-1, 1)] * self.p,
                              method="highs")
                if res.status == 0 and -res.fun > 1e-9:
                    d = self.W @ res.x
                    raise InvalidInputError(
                        f"the polytope is unbounded: it contains the ray x + t d, t >= 0, with d = {np.round(d, 6).tolist()}"
                        " (add constraints, e.g. bounds on every coordinate)")

    @property
    def n(self) -> int:
        """The dimension, as ``d`` (kept under its first name)."""
        return self.d

    def __repr__(self) -> str:
        return f"Polytope(d={self.d}, inequalities={self.G.shape[0]}, equalities={self.A_eq.shape[0]}, dim={self.p})"

    def _feasible_point(self):
        if not self.consistent:
            return None
        if self.Gu.shape[0] == 0:
            return np.zeros(self.p)
        res = linprog(np.zeros(self.p), A_ub=self.Gu, b_ub=self.hu + self._tol * (1 + np.abs(self.hu)),
                      bounds=[(None, None)] * self.p, method="highs")
        return res.x if res.status == 0 else None

    def center(self, method: str = "auto", **options: Any) -> CenterResult:
        """Minimax center (``exact``), its EBT relaxation (``rcc1``), or the inscribed-ball center;
        ``auto`` (the default, as for every set type): exact where its enumeration is within
        ``max_candidates``, else rcc1 (``extras["method"]`` says which).

        ``exact`` accepts ``max_candidates`` (default 2e6 row subsets of size
        dim) and returns the radius with a dual lower bound ``radius_lower``;
        ``rcc1`` accepts ``solver`` ("auto" = "clarabel", or "scs"). An empty set is
        INFEASIBLE; a too large enumeration TOO_LARGE.
        """
        spec, route, opts = choose_set_method("polytope", method, options)
        t0 = time.perf_counter()
        if self._feasible_point() is None:
            return nan_result(self.d, Status.INFEASIBLE, spec.name, t0)
        return route.func(self, t0, **opts)

    # -- exact ------------------------------------------------------------------------
    def vertices(self, max_candidates: int = 2_000_000) -> np.ndarray | None:
        """Vertices (x-space) by solving every dim-subset of rows; None past ``max_candidates``."""
        p, m = self.p, self.Gu.shape[0]
        if p == 0:
            return self._to_x(self.x0)[None, :]
        if math.comb(m, p) > max_candidates:
            return None
        tol = self._tol * (1 + np.abs(self.hu).max())
        found = []
        combos = itertools.combinations(range(m), p)
        while True:
            chunk = np.array(list(itertools.islice(combos, 20000)), dtype=np.int64)
            if chunk.size == 0:
                break
            Ms, rhs = self.Gu[chunk], self.hu[chunk]
            scale = np.prod(np.linalg.norm(Ms, axis=2), axis=1)
            ok = np.abs(np.linalg.det(Ms)) > 1e-10 * np.maximum(scale, 1e-300)
            if not ok.any():
                continue
            U = np.linalg.solve(Ms[ok], rhs[ok][:, :, None])[:, :, 0]
            feas = np.all(U @ self.Gu.T <= self.hu + tol, axis=1)
            found.append(U[feas])
        U = np.vstack(found) if found else np.zeros((0, p))
        U = distinct_rows(U, 10 * tol)
        return self._to_x(self.x0 + U @ self.W.T)

    # -- rcc1 ---------------------------------------------------------------------------
    def quadratic_form(self):
        """The constraints as EBT data ``(Qs, gs, ts, n_quadratic)`` in the normalised u-space.

        The coordinates are ``x = t + s (x0 + W u)`` (the frame of the class docstring).
        Unit rows of G that are negatives of each other form ``l <= a^T y <= u`` and become one quadratic
        ``(a^T x - l)(a^T x - u) <= 0``; lone rows stay linear; rows constant on the affine
        set are dropped (feasibility is checked separately). If the quadratics do not span
        every direction, redundant bounding-box rows (from LPs) are added.
        """
        unit, hn = self._G1, self._hy
        used = np.zeros(unit.shape[0], dtype=bool)
        pairs, lone = [], []
        for i in range(unit.shape[0]):
            if used[i]:
                continue
            opp = np.flatnonzero(~used & (np.abs(unit + unit[i]).max(axis=1) <= 1e-12))
            if opp.size:
                j = opp[0]
                used[[i, j]] = True
                pairs.append((unit[i], -hn[j], hn[i]))  # -h_j <= a^T x <= h_i
            else:
                used[i] = True
                lone.append((unit[i], hn[i]))
        quads, lins = [], []
        for a, l, u in pairs:  # to u-space: a^T x = a^T x0 + (W^T a)^T u
            au, shift = self.W.T @ a, a @ self.x0
            if np.linalg.norm(au) > 1e-12:
                quads.append((au, l - shift, u - shift))
        for a, b in lone:
            au = self.W.T @ a
            if np.linalg.norm(au) > 1e-12:
                lins.append((au, b - a @ self.x0))
        P = sum((np.outer(a, a) for a, _, _ in quads), np.zeros((self.p, self.p)))
        if np.linalg.matrix_rank(P) < self.p:  # add the bounding box of the set (redundant rows)
            for i in range(self.p):
                e = np.zeros(self.p)
                e[i] = 1.0
                lo = linprog(e, A_ub=self.Gu, b_ub=self.hu, bounds=[(None, None)] * self.p, method="highs").fun
                hi = -linprog(-e, A_ub=self.Gu, b_ub=self.hu, bounds=[(None, None)] * self.p, method="highs").fun
                quads.append((e, lo, hi))
        Qs = [np.outer(a, a) for a, _, _ in quads] + [np.zeros((self.p, self.p)) for _ in lins]
        gs = [-(l + u) / 2 * a for a, l, u in quads] + [a / 2 for a, _ in lins]
        ts = [l * u for _, l, u in quads] + [-b for _, b in lins]
        return np.array(Qs), np.array(gs), np.array(ts), len(quads)
