"""One batch through one method: the solve, the contract check and the repair.

Private module, above the methods and below :class:`chebcenter.BoxSlice`. Every row of a
batch is a set ``{x in box : L <= A x <= U}`` on the normalised
:class:`~chebcenter._core.normalised._Core`; :func:`solve` is the one entry. Rows whose intervals are all
points are slices ``A x = b``: consistency and emptiness are decided on the core's factors
(:func:`_slices`). The other rows are clamped to what each row reaches over the box, grouped
by their pattern of equations and vacuous rows and lifted (:mod:`chebcenter._core.lifting`, the
reduction in front of the methods), and a row whose lifted set has no point is INFEASIBLE
(:func:`_sets`). The method runs on each group of nonempty rows through its one function
(a :class:`~chebcenter.methods.Context`), and each row is held to its method's contract by
one check (:func:`check_contract`): a center that claims the set must lie in it; a row that
fails is moved into the set (a projection) with its radius enlarged by the move and
reported INACCURATE, with the reason in ``extras["check"]``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.lifting import clamp, groups
from .._core.normalised import CLIP_TOL, consistent_rows
from ..kernels import closed_forms, linalg, projection
from ..kernels.jit import await_method
from ..kernels.linalg import EPS, rows_times
from ..results import Status
from .spec import Context

__all__ = ["check_contract", "scatter_declared", "solve"]


def solve(core, L, U, tau, user, spec, opts, on_inconsistent, slack=None):
    """Centers, radii, statuses and extras (the core's frame) of the sets
    ``{x in box : L <= A x <= U}``, one per row, by the method ``spec``.

    ``L``, ``U`` (N, m) are normalised bounds (finite or infinite, ``L <= U`` up to ``tau``);
    ``U is L`` says every row is a slice ``A x = L`` (finite). ``tau`` (N, m) are the rows'
    tolerances (``_Core.bound_tol``; may be None when ``U is L``), ``user`` (N, m) the size of
    what the normalisation subtracted from each bound, or None. ``on_inconsistent`` applies
    to slices (``"project"``: b replaced by its projection onto Col(A)). A row's extras are
    the dispatcher's and the method's declared ones. ``slack`` (N, m): the half-width of an
    interval the caller replaced by its midpoint (0 elsewhere; None: none), added to the
    forward error of those rows (:func:`widen`)."""
    await_method(spec.name)   # a compile helper's step: loaded from its cache, not compiled twice
    if U is L:
        return _slices(core, L, user, spec, opts, on_inconsistent, np.arange(L.shape[0]), slack)
    N, d = L.shape[0], core.d
    points = np.all(L == U, axis=1)
    if points.all():
        return _slices(core, L, user, spec, opts, on_inconsistent, np.arange(N), slack)
    if not points.any():
        return _sets(core, L, U, tau, spec, opts, np.arange(N), user)
    centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
    codes = np.empty(N, dtype=np.int8)   # every row is written below: a slice or a set
    extras: dict[str, Any] = {}
    at = np.flatnonzero(points)
    _place(spec, at, _slices(core, np.ascontiguousarray(L[at]), None if user is None else user[at], spec, opts,
                             on_inconsistent, at, None if slack is None else slack[at]), centers, radii, codes, extras)
    at = np.flatnonzero(~points)
    _place(spec, at, _sets(core, L[at], U[at], tau[at], spec, opts, at, None if user is None else user[at]),
           centers, radii, codes, extras)
    return centers, radii, codes, extras


def _slices(core, B, user, spec, opts, on_inconsistent, index, slack=None):
    """:func:`solve` on rows that are slices ``A x = B`` (all finite); ``index``: the rows'
    positions in the batch (the contexts' ``rows``); ``slack``: see :func:`solve`."""
    N, d = B.shape[0], core.d
    Q, H = np.empty((N, d)), np.empty((N, d))
    residual, violation = np.empty(N), np.empty(N)
    closed_forms.prepare_rows(B, core.Ur, core.s_r, core.Vr, core.p_mid, core.lo, core.hi,
                         Q, H, residual, violation)
    codes = np.zeros(N, dtype=np.int8)
    # each equation's residual from Col(A) within its own tau (the one rule, docs/theory.md §6.2)
    inside = linalg.rows_times(linalg.rows_times(B, core.Ur.T), core.Ur) if core.rank else np.zeros_like(B)
    consistent = consistent_rows(B - inside, B, core.bound_tol(B, B, user))
    if on_inconsistent == "status":
        codes[~consistent] = Status.INFEASIBLE
    elif core.rank and not consistent.all():  # the nearest consistent right-hand sides
        B = inside
    inside = (codes == Status.OPTIMAL) & (violation <= core.box_tol)
    if inside.any():   # and within each coordinate's own tolerance (a narrow one gets no wider slack)
        Hi = H[inside]
        inside[inside] = np.all((Hi >= core.lo - core.coord_tol) & (Hi <= core.hi + core.coord_tol), axis=1)
    outside, proj_out, feasible_out = core._project_outside(Q, codes == Status.OPTIMAL, inside, user, B)
    codes[outside[~feasible_out]] = Status.INFEASIBLE
    rows = np.flatnonzero(codes == Status.OPTIMAL)
    every = rows.size == N
    extras: dict[str, Any] = {"rhs_residual": residual}
    centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
    if rows.size:
        take = (lambda a: a) if every else (lambda a: a[rows])
        ball = np.empty(rows.size)
        Hr = take(H)
        closed_forms.ball_radii(Hr, core.mid, core.half_diag_sq, ball)
        pos = np.full(N, -1, dtype=np.int64)
        pos[rows] = np.arange(rows.size)
        Br = take(B)
        ctx = Context(core, index[rows], Br, take(Q), Hr, ball, opts,
                      outside=pos[outside[feasible_out]], proj_outside=proj_out[feasible_out], L=Br, U=Br)
        out = spec.run(ctx)
        if core.p == 0 and spec.lies_in != "box":  # S_F = {q}: every estimate of S_F is q, radius 0
            # (half, the know-nothing baseline, stays the box midpoint with its half-diagonal)
            ok = out.codes <= Status.INACCURATE
            out.centers[ok] = ctx.Q[ok]
            out.radii[ok] = 0.0
        codes[rows], centers[rows], radii[rows] = out.codes, out.centers, out.radii
        for key, val in out.extras.items():   # rows the method did not see hold the declared fill
            extras[key] = val if every else scatter_declared(spec, key, val, rows, N, d)
    bad = codes > Status.INACCURATE
    centers[bad] = np.nan
    radii[bad] = np.nan
    check_contract(core, spec, _SliceMembers(core, B, user), centers, radii, codes, extras)
    widen(core, spec, B, Q, user, slack, centers, radii, codes, extras)
    return centers, radii, codes, extras


#: why a row of an A with a direction its right-hand sides cannot resolve is INACCURATE
DROPPED = ("near-dependent equations: a direction of the row space with singular value <= feas_tol * "
           "sigma_max is not resolved by b and was dropped (the set solved contains the exact one); "
           "radius and ranges bound it, radius_lower does not certify it")


def widen(core, spec, B, Q, user, slack, centers, radii, codes, extras):
    """Make every answered slice row's certificate hold for the exact set (in place;
    docs/theory.md §6.8): the set of the exact data, of b's own rounding and of the
    intervals solved as their midpoints (``slack``) lies within ``e``
    (:meth:`~chebcenter._core.normalised._Core.forward_error`) of the computed slice, so the
    radius grows by ``e`` (by ``spec.lipschitz e`` for a radius of an image; an x-space
    radius never past the farthest box corner), ``radius_lower`` shrinks by as much and the
    feature ranges widen by ``e`` on both sides (within the box). ``extras["forward_error"]``
    holds the widening. Where the core dropped a direction b cannot resolve
    (``core.dropped``), an OPTIMAL row is INACCURATE and its ``radius_lower`` 0."""
    N = B.shape[0]
    answered = codes <= Status.INACCURATE
    e = np.zeros(N)
    if answered.any():
        every = bool(answered.all())
        take = (lambda a: a) if every else (lambda a: a[answered])
        e[answered] = core.forward_error(take(B), take(Q), None if user is None else take(user),
                                         None if slack is None else take(slack))
    _apply_widening(core, spec, e, answered, centers, radii, extras)
    if core.dropped:
        hit = answered & (codes == Status.OPTIMAL)
        codes[hit] = Status.INACCURATE
        if extras.get("radius_lower") is not None:
            extras["radius_lower"] = np.where(answered, 0.0, extras["radius_lower"])
        check = extras.get("check")
        check = np.full(N, None, dtype=object) if check is None else check
        for k in np.flatnonzero(answered):
            check[k] = DROPPED if check[k] is None else f"{check[k]}; {DROPPED}"
        extras["check"] = check


def _apply_widening(core, spec, e, answered, centers, radii, extras):
    """Widen the answered rows' certificates by ``e`` (in place; see :func:`widen`)."""
    grow = spec.lipschitz * e
    extras["forward_error"] = np.where(answered, grow, np.nan)
    ok = answered & np.isfinite(radii)
    radii[ok] += grow[ok]
    if spec.lipschitz == 1.0 and spec.lies_in != "none":
        # never past the farthest box corner, which is at least the half-diagonal away
        near = np.flatnonzero(ok & (radii > math.sqrt(core.half_diag_sq)))
        if near.size:
            C = centers[near]
            far = np.sqrt(np.sum(np.maximum(C - core.lo, core.hi - C) ** 2, axis=1))
            radii[near] = np.where(np.isfinite(far), np.minimum(radii[near], far), radii[near])
    low = extras.get("radius_lower")
    if low is not None:
        extras["radius_lower"] = np.where(answered, np.maximum(low - grow, 0.0), low)
    if "lower" in extras and "upper" in extras and spec.lies_in == "none" and spec.lipschitz == 1.0:
        lo_, up_ = extras["lower"], extras["upper"]
        extras["lower"] = np.where(answered[:, None], np.maximum(lo_ - e[:, None], core.lo), lo_)
        extras["upper"] = np.where(answered[:, None], np.minimum(up_ + e[:, None], core.hi), up_)


def _sets(core, Lc, Uc, tau, spec, opts, index, user=None):
    """:func:`solve` on rows with an interval wider than a point: clamped, grouped, lifted;
    ``index``: the rows' positions in the batch (the contexts' ``rows``); ``user``: see
    :func:`solve` (the rounding of the bounds, for the forward-error widening)."""
    N, d = Lc.shape[0], core.d
    centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
    codes = np.full(N, Status.INFEASIBLE, dtype=np.int8)
    check = np.full(N, None, dtype=object)
    extras: dict[str, Any] = {"rhs_residual": np.zeros(N), "check": check}
    Lp, Up, empty, eq, _ = clamp(core, Lc, Uc, tau)
    check[empty] = "an interval misses what its row reaches over the box"
    for rows, grp in groups(core, Lp, Up, tau, eq, empty):
        k = np.flatnonzero(grp.consistent)
        Y0 = None
        if not spec.decides_emptiness:
            Y0 = grp.feasible_points(k) if k.size else np.zeros((0, grp.K))
            ok = np.all(np.isfinite(Y0), axis=1)
            k, Y0 = k[ok], Y0[ok]
        if k.size == 0:
            continue
        at = rows[k]
        out = spec.run(Context.of_group(core, index[at], grp, k, Y0, Lp[at], Up[at], opts))
        C, R, st, ex = out.centers, out.radii, out.codes, dict(out.extras)
        if "check" in ex:   # the method's own findings, before the contract check adds its own
            ex["check"] = np.asarray(ex["check"], dtype=object)
        members = _GroupMembers(core, grp, k, Y0, 0.5 * (Lp[at] + Up[at]))
        check_contract(core, spec, members, C, R, st, ex)
        _place(spec, at, (C, R, st, ex), centers, radii, codes, extras)
    answered = codes <= Status.INACCURATE
    e = np.zeros(N)
    if answered.any():
        e[answered] = core.interval_forward_error(Lc[answered], Uc[answered],
                                                  None if user is None else user[answered])
    _apply_widening(core, spec, e, answered, centers, radii, extras)
    return centers, radii, codes, extras


def _place(spec, at, part, centers, radii, codes, extras):
    """Write the answers ``part = (centers, radii, codes, extras)`` of the rows ``at`` into the
    batch's arrays; an extra met for the first time gets a batch-wide array filled as declared."""
    C, R, st, ex = part
    centers[at], radii[at], codes[at] = C, R, st
    for key, val in ex.items():
        if key not in extras:
            extras[key] = _declared_array(spec, key, codes.size, centers.shape[1])
        extras[key][at] = val


def _declared_array(spec, key, n, d):
    """An (n, ...) array for the method's declared extra ``key``, filled as declared."""
    e = spec.extra(key)
    shape = (n,) + e.trailing_shape(d)
    return np.full(shape, None, dtype=object) if e.dtype == "O" else np.full(shape, e.fill, dtype=np.dtype(e.dtype))


class _SliceMembers:
    """Membership in the slices ``S_F = {x in box : A x = b}`` and the move into them."""

    where = "S_F"

    def __init__(self, core, B, user=None):
        self.core, self.B, self.user = core, B, user

    def off(self, idx, X):
        """Rows ``idx`` whose centers ``X`` (in the box) are off ``A x = b``: some equation
        beyond its own tau, the one rule of consistency (:func:`consistent_rows`, applied to
        ``A c - b``; docs/theory.md §6.2)."""
        core, B = self.core, self.B[idx]
        tau = core.bound_tol(B, B, None if self.user is None else self.user[idx])
        # tau's rounding of a_j^T c assumes |c_i| <= 1 (the box); a center of S (ls: the
        # origin's component, far outside the box at an offset) carries that of its own size
        far = 32.0 * EPS * core.d * rows_times(np.maximum(np.abs(X) - 1.0, 0.0), np.abs(core.A))
        return ~consistent_rows(rows_times(X, core.A) - B, B, tau + far)

    off_midpoint = off   # a slice is its own midpoint slice

    def move(self, idx, X):
        """The projections of ``X`` onto S_F (compiled dual Newton; a point of S_F where it does
        not converge): ``(points, done, notes)``."""
        core, B = self.core, self.B[idx]
        Beta = linalg.rows_times(B, core.Ur.T) / core.s_r if core.rank else np.zeros((idx.size, 0))
        C = np.ascontiguousarray(X)
        P = np.empty_like(C)
        state = np.zeros(idx.size, dtype=np.int64)
        its = np.zeros(idx.size, dtype=np.int64)
        projection.project_points(C, core.Vr, Beta, core.lo, core.hi, P, state, its, projection.PROJECT_MAXIT, core._project_tol)
        done = state == projection.PROJECTED
        notes = np.full(idx.size, None, dtype=object)
        for j in np.flatnonzero(~done):  # the projection did not converge (a slice that is
            x, how = core._slice_point(B[j], Beta[j])  # nearly a point): any point of S_F keeps the bound
            if x is not None:
                P[j], done[j] = x, True
                notes[j] = f"moved to {how} point of S_F (the projection did not converge)"
        return P, done, notes


class _GroupMembers:
    """Membership in the sets of one lifted group and the move into them (the lifted QP)."""

    where = "the set"

    def __init__(self, core, grp, k, Y0, mid):
        self.core, self.grp, self.k, self.Y0, self.mid = core, grp, k, Y0, mid

    def off(self, idx, X):
        """Rows ``idx`` whose centers ``X`` leave their set: a lifted coordinate by more than
        CLIP_TOL beyond its tolerance, or an equation beyond its tau (:func:`consistent_rows`)."""
        grp, k = self.grp, self.k[idx]
        Y = grp.apply(X)
        viol = np.max(np.maximum(grp.Lo[k] - grp.tol[k] - Y, Y - grp.Hi[k] - grp.tol[k]), axis=1, initial=0.0)
        off = viol > CLIP_TOL
        if grp.AE.shape[0]:   # the equations by the one rule of the slices (_SliceMembers.off)
            off |= ~consistent_rows(rows_times(X, grp.AE) - grp.bE[k], grp.bE[k], grp.tauE[k])
        return off

    def off_midpoint(self, idx, X):
        """Rows ``idx`` whose centers are off ``A x = A A^+ (L + U) / 2`` beyond rounding (where
        the midpoint formulas put them: the midpoints' least-squares slice)."""
        core = self.core
        mid = self.mid[idx]
        if core.rank:
            mid = rows_times(rows_times(mid, core.Ur.T), core.Ur)
        return _SliceMembers(core, np.ascontiguousarray(mid)).off(np.arange(idx.size), X)

    def move(self, idx, X):
        """The lifted projections of ``X`` onto the rows' sets: ``(points, done, notes)``."""
        grp, k = self.grp, self.k[idx]
        Y, _, _ = grp.project(k, np.ascontiguousarray(X), self.Y0[idx])
        P = grp.invert(Y)
        return P, np.all(np.isfinite(P), axis=1), np.full(idx.size, None, dtype=object)


def check_contract(core, spec, members, centers, radii, codes, extras):
    """Hold every row to its method's promise (in place), for slices and interval sets alike
    (``members``: the rows' sets, with ``off`` and ``move``).

    * ``lies_in == "S_F"`` (the center lies in the row's set): the center is clipped into the
      box (``extras["clipped"]``); one that left the box by more than CLIP_TOL, or that is
      outside its set (an equation beyond its tau, :func:`consistent_rows`, the one rule of
      slices and sets; an interval or box coordinate beyond its tolerance by CLIP_TOL) is moved into the set, its
      radius grows by the distance moved (``extras["moved"]``; the triangle inequality keeps
      it a bound) and an OPTIMAL status becomes INACCURATE. A row that cannot be moved is
      SOLVER_ERROR.
    * ``lies_in == "S"`` (the center solves ``A x = `` the rows' midpoints): the residual
      test alone; a failing row becomes INACCURATE.
    """
    if spec.lies_in not in ("S_F", "S"):
        return
    answered = codes <= Status.INACCURATE
    finite = np.all(np.isfinite(centers), axis=1) & np.isfinite(radii)
    ok = np.flatnonzero(answered & finite)
    reason = np.full(codes.size, None, dtype=object)
    lost = np.flatnonzero(answered & ~finite)   # a method that answered without a number
    codes[lost] = Status.SOLVER_ERROR
    reason[lost] = "the method returned no center or no radius"
    if spec.lies_in == "S_F":
        clipped = np.zeros(codes.size)
        before = centers[ok]
        after = np.clip(before, core.lo, core.hi)
        clipped[ok] = np.max(np.abs(after - before), axis=1, initial=0.0)
        centers[ok] = after
        extras["clipped"] = clipped
        extras.setdefault("moved", np.zeros(codes.size))
        off = ok[members.off(ok, centers[ok])]
        far = ok[clipped[ok] > CLIP_TOL]
        reason[far] = f"the solver's center left the box (moved into {members.where})"
        reason[off] = f"the center was outside {members.where} (moved into {members.where})"
        fix = np.union1d(far, off)
        if fix.size:
            _move(members, centers, radii, codes, fix, reason, extras)
    else:
        off = ok[members.off_midpoint(ok, centers[ok])]
        reason[off] = "the center is off A x = b beyond rounding"
    failed = reason != None  # noqa: E711  (object array)
    codes[failed & (codes == Status.OPTIMAL)] = Status.INACCURATE
    bad = codes > Status.INACCURATE
    centers[bad] = np.nan
    radii[bad] = np.nan
    earlier = extras.get("check")  # the method's own findings come first
    if earlier is not None:
        both = [a if b is None else (b if a is None else f"{a}; {b}") for a, b in zip(earlier, reason)]
        reason = np.array(both + [None], dtype=object)[:-1]
    if failed.any() or earlier is not None:
        extras["check"] = reason


def _move(members, centers, radii, codes, fix, reason, extras):
    """Move the failing centers into their sets; radius += the distance moved."""
    X, done, notes = members.move(fix, np.ascontiguousarray(centers[fix]))
    X = np.clip(X, members.core.lo, members.core.hi)
    shift = np.linalg.norm(X - centers[fix], axis=1)
    good, lost = fix[done], fix[~done]
    centers[good] = X[done]
    radii[good] += shift[done]
    extras["moved"][good] = shift[done]
    for j in np.flatnonzero(notes != None):  # noqa: E711  (object array)
        reason[fix[j]] = f"{reason[fix[j]]}; {notes[j]}"
    centers[lost] = np.nan
    radii[lost] = np.nan
    codes[lost] = Status.SOLVER_ERROR
    reason[lost] = f"the solver's center was off {members.where} and could not be moved into it"


def scatter_declared(spec, key, values, rows, n, d):
    """The method's extra ``key`` of the rows ``rows`` in an (n, ...) array (``d``: the
    dimension of its frame); the other rows hold the extra's declared fill."""
    out = _declared_array(spec, key, n, d)
    out[rows] = values
    return out
