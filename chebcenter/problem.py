"""The factored box slice ``S_F = {x in [lo, hi]^d : A x = b}`` and its dispatcher.

Every call is normalised at the door (``docs/theory.md#invariances``): coordinates with
``lo_i == hi_i`` are constants and are substituted into ``b``; the free coordinates are
translated to the box midpoint and divided by the largest half-width ``s``, so the methods
always see the box ``[-w, w]`` with ``max w = 1``. Centers are mapped back
(``x = mid + s z``) and radii multiplied by ``s``. For one scalar ``s > 0`` and any
vector ``t`` the map ``x -> s x + t`` therefore moves every center the same way and
scales every radius by ``s`` (``ls``, the minimum-norm solution, moves with the scale only:
its definition depends on the origin).

Before a batch is returned the library checks each OPTIMAL row against its method's
contract (:meth:`_Core.check_contract`): a center that claims S_F must lie in it; a row
that fails is moved into S_F (projection) with its radius enlarged by the move and
reported INACCURATE, with the reason in ``extras["check"]``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.optimize import linprog, lsq_linear

from ._errors import InvalidInputError
from ._validate import as_batch_rhs, as_bounds, as_matrix, as_positive_float, as_rhs, check_choice, check_options
from .kernels import closed_forms, linalg, projection
from .methods import REGISTRY, Context
from .methods.exact import slice_vertices
from .ranges import RANGES, FeatureRanges
from .results import BatchResult, CenterResult, Status

__all__ = ["BoxSlice", "chebyshev_center"]

_PROJECT_MAXIT = 200
#: a center of an S_F method may leave the box by this much (in units of the largest box
#: half-width) before clipping; more means the solver did not reach its optimum
CLIP_TOL = 1e-7
#: relative residual ||A c - b|| allowed for a center that claims S (backward error, in
#: units of ||A|| (||c|| + 1) + ||b||)
MEMBERSHIP_TOL = 1e-9
_EPS = np.finfo(np.float64).eps

#: how each per-row extra changes unit when the core's answer is mapped back
_LENGTH_EXTRAS = ("radius_lower", "rhs_residual", "clipped", "moved")
_SQUARED_EXTRAS = ("eta",)
_POINT_EXTRAS = ("support", "vertices")
_COORDINATE_EXTRAS = ("alpha",)
_POINT_ROWS_EXTRAS = ("lower", "upper")


class _Core:
    """The normalised problem the methods see: free coordinates only, box ``[-w, w]``
    (``max w = 1``, midpoint 0), A factored once by its SVD.

    Attributes used by the methods: ``A`` (m x d), ``lo``, ``hi``, ``mid`` (zeros), ``m``,
    ``d``, ``rank``, ``p``, ``Vr`` (r x d orthonormal rows), ``W`` (d x p), ``Ur`` (m x r),
    ``s_r``, ``sigma_max``, ``null_projector``, ``p_mid`` (= P mid = 0), ``origin`` and
    ``p_origin`` (the user's origin in these coordinates and its null-space part, for
    ``ls``), ``half_diag_sq``, ``box_tol``, ``cond`` (sigma_max / sigma_r).
    """

    def __init__(self, A, w, origin, rank_tol, feas_tol):
        m, d = A.shape
        if m > 0:
            U, s, Vt = np.linalg.svd(A, full_matrices=True)
        else:
            U, s, Vt = np.zeros((0, 0)), np.zeros(0), np.eye(d)
        self.sigma_max = float(s[0]) if s.size else 0.0
        if rank_tol is None:
            rank_tol = self.sigma_max * max(m, d) * _EPS
        r = int(np.sum(s > rank_tol))
        self.A = np.ascontiguousarray(A)
        self.m, self.d, self.rank, self.p = m, d, r, d - r
        self.Ur = np.ascontiguousarray(U[:, :r])
        self.s_r = np.ascontiguousarray(s[:r])
        self.cond = float(s[0] / s[r - 1]) if r else 1.0
        self.Vr = np.ascontiguousarray(Vt[:r])
        W = np.ascontiguousarray(Vt[r:].T)
        # a coordinate whose row of W is rounding noise is constant on S (determined by
        # A x = b): its row is set to exactly 0, so no method can lean on a box
        # constraint that only rounding makes look active (docs/theory.md)
        self.determined = np.linalg.norm(W, axis=1) <= 64.0 * _EPS * max(m, d)
        W[self.determined] = 0.0
        self.W = W
        self.null_projector = self.W @ self.W.T
        self.lo, self.hi = -w, w.copy()
        self.mid = np.zeros(d)
        self.p_mid = np.zeros(d)
        self.origin = origin
        self.p_origin = self.null_projector @ origin
        self.half_diag_sq = float(w @ w)
        self.feas_tol = feas_tol
        self.box_tol = 2.0 * feas_tol
        #: feasibility per coordinate, at its own scale: the box tolerance, but never more than
        #: feas_tol of the coordinate's width, nor less than the rounding of a computed
        #: coordinate (a coordinate 1e-8 as wide as the largest was allowed a slack of 27 % of
        #: its width, and vertices merged along it: docs/theory.md §6.2)
        self.coord_tol = np.minimum(self.box_tol, np.maximum(feas_tol * (self.hi - self.lo), 64.0 * _EPS * d))
        self._project_tol = 1e-11 * (1.0 + float(np.linalg.norm(w)))

    def q_of(self, b):
        """``A^+ b`` from the orthogonal factors (stable for any condition number)."""
        return self.Vr.T @ ((self.Ur.T @ b) / self.s_r) if self.rank else np.zeros(self.d)

    # -- one batch --------------------------------------------------------------------
    def solve(self, B, extra_scale, spec, opts, on_inconsistent):
        """Centers of the normalised rows ``B`` (all finite); returns
        ``(centers, radii, codes, extras)`` in these coordinates."""
        N, d = B.shape[0], self.d
        Q, H = np.empty((N, d)), np.empty((N, d))
        residual, violation = np.empty(N), np.empty(N)
        closed_forms.prepare_rows(B, self.Ur, self.s_r, self.Vr, self.p_mid, self.lo, self.hi,
                             Q, H, residual, violation)
        codes = np.zeros(N, dtype=np.int8)
        scale = np.linalg.norm(B, axis=1) + self.sigma_max * np.sqrt(self.half_diag_sq) + extra_scale
        consistent = residual <= self.feas_tol * np.maximum(scale, 1e-300)
        if on_inconsistent == "status":
            codes[~consistent] = Status.INFEASIBLE
        elif self.rank and not consistent.all():  # the nearest consistent right-hand sides
            B = linalg.rows_times(linalg.rows_times(B, self.Ur.T), self.Ur)
        inside = (codes == Status.OPTIMAL) & (violation <= self.box_tol)
        if inside.any():   # and within each coordinate's own tolerance (a narrow one gets no wider slack)
            Hi = H[inside]
            inside[inside] = np.all((Hi >= self.lo - self.coord_tol) & (Hi <= self.hi + self.coord_tol), axis=1)
        outside, proj_out, feasible_out = self._project_outside(Q, codes == Status.OPTIMAL, inside)
        codes[outside[~feasible_out]] = Status.INFEASIBLE
        rows = np.flatnonzero(codes == Status.OPTIMAL)
        every = rows.size == N
        extras: dict[str, Any] = {"rhs_residual": residual}
        centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
        if rows.size:
            take = (lambda a: a) if every else (lambda a: a[rows])
            ball = np.empty(rows.size)
            Hr = take(H)
            closed_forms.ball_radii(Hr, self.mid, self.half_diag_sq, ball)
            pos = np.full(N, -1, dtype=np.int64)
            pos[rows] = np.arange(rows.size)
            ctx = Context(self, rows, take(B), take(Q), Hr, ball, opts,
                          outside=pos[outside[feasible_out]], proj_outside=proj_out[feasible_out])
            out = spec.func(ctx)
            if self.p == 0 and spec.lies_in != "box":  # S_F = {q}: every estimate of S_F is q, radius 0
                # (half, the know-nothing baseline, stays the box midpoint with its half-diagonal)
                ok = out.codes <= Status.INACCURATE
                out.centers[ok] = ctx.Q[ok]
                out.radii[ok] = 0.0
            codes[rows], centers[rows], radii[rows] = out.codes, out.centers, out.radii
            for key, val in out.extras.items():
                extras[key] = val if every else _scatter(val, rows, N)
        bad = codes > Status.INACCURATE
        centers[bad] = np.nan
        radii[bad] = np.nan
        if spec.lies_in in ("S_F", "S"):
            self.check_contract(spec, B, centers, radii, codes, extras)
        return centers, radii, codes, extras

    def check_contract(self, spec, B, centers, radii, codes, extras):
        """Hold every row to its method's promise (in place).

        * ``lies_in == "S_F"``: the center left the box by at most CLIP_TOL before clipping
          and ``||A c - b|| <= MEMBERSHIP_TOL (||A|| (||c|| + 1) + ||b||)`` after it. A row
          that fails is projected onto S_F (compiled dual Newton), its radius grows by the
          distance moved (``extras["moved"]``; the triangle inequality keeps it a bound)
          and an OPTIMAL status becomes INACCURATE.
        * ``lies_in == "S"``: the residual test alone; a failing row becomes INACCURATE.
        """
        ok = np.flatnonzero(codes <= Status.INACCURATE)
        reason = np.full(codes.size, None, dtype=object)
        if spec.lies_in == "S_F":
            clipped = np.zeros(codes.size)
            before = centers[ok]
            after = np.clip(before, self.lo, self.hi)
            clipped[ok] = np.max(np.abs(after - before), axis=1, initial=0.0)
            centers[ok] = after
            extras["clipped"] = clipped
        res = np.full(codes.size, np.nan)
        viol = np.full(codes.size, np.nan)
        closed_forms.check_rows(centers, self.A, B, self.lo, self.hi, res, viol)
        norms = np.linalg.norm(centers[ok], axis=1)
        tol = MEMBERSHIP_TOL * (self.sigma_max * (norms + 1.0) + np.linalg.norm(B[ok], axis=1))
        off = ok[res[ok] > tol]
        if spec.lies_in == "S_F":
            far = ok[clipped[ok] > CLIP_TOL]
            reason[far] = "the solver's center left the box (moved into S_F)"
            reason[off] = "the center was off A x = b (moved into S_F)"
            fix = np.union1d(far, off)
            if fix.size:
                self._move_into_slice(B, centers, radii, codes, fix, reason, extras)
        else:
            reason[off] = "the center is off A x = b beyond rounding"
        failed = reason != None  # noqa: E711  (object array)
        codes[failed & (codes == Status.OPTIMAL)] = Status.INACCURATE
        earlier = extras.get("check")  # the method's own findings come first
        if earlier is not None:
            both = [a if b is None else (b if a is None else f"{a}; {b}") for a, b in zip(earlier, reason)]
            reason = np.array(both + [None], dtype=object)[:-1]
        if failed.any() or earlier is not None:
            extras["check"] = reason

    def _move_into_slice(self, B, centers, radii, codes, fix, reason, extras):
        """Project the failing centers onto S_F; radius += distance moved."""
        moved = extras.setdefault("moved", np.zeros(codes.size))
        Beta = linalg.rows_times(B[fix], self.Ur.T) / self.s_r if self.rank else np.zeros((fix.size, 0))
        C = np.ascontiguousarray(centers[fix])
        X = np.empty_like(C)
        state = np.zeros(fix.size, dtype=np.int64)
        its = np.zeros(fix.size, dtype=np.int64)
        projection.project_points(C, self.Vr, Beta, self.lo, self.hi, X, state, its,
                               _PROJECT_MAXIT, self._project_tol)
        done = state == projection.PROJECTED
        for j in np.flatnonzero(~done):  # the projection did not converge (a slice that is
            x, how = self._slice_point(B[fix[j]], Beta[j])  # nearly a point): any point of S_F keeps the bound
            if x is not None:
                X[j], done[j] = x, True
                reason[fix[j]] = f"{reason[fix[j]]}; moved to {how} point of S_F (the projection did not converge)"
        shift = np.linalg.norm(X - C, axis=1)
        good, lost = fix[done], fix[~done]
        centers[good] = X[done]
        radii[good] += shift[done]
        moved[good] = shift[done]
        centers[lost] = np.nan
        radii[lost] = np.nan
        codes[lost] = Status.SOLVER_ERROR
        reason[lost] = "the solver's center was off S_F and could not be moved into it"

    def _project_outside(self, Q, candidates, inside):
        """Decide S_F != {} for the candidate rows whose half* point is outside the box.

        Rows with h in the box are feasible (h is the projection of the midpoint onto
        S_F). The others go to the compiled dual Newton projection, which either
        projects, or certifies emptiness (a dual point above the largest primal value);
        only a row it leaves undecided is given to an LP (HiGHS). A feasible row it could
        not project keeps a NaN projection for the method. Returns ``(outside, proj,
        feasible)`` over the outside rows.
        """
        outside = np.flatnonzero(candidates & ~inside)
        X = np.full((outside.size, self.d), np.nan)
        feasible = np.zeros(outside.size, dtype=bool)
        if outside.size == 0 or self.p == 0:  # p = 0: the unique solution is outside
            return outside, X, feasible
        beta = linalg.rows_times(Q[outside], self.Vr)
        state = np.zeros(outside.size, dtype=np.int64)
        iters = np.zeros(outside.size, dtype=np.int64)
        projection.project_rows(self.mid, self.Vr, beta, self.lo, self.hi, X, state, iters,
                             _PROJECT_MAXIT, self._project_tol)
        # a projection meets Vr x = beta to an absolute tolerance; each equation must also hold
        # at its own scale, or an equation on a coordinate narrower than that tolerance is
        # "met" while its value lies widths outside the coordinate's box: such a row goes to the LP
        done = np.flatnonzero(state == projection.PROJECTED)
        if done.size:
            Bd = linalg.rows_times(Q[outside[done]], self.A)
            off = np.any(np.abs(linalg.rows_times(X[done], self.A) - Bd) > self._row_tol(Bd), axis=1)
            if off.any():   # first projected again to near rounding (Newton converges fast), then judged
                redo = done[off]
                Xr = np.full((redo.size, self.d), np.nan)
                sr = np.zeros(redo.size, dtype=np.int64)
                projection.project_rows(self.mid, self.Vr, np.ascontiguousarray(beta[redo]), self.lo, self.hi, Xr, sr,
                                     np.zeros(redo.size, dtype=np.int64), _PROJECT_MAXIT, 1e-3 * self._project_tol)
                Br = Bd[off]
                still = (sr != projection.PROJECTED) | np.any(
                    np.abs(linalg.rows_times(np.nan_to_num(Xr), self.A) - Br) > self._row_tol(Br), axis=1)
                X[redo] = Xr
                state[redo[still]] = projection.UNDECIDED
        feasible[state == projection.PROJECTED] = True
        X[state != projection.PROJECTED] = np.nan
        for k in np.flatnonzero(state == projection.UNDECIDED):
            feasible[k] = self._lp_feasible(self.A @ Q[outside[k]])
        return outside, X, feasible

    def _lp_point(self, beta):
        """A point of ``{x : Vr x = beta, lo <= x <= hi}`` (HiGHS; clipped to the box), or None."""
        res = linprog(np.zeros(self.d), A_eq=self.Vr, b_eq=beta,
                      bounds=list(zip(self.lo - self.box_tol, self.hi + self.box_tol)), method="highs")
        return np.clip(res.x, self.lo, self.hi) if res.status == 0 else None

    def _row_tol(self, B):
        """Per row of ``B`` (right-hand sides) and equation i, the residual ``|a_i^T x - b_i|``
        allowed a point of S_F: ``feas_tol (sum_j |a_ij| (hi_j - lo_j) + |b_i|)``, relative to
        what the equation reaches over the box, plus the rounding of ``a_i^T x`` for a computed
        x: the methods compute on the normalised box ``[-w, w]`` with ``max w = 1``, where a
        coordinate carries an absolute error of a few eps whatever its own width, so the
        rounding term is ``32 eps d sum_j |a_ij|``."""
        absA = np.abs(self.A)
        reach = absA @ (self.hi - self.lo)
        rounding = 32.0 * _EPS * self.d * absA.sum(axis=1)
        return self.feas_tol * (reach + np.abs(B)) + rounding

    def _lp_feasible(self, b):
        """Is S_F nonempty at the tolerances of docs/theory.md §6.2? (HiGHS LP)

        ``|a_i^T x - b_i| <= tau_i`` for every equation, with ``tau_i = feas_tol (sum_j
        |a_ij| w_j + |b_i|)`` plus rounding: relative to what that row can reach over the
        box, so an equation on a narrow coordinate is held at that coordinate's scale; and
        ``lo - coord_tol <= x <= hi + coord_tol``, per coordinate. Each inequality is
        divided by its row's scale, and HiGHS runs at its tightest feasibility tolerance
        (1e-10, against its default 1e-7, which is larger than a coordinate 1e-8 as wide
        as the box: a value pinned five widths outside such a coordinate was taken as
        feasible by every method)."""
        res = linprog(np.zeros(self.d), **self.tolerance_lp(b))
        return res.status == 0

    def tolerance_lp(self, b):
        """The constraints of S_F at its tolerances, as ``linprog`` keyword arguments (HiGHS):
        ``|a_i^T x - b_i| <= tau_i`` (:meth:`_row_tol`) with each row divided by its reach
        ``sum_j |a_ij| (hi_j - lo_j) + |b_i|``, the box widened by ``coord_tol``, HiGHS at its
        tightest feasibility tolerances. Every point of S_F satisfies them."""
        reach = np.maximum(np.abs(self.A) @ (self.hi - self.lo) + np.abs(b), 1e-300)
        tau = self._row_tol(b[None, :])[0]
        G = self.A / reach[:, None]
        return {"A_ub": np.vstack([G, -G]), "b_ub": np.concatenate([(b + tau) / reach, -(b - tau) / reach]),
                "bounds": list(zip(self.lo - self.coord_tol, self.hi + self.coord_tol)), "method": "highs",
                "options": {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}}

    def _slice_point(self, b, beta):
        """A point of S_F for a row the compiled projection could not move: ``(x, how)``,
        with ``how`` naming the route, or ``(None, ...)``.

        First the box-constrained least-squares point ``argmin_{lo <= x <= hi} ||A x - b||``
        (scipy's BVLS): it lies in the box exactly and its residual is the smallest any box
        point has, so it passes the membership test whenever S_F is nonempty up to the
        rounding of b. The LP point is the fallback: HiGHS meets ``Vr x = beta`` to its
        feasibility tolerance (1e-7) in the coordinates of Row(A), which on an
        ill-conditioned A is more than the membership test allows in b's (measured: a
        residual of 5e-8 where the test allows 1.4e-8, on a slice with sigma_min 4e-9)."""
        res = lsq_linear(self.A, b, bounds=(self.lo, self.hi), method="bvls", tol=1e-12)
        if res.x is not None and np.all(np.isfinite(res.x)):
            x = np.clip(res.x, self.lo, self.hi)
            tol = MEMBERSHIP_TOL * (self.sigma_max * (np.linalg.norm(x) + 1.0) + np.linalg.norm(b))
            if np.linalg.norm(self.A @ x - b) <= tol:
                return x, "the box least-squares"
        return self._lp_point(beta), "an LP"


class BoxSlice:
    r"""A box slice ``S_F = {x : A x = b, lo <= x <= hi}`` with ``A`` factored once.

    The Chebyshev center of a bounded set Q is
    ``argmin_c max_{x in Q} ||x - c||_2``: the center of the smallest ball
    *enclosing* Q, the best worst-case estimate of an unknown x known to lie
    in Q. It is **not** the center of the largest *inscribed* ball that LP
    texts, pypoman or polytope call by the same name.

    Parameters
    ----------
    A : array_like, shape (m, d)
        The shared system matrix (m = 0 rows is allowed: then S_F is the box).
    lo, hi : float or array_like, shape (d,)
        Box bounds, ``lo <= hi``. A coordinate with ``lo_i == hi_i`` is a constant: it is
        substituted into ``b`` and removed before any method runs.
    rank_tol : float, optional
        Singular values of ``A`` restricted to the free coordinates that are
        ``<= rank_tol`` count as zero. Default ``sigma_max * max(m, d) * eps``
        (NumPy's ``matrix_rank`` rule).
    feas_tol : float, default 1e-9
        Relative tolerance of the consistency test ``dist(b, Col A) <= feas_tol *
        (||b|| + ||A|| ||x-scale||)`` and of box membership (in units of the largest box
        half-width).

    Attributes
    ----------
    rank, p : int
        ``r = rank(A)`` and ``p = d - r`` (of the full A, as given).
    Vr : ndarray, shape (r, d)
        Orthonormal basis of Row(A) (leading right singular vectors).
    W : ndarray, shape (d, p)
        Orthonormal basis of Null(A) (trailing right singular vectors).
    A_pinv : ndarray, shape (d, m)
    null_projector : ndarray, shape (d, d)
        ``P = I - A^+ A = W W^T``.
    fixed : ndarray of bool, shape (d,)
        The coordinates with ``lo == hi``.
    scale : float
        The largest half-width of the free coordinates (the unit the methods work in).

    Notes
    -----
    The methods run on the normalised problem described in the module docstring; see
    ``docs/theory.md`` for why this makes every answer independent of the units.

    Examples
    --------
    >>> import numpy as np, chebcenter as cc
    >>> P = cc.BoxSlice([[1.0, -2.0]])
    >>> r = P.center([0.2], method="exact")
    >>> np.round(r.center, 6), round(r.radius ** 2, 6)
    (array([0.6, 0.2]), 0.2)
    >>> P.centers([[0.2], [0.0]], method="half_star").centers.shape
    (2, 2)
    """

    def __init__(self, A: Any, lo: Any = 0.0, hi: Any = 1.0, *,
                 rank_tol: float | None = None, feas_tol: float = 1e-9) -> None:
        A = as_matrix("A", A)
        m, d = A.shape
        lo_a, hi_a = as_bounds(lo, hi, d)
        self.feas_tol = as_positive_float("feas_tol", feas_tol)
        if rank_tol is not None:
            if isinstance(rank_tol, (bool, str)) or not np.isscalar(rank_tol) or np.iscomplexobj(rank_tol):
                raise InvalidInputError(f"rank_tol must be a real number >= 0 or None; got {rank_tol!r}")
            rank_tol = float(rank_tol)
            if not np.isfinite(rank_tol) or rank_tol < 0:
                raise InvalidInputError(f"rank_tol must be a finite number >= 0; got {rank_tol!r}")
        self.rank_tol = rank_tol
        self.A, self.lo, self.hi = A, lo_a, hi_a
        self.m, self.d = m, d
        # the full A's factors (public; the theory functions use them)
        if m > 0:
            U, s, Vt = np.linalg.svd(A, full_matrices=True)
        else:
            U, s, Vt = np.zeros((0, 0)), np.zeros(0), np.eye(d)
        tol = s[0] * max(m, d) * _EPS if (rank_tol is None and s.size) else (rank_tol or 0.0)
        r = int(np.sum(s > tol))
        self.rank, self.p = r, d - r
        self.singular_values = s
        self.sigma_max = float(s[0]) if s.size else 0.0
        self.Vr = np.ascontiguousarray(Vt[:r])
        self.W = np.ascontiguousarray(Vt[r:].T)
        self.A_pinv = np.ascontiguousarray((self.Vr.T / s[:r]) @ U[:, :r].T) if r else np.zeros((d, m))
        self.null_projector = self.W @ self.W.T
        self.mid = 0.5 * (lo_a + hi_a)
        self.p_mid = self.null_projector @ self.mid
        self.half_diag_sq = float(np.sum((0.5 * (hi_a - lo_a)) ** 2))
        self.box_tol = self.feas_tol * (1.0 + float(np.max(np.maximum(np.abs(lo_a), np.abs(hi_a)))))
        # the normalisation: constants out, free coordinates to [-w, w] with max w = 1
        self.fixed = lo_a == hi_a
        self._free = np.flatnonzero(~self.fixed)
        half = 0.5 * (hi_a - lo_a)
        self.scale = float(half[self._free].max()) if self._free.size else 1.0
        self._shift = np.where(self.fixed, lo_a, self.mid)
        self._offset = A @ self._shift if m else np.zeros(0)
        self._offset_norm = float(np.linalg.norm(self._offset))
        self._core = None
        if self._free.size:
            w = half[self._free] / self.scale
            origin = -self._shift[self._free] / self.scale
            self._core = _Core(np.ascontiguousarray(A[:, self._free]), w, origin,
                               None if rank_tol is None else rank_tol, self.feas_tol)

    def __repr__(self) -> str:
        return f"BoxSlice(m={self.m}, d={self.d}, rank={self.rank}, p={self.p})"

    # -- public API -----------------------------------------------------------------
    def center(self, b: Any, method: str = "exact", *, on_inconsistent: str = "status",
               **options: Any) -> CenterResult:
        """Chebyshev center estimate of S_F for one right-hand side.

        Parameters
        ----------
        b : array_like, shape (m,)
        method : str
            One of :data:`chebcenter.METHODS`; see ``docs/chebcenter.md``.
        on_inconsistent : {"status", "project"}
            What to do when ``A x = b`` has no solution: ``"status"`` reports
            INFEASIBLE with a NaN center; ``"project"`` replaces b by its
            projection ``A A^+ b`` onto Col(A) (the nearest consistent
            right-hand side; useful for noisy b) and reports the residual.
        **options
            Method options (e.g. ``solver=`` for rcc1/rcc2, ``max_vertices=``
            for exact).

        Returns
        -------
        CenterResult

        Examples
        --------
        >>> import chebcenter as cc
        >>> r = cc.BoxSlice([[1.0, 1.0, 1.0]]).center([1.5], method="exact")
        >>> r.center.round(6).tolist(), round(r.radius, 6), r.status.name
        ([0.5, 0.5, 0.5], 0.707107, 'OPTIMAL')
        >>> cc.BoxSlice([[1.0, 1.0]]).center([3.0], method="half_star").status.name
        'INFEASIBLE'
        """
        b = as_rhs("b", b, self.m)
        res = self.centers(b[None, :], method, on_inconsistent=on_inconsistent, **options)
        return res[0]

    def centers(self, B: Any, method: str = "half_star", *, on_inconsistent: str = "status",
                **options: Any) -> BatchResult:
        """Centers for a batch ``B`` of shape (N, m), one right-hand side per row.

        The factorisation is shared; closed forms run as compiled batch kernels.
        A row that is infeasible or fails gets its own status; a row of B that is not
        finite gets INVALID_INPUT; the batch never stops on one row. An empty batch
        (N = 0) returns empty arrays. See :meth:`center` for the arguments.

        Examples
        --------
        >>> import numpy as np, chebcenter as cc
        >>> P = cc.BoxSlice([[1.0, 1.0]])
        >>> br = P.centers(np.array([[1.0], [0.5], [3.0], [np.nan]]), method="rcc2")
        >>> br.centers.round(3).tolist()[:2], br.counts()
        ([[0.5, 0.5], [0.25, 0.25]], {'OPTIMAL': 2, 'INFEASIBLE': 1, 'INVALID_INPUT': 1})
        """
        method = check_choice("method", method, REGISTRY)
        spec = REGISTRY[method]
        on_inconsistent = check_choice("on_inconsistent", on_inconsistent, ("status", "project"))
        opts = check_options(spec, options)
        B = as_batch_rhs("B", B, self.m, allow_nonfinite=True)
        return self._run(B, spec, opts, on_inconsistent)

    def feature_ranges(self, B: Any, *, on_inconsistent: str = "status") -> FeatureRanges:
        """``[min x_i, max x_i]`` over S_F for every row of ``B`` and every coordinate i.

        These are 2 d linear programs per row over the one shared A, solved by compiled
        kernels on the normalised problem: a closed form when rank A = 1 (the fractional
        knapsack bound: the range of ``x_i`` is an interval intersection), else a
        bounded-variable simplex warm-started from one coordinate's LP to the next
        (docs/theory.md §6.6). Every vertex of S_F lies in the product of the intervals and
        every endpoint is attained by a point of S_F. Rows with S_F empty are INFEASIBLE
        with NaN intervals; non-finite rows are INVALID_INPUT.

        Examples
        --------
        >>> import chebcenter as cc
        >>> r = cc.BoxSlice([[1.0, 1.0]]).feature_ranges([[1.5], [0.2]])
        >>> r.lower.round(12).tolist(), r.upper.round(12).tolist()
        ([[0.5, 0.5], [0.0, 0.0]], [[1.0, 1.0], [0.2, 0.2]])
        >>> r.pinned(0.25).tolist()          # width <= 25 % of the box side
        [[False, False], [True, True]]
        """
        on_inconsistent = check_choice("on_inconsistent", on_inconsistent, ("status", "project"))
        B = as_batch_rhs("B", B, self.m, allow_nonfinite=True)
        res = self._run(B, RANGES, {}, on_inconsistent)
        lower, upper = res.extras.get("lower"), res.extras.get("upper")
        if lower is None:  # every coordinate fixed (or no finite row): the point lo
            lower = upper = np.broadcast_to(self.lo, (B.shape[0], self.d))
        bad = res.status_codes > Status.INACCURATE
        lower, upper = lower.copy(), upper.copy()
        lower[bad] = np.nan
        upper[bad] = np.nan
        return FeatureRanges(lower, upper, res.status_codes, res.time, self.lo.copy(), self.hi.copy())

    def _run(self, B, spec, opts, on_inconsistent):
        """Solve the checked batch ``B`` with ``spec`` (a method's table entry)."""
        method = spec.name
        t0 = time.perf_counter()
        N, d = B.shape[0], self.d
        finite = np.all(np.isfinite(B), axis=1)
        good = np.flatnonzero(finite)
        every = good.size == N
        Bg = B if every else B[good]
        centers = np.full((N, d), np.nan)
        radii = np.full(N, np.nan)
        codes = np.full(N, Status.INVALID_INPUT, dtype=np.int8)
        extras: dict[str, Any] = {}
        if spec.to_frame is not None and self._core is not None:
            opts = spec.to_frame(self, opts, good, N)
        if good.size:
            zc, rc, cc_, ex = self._solve_normalised(Bg, spec, opts, on_inconsistent)
            rows = slice(None) if every else good
            centers[rows], radii[rows], codes[rows] = zc, rc, cc_
            for key, val in ex.items():
                extras[key] = val if every else _scatter(val, good, N)
        else:
            extras["rhs_residual"] = np.full(N, np.nan)
        residuals = np.full(N, np.nan)
        box_viol = np.full(N, np.nan)
        if N:
            Bc = np.where(finite[:, None], B, 0.0)
            closed_forms.check_rows(centers, self.A, Bc, self.lo, self.hi, residuals, box_viol)
            if not every:
                residuals[~finite] = np.nan
        return BatchResult(centers, radii, codes, method, time.perf_counter() - t0,
                           residuals, box_viol, extras)

    def vertices(self, b: Any, max_vertices: int = 1_000_000):
        """The vertices of S_F for one right-hand side, one per row (None past ``max_vertices``).

        Examples
        --------
        >>> import chebcenter as cc
        >>> cc.BoxSlice([[1.0, 1.0]]).vertices([1.0]).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """

        b = as_rhs("b", b, self.m)
        if self._core is None:
            return self.lo[None, :].copy()
        core = self._core
        bc = (b - self._offset) / self.scale
        V = slice_vertices(core, core.q_of(bc), max_vertices)
        return None if V is None else self._to_original(V)

    def to_polytope(self, b: Any = None):
        """This slice for one right-hand side as a general :class:`chebcenter.Polytope`
        (``lo <= x <= hi`` as 2d rows, ``A x = b`` as equalities; the same centers).
        ``b`` is required unless A has no rows (then the polytope is the box).

        Examples
        --------
        >>> import chebcenter as cc
        >>> cc.BoxSlice([[1.0, -2.0]]).to_polytope([0.2]).center("exact").center.round(6).tolist()
        [0.6, 0.2]
        """
        from .sets import Polytope

        if b is None and self.m:
            raise InvalidInputError(f"b is required: a BoxSlice with {self.m} equations is a polytope only "
                                    "for a given right-hand side, e.g. P.to_polytope(b)")
        b = as_rhs("b", np.zeros(0) if b is None else b, self.m)
        G = np.vstack([np.eye(self.d), -np.eye(self.d)])
        return Polytope(G, np.concatenate([self.hi, -self.lo]), self.A if self.m else None, b if self.m else None)

    # -- internals --------------------------------------------------------------------
    def _to_original(self, Z):
        """Points of the normalised problem (rows) in the user's coordinates."""
        X = np.broadcast_to(self._shift, Z.shape[:-1] + (self.d,)).copy()
        X[..., self._free] += self.scale * Z
        return X

    def _solve_normalised(self, B, spec, opts, on_inconsistent):
        """Normalise the finite rows B, solve on the core, map the answers back."""
        N = B.shape[0]
        if self._core is None:  # every coordinate fixed: S_F is {lo} or empty
            res = np.linalg.norm(B - self._offset, axis=1)
            scale = np.linalg.norm(B, axis=1) + self._offset_norm
            inside = res <= self.feas_tol * np.maximum(scale, 1e-300)
            if on_inconsistent == "project":
                inside[:] = True
            centers = np.where(inside[:, None], self.lo, np.nan)
            codes = np.where(inside, Status.OPTIMAL, Status.INFEASIBLE).astype(np.int8)
            return centers, np.where(inside, 0.0, np.nan), codes, {"rhs_residual": res}
        core, s = self._core, self.scale
        Bc = np.ascontiguousarray((B - self._offset) / s)
        extra = (np.linalg.norm(B, axis=1) + self._offset_norm) / s
        Z, radii, codes, extras = core.solve(Bc, extra, spec, opts, on_inconsistent)
        centers = self._to_original(Z)
        radii = radii * s
        mapped = {}
        for key, val in extras.items():
            if key in _LENGTH_EXTRAS:
                val = val * s
            elif key in _SQUARED_EXTRAS:
                val = val * s * s
            elif key in _POINT_EXTRAS:
                val = _map_objects(val, self._to_original)
            elif key in _POINT_ROWS_EXTRAS:
                val = self._to_original(val)
            elif key in _COORDINATE_EXTRAS:
                full = np.zeros((N, self.d))
                full[:, self._free] = val
                val = full
            mapped[key] = val
        return centers, radii, codes, mapped


def _map_objects(values, fn):
    out = np.empty(values.shape[0], dtype=object)
    for k, v in enumerate(values):
        out[k] = None if v is None else fn(np.asarray(v))
    return out


def _scatter(values: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Per-row values of the method's rows placed in an (n, ...) array; the rows the
    method did not see hold NaN (floats), 0 (integers, booleans) or None (objects)."""
    kind = values.dtype.kind
    fill = np.nan if kind == "f" else (0 if kind in "iub" else None)
    full = np.full((n,) + values.shape[1:], fill, dtype=values.dtype if kind in "fiub" else object)
    full[rows] = values
    return full


def chebyshev_center(A: Any, b: Any, method: str = "exact", lo: Any = 0.0, hi: Any = 1.0,
                     **options: Any) -> CenterResult:
    """Chebyshev center of ``{x : A x = b, lo <= x <= hi}`` for one system.

    Convenience for ``BoxSlice(A, lo, hi).center(b, method, **options)``; for
    many right-hand sides build the :class:`BoxSlice` once and call
    :meth:`BoxSlice.centers`.

    Examples
    --------
    >>> import chebcenter as cc
    >>> r = cc.chebyshev_center([[1.0, 1.0]], [1.0], method="exact")
    >>> r.center.round(6).tolist(), r.status.name
    ([0.5, 0.5], 'OPTIMAL')
    """
    return BoxSlice(A, lo=lo, hi=hi).center(b, method, **options)
