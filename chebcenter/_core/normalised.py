"""The normalised, factored box slice every method sees (:class:`_Core`).

Private module, below the methods: it holds A's SVD and the tolerances, and decides
feasibility (the compiled projection, then an LP at the tolerances). It runs no method;
:mod:`chebcenter.methods.dispatch` does, and :class:`chebcenter.BoxSlice` owns one core.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from ..kernels import closed_forms, linalg, projection
from ..kernels.linalg import EPS, rank_threshold

__all__ = ["BASIS_BUDGET", "CLIP_TOL", "_Core", "bound_size", "consistent_rows", "corner_radius"]

#: a center of an S_F method may leave the box by this much (in units of the largest box
#: half-width) before clipping; more means the solver did not reach its optimum
CLIP_TOL = 1e-7
#: the most bases ``Vr[:, F]`` whose smallest singular value is computed for the forward-error
#: bound (docs/theory.md §6.8); past it the largest inverse norm is estimated from this many
BASIS_BUDGET = 50_000
#: a basis whose elimination meets a pivot at most this (orthonormal rows) is singular, as in
#: the vertex enumeration (:func:`chebcenter.kernels.vertices.enumerate_vertices`)
BASIS_PIVOT_TOL = 1e-10


def corner_radius(core, X):
    """``max_{x in box} ||x - c||`` for each row c of X: the distance to the farthest box
    corner, a radius that bounds every subset of the box about any center."""
    return np.sqrt(np.sum(np.maximum(X - core.lo, core.hi - X) ** 2, axis=1))


def consistent_rows(R, B, tau):
    """The one consistency rule of equations ``A x = b`` (docs/theory.md §6.2), for slices and
    a lifted group's equations alike: a row is consistent where every equation's residual
    ``r_j`` at the least-squares point (``R = B - A A^+ B``, from orthogonal factors) is
    within its own ``tau_j`` (:meth:`_Core.bound_tol`), plus the residual's own rounding,
    ``8 eps ||b||`` (whatever cond(A) is)."""
    return np.all(np.abs(R) <= tau + 8.0 * EPS * np.linalg.norm(B, axis=1)[:, None], axis=1)


def bound_size(L, U):
    """Per row and bound, the larger finite one of ``|L|``, ``|U|`` (0 where both are infinite):
    the size of a bounded-error row's right-hand side, as the tolerances weigh it."""
    with np.errstate(invalid="ignore"):
        return np.maximum(np.where(np.isfinite(L), np.abs(L), 0.0), np.where(np.isfinite(U), np.abs(U), 0.0))


def _largest_inverse_norm(blocks):
    """The largest ``||B^{-1}||_2`` over a stack of square blocks, those singular at
    ``BASIS_PIVOT_TOL`` (relative to their largest singular value, at least 1) left out; 0 if
    every block is."""
    sv = np.linalg.svd(blocks, compute_uv=False)
    smin = sv[:, -1]
    smin = smin[smin > BASIS_PIVOT_TOL * np.maximum(sv[:, 0], 1.0)]
    return float(1.0 / smin.min()) if smin.size else 0.0


