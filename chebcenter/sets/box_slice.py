"""The factored box slice ``S_F = {x in [lo, hi]^d : A x = b}``: the public ``BoxSlice``.

Every call is normalised at the door (``docs/theory.md#invariances``): coordinates with
``lo_i == hi_i`` are constants and are substituted into ``b``; the free coordinates are
translated to the box midpoint and divided by the largest half-width ``s``, so the methods
always see the box ``[-w, w]`` with ``max w = 1``. Centers are mapped back
(``x = mid + s z``) and radii multiplied by ``s``. For one scalar ``s > 0`` and any
vector ``t`` the map ``x -> s x + t`` therefore moves every center the same way and
scales every radius by ``s`` (``ls``, the minimum-norm solution, moves with the scale only:
its definition depends on the origin).

The batch itself runs in :mod:`chebcenter.methods.dispatch` (solve, contract check, repair) on
the normalised :class:`~chebcenter._core.normalised._Core`, which this module builds once per
``BoxSlice``. A batch given as ``L <= A x <= U`` is normalised like a right-hand side
(``(L - A shift) / scale``); its rows get the core's one tolerance tau (``_Core.bound_tol``)
and are sorted into classes: a NaN is INVALID_INPUT, an empty interval INFEASIBLE, an
interval within ``2 tau`` of a point is that point (``BoxSlice._split_bounds``). One
``BoxSlice._run`` solves every valid row, slices and interval rows alike, and maps the
answers back to the user's coordinates with the method's declared extras (:func:`_to_user`).
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np

from .._core.lifting import clamp, interval_vertices
from .._core.normalised import _Core, bound_size
from .._core.validate import (
    as_batch_rhs,
    as_bounds,
    as_interval_batch,
    as_matrix,
    as_positive_float,
    as_positive_int,
    as_rhs,
    check_choice,
    check_options,
)
from .._errors import InvalidInputError
from ..kernels import closed_forms
from ..kernels.linalg import EPS, numerical_rank, rows_times
from ..methods import REGISTRY
from ..methods.dispatch import scatter_declared, solve
from ..methods.exact import slice_vertices
from ..methods.image import (
    IMAGE_EXACT_OPTIONS,
    as_image_map,
    image_hull_radius,
    image_rcc1_spec,
    image_spec,
    relaxation_radius,
)
from ..methods.ranges import RANGES
from ..results import BatchResult, CenterResult, FeatureRanges, Status

__all__ = ["BoxSlice", "chebyshev_center"]

#: how an extra of each unit (methods._types.EXTRA_UNITS) maps back to the user's coordinates
_TO_USER = {
    "length": lambda sl, v: v * sl.scale,
    "squared_length": lambda sl, v: v * sl.scale * sl.scale,
    "point": lambda sl, v: sl._to_original(v),
    "points": lambda sl, v: _map_points(v, sl._to_original),
    "free_coordinates": lambda sl, v: sl._free_to_full(v),
    "count": lambda sl, v: v,
    "label": lambda sl, v: v,
    "indices": lambda sl, v: v,
}

def _map_points(values, fn):
    """:func:`_map_objects` for arrays of points (rows of one width): one call of ``fn`` on
    them all (a call per row cost 12 us, most of a batch of exact centers)."""
    keep = [k for k, v in enumerate(values) if v is not None]
    arrays = [np.asarray(values[k]) for k in keep]
    if not arrays or any(a.ndim != 2 or a.shape[1] != arrays[0].shape[1] for a in arrays):
        return _map_objects(values, fn)
    mapped = fn(np.concatenate(arrays))
    out = np.empty(values.shape[0], dtype=object)
    for k, part in zip(keep, np.split(mapped, np.cumsum([a.shape[0] for a in arrays])[:-1])):
        out[k] = part
    return out


def _map_objects(values, fn):
    out = np.empty(values.shape[0], dtype=object)
    for k, v in enumerate(values):
        out[k] = None if v is None else fn(np.asarray(v))
    return out


def _to_user(sl, spec, key, val):
    return _TO_USER[spec.extra(key).unit](sl, val)


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
        ``<= rank_tol`` count as zero. Default: the *resolved* rank (docs/theory.md
        §6.8), the largest of NumPy's ``matrix_rank`` rule ``sigma_max * max(m, d) * eps``,
        ``feas_tol * sigma_max`` (a direction the consistency tolerance cannot resolve over
        the box) and, at an offset, the rounding of subtracting it over the box's extent. A
        direction A has but the data cannot resolve is dropped (the set solved contains the
        exact one) and every answered row says INACCURATE with the reason in
        ``extras["check"]``. The property :attr:`rank` is A's own rank (NumPy's rule).
    feas_tol : float, default 1e-9
        Relative tolerance of each equation: ``|a_j^T x - b_j| <= tau_j = feas_tol
        (sum_i |a_ji| (hi_i - lo_i) + |b_j|)`` plus rounding (docs/theory.md §6.2), the one
        rule of consistency (b's residual from Col A), of a center's membership and of
        emptiness, for equations and intervals alike; and of box membership (in units of
        the largest box half-width).

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
        self.mid = 0.5 * (lo_a + hi_a)
        self.half_diag_sq = float(np.sum((0.5 * (hi_a - lo_a)) ** 2))
        self.box_tol = self.feas_tol * (1.0 + float(np.max(np.maximum(np.abs(lo_a), np.abs(hi_a)))))
        # the normalisation: constants out, free coordinates to [-w, w] with max w = 1
        self.fixed = lo_a == hi_a
        self._free = np.flatnonzero(~self.fixed)
        half = 0.5 * (hi_a - lo_a)
        self.scale = float(half[self._free].max()) if self._free.size else 1.0
        self._shift = np.where(self.fixed, lo_a, self.mid)
        self._offset = A @ self._shift if m else np.zeros(0)
        #: per equation, sum_i |a_ji| |shift_i|: the size of what the normalisation subtracts
        self._abs_offset = np.abs(A) @ np.abs(self._shift) if m else np.zeros(0)
        self._core = None
        if self._free.size:
            w = half[self._free] / self.scale
            origin = -self._shift[self._free] / self.scale
            # one SVD where nothing is fixed: the core's matrix is A itself, so it takes these factors
            svd = self._svd if self._free.size == d else None
            self._core = _Core(np.ascontiguousarray(A[:, self._free]), w, origin,
                               None if rank_tol is None else rank_tol, self.feas_tol, svd=svd,
                               offset_size=self._abs_offset / self.scale)

    # -- the full A's factors (public; the theory functions use them), from one SVD ---------
    @functools.cached_property
    def _svd(self):
        if self.m > 0:
            return np.linalg.svd(self.A, full_matrices=True)
        return np.zeros((0, 0)), np.zeros(0), np.eye(self.d)

    @functools.cached_property
    def rank(self) -> int:
        s = self._svd[1]
        return numerical_rank(s, (self.m, self.d), self.rank_tol)

    @property
    def p(self) -> int:
        return self.d - self.rank

    @property
    def singular_values(self) -> np.ndarray:
        return self._svd[1]

    @property
    def sigma_max(self) -> float:
        s = self._svd[1]
        return float(s[0]) if s.size else 0.0

    @functools.cached_property
    def Vr(self) -> np.ndarray:
        return np.ascontiguousarray(self._svd[2][: self.rank])

    @functools.cached_property
    def W(self) -> np.ndarray:
        return np.ascontiguousarray(self._svd[2][self.rank:].T)

    @functools.cached_property
    def A_pinv(self) -> np.ndarray:
        U, s, _ = self._svd
        r = self.rank
        return np.ascontiguousarray((self.Vr.T / s[:r]) @ U[:, :r].T) if r else np.zeros((self.d, self.m))

    @functools.cached_property
    def null_projector(self) -> np.ndarray:
        return self.W @ self.W.T

    @functools.cached_property
    def p_mid(self) -> np.ndarray:
        return self.null_projector @ self.mid

    def __repr__(self) -> str:
        return f"BoxSlice(m={self.m}, d={self.d}, rank={self.rank}, p={self.p})"

    # -- public API -----------------------------------------------------------------
    def center(self, b: Any = None, method: str = "auto", *, on_inconsistent: str = "status",
               noise: Any = None, lower: Any = None, upper: Any = None, of: Any = None,
               **options: Any) -> CenterResult:
        """Chebyshev center estimate of S_F for one right-hand side.

        Parameters
        ----------
        b : array_like, shape (m,)
        method : str
            One of :data:`chebcenter.METHODS`; see ``docs/chebcenter.md``. The default,
            ``"auto"``, is the same for one row (:meth:`center`), a batch (:meth:`centers`)
            and a Dask array (:func:`chebcenter.distributed.centers`), so that going from one
            row to a batch never changes the estimator: the minimax center this library is
            for, exact where vertex enumeration is cheap and rcc1's certified relaxation
            elsewhere, each with a certified radius. The closed forms (``half_star``,
            ``rcc2``) are a method name away when speed matters more than the worst case.
        on_inconsistent : {"status", "project"}
            What to do when ``A x = b`` has no solution: ``"status"`` reports
            INFEASIBLE with a NaN center; ``"project"`` replaces b by its
            projection ``A A^+ b`` onto Col(A) (the nearest consistent
            right-hand side; useful for noisy b) and reports the residual.
            (Bounded-error sets are not projected: an empty one is INFEASIBLE.)
        noise : float or array_like, shape (m,), optional
            The bounded-error set ``{x in box : |A x - b| <= noise}`` (elementwise,
            ``noise >= 0``) instead of ``A x = b`` (docs/chebcenter.md, "Bounded-error sets").
        lower, upper : array_like, shape (m,), optional
            The set ``{x in box : lower <= A x <= upper}`` (then ``b`` is None); entries may
            be infinite, which makes a row one-sided; a missing one is unbounded.
        of : sequence of int or array_like, shape (q, d), optional
            Estimate ``L x`` instead of x: the center of the image ``L S`` (docs/chebcenter.md,
            "The center of a linear image"). Distinct coordinate indices (L: those rows of the
            identity) or a finite (q, d) matrix. The center then has shape (q,) and the radius
            bounds ``max_{x in S} ||L x - center||``: exact (and auto where it takes exact)
            certify the image's own radius, the other methods ``L c`` with a certified bound.
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
        if noise is None and lower is None and upper is None:
            b = as_rhs("b", b, self.m)
            if of is not None:
                return self.centers(b[None, :], method, on_inconsistent=on_inconsistent, of=of, **options)[0]
            return self.centers(b[None, :], method, on_inconsistent=on_inconsistent, **options)[0]
        one = [None if v is None else np.asarray(v, dtype=float)[None, ...] if np.ndim(v) == 1 else v
               for v in (b, lower, upper)]
        if b is not None:
            one[0] = as_rhs("b", b, self.m)[None, :]
        if of is not None:
            options = {**options, "of": of}
        res = self.centers(one[0], method, on_inconsistent=on_inconsistent, noise=noise, lower=one[1],
                           upper=one[2], **options)
        if res.centers.shape[0] != 1:
            raise InvalidInputError(f"center takes one set; the bounds describe {res.centers.shape[0]} (use centers)")
        return res[0]

    def centers(self, B: Any = None, method: str = "auto", *, on_inconsistent: str = "status",
                noise: Any = None, lower: Any = None, upper: Any = None, of: Any = None,
                **options: Any) -> BatchResult:
        """Centers for a batch ``B`` of shape (N, m), one right-hand side per row.

        The factorisation is shared; closed forms run as compiled batch kernels.
        A row that is infeasible or fails gets its own status; a row of B that is not
        finite gets INVALID_INPUT; the batch never stops on one row. An empty batch
        (N = 0) returns empty arrays. See :meth:`center` for the arguments: ``noise`` may
        also be (N, m), and ``lower``/``upper`` are (N, m), one set per row. A row whose
        intervals are all points (``lower == upper``, ``noise == 0``) is the equality case
        and gets its answer, from the same code. With ``of=`` (q coordinates or a (q, d)
        matrix L) the rows answer for the image ``L S``: centers (N, q), radii bounding
        ``||L x - c||`` over each set, and NaN residuals and box violations (they measure an
        x-space center; docs/chebcenter.md, "The center of a linear image").

        Examples
        --------
        >>> import numpy as np, chebcenter as cc
        >>> P = cc.BoxSlice([[1.0, 1.0]])
        >>> br = P.centers(np.array([[1.0], [0.5], [3.0], [np.nan]]), method="rcc2")
        >>> br.centers.round(3).tolist()[:2], br.counts()
        ([[0.5, 0.5], [0.25, 0.25]], {'OPTIMAL': 2, 'INFEASIBLE': 1, 'INVALID_INPUT': 1})

        A bounded-error batch: ``x1 + x2 = 1.5 +- 0.5``, or ``x1 + x2 >= 1.5`` alone (the
        triangle (0.5, 1), (1, 0.5), (1, 1): its center is the midpoint of its long side)

        >>> P.centers([[1.5]], "exact", noise=0.5).radii.round(4).tolist()
        [0.7071]
        >>> P.centers(method="exact", lower=[[1.5]]).centers.round(4).tolist()
        [[0.75, 0.75]]
        """
        method = check_choice("method", method, REGISTRY)
        spec = REGISTRY[method]
        on_inconsistent = check_choice("on_inconsistent", on_inconsistent, ("status", "project"))
        opts = check_options(spec, options)
        bounds = as_interval_batch(B, noise, lower, upper, self.m)
        if bounds is None:
            if B is None:
                raise InvalidInputError("B is required: the right-hand sides (or lower=/upper=, or noise= with B)")
            B = as_batch_rhs("B", B, self.m, allow_nonfinite=True)
            bounds = (B, B)    # slices: every interval a point (one array, no interval to look at)
        if of is not None:
            return self._run_image(*bounds, spec, opts, on_inconsistent, options, as_image_map(of, self.d))
        return self._run(*bounds, spec, opts, on_inconsistent, given=options)

    def feature_ranges(self, B: Any = None, *, on_inconsistent: str = "status", noise: Any = None,
                       lower: Any = None, upper: Any = None) -> FeatureRanges:
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
        bounds = as_interval_batch(B, noise, lower, upper, self.m)
        if bounds is None:
            if B is None:
                raise InvalidInputError("B is required: the right-hand sides (or lower=/upper=, or noise= with B)")
            B = as_batch_rhs("B", B, self.m, allow_nonfinite=True)
            bounds = (B, B)
        res = self._run(*bounds, RANGES, {}, on_inconsistent)
        lower, upper = res.extras.get("lower"), res.extras.get("upper")
        if lower is None:  # every coordinate fixed (or no valid row): the point lo
            lower = upper = np.broadcast_to(self.lo, (bounds[0].shape[0], self.d))
        bad = res.status_codes > Status.INACCURATE
        lower, upper = lower.copy(), upper.copy()
        lower[bad] = np.nan
        upper[bad] = np.nan
        return FeatureRanges(lower, upper, res.status_codes, res.time, self.lo.copy(), self.hi.copy(),
                             res.extras.get("forward_error"))

    def _run(self, L, U, spec, opts, on_inconsistent, given=None):
        """Solve the checked batch of sets ``{x in box : L <= A x <= U}`` with ``spec`` (a
        method's table entry); ``U is L``: slices ``A x = L`` (a non-finite row is
        INVALID_INPUT). One path for both: normalise, :func:`chebcenter.methods.dispatch.solve`, map
        back to the user's coordinates."""
        t0 = time.perf_counter()
        N, d = L.shape[0], self.d
        slices, valid, empty, Lc, Uc, tau, points, slack = self._row_classes(L, U, spec, given)
        centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
        codes = np.full(N, Status.INVALID_INPUT, dtype=np.int8)
        codes[empty] = Status.INFEASIBLE
        good = np.flatnonzero(valid)
        every = good.size == N
        take = (lambda a: a) if every else (lambda a: a[good])
        extras: dict[str, Any] = {}
        if spec.to_frame is not None and self._core is not None:   # checks the options whatever the rows
            opts = spec.to_frame(self, opts, good, N)
        if good.size:
            Lg, Ug = take(L), take(U)
            if self._core is None:   # every coordinate fixed: the set is {lo} or empty
                Z, R, cz, ex = self._fixed_rows(Lg, Ug, on_inconsistent, None if slices else take(points))
            else:
                s = self.scale
                if slices:
                    Bc = np.ascontiguousarray((Lg - self._offset) / s)
                    Z, R, cz, ex = solve(self._core, Bc, Bc, None, (np.abs(Lg) + self._abs_offset) / s, spec, opts,
                                         on_inconsistent)
                else:
                    Z, R, cz, ex = solve(self._core, np.ascontiguousarray(take(Lc)), np.ascontiguousarray(take(Uc)),
                                         take(tau), self._user_magnitude(Lg, Ug), spec, opts, on_inconsistent,
                                         take(slack))
                Z, R = self._to_original(Z), R * s
                ex = {key: _to_user(self, spec, key, val) for key, val in ex.items()}
            centers[good], radii[good], codes[good] = Z, R, cz
            for key, val in ex.items():   # a row that did not reach the solver holds the declared fill
                extras[key] = val if every else scatter_declared(spec, key, val, good, N, d)
        if "rhs_residual" not in extras:
            extras["rhs_residual"] = np.full(N, np.nan)
        if spec.lies_in == "none":   # no estimate (the feature ranges): nothing to measure
            residuals, box_viol = np.full(N, np.nan), np.full(N, np.nan)
        elif slices:
            residuals, box_viol = np.full(N, np.nan), np.full(N, np.nan)
            if N:
                Bc = np.where(valid[:, None], L, 0.0)
                closed_forms.check_rows(centers, self.A, Bc, self.lo, self.hi, residuals, box_viol)
                residuals[~valid] = np.nan
        else:
            residuals, box_viol = self._bound_residuals(centers, L, U)
        return BatchResult(centers, radii, codes, spec.name, time.perf_counter() - t0, residuals, box_viol, extras)

    def _row_classes(self, L, U, spec, given):
        """``(slices, valid, empty, Lc, Uc, tau, points, slack)`` of a checked batch: ``U is L`` is the
        slices' batch (a row valid where finite; no bounds in the core's frame), else
        :meth:`_split_bounds`'s classes, with the method's refusal of interval rows raised."""
        if U is L:
            return True, np.all(np.isfinite(L), axis=1), np.zeros(L.shape[0], dtype=bool), None, None, None, None, None
        Lc, Uc, tau, invalid, points, empty, sets, slack = self._split_bounds(L, U)
        refused = spec.refused_for_intervals(given or {}) if sets.any() else None
        if refused:
            raise InvalidInputError(refused)
        return False, ~(invalid | empty), empty, Lc, Uc, tau, points, slack

    def _fixed_rows(self, L, U, on_inconsistent, points=None):
        """Every coordinate fixed: the set is ``{lo}`` where ``L <= A lo <= U`` to the rows'
        tolerance (:meth:`_fixed_tol`), else empty. ``on_inconsistent="project"`` makes every
        slice row (``points``: which rows are slices; None: all) the point ``lo``."""
        b = self.A @ self.lo
        inside = self._fixed_point_rows(L, U, self._fixed_tol(L, U))
        if on_inconsistent == "project":
            inside = np.ones_like(inside) if points is None else inside | points
        with np.errstate(invalid="ignore"):
            res = np.linalg.norm(b - np.clip(b, L, U), axis=1)
        codes = np.where(inside, Status.OPTIMAL, Status.INFEASIBLE).astype(np.int8)
        return np.where(inside[:, None], self.lo, np.nan), np.where(inside, 0.0, np.nan), codes, {"rhs_residual": res}

    # -- the center of a linear image (of=): chebcenter.methods.image --------------------
    def _run_image(self, L, U, spec, opts, on_inconsistent, given, M):
        """:meth:`_run` for the image ``M S`` (M: the checked ``of``, (q, d)), by the route the
        method's table entry declares (``MethodSpec.image``). exact and auto:
        the minimum enclosing ball of the vertices' images (:meth:`_image_exact`; auto's rows
        past its limits get rcc1's center and bound); the other methods (and a box with every
        coordinate fixed): their own center c, mapped to ``M c`` with a certified radius
        (:func:`chebcenter.methods.image.relaxation_radius`). Residuals and box violations are
        NaN: they measure an x-space center."""
        t0 = time.perf_counter()
        N = L.shape[0]
        if spec.image.startswith("vertices") and self._core is not None:
            bad = [f"{k}={given[k]!r}" for k, ok in IMAGE_EXACT_OPTIONS.items() if k in given and given[k] not in ok]
            if bad:
                honoured = "; ".join(f"{k} in {list(v)}" for k, v in IMAGE_EXACT_OPTIONS.items())
                raise InvalidInputError(f"of: method {spec.name!r} with of= enumerates the vertices; {', '.join(bad)} "
                                        f"is not available there ({honoured})")
            centers, radii, codes, extras = self._image_exact(L, U, spec, opts, on_inconsistent, given, M)
            if spec.image == "vertices_then_rcc1":
                chosen = np.where(codes <= Status.INACCURATE, "exact", None).astype(object)
                far = np.flatnonzero(codes == Status.TOO_LARGE)
                if far.size:
                    rc = REGISTRY["rcc1"]
                    Lr = np.ascontiguousarray(L[far])
                    Ur = Lr if U is L else np.ascontiguousarray(U[far])
                    sub = self._run(Lr, Ur, rc, {k: opts[k] for k in rc.options}, on_inconsistent)
                    C, R, _, _ = relaxation_radius(M, sub.centers, sub.radii, *self._hull(Lr, Ur, on_inconsistent))
                    centers[far], radii[far], codes[far] = C, R, sub.status_codes
                    chosen[far] = np.where(sub.status_codes <= Status.INACCURATE, "rcc1", None)
                    extras["x_center"] = np.full((N, self.d), np.nan)
                    extras["x_center"][far] = sub.centers
                    extras["x_radius"] = np.full(N, np.nan)
                    extras["x_radius"][far] = sub.radii
                    extras["radius_lower"][far] = np.nan
                    extras["n_vertices"][far] = -1
                    if "check" in sub.extras:
                        extras.setdefault("check", np.full(N, None, dtype=object))[far] = sub.extras["check"]
                extras["method"] = chosen
            bad = codes > Status.INACCURATE
            centers[bad], radii[bad] = np.nan, np.nan
        else:
            res = self._run(L, U, spec, opts, on_inconsistent, given=given)
            hull = self._hull(L, U, on_inconsistent)
            centers, radii, by_norm, by_hull = relaxation_radius(M, res.centers, res.radii, *hull)
            codes = res.status_codes.copy()
            extras = dict(res.extras)
            extras.update(x_center=res.centers, x_radius=res.radii, radius_by_norm=by_norm, radius_by_hull=by_hull)
            if spec.image == "weighted" and self._core is not None:
                self._image_rcc1(L, U, spec, opts, on_inconsistent, given, M, hull, centers, radii, codes, extras)
        nan = np.full(N, np.nan)
        return BatchResult(centers, radii, codes, spec.name, time.perf_counter() - t0, nan, nan.copy(), extras)

    def _image_rcc1(self, L, U, spec, opts, on_inconsistent, given, M, hull, centers, radii, codes, extras):
        """rcc1 with of=: the weighted relaxation (:func:`chebcenter.methods.image.image_rcc1`,
        docs/theory.md §10) beside the mapped center, in place. Each row keeps whichever
        certified radius is smaller with its center: the weighted one (its certificate, or the
        interval-hull bound about its center where smaller) or the mapped one. A row whose
        weighted solve failed keeps the mapped center and is INACCURATE at best."""
        N = L.shape[0]
        img = image_rcc1_spec(spec, np.ascontiguousarray(M[:, self._free]), opts["solver"])
        Cw, Rw, cw, ex = self._image_exact(L, U, spec, opts, on_inconsistent, given, M, img)
        Cw[cw > Status.INACCURATE] = np.nan
        Rw[cw > Status.INACCURATE] = np.nan
        _, _, hull_w = image_hull_radius(M, Cw, *hull)
        Rw = np.fmin(Rw, hull_w)
        mapped = radii.copy()
        solved = (codes <= Status.INACCURATE) & (cw <= Status.INACCURATE) & np.isfinite(Rw)
        take = solved & ~(mapped <= Rw)
        route = np.where(take, "weighted", "mapped").astype(object)
        route[codes > Status.INACCURATE] = None
        check = extras.get("check", np.full(N, None, dtype=object)).copy()
        failed = (codes <= Status.INACCURATE) & ~solved
        for j in np.flatnonzero(failed):
            why = ex["check"][j] or "no weighted solution"
            check[j] = f"weighted rcc1: {why}; the mapped center and its bound are reported"
        for j in np.flatnonzero(solved & (cw == Status.INACCURATE)):
            check[j] = f"weighted rcc1: {ex['check'][j]}"
        centers[take], radii[take] = Cw[take], Rw[take]
        codes[solved] = np.maximum(codes[solved], cw[solved])
        codes[failed] = np.maximum(codes[failed], Status.INACCURATE)
        extras.update(radius_weighted=Rw, radius_mapped=mapped, weighted_eta=ex["eta"], image_route=route)
        if any(v is not None for v in check):
            extras["check"] = check

    def _hull(self, L, U, on_inconsistent):
        """Per row, an interval box containing the set: its feature ranges (outer intervals,
        certified: docs/theory.md §6.6), the box itself where a row has none. ``(lo, hi)``, (N, d)."""
        N = L.shape[0]
        lo, hi = np.broadcast_to(self.lo, (N, self.d)).copy(), np.broadcast_to(self.hi, (N, self.d)).copy()
        if self._core is None or N == 0:
            return lo, hi
        res = self._run(L, U, RANGES, {}, on_inconsistent)
        lower, upper = res.extras.get("lower"), res.extras.get("upper")
        if lower is None:
            return lo, hi
        ok = (res.status_codes <= Status.INACCURATE)[:, None] & np.isfinite(lower) & np.isfinite(upper)
        return np.where(ok, np.maximum(lower, lo), lo), np.where(ok, np.minimum(upper, hi), hi)

    def _image_exact(self, L, U, spec, opts, on_inconsistent, given, M, img=None):
        """The exact center of ``M S`` for every row (the dispatcher's one path with the
        image's table entry, :func:`chebcenter.methods.image.image_spec`, or ``img``, another
        image entry: :func:`chebcenter.methods.image.image_rcc1_spec`), in the user's
        coordinates: ``(centers, radii, codes, extras)``."""
        N, q = L.shape[0], M.shape[0]
        slices, valid, empty, Lc, Uc, tau, points, slack = self._row_classes(L, U, spec, given)
        centers, radii = np.full((N, q), np.nan), np.full(N, np.nan)
        codes = np.full(N, Status.INVALID_INPUT, dtype=np.int8)
        codes[empty] = Status.INFEASIBLE
        lower, n_vertices = np.full(N, np.nan), np.full(N, -1, dtype=np.int64)
        residual, forward = np.full(N, np.nan), np.full(N, np.nan)
        check = np.full(N, None, dtype=object)
        weighted, eta = img is not None, np.full(N, np.nan)
        good = np.flatnonzero(valid)
        if good.size:
            s = self.scale
            if img is None:
                img = image_spec(spec, np.ascontiguousarray(M[:, self._free]), opts["max_vertices"],
                                 opts["max_candidates"])
            Lg, Ug = L[good], U[good]
            if slices:
                Bc = np.ascontiguousarray((Lg - self._offset) / s)
                _, R, cz, ex = solve(self._core, Bc, Bc, None, (np.abs(Lg) + self._abs_offset) / s, img, opts,
                                     on_inconsistent)
            else:
                _, R, cz, ex = solve(self._core, np.ascontiguousarray(Lc[good]), np.ascontiguousarray(Uc[good]),
                                     tau[good], self._user_magnitude(Lg, Ug), img, opts, on_inconsistent, slack[good])
            Cn = ex["image_center"]
            base = M @ self._shift
            # the rounding of the map back, s Cn + M shift, is added to the radius
            rounding = (self.d + 2) * EPS * np.linalg.norm(
                np.abs(M) @ np.abs(self._shift) + s * np.abs(Cn), axis=1)
            centers[good], radii[good], codes[good] = s * Cn + base, R * s + rounding, cz
            if "radius_lower" in ex:
                lower[good] = ex["radius_lower"] * s
                n_vertices[good] = ex["n_vertices"]
            if weighted:   # the weighted rcc1 entry (image_rcc1_spec): its certified value, user units
                eta[good] = ex["eta"] * s * s
            residual[good] = ex["rhs_residual"] * s
            if "forward_error" in ex:   # the widening the radius carries (||L|| e, user units)
                forward[good] = ex["forward_error"] * s
            if "check" in ex:
                check[good] = ex["check"]
        if weighted:
            return centers, radii, codes, {"eta": eta, "check": check, "forward_error": forward}
        extras = {"rhs_residual": residual, "radius_lower": lower, "n_vertices": n_vertices,
                  "forward_error": forward}
        if any(v is not None for v in check):
            extras["check"] = check
        return centers, radii, codes, extras

    def vertices(self, b: Any = None, max_vertices: int = 1_000_000, *, noise: Any = None, lower: Any = None,
                 upper: Any = None):
        """The vertices of S_F for one right-hand side, one per row (None past ``max_vertices``).

        With ``noise`` (and ``b``) or ``lower``/``upper``, the vertices of the bounded-error set
        ``{x in box : lower <= A x <= upper}`` (an empty array when it is empty).

        Examples
        --------
        >>> import chebcenter as cc
        >>> cc.BoxSlice([[1.0, 1.0]]).vertices([1.0]).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        >>> sorted(cc.BoxSlice([[1.0, 1.0]]).vertices(lower=[1.5]).round(12).tolist())   # x1 + x2 >= 1.5
        [[0.5, 1.0], [1.0, 0.5], [1.0, 1.0]]
        """
        max_vertices = as_positive_int("max_vertices", max_vertices)
        if noise is not None or lower is not None or upper is not None:
            return self._vertices_bounds(b, max_vertices, noise, lower, upper)
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
        from .polytope import Polytope

        if b is None and self.m:
            raise InvalidInputError(f"b is required: a BoxSlice with {self.m} equations is a polytope only "
                                    "for a given right-hand side, e.g. P.to_polytope(b)")
        b = as_rhs("b", np.zeros(0) if b is None else b, self.m)
        G = np.vstack([np.eye(self.d), -np.eye(self.d)])
        return Polytope(G, np.concatenate([self.hi, -self.lo]), self.A if self.m else None, b if self.m else None)

    # -- internals --------------------------------------------------------------------
    def _to_original(self, Z):
        """Points of the normalised problem (rows) in the user's coordinates."""
        if self._free.size == self.d:   # no fixed coordinate: no scatter (4x faster on 1e6 points)
            return self.scale * Z + self._shift
        X = np.broadcast_to(self._shift, Z.shape[:-1] + (self.d,)).copy()
        X[..., self._free] += self.scale * Z
        return X

    def _free_to_full(self, values: np.ndarray) -> np.ndarray:
        """Per-free-coordinate rows (n, d_free) as (n, d), zero on the fixed coordinates (NaN on
        a row that is NaN throughout: a row with no answer)."""
        full = np.zeros((values.shape[0], self.d))
        full[:, self._free] = values
        if self._free.size:
            full[np.all(np.isnan(values), axis=1)] = np.nan
        return full

    # -- bounded-error rows: the bounds in the core's frame, their classes, the way back --
    def _split_bounds(self, L, U):
        """The bounds in the methods' frame and the row classes:
        ``(Lc, Uc, tau, invalid, points, empty, sets)``.

        ``Lc``, ``Uc`` are ``(L - A shift) / s`` (the frame of the core), clamped and snapped by
        :func:`chebcenter._core.lifting.clamp`, the one rule (so a row bounded at its maximum
        over the box is the equation of that face); ``tau`` is the core's one row
        tolerance (``_Core.bound_tol``, docs/theory.md §6.2), computed in that frame, so the
        classes do not depend on the user's units or offsets. ``invalid``: a NaN; ``points``: every interval a point (the equality case);
        ``empty``: some interval inverted beyond ``2 tau``, ``L_j = +inf`` or ``U_j = -inf``;
        ``sets``: the rest; ``slack``: the half-width each snapped interval had. Where every
        coordinate is fixed (no core) the frame is the user's,
        ``tau`` is :meth:`_fixed_tol` and no interval is snapped.
        An interval within ``2 tau`` of a point is that point: the equality case accepts any x
        with ``|a_j^T x - b_j| <= tau_j``, and solving it as an interval only conditions the
        relaxations badly (an interval 1e-12 wide left RCC1 INACCURATE on every row)."""
        invalid = np.any(np.isnan(L) | np.isnan(U), axis=1)
        slack = np.zeros(L.shape)
        if self._core is None:
            Lc, Uc = L.copy(), U.copy()
            tau = self._fixed_tol(L, U)
        else:
            Lc, Uc = self._normalised_bounds(L, U)
            tau = self._core.bound_tol(Lc, Uc, self._user_magnitude(L, U))
            # the user's equations are the equality case as given; the rest clamped and snapped
            Lc, Uc, _, _, slack = clamp(self._core, Lc, Uc, tau, given=np.all(L == U, axis=1)[:, None])
        with np.errstate(invalid="ignore"):
            points = ~invalid & np.all((Lc == Uc) & np.isfinite(Lc), axis=1)
            empty = ~invalid & ~points & np.any((Lc > Uc + 2.0 * tau) | (Lc == np.inf) | (Uc == -np.inf), axis=1)
        return Lc, Uc, tau, invalid, points, empty, ~(invalid | points | empty), slack

    def _user_magnitude(self, L, U):
        """Per row and bound, ``(|b_j| + sum_i |a_ji| |shift_i|) / s``: the size, in the core's
        frame, of what the normalisation ``(b - A shift) / s`` subtracts (its rounding)."""
        return (bound_size(L, U) + self._abs_offset) / self.scale

    def _point_rhs(self, L, U, Bc):
        """The right-hand sides of rows whose intervals are points: the user's own where
        ``L == U``, else the snapped point ``Bc`` (this frame) in the user's units,
        ``A shift + s Bc`` (every coordinate fixed: ``Bc`` is already the user's)."""
        if self._core is None:
            return np.ascontiguousarray(Bc)
        return np.ascontiguousarray(np.where(L == U, L, self._offset + self.scale * Bc))

    def _normalised_bounds(self, L, U):
        s = self.scale
        with np.errstate(invalid="ignore"):
            return np.ascontiguousarray((L - self._offset) / s), np.ascontiguousarray((U - self._offset) / s)

    def _fixed_tol(self, L, U):
        """Every coordinate fixed: the rows' tolerance about ``A lo``. The set is ``{lo}`` and
        has no width to measure feas_tol against, so tau is the rounding of ``A lo`` alone,
        ``8 eps d (|b_j| + sum_i |a_ji| |lo_i|)``: relative to the numbers involved, with no
        absolute term (at an offset of 4e8 a relative feas_tol let a point 0.06 outside an
        interval into it)."""
        return 8.0 * EPS * self.d * (bound_size(L, U) + self._abs_offset)

    def _fixed_point_rows(self, L, U, tau):
        """Every coordinate fixed: the set is ``{lo}`` when ``L <= A lo <= U`` to the tolerance."""
        b = self.A @ self.lo
        return np.all((L <= b + tau) & (U >= b - tau), axis=1)

    def _bound_residuals(self, X, L, U):
        """``|| A c - clip(A c, L, U) ||`` (0 for a center in its set) and the box violation."""
        good = np.all(np.isfinite(X), axis=1)
        res, viol = np.full(X.shape[0], np.nan), np.full(X.shape[0], np.nan)
        if good.any():
            AX = rows_times(X[good], self.A)
            with np.errstate(invalid="ignore"):
                res[good] = np.linalg.norm(AX - np.clip(AX, L[good], U[good]), axis=1)
            viol[good] = np.max(np.maximum(self.lo - X[good], X[good] - self.hi), axis=1, initial=0.0).clip(0.0)
        return res, viol

    def _vertices_bounds(self, b, max_vertices, noise, lower, upper):
        """The vertices of one bounded-error set (see ``BoxSlice.vertices``)."""
        if b is not None:
            b = as_rhs("b", b, self.m)[None, :]
        one = [v if v is None or np.ndim(v) != 1 else np.asarray(v, dtype=float)[None, :] for v in (lower, upper)]
        L, U = as_interval_batch(b, noise, one[0], one[1], self.m)
        if L.shape[0] != 1:
            raise InvalidInputError(f"vertices takes one set; the bounds describe {L.shape[0]}")
        Lc, Uc, tau, invalid, points, empty, sets, _ = self._split_bounds(L, U)
        if invalid[0]:
            raise InvalidInputError("lower, upper, b and noise must not be NaN")
        if points[0]:
            return self.vertices(self._point_rhs(L, U, Lc)[0], max_vertices)
        if empty[0]:
            return np.zeros((0, self.d))
        if self._core is None:
            return self.lo[None, :].copy() if self._fixed_point_rows(L, U, tau)[0] else np.zeros((0, self.d))
        V = interval_vertices(self._core, Lc, Uc, tau, max_vertices)
        return None if V is None else self._to_original(V)






