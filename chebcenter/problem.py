"""The factored box slice ``S_F = {x in [lo, hi]^d : A x = b}`` and its dispatcher."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.optimize import linprog

from . import _kernels as K
from ._errors import InvalidInputError
from ._validate import as_batch_rhs, as_bounds, as_matrix, as_positive_float, as_rhs, check_choice
from .methods import REGISTRY, Context
from .results import BatchResult, CenterResult, Status

__all__ = ["BoxSlice", "chebyshev_center"]

_PROJECT_MAXIT = 200


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
        Box bounds, ``lo <= hi`` (equal bounds fix a coordinate).
    rank_tol : float, optional
        Singular values ``<= rank_tol`` count as zero. Default
        ``sigma_max * max(m, d) * eps`` (NumPy's ``matrix_rank`` rule).
    feas_tol : float, default 1e-9
        Relative tolerance for "b is consistent" (``||A A^+ b - b|| <=
        feas_tol * (||b|| + sigma_max ||max(|lo|, |hi|)||)``) and for box
        membership (``feas_tol * (1 + max(|lo|, |hi|))``).

    Attributes
    ----------
    rank, p : int
        ``r = rank(A)`` and the null-space dimension ``p = d - r``.
    Vr : ndarray, shape (r, d)
        Orthonormal basis of Row(A) (leading right singular vectors).
    W : ndarray, shape (d, p)
        Orthonormal basis of Null(A) (trailing right singular vectors).
    A_pinv : ndarray, shape (d, m)
    null_projector : ndarray, shape (d, d)
        ``P = I - A^+ A = W W^T``.

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
        if m > 0:
            U, s, Vt = np.linalg.svd(A, full_matrices=True)
        else:
            U, s, Vt = np.zeros((0, 0)), np.zeros(0), np.eye(d)
        self.sigma_max = float(s[0]) if s.size else 0.0
        if rank_tol is None:
            rank_tol = self.sigma_max * max(m, d) * np.finfo(np.float64).eps
        else:
            rank_tol = float(rank_tol)
            if not np.isfinite(rank_tol) or rank_tol < 0:
                raise InvalidInputError(f"rank_tol must be a finite number >= 0; got {rank_tol!r}")
        self.rank_tol = rank_tol
        r = int(np.sum(s > rank_tol))
        self.A, self.lo, self.hi = A, lo_a, hi_a
        self.m, self.d, self.rank, self.p = m, d, r, d - r
        self.singular_values = s
        self.Vr = np.ascontiguousarray(Vt[:r])
        self.W = np.ascontiguousarray(Vt[r:].T)
        self.A_pinv = np.ascontiguousarray((self.Vr.T / s[:r]) @ U[:, :r].T) if r else np.zeros((d, m))
        self._A_pinv_T = np.ascontiguousarray(self.A_pinv.T)
        self.null_projector = self.W @ self.W.T
        self.mid = 0.5 * (lo_a + hi_a)
        self.p_mid = self.null_projector @ self.mid
        self.half_diag_sq = float(np.sum((0.5 * (hi_a - lo_a)) ** 2))
        bound = np.maximum(np.abs(lo_a), np.abs(hi_a))
        self.box_tol = self.feas_tol * (1.0 + float(bound.max()))
        self._rhs_scale = self.sigma_max * float(np.linalg.norm(bound))
        self._project_tol = 1e-11 * (1.0 + float(np.linalg.norm(bound)))
        self._rcc1_cache: dict = {}

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
            One of :data:`chebcenter.METHODS`; see the README's method table.
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
        A row that is infeasible or fails gets its own status; the batch never
        stops on it. See :meth:`center` for the arguments.

        Examples
        --------
        >>> import numpy as np, chebcenter as cc
        >>> P = cc.BoxSlice([[1.0, 1.0]])
        >>> br = P.centers(np.array([[1.0], [0.5], [3.0]]), method="rcc2")
        >>> br.centers.round(3).tolist()[:2], br.counts()
        ([[0.5, 0.5], [0.25, 0.25]], {'OPTIMAL': 2, 'INFEASIBLE': 1})
        """
        method = check_choice("method", method, REGISTRY)
        spec = REGISTRY[method]
        on_inconsistent = check_choice("on_inconsistent", on_inconsistent, ("status", "project"))
        opts = self._method_options(spec, options)
        B = as_batch_rhs("B", B, self.m)
        t0 = time.perf_counter()
        N, d = B.shape[0], self.d
        Q, H, residual, violation = self._prepare(B)
        codes = np.zeros(N, dtype=np.int8)
        scale = np.linalg.norm(B, axis=1) + self._rhs_scale
        consistent = residual <= self.feas_tol * np.maximum(scale, 1e-300)
        if on_inconsistent == "status":
            codes[~consistent] = Status.INFEASIBLE
        inside = codes == Status.OPTIMAL
        inside &= violation <= self.box_tol
        outside, proj_out, feasible_out = self._project_outside(Q, codes == Status.OPTIMAL, inside)
        codes[outside[~feasible_out]] = Status.INFEASIBLE
        rows = np.flatnonzero(codes == Status.OPTIMAL)
        every = rows.size == N

        def take(a):
            return a if every else a[rows]

        extras: dict[str, Any] = {"rhs_residual": residual}
        if every:
            centers = radii = None
        else:
            centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
        if rows.size:
            ball = np.empty(rows.size)
            Hr = take(H)
            K.ball_radii(Hr, self.mid, self.half_diag_sq, ball)
            pos = np.full(N, -1, dtype=np.int64)
            pos[rows] = np.arange(rows.size)
            ctx = Context(self, rows, take(B), take(Q), Hr, ball, opts,
                          outside=pos[outside[feasible_out]], proj_outside=proj_out[feasible_out])
            out = spec.func(ctx)
            if self.p == 0:  # S_F = {q}: every method returns it, radius 0 (SPEC §1)
                ok = out.codes <= Status.INACCURATE
                out.centers[ok] = ctx.Q[ok]
                out.radii[ok] = 0.0
            if every:
                codes, centers, radii = out.codes, out.centers, out.radii
            else:
                codes[rows], centers[rows], radii[rows] = out.codes, out.centers, out.radii
            for key, val in out.extras.items():
                extras[key] = val if every else _scatter(val, rows, N)
        bad = codes > Status.INACCURATE
        if bad.any():
            centers[bad] = np.nan
            radii[bad] = np.nan
        if spec.in_feasible_set:
            clipped = np.zeros(N)
            ok_rows = np.flatnonzero(~bad)
            for start in range(0, ok_rows.size, 65536):  # bounded temporaries
                idx = ok_rows[start:start + 65536]
                before = centers[idx]
                after = np.clip(before, self.lo, self.hi)
                clipped[idx] = np.max(np.abs(after - before), axis=1, initial=0.0)
                centers[idx] = after
            extras["clipped"] = clipped
        res_out = residual.copy()
        box_viol = np.full(N, np.nan)
        K.check_rows(centers, self.A, B, self.lo, self.hi, res_out, box_viol)
        return BatchResult(centers, radii, codes, method, time.perf_counter() - t0,
                           res_out, box_viol, extras)

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
    def _method_options(self, spec, options):
        unknown = sorted(set(options) - set(spec.options))
        if unknown:
            allowed = ", ".join(sorted(spec.options)) or "none"
            raise InvalidInputError(
                f"unknown option(s) {unknown} for method {spec.name!r}; allowed: {allowed}")
        opts = dict(spec.options)
        for key, val in options.items():
            validate = spec.validators.get(key)
            opts[key] = validate(key, val) if validate else val
        return opts

    def _prepare(self, B):
        N, d = B.shape[0], self.d
        Q, H = np.empty((N, d)), np.empty((N, d))
        residual, violation = np.empty(N), np.empty(N)
        K.prepare_rows(B, self.A, self._A_pinv_T, self.p_mid, self.lo, self.hi,
                       Q, H, residual, violation)
        return Q, H, residual, violation

    def _project_outside(self, Q, candidates, inside):
        """Decide S_F != {} for the candidate rows whose half* point is outside the box.

        Rows with h in the box are feasible (h is the projection of the
        midpoint onto S_F). The others go to the compiled dual Newton
        projection; a row where it does not converge is decided by an LP
        (HiGHS) and, if feasible, keeps a NaN projection for the method.
        Returns ``(outside, proj, feasible)`` over the outside rows.
        """
        outside = np.flatnonzero(candidates & ~inside)
        X = np.full((outside.size, self.d), np.nan)
        feasible = np.zeros(outside.size, dtype=bool)
        if outside.size == 0 or self.p == 0:  # p = 0: the unique solution is outside
            return outside, X, feasible
        beta = np.ascontiguousarray(Q[outside] @ self.Vr.T)
        conv = np.zeros(outside.size, dtype=np.bool_)
        iters = np.zeros(outside.size, dtype=np.int64)
        K.project_rows(self.mid, self.Vr, beta, self.lo, self.hi, X, conv, iters,
                       _PROJECT_MAXIT, self._project_tol)
        feasible[conv] = True
        X[~conv] = np.nan
        for k in np.flatnonzero(~conv):
            feasible[k] = self._lp_feasible(beta[k])
        return outside, X, feasible

    def _lp_feasible(self, beta):
        """Is ``{x : Vr x = beta, lo <= x <= hi}`` nonempty? (HiGHS LP)"""
        lo = self.lo - self.box_tol
        hi = self.hi + self.box_tol
        res = linprog(np.zeros(self.d), A_eq=self.Vr, b_eq=beta,
                      bounds=list(zip(lo, hi)), method="highs")
        return res.status == 0

    def _rcc1_problem(self, solver):
        if solver not in self._rcc1_cache:
            from .methods.relax import _Rcc1Problem
            self._rcc1_cache[solver] = _Rcc1Problem(self.W, solver)
        return self._rcc1_cache[solver]


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