class _Core:
    """The normalised problem the methods see: free coordinates only, box ``[-w, w]``
    (``max w = 1``, midpoint 0), A factored once by its SVD.

    Attributes used by the methods: ``A`` (m x d), ``lo``, ``hi``, ``mid`` (zeros), ``m``,
    ``d``, ``rank``, ``p``, ``Vr`` (r x d orthonormal rows), ``W`` (d x p), ``Ur`` (m x r),
    ``s_r``, ``sigma_max``, ``null_projector``, ``p_mid`` (= P mid = 0), ``origin`` and
    ``p_origin`` (the user's origin in these coordinates and its null-space part, for
    ``ls``), ``half_diag_sq``, ``box_tol``, ``cond`` (sigma_max / sigma_r).
    """

    def __init__(self, A, w, origin, rank_tol, feas_tol, svd=None, offset_size=None):
        m, d = A.shape
        if svd is not None:   # A's full SVD, computed by the caller (BoxSlice shares its own)
            U, s, Vt = svd
        elif m > 0:
            U, s, Vt = np.linalg.svd(A, full_matrices=True)
        else:
            U, s, Vt = np.zeros((0, 0)), np.zeros(0), np.eye(d)
        self.sigma_max = float(s[0]) if s.size else 0.0
        #: the rank at working precision (NumPy's rule) and the resolved rank: a direction of the
        #: row space whose singular value is at most feas_tol sigma_max moves A x by no more than
        #: the consistency tolerance over the whole box, so b cannot resolve it (docs/theory.md
        #: §6.8); it is dropped, and the rows that lean on it are INACCURATE (``dropped``)
        #: and, at an offset, one whose singular value times the box's largest extent ``||w||`` is at
        #: most the rounding of the normalisation ``(b - A shift) / s``: ``offset_size`` (per
        #: equation, ``sum_i |a_ji| |shift_i| / s``) bounds ``|b_j|`` too, so that rounding is at most
        #: ``t_j = 16 eps offset_size_j`` and moves the slice along the direction by more than the box
        numeric = rank_threshold(s, (m, d))
        default = rank_tol is None
        #: the caller's rank_tol (None: the resolved rule above): the lifted groups' equations,
        #: rows of this A, are ranked with it too (:class:`chebcenter._core.lifting.LiftedGroup`)
        self.rank_tol_given = rank_tol
        if default:
            rank_tol = max(numeric, feas_tol * self.sigma_max)
            if offset_size is not None and m:
                rank_tol = max(rank_tol, 16.0 * EPS * float(np.linalg.norm(offset_size)) / float(np.linalg.norm(w)))
        r = int(np.sum(s > rank_tol))
        self._resolved = (r, int(np.sum(s > numeric)), default)
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
        self.determined = np.linalg.norm(W, axis=1) <= 64.0 * EPS * max(m, d)
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
        #: coordinate (the box tolerance alone would give a coordinate 1e-8 as wide as the largest
        #: a slack of 27 % of its width, and merge vertices along it: docs/theory.md §6.2)
        self.coord_tol = np.minimum(self.box_tol, np.maximum(feas_tol * (self.hi - self.lo), 64.0 * EPS * d))
        self._project_tol = 1e-11 * (1.0 + float(np.linalg.norm(w)))

    # -- the forward error of the computed slice (docs/theory.md §6.8) -----------------------
    @functools.cached_property
    def dropped(self):
        """How many directions of A's row space the resolved rank leaves out although they
        are above NumPy's rank rule: singular values in ``(sigma_max max(m, d) eps, rank_tol]``
        (docs/theory.md §6.8). Directions at NumPy's rule, the rounding level of A's own
        entries, are dependent by the library's definition and not counted. 0 where the
        caller set ``rank_tol``: the caller decides."""
        r, numeric, default = self._resolved
        return numeric - r if default else 0

    @functools.cached_property
    def basis_conditioning(self):
        """``(H, proven)``: ``H >= max_F ||Vr[:, F]^{-1}||_2`` over the bases F (r columns whose
        block is nonsingular at ``BASIS_PIVOT_TOL``), the Hoffman constant of ``{Vr x = beta,
        lo <= x <= hi}``: a box point ``g`` off ``Vr x = beta`` lies within ``H ||g||`` of the
        set. Exact over every basis up to ``BASIS_BUDGET`` of them (rank 1: ``1 / min |v_i|``);
        past it, the largest over that many bases drawn with a fixed seed, and ``proven`` False."""
        r, d = self.rank, self.d
        if r == 0:
            return 0.0, True
        Vr = self.Vr
        if r == 1:
            v = np.abs(Vr[0])
            v = v[v > BASIS_PIVOT_TOL]
            return (float(1.0 / v.min()) if v.size else 0.0), True
        count = math.comb(d, r)
        proven = count <= BASIS_BUDGET
        if proven:
            combs = np.array(list(itertools.combinations(range(d), r)), dtype=np.int64).reshape(-1, r)
        else:
            rng = np.random.default_rng(0)
            combs = np.sort(np.argsort(rng.random((BASIS_BUDGET, d)), axis=1)[:, :r], axis=1)
        worst = 0.0
        for start in range(0, combs.shape[0], 8192):
            worst = max(worst, _largest_inverse_norm(np.transpose(Vr[:, combs[start:start + 8192]], (1, 0, 2))))
        return worst, proven

    @functools.cached_property
    def _factor_residual(self):
        """A bound on ``||Ur^T A - diag(s_r) Vr||_2``: the SVD's backward error in the kept
        directions, measured, plus the rounding of measuring it."""
        if self.rank == 0:
            return 0.0
        R = self.Ur.T @ self.A - self.s_r[:, None] * self.Vr
        rounding = (self.m + 2) * EPS * (np.linalg.norm(np.abs(self.Ur).T @ np.abs(self.A))
                                          + self.sigma_max * np.linalg.norm(self.Vr))
        return float(np.linalg.norm(R) + rounding)

    def forward_error(self, B, Q, user=None, slack=None):
        """Per slice row (``A x = B``, ``q = A^+ b`` the row of ``Q``): ``e`` such that every box
        point x with ``|a_j^T x - b_j| <= rho_j + slack_j`` lies within ``e`` of the computed
        slice ``{x in box : Vr x = Vr q}`` (docs/theory.md §6.8).

        ``rho_j = (2d + 4) eps (max(user_j, |b_j|) + sum_i |a_ji| w_i)`` is b's own rounding (a b
        computed from a point of the box, then normalised), ``slack`` the half-width of an
        interval solved as its midpoint. ``e = 1.01 H eta`` with ``eta = (||zeta|| + err(zeta)
        + ||rho + slack|| + ||R|| ||w||) / s_r``, zeta the computed ``Ur^T b - s_r (Vr q)`` and R
        the factors' residual, or the smaller Slater bound through half* (here ``q`` itself:
        the box's midpoint is the origin) where it keeps a slack from the box's faces.
        Compiled, row by row: a row's widening is the same bits alone or in any batch
        (docs/theory.md §6.7)."""
        N = B.shape[0]
        e = np.zeros(N)
        if self.rank == 0 or N == 0:
            return e
        H, _ = self.basis_conditioning
        none = np.zeros((0, self.m))
        closed_forms.forward_rows(np.ascontiguousarray(B, dtype=np.float64), np.ascontiguousarray(Q, dtype=np.float64),
                                  none if user is None else np.ascontiguousarray(user, dtype=np.float64),
                                  none if slack is None else np.ascontiguousarray(slack, dtype=np.float64),
                                  self.Ur, self.s_r, self.Vr, self._abs_hi, self.sigma_max, float(H),
                                  self._factor_residual * math.sqrt(self.half_diag_sq), self.lo, self.hi,
                                  bool(np.all(self.mid == 0.0)), e)
        return e

    @functools.cached_property
    def interval_conditioning(self):
        """``(H, proven)``: ``H >= ||A_JF^{-1}||_2`` over every square nonsingular submatrix
        ``A_JF`` of A (rows J, columns F, ``|J| = |F|``), the Hoffman constant of the
        bounded-error set ``{x in box : L <= A x <= U}`` with the box kept hard (docs/theory.md
        §6.8). Exact up to ``BASIS_BUDGET`` submatrices; past it, the largest over that many
        drawn with a fixed seed, and ``proven`` False. A row repeated, or repeated negated,
        adds no submatrix with another inverse norm (with both copies it is singular; with one,
        the inverse norm is that of the other copy's), so each is counted once."""
        A = self.A
        if A.shape[0] > 1:   # the rows up to sign, each once (a polytope's opposite rows)
            first = np.argmax(A != 0, axis=1)
            A = np.unique(A * np.where(A[np.arange(A.shape[0]), first] < 0, -1.0, 1.0)[:, None], axis=0)
        m, d = A.shape
        worst, total, proven = 0.0, 0, True
        rng = np.random.default_rng(0)
        for k in range(1, min(m, d) + 1):
            count = math.comb(m, k) * math.comb(d, k)
            if total + count <= BASIS_BUDGET:
                R = np.array(list(itertools.combinations(range(m), k)), dtype=np.int64).reshape(-1, k)
                F = np.array(list(itertools.combinations(range(d), k)), dtype=np.int64).reshape(-1, k)
                rows, cols = np.repeat(R, F.shape[0], axis=0), np.tile(F, (R.shape[0], 1))
            else:   # uniform k-subsets: the first k of a random permutation, sorted
                proven = False
                n = max(BASIS_BUDGET - total, 1000)
                rows = np.sort(np.argsort(rng.random((n, m)), axis=1)[:, :k], axis=1)
                cols = np.sort(np.argsort(rng.random((n, d)), axis=1)[:, :k], axis=1)
            total += rows.shape[0]
            for start in range(0, rows.shape[0], 8192):
                r, c = rows[start:start + 8192], cols[start:start + 8192]
                worst = max(worst, _largest_inverse_norm(A[r[:, :, None], c[:, None, :]]))
        return worst, proven

    def interval_forward_error(self, L, U, user=None):
        """Per bounded-error row ``L <= A x <= U`` (this frame): ``e = 1.01 H ||t||``, H
        :attr:`interval_conditioning` and ``t_j = (2d + 4) eps (size_j + sum_i |a_ji| w_i)``,
        size_j the larger of the bounds' finite magnitudes and ``user_j``: the rounding of the
        bounds and the backward error of the vertices' solves. Every point of the set of the
        exact bounds lies within e of the set computed on (docs/theory.md §6.8)."""
        N = L.shape[0]
        if N == 0 or self.m == 0:
            return np.zeros(N)
        H, _ = self.interval_conditioning
        size = bound_size(L, U)
        if user is not None:
            size = np.maximum(size, np.where(np.isfinite(user), user, 0.0))
        t = (2 * self.d + 4) * EPS * (size + self._abs_hi)
        return 1.01 * H * np.sqrt(np.sum(t * t, axis=1))

    @functools.cached_property
    def _abs_hi(self):
        """``sum_i |a_ji| w_i`` per equation: what a row reaches from the midpoint."""
        return np.ascontiguousarray(np.abs(self.A) @ self.hi)

    def q_of(self, b):
        """``A^+ b`` from the orthogonal factors (stable for any condition number)."""
        return self.Vr.T @ ((self.Ur.T @ b) / self.s_r) if self.rank else np.zeros(self.d)

    def _project_outside(self, Q, candidates, inside, user=None, B=None):
        """Decide S_F != {} for the candidate rows whose half* point is outside the box.

        Rows with h in the box are feasible (h is the projection of the midpoint onto
        S_F). The others go to the compiled dual Newton projection, which either
        projects, or certifies emptiness (a dual point above the largest primal value);
        only a row it leaves undecided is given to an LP (HiGHS). A feasible row it could
        not project keeps a NaN projection for the method. Returns ``(outside, proj,
        feasible)`` over the outside rows. ``B``: the rows' right-hand sides (default ``A q``).

        The projection's emptiness is that of the computed slice ``Vr x = Vr q``; INFEASIBLE
        means empty at the tolerances (docs/theory.md §6.2). A point of the tolerance set lies
        within ``u = (||tau|| + ||R|| ||w||) / s_r`` of the computed slice (R the factors'
        residual, docs/theory.md §6.8), so a row whose slice also misses the box widened by
        ``u`` (plus ``coord_tol``) is empty at the tolerances; one that meets the widened box
        goes to the LP. On an ill-conditioned A, ``u`` is not small and the LP decides.
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
                             projection.PROJECT_MAXIT, self._project_tol)
        # a projection meets Vr x = beta to an absolute tolerance; each equation must also hold
        # at its own scale, or an equation on a coordinate narrower than that tolerance is
        # "met" while its value lies widths outside the coordinate's box: such a row goes to the LP
        done = np.flatnonzero(state == projection.PROJECTED)
        if done.size:
            Bd = linalg.rows_times(Q[outside[done]], self.A)
            Ud = None if user is None else user[outside[done]]
            off = np.any(np.abs(linalg.rows_times(X[done], self.A) - Bd) > self._row_tol(Bd, Ud), axis=1)
            if off.any():   # first projected again to near rounding (Newton converges fast), then judged
                redo = done[off]
                Xr = np.full((redo.size, self.d), np.nan)
                sr = np.zeros(redo.size, dtype=np.int64)
                projection.project_rows(self.mid, self.Vr, np.ascontiguousarray(beta[redo]), self.lo, self.hi, Xr, sr,
                                     np.zeros(redo.size, dtype=np.int64), projection.PROJECT_MAXIT, 1e-3 * self._project_tol)
                Br = Bd[off]
                still = (sr != projection.PROJECTED) | np.any(
                    np.abs(linalg.rows_times(np.nan_to_num(Xr), self.A) - Br) > self._row_tol(Br, None if Ud is None else Ud[off]),
                    axis=1)
                X[redo] = Xr
                state[redo[still]] = projection.UNDECIDED
        empty = np.flatnonzero(state == projection.EMPTY)
        if empty.size:   # empty at the tolerances too? (the box widened by u)
            Be = linalg.rows_times(Q[outside[empty]], self.A) if B is None else B[outside[empty]]
            tau = self._row_tol(Be, None if user is None else user[outside[empty]])
            u = ((1.01 * np.linalg.norm(tau, axis=1) + self._factor_residual * math.sqrt(self.half_diag_sq))
                 / float(self.s_r[-1]) + float(self.coord_tol.max()))
            Xe = np.full((1, self.d), np.nan)
            se, ie = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
            for j, k in enumerate(empty):
                projection.project_rows(self.mid, self.Vr, np.ascontiguousarray(beta[k:k + 1]), self.lo - u[j],
                                        self.hi + u[j], Xe, se, ie, projection.PROJECT_MAXIT, self._project_tol)
                if se[0] != projection.EMPTY:
                    state[k] = projection.UNDECIDED
        feasible[state == projection.PROJECTED] = True
        X[state != projection.PROJECTED] = np.nan
        for k in np.flatnonzero(state == projection.UNDECIDED):
            bk = self.A @ Q[outside[k]] if B is None else B[outside[k]]
            feasible[k] = self._lp_feasible(bk, None if user is None else user[outside[k]])
        return outside, X, feasible

    def _lp_point(self, beta):
        """A point of ``{x : Vr x = beta, lo <= x <= hi}`` (HiGHS; clipped to the box), or None."""
        from scipy.optimize import linprog  # here, not at import: an import does no work
        res = linprog(np.zeros(self.d), A_eq=self.Vr, b_eq=beta,
                      bounds=list(zip(self.lo - self.box_tol, self.hi + self.box_tol)), method="highs")
        return np.clip(res.x, self.lo, self.hi) if res.status == 0 else None

    def _row_tol(self, B, user=None):
        """:meth:`bound_tol` of equations ``A x = B`` (rows of right-hand sides)."""
        return self.bound_tol(B, B, user)

    def bound_tol(self, L, U, user=None):
        """The tolerance tau of every row of ``L <= A x <= U`` (shape (N, m), this frame),
        docs/theory.md §6.2; the one tau of equations and intervals alike.

        ``tau_j = feas_tol (sum_i |a_ji| (hi_i - lo_i) + |b_j|) + 32 eps d sum_i |a_ji| + 8 eps user_j``:
        relative to what the row reaches over the box (so an equation on a narrow coordinate
        is held at that coordinate's scale), plus the rounding of ``a_j^T x`` for a computed
        x (the box is ``[-w, w]`` with ``max w = 1``, so a coordinate carries an absolute error
        of a few eps whatever its width), plus the rounding of the bounds' own normalisation:
        ``user_j`` is ``(|b_j| + sum_i |a_ji| |shift_i|) / s`` in the caller's units (an offset
        of 1e8 leaves each normalised bound uncertain by about 1e8 eps / s, and nothing finer
        can be decided). ``|b_j|`` is the larger finite bound, at most the row's reach: a bound
        beyond the reach says nothing more. Every term is in this frame, so tau does not
        depend on the user's units or offsets."""
        absA = np.abs(self.A)
        reach = absA @ (self.hi - self.lo)
        mag = np.minimum(bound_size(L, U), 0.5 * reach)
        tau = self.feas_tol * (reach + mag) + 32.0 * EPS * self.d * absA.sum(axis=1)
        if user is not None:
            tau = tau + 8.0 * EPS * user
        return tau

    def _lp_feasible(self, b, user=None):
        """Is S_F nonempty at the tolerances of docs/theory.md §6.2? (HiGHS LP)

        ``|a_i^T x - b_i| <= tau_i`` for every equation, with ``tau_i = feas_tol (sum_j
        |a_ij| w_j + |b_i|)`` plus rounding: relative to what that row can reach over the
        box, so an equation on a narrow coordinate is held at that coordinate's scale; and
        ``lo - coord_tol <= x <= hi + coord_tol``, per coordinate. Each inequality is
        divided by its row's scale, and HiGHS runs at its tightest feasibility tolerance
        (1e-10, against its default 1e-7, which is larger than a coordinate 1e-8 as wide
        as the box: at the default, a value pinned five widths outside such a coordinate
        passes as feasible for every method)."""
        from scipy.optimize import linprog  # here, not at import: an import does no work
        res = linprog(np.zeros(self.d), **self.tolerance_lp(b, user))
        return res.status == 0

    def tolerance_lp(self, b, user=None):
        """The constraints of S_F at its tolerances, as ``linprog`` keyword arguments (HiGHS):
        ``|a_i^T x - b_i| <= tau_i`` (:meth:`_row_tol`) with each row divided by its reach
        ``sum_j |a_ij| (hi_j - lo_j) + |b_i|``, the box widened by ``coord_tol``, HiGHS at its
        tightest feasibility tolerances. Every point of S_F satisfies them."""
        reach = np.maximum(np.abs(self.A) @ (self.hi - self.lo) + np.abs(b), 1e-300)
        tau = self._row_tol(b[None, :], None if user is None else user[None, :])[0]
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
        ill-conditioned A can be more than the membership test (:func:`consistent_rows`)
        allows in b's (measured: a residual of 5e-8, on a slice with sigma_min 4e-9)."""
        from scipy.optimize import lsq_linear  # here, not at import: an import does no work
        res = lsq_linear(self.A, b, bounds=(self.lo, self.hi), method="bvls", tol=1e-12)
        if res.x is not None and np.all(np.isfinite(res.x)):
            x = np.clip(res.x, self.lo, self.hi)
            if consistent_rows((self.A @ x - b)[None, :], b[None, :], self.bound_tol(b[None, :], b[None, :]))[0]:
                return x, "the box least-squares"
        return self._lp_point(beta), "an LP"