class _DefaultHi(float):
    """1.0, told apart from a 1.0 the caller passed (the deprecated argument order)."""

    def __repr__(self) -> str:
        return "1.0"


_HI = _DefaultHi(1.0)


def chebyshev_center(A: Any, b: Any, lo: Any = 0.0, hi: Any = _HI, method: str = "auto",
                     **options: Any) -> CenterResult:
    """Chebyshev center of ``{x : A x = b, lo <= x <= hi}`` for one system.

    Convenience for ``BoxSlice(A, lo, hi).center(b, method, **options)``, with the
    arguments in that order; for many right-hand sides build the :class:`BoxSlice` once and
    call :meth:`BoxSlice.centers`. The method's default is :meth:`BoxSlice.center`'s.
    The earlier order ``chebyshev_center(A, b, method, lo, hi)`` still works for one
    release, with a ``DeprecationWarning``.

    Examples
    --------
    >>> import chebcenter as cc
    >>> r = cc.chebyshev_center([[1.0, 1.0]], [1.0], method="exact")
    >>> r.center.round(6).tolist(), r.status.name
    ([0.5, 0.5], 'OPTIMAL')
    """
    if isinstance(lo, str):   # the earlier order (A, b, method, lo, hi)
        import warnings

        warnings.warn("chebyshev_center(A, b, method, lo, hi) is deprecated: the order is now BoxSlice's, "
                      "chebyshev_center(A, b, lo, hi, method=...); pass method by name", DeprecationWarning,
                      stacklevel=2)
        lo, hi, method = (0.0 if hi is _HI else hi), (1.0 if isinstance(method, str) else method), lo
    return BoxSlice(A, lo=lo, hi=float(hi) if hi is _HI else hi).center(b, method, **options)
