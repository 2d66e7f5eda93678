"""Bounded-error batches of :class:`chebcenter.BoxSlice`: routing and mapping back.

Private module, on the floor of :mod:`chebcenter.problem` (``BoxSlice`` inherits
:class:`BoundedBatches`). A batch given as ``L <= A x <= U`` is split row by row: rows whose
intervals are all points are the equality case and go through ``BoxSlice._run`` with
``B = L`` (the same code and the same answers as without bounds); rows with a NaN are
INVALID_INPUT; rows with an empty interval are INFEASIBLE; the others are normalised like a
right-hand side (``(L - A shift) / scale``) and solved by :mod:`chebcenter.intervals` on
the core, then mapped back to the user's coordinates with the method's declared extras.
"""

from __future__ import annotations

import time

import numpy as np

from ._errors import InvalidInputError
from ._validate import as_interval_batch, as_rhs
from .intervals import interval_ranges, interval_vertices, solve_intervals
from .kernels.linalg import rows_times
from .ranges import FeatureRanges
from .results import BatchResult, Status

__all__ = ["BoundedBatches"]

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


def _snap_to_points(L, U, tolerance):
    """``L``, ``U`` with every finite interval of width at most ``2 tolerance(midpoint)`` (or
    inverted by at most that) replaced by its midpoint, on copies."""
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(L) & np.isfinite(U)
        mid = np.where(finite, 0.5 * L + 0.5 * U, 0.0)
        thin = finite & (np.abs(U - L) <= 2.0 * tolerance(mid)) & (L != U)
    if not thin.any():
        return L, U
    L, U = L.copy(), U.copy()
    L[thin] = U[thin] = mid[thin]
    return L, U


