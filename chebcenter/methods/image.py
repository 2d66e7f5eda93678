"""The Chebyshev center of a linear image ``L S`` (``of=`` of :meth:`chebcenter.BoxSlice.centers`).

``r*(L S) = min_c max_{x in S} ||L x - c||``: the estimate of ``L x`` (a subset of the
coordinates, or any linear feature map) with the rest of x a nuisance (docs/theory.md,
"The center of a linear image").

* ``exact`` (and ``auto`` where it takes exact): ``L S`` is the polytope spanned by the images
  of S's vertices, so its center is the minimum enclosing ball of ``{L v}``
  (:func:`image_exact`, a :class:`MethodSpec` built per call by :func:`image_spec` and run by
  the dispatcher on the normalised core). The radius is the largest distance from the center
  to the image of every vertex candidate, padded by the rounding of the products; a lower
  bound ``radius_lower`` comes from the ball's dual.
* every other method: its x-space center c and certified radius r give the center ``L c`` and
  the smaller of ``||L||_2 r`` and the interval-hull bound over the box
  (:func:`relaxation_radius`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import InvalidInputError
from ..kernels.ball import working_set_ball
from ..kernels.vertices import candidate_count
from ..results import Status
from .spec import Context, Extra, MethodOutput, MethodSpec

__all__ = ["IMAGE_EXACT_OPTIONS", "as_image_map", "image_spec", "relaxation_radius"]

_EPS = float(np.finfo(float).eps)

#: exact's options that the image route honours at these values only (the others it honours
#: at any value: max_vertices, max_candidates; gap_tol, max_nodes and return_support have no
#: effect there, since it neither searches nor returns a support)
IMAGE_EXACT_OPTIONS = {"algorithm": ("auto", "enumerate"), "return_vertices": (False,)}


def as_image_map(of: Any, d: int) -> np.ndarray:
    """The checked ``of=``: a (q, d) float matrix L. ``of`` is a 1-D sequence of distinct
    integer coordinate indices in ``[0, d)`` (L: those rows of the identity) or a 2-D array
    (q, d) of finite reals with q >= 1."""
    if isinstance(of, (str, bytes, dict, set)) or of is None:
        raise InvalidInputError(f"of must be a sequence of coordinate indices or a (q, {d}) matrix; got {of!r}")
    if isinstance(of, range):
        of = list(of)
    try:
        arr = np.asarray(of)
    except (ValueError, TypeError) as exc:   # ragged nested sequences
        raise InvalidInputError(f"of must be a sequence of coordinate indices or a (q, {d}) matrix: {exc}") from None
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise InvalidInputError(f"of must hold integer indices or real numbers; got dtype {arr.dtype}")
    if arr.ndim == 1:
        if arr.size == 0:
            raise InvalidInputError("of must name at least one coordinate; got an empty sequence")
        if arr.dtype.kind not in "iu":
            raise InvalidInputError(f"of as a 1-D sequence must hold integer coordinate indices; got {arr.tolist()!r}")
        bad = arr[(arr < 0) | (arr >= d)]
        if bad.size:
            raise InvalidInputError(f"of: coordinate index {int(bad[0])} is out of range for d = {d} (0 <= i < {d})")
        if np.unique(arr).size != arr.size:
            raise InvalidInputError(f"of: coordinate indices must be distinct; got {arr.tolist()!r}")
        return np.ascontiguousarray(np.eye(d)[arr.astype(np.int64)])
    if arr.ndim == 2:
        if arr.dtype.kind == "b":
            raise InvalidInputError("of as a matrix must hold real numbers, not booleans")
        if arr.shape[0] < 1 or arr.shape[1] != d:
            raise InvalidInputError(f"of as a matrix must have shape (q, {d}) with q >= 1 (one column per coordinate); "
                                    f"got shape {arr.shape}")
        L = np.ascontiguousarray(arr, dtype=np.float64)
        if not np.all(np.isfinite(L)):
            raise InvalidInputError("of as a matrix must be finite (no NaN or infinity)")
        return L
    raise InvalidInputError(f"of must be 1-D (coordinate indices) or 2-D (a (q, {d}) matrix); got {arr.ndim} dimensions")


def operator_norm(L: np.ndarray) -> float:
    """``||L||_2`` rounded up: the largest singular value times ``1 + 16 (q + d) eps`` (the
    SVD's backward error is a few eps of ``||L||`` per dimension)."""
    if L.size == 0:
        return 0.0
    s = float(np.linalg.norm(L, 2))
    return s * (1.0 + 16.0 * (L.shape[0] + L.shape[1]) * _EPS)


def relaxation_radius(L: np.ndarray, X: np.ndarray, R: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Image centers ``L c`` and certified radii of a method's x-space centers ``X`` (rows) and
    radii ``R`` (each ``>= max_{x in S} ||x - c||``), for sets inside the boxes ``[lo, hi]``
    ((d,) or one per row, (N, d): the sets' feature ranges, or the box).

    ``max_{x in S} ||L x - L c|| <= min(||L||_2 R, H)`` where ``H = ||h||``, ``h_i = |L_i (m - c)|
    + |L_i| w`` (m, w: the midpoint and half-widths of ``[lo, hi]``) bounds ``|L_i (x - c)|`` over
    that box (the interval hull of L x). Both are rounded up by ``8 (d + q + 2) eps`` relative, and
    the rounding of ``L c`` itself, ``(d + 2) eps ||(|L| |c|)||``, is added. Returns
    ``(centers, radii, by_norm, by_hull)``."""
    q, d = L.shape
    centers = X @ L.T
    up = 1.0 + 8.0 * (d + q + 2) * _EPS
    absL = np.abs(L)
    with np.errstate(invalid="ignore"):
        by_norm = operator_norm(L) * R * up
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        h = np.abs((mid - X) @ L.T) + half @ absL.T
        by_hull = np.linalg.norm(h, axis=1) * up
        rounding = (d + 2) * _EPS * np.linalg.norm(np.abs(X) @ absL.T, axis=1)
        radii = np.fmin(by_norm, by_hull) + rounding
    radii[~np.all(np.isfinite(X), axis=1)] = np.nan
    return centers, radii, by_norm, by_hull


def image_spec(base: MethodSpec, Lf: np.ndarray, capacity: int, max_candidates: int) -> MethodSpec:
    """A table entry for the dispatcher: the exact center of ``Lf S`` on the normalised core
    (``Lf``: L's columns of the free coordinates). Its x-space centers are NaN (``lies_in``
    "none": no contract check applies to them); the image centers travel as the extra
    ``image_center`` (the core's frame: the caller maps them back)."""
    q = Lf.shape[0]
    return MethodSpec(
        base.name, lambda ctx: image_exact(ctx, Lf, capacity, max_candidates), lies_in="none",
        certifies="the exact Chebyshev radius of L S (radius_lower certifies it)",
        extras=(Extra("image_center", "length", "f8", "the center of L S (the core's frame)", shape=(q,)),
                Extra("radius_lower", "length", "f8", "a lower bound on the minimax radius of L S"),
                Extra("n_vertices", "count", "i8", "the vertices enumerated (-1: not enumerated)", fill=-1)))


def image_exact(ctx: Context, Lf: np.ndarray, capacity: int, max_candidates: int) -> MethodOutput:
    """The minimum enclosing ball of the images of every vertex candidate, row by row."""
    from .exact import _conservative_lower, _EnumeratedRows, _lower_in_slice, _variance_lower

    prob = ctx.problem
    n, d, q = ctx.rows.size, prob.d, Lf.shape[0]
    C = np.full((n, q), np.nan)
    R, low = np.full(n, np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    nv = np.full(n, -1, dtype=np.int64)
    check = np.full(n, None, dtype=object)
    norm = operator_norm(Lf)
    absL = np.abs(Lf)
    if not ctx.on_intervals and prob.p and candidate_count(d, prob.rank) > max_candidates:
        codes[:] = Status.TOO_LARGE
        return MethodOutput(np.full((n, d), np.nan), R, codes, {"image_center": C, "radius_lower": low, "n_vertices": nv})
    rows = None if ctx.on_intervals else _EnumeratedRows(
        ctx, np.full((n, d), np.nan), R, low, codes, nv, np.empty(n, dtype=object))
    if rows is not None:
        rows.opts = {"max_vertices": capacity}
    for j in range(n):
        widened, at_tau = 0.0, False
        if ctx.on_intervals:
            from .._core.lifting import vertices_of

            grp, kk = ctx.group, ctx.k[j]
            if grp.p == 0:
                every = grp.invert(ctx.Y0[j:j + 1])
            else:
                every, _ = vertices_of(prob, grp, kk, capacity, max_candidates)
                if every is None:
                    codes[j] = Status.TOO_LARGE
                    continue
                if every.shape[0] == 0:
                    every = grp.invert(ctx.Y0[j:j + 1])
        elif prob.p == 0:
            every = ctx.Q[j][None, :]
        else:
            got = rows._vertices(j, ctx.Q[j])
            if got is None:
                codes[j] = Status.TOO_LARGE
                continue
            _, every, widened, at_tau = got
            if every.shape[0] == 0:
                codes[j] = Status.SOLVER_ERROR
                check[j] = "no vertex was found although the set is nonempty"
                continue
        nv[j] = every.shape[0]
        P = every @ Lf.T
        U, first = np.unique(P, axis=0, return_index=True)
        c, radius, lower, sup, status = working_set_ball(U)
        # the radius encloses the image of every candidate, with the rounding of the products
        rounding = 4.0 * (d + q) * _EPS * float(np.max(np.linalg.norm(np.abs(every) @ absL.T, axis=1)))
        radius = max(radius, float(np.max(np.linalg.norm(P - c, axis=1)))) + rounding
        lower = min(lower, radius)
        if not radius - lower <= 1e-9 * (1.0 + radius):   # the walk's dual is weak on cospherical points
            lower = max(lower, _variance_lower(U, c, radius))
        gap_ok = radius - lower <= 1e-9 * (1.0 + radius)
        if not ctx.on_intervals and norm > 0 and lower > 0:
            # the candidates can lie off S_F by rounding: their projections onto S_F move by
            # delta, their images by at most ||L|| delta (see exact._lower_in_slice)
            lower = norm * _lower_in_slice(prob, ctx.Q[j], every[first[sup]], lower / norm)
        if widened:   # candidates at the forward error: the true vertices are that close, their images ||L|| that
            radius += widened * math.sqrt(d) * norm
            lower = 0.0
            codes[j] = Status.INACCURATE
            check[j] = ("the slice meets the box only at the equations' tolerance: vertices at that tolerance, "
                        "radius widened by it") if at_tau else (
                "near-parallel equations: vertices at the forward error, radius widened by it")
        elif not gap_ok:
            codes[j] = Status.INACCURATE
            check[j] = "the enclosing ball's walk stopped short: radius and radius_lower bracket the optimum"
        C[j], R[j], low[j] = c, radius, min(lower, radius)
    _conservative_lower(low)
    extras = {"image_center": C, "radius_lower": low, "n_vertices": nv}
    if any(v is not None for v in check):
        extras["check"] = check
    return MethodOutput(np.full((n, d), np.nan), R, codes, extras)
