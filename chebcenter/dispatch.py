"""One batch through one method: the solve, the contract check and the repair.

Private module, above the methods and below :class:`chebcenter.BoxSlice`: :func:`solve`
decides consistency and emptiness for every row (on the :class:`~chebcenter.core._Core`),
hands the nonempty rows to the method as a :class:`~chebcenter.methods.Context`, and holds
each OPTIMAL row to its method's contract (:func:`check_contract`): a center that claims
S_F must lie in it; a row that fails is moved into S_F (projection) with its radius
enlarged by the move and reported INACCURATE, with the reason in ``extras["check"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import _EPS, _PROJECT_MAXIT, CLIP_TOL, MEMBERSHIP_TOL
from .kernels import closed_forms, linalg, projection
from .kernels.linalg import rows_times
from .lifting import clamp, groups
from .methods import Context
from .results import Status

__all__ = ["check_contract", "hold_to_set", "move_into_slice", "scatter", "solve", "solve_bounded"]


def solve(core, B, user, spec, opts, on_inconsistent):
    """Centers of the normalised rows ``B`` (all finite); returns
    ``(centers, radii, codes, extras)`` in these coordinates. ``user`` (N, m) is the size of
    what the normalisation subtracted from each equation (``_Core.bound_tol``), or None."""
    N, d = B.shape[0], core.d
    Q, H = np.empty((N, d)), np.empty((N, d))
    residual, violation = np.empty(N), np.empty(N)
    closed_forms.prepare_rows(B, core.Ur, core.s_r, core.Vr, core.p_mid, core.lo, core.hi,
                         Q, H, residual, violation)
    codes = np.zeros(N, dtype=np.int8)
    # b's distance from Col(A), relative to b and to what A reaches over the box, plus the
    # rounding of the normalisation (b - A shift) / s: all in this frame (docs/theory.md §6.2)
    scale = np.linalg.norm(B, axis=1) + core.sigma_max * np.sqrt(core.half_diag_sq)
    rounding = 0.0 if user is None else 8.0 * _EPS * np.linalg.norm(user, axis=1)
    consistent = residual <= core.feas_tol * np.maximum(scale, 1e-300) + rounding
    if on_inconsistent == "status":
        codes[~consistent] = Status.INFEASIBLE
    elif core.rank and not consistent.all():  # the nearest consistent right-hand sides
        B = linalg.rows_times(linalg.rows_times(B, core.Ur.T), core.Ur)
    inside = (codes == Status.OPTIMAL) & (violation <= core.box_tol)
    if inside.any():   # and within each coordinate's own tolerance (a narrow one gets no wider slack)
        Hi = H[inside]
        inside[inside] = np.all((Hi >= core.lo - core.coord_tol) & (Hi <= core.hi + core.coord_tol), axis=1)
    outside, proj_out, feasible_out = core._project_outside(Q, codes == Status.OPTIMAL, inside, user)
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
        ctx = Context(core, rows, take(B), take(Q), Hr, ball, opts,
                      outside=pos[outside[feasible_out]], proj_outside=proj_out[feasible_out])
        out = spec.func(ctx)
        if core.p == 0 and spec.lies_in != "box":  # S_F = {q}: every estimate of S_F is q, radius 0
            # (half, the know-nothing baseline, stays the box midpoint with its half-diagonal)
            ok = out.codes <= Status.INACCURATE
            out.centers[ok] = ctx.Q[ok]
            out.radii[ok] = 0.0
        codes[rows], centers[rows], radii[rows] = out.codes, out.centers, out.radii
        for key, val in out.extras.items():
            extras[key] = val if every else scatter(val, rows, N)
    bad = codes > Status.INACCURATE
    centers[bad] = np.nan
    radii[bad] = np.nan
    if spec.lies_in in ("S_F", "S"):
        check_contract(core, spec, B, centers, radii, codes, extras)
    return centers, radii, codes, extras


def check_contract(core, spec, B, centers, radii, codes, extras):
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
        after = np.clip(before, core.lo, core.hi)
        clipped[ok] = np.max(np.abs(after - before), axis=1, initial=0.0)
        centers[ok] = after
        extras["clipped"] = clipped
    res = np.full(codes.size, np.nan)
    viol = np.full(codes.size, np.nan)
    closed_forms.check_rows(centers, core.A, B, core.lo, core.hi, res, viol)
    norms = np.linalg.norm(centers[ok], axis=1)
    tol = MEMBERSHIP_TOL * (core.sigma_max * (norms + 1.0) + np.linalg.norm(B[ok], axis=1))
    off = ok[res[ok] > tol]
    if spec.lies_in == "S_F":
        far = ok[clipped[ok] > CLIP_TOL]
        reason[far] = "the solver's center left the box (moved into S_F)"
        reason[off] = "the center was off A x = b (moved into S_F)"
        fix = np.union1d(far, off)
        if fix.size:
            move_into_slice(core, B, centers, radii, codes, fix, reason, extras)
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


def move_into_slice(core, B, centers, radii, codes, fix, reason, extras):
    """Project the failing centers onto S_F; radius += distance moved."""
    moved = extras.setdefault("moved", np.zeros(codes.size))
    Beta = linalg.rows_times(B[fix], core.Ur.T) / core.s_r if core.rank else np.zeros((fix.size, 0))
    C = np.ascontiguousarray(centers[fix])
    X = np.empty_like(C)
    state = np.zeros(fix.size, dtype=np.int64)
    its = np.zeros(fix.size, dtype=np.int64)
    projection.project_points(C, core.Vr, Beta, core.lo, core.hi, X, state, its,
                           _PROJECT_MAXIT, core._project_tol)
    done = state == projection.PROJECTED
    for j in np.flatnonzero(~done):  # the projection did not converge (a slice that is
        x, how = core._slice_point(B[fix[j]], Beta[j])  # nearly a point): any point of S_F keeps the bound
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


def solve_bounded(core, Lc, Uc, tau, spec, opts):
    """Centers, radii, statuses and extras (the core's frame) of the bounded-error sets
    ``{x in box : Lc <= A x <= Uc}``, one per row (finite or infinite bounds, ``Lc <= Uc``,
    ``tau`` the rows' tolerances of ``_Core.bound_tol``), by the method ``spec`` (its
    ``bounded`` entry).

    The intervals are clamped to what each row reaches over the box (a row that misses it
    beyond tau is INFEASIBLE); the rows are grouped by their pattern of equations and vacuous
    rows and lifted (:mod:`chebcenter.lifting`); a row whose lifted set has no point is
    INFEASIBLE; the method runs on the rest, and every center that claims S (``lies_in ==
    "S_F"``) is held to it (:func:`hold_to_set`). The extras are the method's declared ones,
    allocated as they first come back."""
    N, d = Lc.shape[0], core.d
    centers, radii = np.full((N, d), np.nan), np.full(N, np.nan)
    codes = np.full(N, Status.INFEASIBLE, dtype=np.int8)
    check = np.full(N, None, dtype=object)
    extras: dict[str, Any] = {"rhs_residual": np.zeros(N), "check": check}
    if spec.in_feasible_set:
        extras.update(clipped=np.zeros(N), moved=np.zeros(N))
    Lp, Up, empty, eq = clamp(core, Lc, Uc, tau)
    check[empty] = "an interval misses what its row reaches over the box"
    for rows, grp in groups(core, Lp, Up, tau, eq, empty):
        k = np.flatnonzero(grp.consistent)
        Y0 = grp.feasible_points(k) if k.size else np.zeros((0, grp.K))
        ok = np.all(np.isfinite(Y0), axis=1)
        k, Y0 = k[ok], Y0[ok]
        if k.size == 0:
            continue
        codes[rows[k]] = Status.OPTIMAL
        C, R, st, ex = spec.bounded(core, grp, k, Y0, Lp[rows[k]], Up[rows[k]], opts)
        if "check" in ex:   # the method's own findings, before the contract check adds its own
            check[rows[k]] = ex.pop("check")
        if spec.in_feasible_set:
            C, R, st = hold_to_set(core, grp, k, Y0, C, R, st, check, rows, extras)
        at = rows[k]
        centers[at], radii[at], codes[at] = C, R, st
        for key, val in ex.items():
            if key not in extras:
                extras[key] = _declared_array(spec, key, N, d)
            extras[key][at] = val
    return centers, radii, codes, extras


def _declared_array(spec, key, n, d):
    """An (n, ...) array for the method's declared extra ``key``, filled as declared."""
    e = spec.extra(key)
    shape = (n,) + e.trailing_shape(d)
    return np.full(shape, None, dtype=object) if e.dtype == "O" else np.full(shape, e.fill, dtype=np.dtype(e.dtype))


def hold_to_set(core, grp, k, Y0, X, R, codes, check, rows, extras):
    """Each center that claims S lies in S: one outside its tolerance is projected onto S
    (radius += the move, INACCURATE); then it is clipped into the box (``clipped``)."""
    good = np.all(np.isfinite(X), axis=1)
    Y = grp.apply(np.where(good[:, None], X, 0.0))
    lo, hi, tol = grp.Lo[k], grp.Hi[k], grp.tol[k]
    viol = np.max(np.maximum(lo - tol - Y, Y - hi - tol), axis=1, initial=0.0)
    viol[:] = np.maximum(viol, 0.0)
    if grp.AE.shape[0]:
        res = np.abs(rows_times(X, grp.AE) - grp.bE[k])
        viol = np.maximum(viol, np.max(res - grp.tauE[k], axis=1, initial=0.0))
    off = np.flatnonzero(good & (viol > CLIP_TOL) & (codes <= Status.INACCURATE))
    if off.size:
        Yp, _, _ = grp.project(k[off], np.ascontiguousarray(X[off]), Y0[off])
        Xp = grp.invert(Yp)
        moved = np.linalg.norm(Xp - X[off], axis=1)
        X[off], R[off] = Xp, R[off] + moved
        codes[off] = np.where(codes[off] == Status.OPTIMAL, Status.INACCURATE, codes[off])
        extras["moved"][rows[k[off]]] = moved
        check[rows[k[off]]] = [(f"{c}; " if c else "") + "the center was outside the set (moved into it)"
                               for c in check[rows[k[off]]]]
    Xc = np.clip(X, core.lo, core.hi)
    extras["clipped"][rows[k]] = np.max(np.abs(np.where(good[:, None], Xc - X, 0.0)), axis=1, initial=0.0)
    return Xc, R, codes


def scatter(values: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Per-row values of the method's rows placed in an (n, ...) array; the rows the
    method did not see hold NaN (floats), 0 (integers, booleans) or None (objects)."""
    kind = values.dtype.kind
    fill = np.nan if kind == "f" else (0 if kind in "iub" else None)
    full = np.full((n,) + values.shape[1:], fill, dtype=values.dtype if kind in "fiub" else object)
    full[rows] = values
    return full