class BoundedBatches:
    """The bounded-error half of :class:`chebcenter.BoxSlice` (see the module docstring)."""

    def _split_bounds(self, L, U):
        """The bounds with rounding-level intervals snapped to points, and the row classes:
        ``(L, U, invalid, points, empty, sets)``. ``invalid``: a NaN; ``points``: every interval
        a point (the equality case); ``empty``: some ``L_j > U_j``, ``L_j = +inf`` or
        ``U_j = -inf``; ``sets``: the rest.

        An interval no wider than twice the equality tolerance of its row (docs/theory.md §6.2,
        ``tau_j = feas_tol (reach_j + |b_j|) + 32 eps d sum_i |a_ji|``), inverted ones
        included, is its midpoint: the equality case would accept any point of it as meeting
        ``a_j x = b_j``, and solving it as an interval only conditions the relaxations badly
        (an interval 1e-12 wide left RCC1 INACCURATE on every row)."""
        L, U = _snap_to_points(L, U, self._equality_tolerance)
        invalid = np.any(np.isnan(L) | np.isnan(U), axis=1)
        with np.errstate(invalid="ignore"):
            points = ~invalid & np.all((L == U) & np.isfinite(L), axis=1)
            empty = ~invalid & ~points & np.any((L > U) | (L == np.inf) | (U == -np.inf), axis=1)
        return L, U, invalid, points, empty, ~(invalid | points | empty)

    def _equality_tolerance(self, b):
        """``tau`` of each equation at right-hand side ``b`` (N, m): docs/theory.md §6.2."""
        absA = np.abs(self.A)
        reach = absA @ (self.hi - self.lo)
        return self.feas_tol * (reach + np.abs(b)) + 32.0 * np.finfo(float).eps * self.d * absA.sum(axis=1)

    def _normalised_bounds(self, L, U):
        s = self.scale
        return np.ascontiguousarray((L - self._offset) / s), np.ascontiguousarray((U - self._offset) / s)

    def _fixed_point_rows(self, L, U):
        """Every coordinate fixed: the set is ``{lo}`` when ``L <= A lo <= U`` (to the tolerance)."""
        b = self.A @ self.lo
        tol = self.feas_tol * (np.abs(self.A) @ np.abs(self.lo) + np.abs(b) + 1.0)
        return np.all((L <= b + tol) & (U >= b - tol), axis=1)

    def _run_bounds(self, L, U, spec, opts, on_inconsistent):
        t0 = time.perf_counter()
        N, d = L.shape[0], self.d
        L, U, invalid, points, empty, sets = self._split_bounds(L, U)
        centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
        codes = np.full(N, Status.INVALID_INPUT, dtype=np.int8)
        codes[empty] = Status.INFEASIBLE
        parts = []
        if points.any():
            eq = self._run(np.ascontiguousarray(L[points]), spec, opts, on_inconsistent)
            centers[points], radii[points], codes[points] = eq.centers, eq.radii, eq.status_codes
            parts.append((np.flatnonzero(points), dict(eq.extras)))
        rows = np.flatnonzero(sets)
        if rows.size and self._core is None:
            inside = self._fixed_point_rows(L[rows], U[rows])
            centers[rows[inside]], radii[rows[inside]] = self.lo, 0.0
            codes[rows] = np.where(inside, Status.OPTIMAL, Status.INFEASIBLE)
        elif rows.size:
            Lc, Uc = self._normalised_bounds(L[rows], U[rows])
            o = opts
            if spec.to_frame is not None:
                o = spec.to_frame(self, opts, rows, N)
            Z, R, cz, ex = solve_intervals(self._core, Lc, Uc, spec.name, o)
            centers[rows], radii[rows], codes[rows] = self._to_original(Z), R * self.scale, cz
            mapped = {key: _to_user(self, spec, key, val) for key, val in ex.items()}
            parts.append((rows, mapped))
        extras = _merge(spec, parts, N, d)
        residuals, box_viol = self._bound_residuals(centers, L, U)
        return BatchResult(centers, radii, codes, spec.name, time.perf_counter() - t0, residuals, box_viol, extras)

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
        L, U, invalid, points, empty, sets = self._split_bounds(L, U)
        if invalid[0]:
            raise InvalidInputError("lower, upper, b and noise must not be NaN")
        if points[0]:
            return self.vertices(L[0], max_vertices)
        if empty[0]:
            return np.zeros((0, self.d))
        if self._core is None:
            return self.lo[None, :].copy() if self._fixed_point_rows(L, U)[0] else np.zeros((0, self.d))
        V = interval_vertices(self._core, *self._normalised_bounds(L, U), max_vertices)
        return None if V is None else self._to_original(V)

    def _ranges_bounds(self, L, U, on_inconsistent):
        t0 = time.perf_counter()
        N, d = L.shape[0], self.d
        L, U, invalid, points, empty, sets = self._split_bounds(L, U)
        lower, upper = np.full((N, d), np.nan), np.full((N, d), np.nan)
        codes = np.full(N, Status.INVALID_INPUT, dtype=np.int8)
        codes[empty] = Status.INFEASIBLE
        if points.any():
            eq = self.feature_ranges(np.ascontiguousarray(L[points]), on_inconsistent=on_inconsistent)
            lower[points], upper[points], codes[points] = eq.lower, eq.upper, eq.status_codes
        rows = np.flatnonzero(sets)
        if rows.size and self._core is None:
            inside = self._fixed_point_rows(L[rows], U[rows])
            lower[rows[inside]] = upper[rows[inside]] = self.lo
            codes[rows] = np.where(inside, Status.OPTIMAL, Status.INFEASIBLE)
        elif rows.size:
            lo_c, up_c, cz = interval_ranges(self._core, *self._normalised_bounds(L[rows], U[rows]))
            ok = cz <= Status.INACCURATE
            lo_x, up_x = self._to_original(lo_c), self._to_original(up_c)
            lo_x[~ok], up_x[~ok] = np.nan, np.nan
            lower[rows], upper[rows], codes[rows] = lo_x, up_x, cz
        return FeatureRanges(lower, upper, codes, time.perf_counter() - t0, self.lo.copy(), self.hi.copy())


def _to_user(sl, spec, key, val):
    return _TO_USER[spec.extra(key).unit](sl, val)


def _merge(spec, parts, N, d):
    """The extras of the row groups as batch-wide arrays, filled where a group lacks one."""
    keys = [e for e in spec.all_extras() if any(e.name in ex for _, ex in parts)]
    out = {}
    for e in keys:
        shape = (N,) + e.trailing_shape(d)
        arr = np.full(shape, e.fill, dtype=np.dtype(e.dtype)) if e.dtype != "O" else np.full(shape, None, dtype=object)
        for rows, ex in parts:
            if e.name in ex:
                arr[rows] = ex[e.name]
        out[e.name] = arr
    return out
