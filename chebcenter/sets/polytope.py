r"""H-polytopes ``{x : G x <= h, A_eq x = b_eq}`` (bounded; checked), one set at a time.

A polytope is the one problem every method solves: in its normalised frame, its bounding box
(found by LPs) is the box and its rows are one-sided intervals ``-inf <= g_i^T y <= h_i``
beside the equations, a bounded-error box slice (docs/theory.md, "General sets"). So its
methods are the box slices' estimators of interval rows (:func:`chebcenter.methods.set_methods`),
with their options, statuses and extras, and ``"inscribed"``: the center of the largest
INSCRIBED ball (one LP, :mod:`chebcenter.methods.general_sets`), the other notion, for
comparison only. This module holds the set: its validation, its normalised frame and
bounding box, and that reduction. Results are :class:`chebcenter.CenterResult` with the
statuses of :class:`chebcenter.BoxSlice`.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

import numpy as np

from .._core.validate import as_matrix, as_positive_float, as_vector
from .._errors import InvalidInputError
from ..kernels.linalg import EPS, numerical_rank
from ..methods import choose_set_method, set_methods
from ..methods.general_sets import nan_result
from ..results import CenterResult, Status

__all__ = ["Polytope"]


class _LPFailure(RuntimeError):
    """HiGHS found neither an optimum nor infeasibility for a bounding-box LP."""


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
        self._lp_failure = None
        try:
            self._refine_frame()
        except _LPFailure as exc:   # an answer from a box that may cut the set would be wrong
            self._box, self._lp_failure = None, str(exc)

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
        self._box = None   # the bounding box in the final frame (None: the set is empty)
        self._point = False   # one point up to the LPs' resolution
        box, zoomed = None, False
        for _ in range(rounds):
            box = self._bounding_box() if box is None else box
            if box is None:
                return
            lo, hi = box
            mid, w = (lo + hi) / 2, float(np.max(hi - lo)) / 2
            # the LPs ran with the feasibility tolerance, so a box this thin is a single point
            # (up to that tolerance), or a set below this frame's resolution (a small set among
            # far rows, which set the first frame): look once more at the box's own scale, and
            # refine from there if the set has an extent at it; else keep the scale, move to
            # the point, stop refining
            if w <= self._thin():
                if not zoomed and w > 0:
                    zoomed, saved = True, (self._t, self._s)
                    self._set_frame(self._t + self._s * mid, self._s * w)
                    box = self._bounding_box()
                    if box is not None and float(np.max(box[1] - box[0])) / 2 > self._thin():
                        continue
                    self._set_frame(*saved)
                self._set_frame(self._t + self._s * mid, self._s)
                self._box, self._point = (lo - mid, hi - mid), True
                return
            done = np.abs(mid).max() <= 0.25 and 0.5 <= w <= 2.0
            self._set_frame(self._t + self._s * mid, self._s * w)
            self._box = ((lo - mid) / w, (hi - mid) / w)
            box = None
            if done:
                return

    def _thin(self):
        """The extent below which the LPs (run at the feasibility tolerance) cannot tell a
        coordinate from a constant in this frame: ten times the tolerance of the rows that can
        bind a box of this frame's size (a row over 1e3 units from the origin, a far redundant
        row, is relaxed by its own size, and bounds nothing here)."""
        hu = np.abs(self.hu)
        return 10 * self._tol * (1 + hu[hu <= 1e3].max(initial=0.0))

    def _bounding_box(self):
        """``[lo, hi]`` of the set in the current frame (2 n LPs), None if it is empty."""
        from scipy.optimize import linprog  # here, not at import: an import does no work
        if not self.consistent:
            return None
        if self.Gu.shape[0] == 0 or self.p == 0:
            return (self.x0, self.x0) if self.p == 0 else None
        lo, hi = self.x0.copy(), self.x0.copy()
        b_ub = self.hu + self._tol * (1 + np.abs(self.hu))
        for i in range(self.d):
            c = self.W[i]
            scale = np.abs(c).max()
            if scale == 0:
                continue
            for sgn, out in ((1.0, lo), (-1.0, hi)):
                # a unit objective: HiGHS's optimality tolerance is absolute, so a row of W with
                # entries of 1e-8 was no objective at all to it (any feasible point came back)
                for method in ("highs", "highs-ipm"):
                    res = linprog(sgn * c / scale, A_ub=self.Gu, b_ub=b_ub, bounds=[(None, None)] * self.p,
                                  method=method)
                    if res.status in (0, 2):
                        break
                if res.status == 2:
                    return None
                if res.status != 0:
                    raise _LPFailure(f"the bounding box's LP on coordinate {i} failed: {res.message}")
                out[i] = self.x0[i] + c @ res.x
        return lo, hi

    def _to_x(self, y):
        return self._t + self._s * y

    def _check_bounded(self):
        """The recession cone {d : Gu d <= 0} must be {0}: 2p small LPs."""
        from scipy.optimize import linprog  # here, not at import: an import does no work
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

    @functools.cached_property
    def _feasible_point(self):
        """A point of the set in u (one LP, once per polytope), or None if it is empty."""
        if not self.consistent:
            return None
        if self.Gu.shape[0] == 0 or self.p == 0:   # no rows, or the single point x0 of the equalities
            ok = np.all(self.hu >= -self._tol * (1 + np.abs(self.hu)))
            return np.zeros(self.p) if ok else None
        from scipy.optimize import linprog  # here, not at import: an import does no work
        res = linprog(np.zeros(self.p), A_ub=self.Gu, b_ub=self.hu + self._tol * (1 + np.abs(self.hu)),
                      bounds=[(None, None)] * self.p, method="highs")
        return res.x if res.status == 0 else None

    def center(self, method: str = "auto", **options: Any) -> CenterResult:
        """The Chebyshev center by ``method``: ``auto`` (the default, as for every set type),
        any estimator of the box slices' interval rows (``exact``, ``rcc1``, ``rcc2``, ...), or
        ``inscribed`` (the largest inscribed ball, for comparison).

        The set is the box slice ``{y in box : -inf <= G y <= h, A_eq y = b_eq}`` of its
        normalised frame (docs/theory.md, "General sets"), the box its bounding box: the
        reduction of a polytope to the one problem every method solves, so a polytope gets
        the box slices' methods, options, statuses and extras (lengths and points mapped back
        to x). An empty set is INFEASIBLE; an enumeration past its limits TOO_LARGE.
        """
        spec, route, opts = choose_set_method("polytope", method, options)
        t0 = time.perf_counter()
        if self._lp_failure is not None:
            return nan_result(self.d, Status.SOLVER_ERROR, spec.name, t0, check=self._lp_failure)
        if self._feasible_point is None or self._box is None:
            return nan_result(self.d, Status.INFEASIBLE, spec.name, t0)
        if route is not None:
            return route.func(self, t0, **opts)
        sl, lower, upper, thin = self._reduced
        if sl is None:   # one point up to the tolerance: every estimate is that point
            point, radius = lower, thin
            extras = {"note": "the set is a single point up to the feasibility tolerance; radius: half the "
                              "diagonal of the box its rows (or its LPs) pin it to"}
            if any(e.name == "radius_lower" for e in spec.all_extras()):
                extras["radius_lower"] = 0.0
            return CenterResult(self._to_x(point), radius * self._s, Status.OPTIMAL, spec.name,
                                time.perf_counter() - t0, extras=extras)
        res = sl.center(method=spec.name, lower=lower, upper=upper, **options)
        extras = {key: _extra_to_x(self, spec.extra(key).unit, val) for key, val in (res.extras or {}).items()}
        if thin and "radius_lower" in extras:   # the set moved by at most thin
            extras["radius_lower"] = max(extras["radius_lower"] - thin * self._s, 0.0)
        center = self._to_x(res.center)   # NaN stays NaN
        # the residual and box violation of a box slice's row mean nothing for the polytope
        return dataclasses.replace(res, center=center, radius=(res.radius + thin) * self._s, extras=extras,
                                   time=time.perf_counter() - t0, residual=float("nan"),
                                   box_violation=float("nan"))

    @functools.cached_property
    def _reduced(self):
        """The set as a box slice of the normalised frame: ``(BoxSlice, lower, upper, thin)``,
        or ``(None, point, None, radius)`` for a set that is one point up to the tolerance.

        The box is the bounding box widened by a millionth of its width (a redundant box: the
        LPs' tolerances cannot make it cut the set). A coordinate the data fix (constant on the
        equalities' affine set, or held between two opposite unit rows closer than the
        tolerance) is fixed at its middle, as a box slice fixes ``lo == hi``, where every row
        that reads another coordinate moves by less than its own tolerance; ``thin`` is the
        norm of the half-extents so dropped, which every radius adds (a bound stays one). The
        LPs' box alone never fixes a coordinate: its accuracy is HiGHS's, not the data's.
        Built once per polytope: its factors and tables serve every later call."""
        from .box_slice import BoxSlice

        lo, hi = self._box
        d = self.d
        A = np.vstack([self._G1, self._A1])
        b = (self._b1 - self._A1 @ self._t) / self._s
        rhs = np.concatenate([self._hy, b])
        mid, half = 0.5 * (lo + hi), np.zeros(d)
        fixed = np.zeros(d, dtype=bool)
        reach = float(np.linalg.norm(hi - lo) + np.linalg.norm(mid - self.x0))   # >= ||y - x0|| over the box
        for i in range(d):
            w = np.linalg.norm(self.W[i])
            if w <= 1e-12:   # constant on the affine set: y_i = x0_i + W[i] u, |W[i] u| <= w reach
                fixed[i], mid[i], half[i] = True, self.x0[i], w * reach
                continue
            up = self._hy[np.all(self._G1 == np.eye(d)[i], axis=1)]
            down = self._hy[np.all(self._G1 == -np.eye(d)[i], axis=1)]
            if up.size and down.size:   # -min(down) <= y_i <= min(up)
                top, bottom = up.min(), -down.min()
                if top - bottom <= 2 * self._tol * (1 + abs(top) + abs(bottom)):
                    fixed[i], mid[i], half[i] = True, 0.5 * (top + bottom), max(0.5 * (top - bottom), 0.0)
        move = np.abs(A) @ half
        reads_free = np.any(A[:, ~fixed] != 0, axis=1)
        tol = self.feas_tol * (np.abs(A[:, ~fixed]) @ (hi - lo)[~fixed] + np.abs(rhs))
        if not fixed.all() and np.any(reads_free & (move > tol)):
            fixed[:], half[:], move[:] = False, 0.0, 0.0
        if fixed.all():
            return None, mid, None, float(np.linalg.norm(half))
        if self._point:   # the LPs pin every coordinate, the data do not: the box's middle and half-diagonal
            return None, 0.5 * (lo + hi), None, float(np.linalg.norm(hi - lo)) / 2
        pad = 1e-6 * float(np.max(hi - lo)) + self._tol
        blo, bhi = np.where(fixed, mid, lo - pad), np.where(fixed, mid, hi + pad)
        # the inequalities' bounds grow by the move, so the set solved holds every moved point,
        # and the radius + thin bounds the set; an inequality the box implies (it holds at
        # every point of the box, so it cuts nothing) is left out, with its rounding
        n_in = self._G1.shape[0]
        h_in = self._hy + move[:n_in]
        G = self._G1
        keep = G @ (0.5 * (blo + bhi)) + np.abs(G) @ (0.5 * (bhi - blo)) > h_in
        A = np.vstack([G[keep], self._A1])
        lower = np.concatenate([np.full(int(keep.sum()), -np.inf), b])
        upper = np.concatenate([h_in[keep], b])
        return BoxSlice(A, blo, bhi, feas_tol=self.feas_tol), lower, upper, float(np.linalg.norm(half))

    def vertices(self, max_vertices: int = 1_000_000) -> np.ndarray | None:
        """The vertices of the set (x-space, one per row), listed on the box slice it reduces
        to (:meth:`center`): the points where ``dim`` linearly independent constraints are
        active; None past ``max_vertices``. A vertex within a row's tolerance of a nearly
        parallel row's face may be merged into its neighbours.

        Examples
        --------
        >>> import numpy as np, chebcenter as cc
        >>> simplex = cc.Polytope(np.vstack([-np.eye(2), np.ones((1, 2))]), np.r_[np.zeros(2), 1.0])
        >>> sorted((simplex.vertices().round(12) + 0.0).tolist())
        [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]]
        """
        sl, lower, upper, _ = self._reduced
        if sl is None:   # one point up to the tolerance
            return self._to_x(lower)[None, :]
        V = sl.vertices(max_vertices=max_vertices, lower=lower, upper=upper)
        return None if V is None else self._to_x(V)


#: how an extra of each unit maps from the normalised frame ``y`` to x = t + s y
_UNIT_TO_X = {
    "length": lambda P, v: v * P._s,
    "squared_length": lambda P, v: v * P._s * P._s,
    "point": lambda P, v: P._to_x(np.asarray(v)),
    "points": lambda P, v: None if v is None else P._to_x(np.asarray(v)),
}


def _extra_to_x(P, unit, val):
    """An extra of one row in the polytope's x coordinates."""
    fn = _UNIT_TO_X.get(unit)
    return val if fn is None else fn(P, val)
