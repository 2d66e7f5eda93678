"""The bounds of a :class:`chebcenter.BoxSlice` batch in the core's frame, and the way back.

Private module, on the floor of :mod:`chebcenter.problem` (``BoxSlice`` inherits
:class:`BoundedBatches`). A batch given as ``L <= A x <= U`` is normalised like a right-hand
side (``(L - A shift) / scale``), its rows get the core's one tolerance tau
(``_Core.bound_tol``) and are sorted into classes: a NaN is INVALID_INPUT, an empty interval
INFEASIBLE, an interval within ``2 tau`` of a point is that point. ``BoxSlice._run`` then
solves every valid row by :func:`chebcenter.dispatch.solve` (slices and interval rows alike)
and maps the answers back to the user's coordinates with the method's declared extras
(:func:`_to_user`).
"""

from __future__ import annotations

import numpy as np

from ._errors import InvalidInputError
from ._validate import as_interval_batch, as_rhs
from .core import bound_size
from .kernels.linalg import rows_times
from .lifting import interval_vertices

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


class BoundedBatches:
    """The bounded-error half of :class:`chebcenter.BoxSlice` (see the module docstring)."""

    def _split_bounds(self, L, U):
        """The bounds in the methods' frame and the row classes:
        ``(Lc, Uc, tau, invalid, points, empty, sets)``.

        ``Lc``, ``Uc`` are ``(L - A shift) / s`` (the frame of the core), clamped to what each
        row reaches over the box, with every interval then no wider than ``2 tau`` (inverted
        ones by at most that included) replaced by its midpoint (so a row bounded at its
        maximum over the box is the equation of that face); ``tau`` is the core's one row
        tolerance (``_Core.bound_tol``, docs/theory.md §6.2), computed in that frame, so the
        classes do not depend on the user's units or offsets. ``invalid``: a NaN; ``points``: every interval a point (the equality case);
        ``empty``: some interval inverted beyond ``2 tau``, ``L_j = +inf`` or ``U_j = -inf``;
        ``sets``: the rest. Where every coordinate is fixed (no core) the frame is the user's,
        ``tau`` is :meth:`_fixed_tol` and no interval is snapped.
        An interval within ``2 tau`` of a point is that point: the equality case accepts any x
        with ``|a_j^T x - b_j| <= tau_j``, and solving it as an interval only conditions the
        relaxations badly (an interval 1e-12 wide left RCC1 INACCURATE on every row)."""
        invalid = np.any(np.isnan(L) | np.isnan(U), axis=1)
        if self._core is None:
            Lc, Uc = L.copy(), U.copy()
            tau = self._fixed_tol(L, U)
        else:
            Lc, Uc = self._normalised_bounds(L, U)
            tau = self._core.bound_tol(Lc, Uc, self._user_magnitude(L, U))
            # each interval clamped to what its row reaches over the box (the same set), then
            # snapped to its midpoint where no wider than 2 tau
            reach = np.abs(self._core.A) @ self._core.hi
            given = np.all(L == U, axis=1)[:, None]      # the user's equations: the equality case as given
            with np.errstate(invalid="ignore", over="ignore"):
                Lc, Uc = np.where(given, Lc, np.maximum(Lc, -reach)), np.where(given, Uc, np.minimum(Uc, reach))
                finite = np.isfinite(Lc) & np.isfinite(Uc)
                mid = np.where(finite, 0.5 * Lc + 0.5 * Uc, 0.0)
                thin = finite & (np.abs(Uc - Lc) <= 2.0 * tau) & (Lc != Uc)
            Lc[thin] = Uc[thin] = mid[thin]
        with np.errstate(invalid="ignore"):
            points = ~invalid & np.all((Lc == Uc) & np.isfinite(Lc), axis=1)
            empty = ~invalid & ~points & np.any((Lc > Uc + 2.0 * tau) | (Lc == np.inf) | (Uc == -np.inf), axis=1)
        return Lc, Uc, tau, invalid, points, empty, ~(invalid | points | empty)

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
        return 8.0 * np.finfo(float).eps * self.d * (bound_size(L, U) + self._abs_offset)

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
        Lc, Uc, tau, invalid, points, empty, sets = self._split_bounds(L, U)
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


def _to_user(sl, spec, key, val):
    return _TO_USER[spec.extra(key).unit](sl, val)
