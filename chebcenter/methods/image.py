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
from ..kernels.linalg import EPS
from ..kernels.vertices import candidate_count
from ..results import Status
from .spec import Context, Extra, MethodOutput, MethodSpec, Route

__all__ = ["IMAGE_EXACT_OPTIONS", "as_image_map", "image_hull_radius", "image_rcc1_spec", "image_spec", "relaxation_radius",
           "weighted_certificate"]


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
    return s * (1.0 + 16.0 * (L.shape[0] + L.shape[1]) * EPS)


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
    up = 1.0 + 8.0 * (d + q + 2) * EPS
    absL = np.abs(L)
    with np.errstate(invalid="ignore"):
        by_norm = operator_norm(L) * R * up
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        h = np.abs((mid - X) @ L.T) + half @ absL.T
        by_hull = np.linalg.norm(h, axis=1) * up
        rounding = (d + 2) * EPS * np.linalg.norm(np.abs(X) @ absL.T, axis=1)
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
        lipschitz=operator_norm(Lf),
        routes=(Route("box slice", lambda ctx: _image_exact_slices(ctx, Lf, capacity, max_candidates), {"equations"},
                      "the slice's vertex candidates (exact's enumeration), the lower bound refined in S_F"),),
        certifies="the exact Chebyshev radius of L S (radius_lower certifies it)",
        extras=(Extra("image_center", "length", "f8", "the center of L S (the core's frame)", shape=(q,)),
                Extra("radius_lower", "length", "f8", "a lower bound on the minimax radius of L S"),
                Extra("n_vertices", "count", "i8", "the vertices enumerated (-1: not enumerated)", fill=-1)))


def image_exact(ctx: Context, Lf: np.ndarray, capacity: int, max_candidates: int) -> MethodOutput:
    """The general body: the minimum enclosing ball of the images of the lifted slice's
    vertices (:func:`chebcenter._core.lifting.vertices_of`), row by row."""
    from .._core.lifting import vertices_of

    grp = ctx.group

    def candidates(j):
        if grp.p == 0:
            return grp.invert(ctx.Y0[j:j + 1]), 0.0, False
        every, _ = vertices_of(ctx.problem, grp, ctx.k[j], capacity, max_candidates)
        if every is None:
            return Status.TOO_LARGE, None, None
        return (grp.invert(ctx.Y0[j:j + 1]) if every.shape[0] == 0 else every), 0.0, False

    return _image_ball(ctx, Lf, candidates, None)


def _image_exact_slices(ctx: Context, Lf: np.ndarray, capacity: int, max_candidates: int) -> MethodOutput:
    """Slices: the images of every vertex candidate of the slice (exact's row-by-row
    enumeration, widened where the computed slice misses the box), TOO_LARGE past
    ``max_candidates``; the lower bound is refined by projecting the support onto S_F."""
    from .ball_bounds import _lower_in_slice
    from .exact import _EnumeratedRows

    prob = ctx.problem
    n, d = ctx.rows.size, prob.d
    if prob.p and candidate_count(d, prob.rank) > max_candidates:
        codes = np.full(n, Status.TOO_LARGE, dtype=np.int8)
        return MethodOutput(np.full((n, d), np.nan), np.full(n, np.nan), codes,
                            {"image_center": np.full((n, Lf.shape[0]), np.nan), "radius_lower": np.full(n, np.nan),
                             "n_vertices": np.full(n, -1, dtype=np.int64)})
    rows = _EnumeratedRows(ctx, np.full((n, d), np.nan), np.full(n, np.nan), np.full(n, np.nan),
                           np.full(n, Status.OPTIMAL, dtype=np.int8), np.full(n, -1, dtype=np.int64),
                           np.empty(n, dtype=object))
    rows.opts = {"max_vertices": capacity}

    def candidates(j):
        if prob.p == 0:
            return ctx.Q[j][None, :], 0.0, False
        got = rows._vertices(j, ctx.Q[j])
        if got is None:
            return Status.TOO_LARGE, None, None
        _, every, widened, at_tau = got
        if every.shape[0] == 0:
            return Status.SOLVER_ERROR, None, None
        return every, widened, at_tau

    def refine(j, points, lower):
        # the candidates can lie off S_F by rounding: their projections onto S_F move by
        # delta, their images by at most ||L|| delta (see exact._lower_in_slice)
        norm = operator_norm(Lf)
        return norm * _lower_in_slice(prob, ctx.Q[j], points, lower / norm) if norm > 0 and lower > 0 else lower

    return _image_ball(ctx, Lf, candidates, refine)


def _image_ball(ctx, Lf, candidates, refine):
    """The smallest ball of the images of each row's vertex candidates
    (``candidates(j) -> (points, widened, at_tau)``, or ``(status, None, None)`` where the row
    has none to give); ``refine(j, support points, lower)`` sharpens the lower bound where the
    route can (None: as the ball's dual gives it)."""
    from .ball_bounds import _conservative_lower, _variance_lower

    prob = ctx.problem
    n, d, q = ctx.rows.size, prob.d, Lf.shape[0]
    C = np.full((n, q), np.nan)
    R, low = np.full(n, np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    nv = np.full(n, -1, dtype=np.int64)
    check = np.full(n, None, dtype=object)
    norm = operator_norm(Lf)
    absL = np.abs(Lf)
    for j in range(n):
        every, widened, at_tau = candidates(j)
        if widened is None:
            codes[j] = every
            if every == Status.SOLVER_ERROR:
                check[j] = "no vertex was found although the set is nonempty"
            continue
        nv[j] = every.shape[0]
        P = every @ Lf.T
        U, first = np.unique(P, axis=0, return_index=True)
        c, radius, lower, sup, status = working_set_ball(U)
        # the radius encloses the image of every candidate, with the rounding of the products
        rounding = 4.0 * (d + q) * EPS * float(np.max(np.linalg.norm(np.abs(every) @ absL.T, axis=1)))
        radius = max(radius, float(np.max(np.linalg.norm(P - c, axis=1)))) + rounding
        lower = min(lower, radius)
        if not radius - lower <= 1e-9 * (1.0 + radius):   # the walk's dual is weak on cospherical points
            lower = max(lower, _variance_lower(U, c, radius))
        gap_ok = radius - lower <= 1e-9 * (1.0 + radius)
        if refine is not None:
            lower = refine(j, every[first[sup]], lower)
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


# -- rcc1 with of=: the weighted EBT relaxation (docs/theory.md §10, "rcc1 with of=") ----------

#: how far above the solver's own objective a certified radius may sit for the row to stay
#: OPTIMAL: relative, plus absolute in the core's units (half-widths <= 1), as rcc1's own
#: ordering checks (``relax._ORDER_CHECK``, ``relax._ORDER_FLOOR``)
_WEIGHTED_GAP = 1e-7
_WEIGHTED_FLOOR = 1e-5


def weighted_certificate(W, K, Lx, q, c, t, alpha, rho):
    """The certified bound of the weighted RCC1 dual at the weights ``alpha`` (any ``alpha >= 0``).

    The set is ``{q + W u : (q_i + w_i^T u - lo_i)(q_i + w_i^T u - hi_i) <= 0}`` (``c = q - m``,
    ``t_i = (q_i - lo_i)(q_i - hi_i)`` for the box widened to cover the representation's
    rounding), ``K = Lx W_x`` the image map on u (``W_x``: W's rows of x, ``Lx`` the map on x),
    ``rho >= ||u||`` on the set. With ``M = W^T D_alpha W``, ``v = W^T D_alpha c`` and any f > 0
    with ``f M >= K^T K``, every u of the set and any z satisfy

        ||K (u - z)||^2 <= f (u - z)^T M (u - z) <= f (z^T M z - alpha^T t - 2 r^T u),  r = M z + v,

    (the first from ``f M >= K^T K``, the second from ``sum alpha_i (...)(...) <= 0``), so
    ``eta = f (z^T M z - alpha^T t + 2 rho ||r||)`` bounds ``max ||K u - K z||^2``; at
    ``z = -M^{-1} v`` it is ``f (v^T M^{-1} v - alpha^T t)``, the dual's objective. ``f`` is
    the generalised eigenvalue ``lambda_max(K^T K, M)`` widened until the floating-point
    ``f M - K^T K`` is proved positive semidefinite despite the rounding of M, of K and of the
    subtraction (a verified Cholesky factorisation,
    :func:`chebcenter.kernels.rcc1_certificate._verified_above`); eta gets an allowance of
    ``16 (k + p + q) eps`` times the size of its terms before cancellation.

    Returns ``(z, eta)``; ``(None, nan)`` when no f could be proved (M singular)."""
    norms = np.linalg.norm(W, axis=1)
    alpha = np.asarray(alpha, dtype=np.float64)
    if not np.all(np.isfinite(alpha)):
        return None, math.nan
    alpha = np.where((alpha > 0.0) & (norms > 0.0), alpha, 0.0)
    amax = float(np.max(alpha, initial=0.0))
    if not amax > 0.0:
        return None, math.nan
    # a weight on every live row keeps M positive definite (W has full column rank); it adds
    # about ``lift`` (relative) to eta, and f's proof needs lambda_min(M) well above the
    # rounding: a few lifts are tried and the smallest bound is kept
    best_z, best = None, math.inf
    for lift in (1e-10, 1e-8, 1e-7, 1e-6):
        z, eta = _weighted_bound(W, K, Lx, c, t, alpha + np.where(norms > 0.0, lift * amax, 0.0), rho)
        if z is not None and eta < best:
            best_z, best = z, eta
    if best_z is None:
        return None, math.nan
    return best_z, best


def _weighted_bound(W, K, Lx, c, t, alpha, rho):
    """:func:`weighted_certificate` at weights that make M positive definite."""
    import scipy.linalg

    from ..kernels.rcc1_certificate import _verified_above

    k, p = W.shape
    qd = K.shape[0]
    M = (W.T * alpha) @ W
    M = 0.5 * (M + M.T)
    v = W.T @ (alpha * c)
    G = K.T @ K
    G = 0.5 * (G + G.T)
    absW = np.abs(W)
    Aabs = (absW.T * alpha) @ absW              # >= |M| entrywise, with its rounding
    # |K_true - K| <= eK entrywise (the product Lx W_x), then ||G_true - G||_2 <= tau_g
    Kabs = np.abs(Lx) @ absW[: Lx.shape[1]]
    eK = (Lx.shape[1] + 2) * EPS * Kabs
    absK = np.abs(K)
    tau_g = float(np.linalg.norm(2.0 * absK.T @ eK + eK.T @ eK + (qd + 2) * EPS * absK.T @ absK))
    tau_m = float((k + 2) * EPS * np.linalg.norm(Aabs))
    try:
        lam = float(np.linalg.eigvalsh(M)[0])
        mu = float(scipy.linalg.eigh(G, M, eigvals_only=True)[-1]) if qd else 0.0
    except (np.linalg.LinAlgError, ValueError):
        return None, math.nan
    if not (lam > 0.0 and math.isfinite(mu)):
        return None, math.nan
    mu = max(mu, 0.0)
    f = math.nan
    for bump in (1e-12, 1e-9, 1e-6, 1e-3, 1e-1):
        fc = mu * (1.0 + bump)
        tau_n = fc * tau_m + tau_g + 4.0 * EPS * (fc * float(np.linalg.norm(M)) + float(np.linalg.norm(G)))
        fc += 4.0 * tau_n / lam * (1.0 + bump)
        tau_n = fc * tau_m + tau_g + 4.0 * EPS * (fc * float(np.linalg.norm(M)) + float(np.linalg.norm(G)))
        if _verified_above(np.ascontiguousarray(fc * M - G), tau_n):
            f = fc
            break
    if not math.isfinite(f):
        return None, math.nan
    # the bound holds for any z; at a singular optimum (a weight 0 where L does not look) the
    # solver's v is in M's range only to its tolerance and -M^{-1} v is far off: so z is also
    # tried as the truncated -M^+ v (eigenvalues below a few thresholds dropped), and the
    # smallest bound is kept
    absv = absW.T @ np.abs(alpha * c)
    at = float(alpha @ t)
    sat = float(np.sum(np.abs(alpha * t)))
    ev, Ev = np.linalg.eigh(M)
    coef = Ev.T @ v
    best_z, best = None, math.inf
    for cut in (None, 1e-12, 1e-10, 1e-8, 1e-6):
        if cut is None:
            try:
                cho = scipy.linalg.cho_factor(M)
                z = -scipy.linalg.cho_solve(cho, v)
                z -= scipy.linalg.cho_solve(cho, M @ z + v)     # one step of refinement
            except (np.linalg.LinAlgError, ValueError):
                continue
        else:
            keep = ev > cut * ev[-1]
            z = -Ev[:, keep] @ (coef[keep] / ev[keep])
        if not np.all(np.isfinite(z)):
            continue
        r = M @ z + v
        az = np.abs(z)
        mz = Aabs @ az
        err_r = (k + p + 4) * EPS * float(np.linalg.norm(mz + absv)) + tau_m * float(np.linalg.norm(z))
        core = float(z @ (M @ z)) - at + 2.0 * rho * (float(np.linalg.norm(r)) + err_r)
        scale = float(az @ mz) + sat + 2.0 * rho * float(np.linalg.norm(mz + absv)) + tau_m * float(az @ az)
        eta = f * (core + 16.0 * (k + p + qd) * EPS * scale)
        if eta < best:
            best_z, best = z, eta
    z, eta = best_z, best
    if z is None:
        return None, math.nan
    if not math.isfinite(eta):
        return None, math.nan
    return z, max(eta, 0.0)




def image_rcc1_spec(base: MethodSpec, Lf: np.ndarray, solver: str) -> MethodSpec:
    """A table entry for the dispatcher: rcc1's weighted relaxation of ``Lf S`` on the
    normalised core (:func:`image_rcc1`); the image centers travel as ``image_center`` (the
    core's frame), the radius is certified at the solver's weights."""
    q = Lf.shape[0]
    return MethodSpec(
        base.name, lambda ctx: image_rcc1(ctx, Lf, solver), lies_in="none", lipschitz=operator_norm(Lf),
        routes=(Route("box slice", lambda ctx: image_rcc1(ctx, Lf, solver, _weighted_slice_data(ctx)), {"equations"},
                      "the slice's own u-space dual data (no lifted rows)"),),
        certifies="sqrt(eta): the weighted RCC1 dual value, recomputed from alpha (>= the radius of L S)",
        extras=(Extra("image_center", "length", "f8", "the weighted RCC1 center of L S (the core's frame)",
                      shape=(q,)),
                Extra("eta", "squared_length", "f8", "the certified weighted RCC1 value (the core's frame)"),
                Extra("solver_value", "squared_length", "f8", "the solver's objective (not a certificate)")))


def _weighted_lifted_data(ctx):
    """The weighted dual's data on a lifted group: ``(W, p, Q, Lo, Hi, C, T, delta)`` about each
    row's feasible point, the lifted rows scaled to half-widths about 1 as rcc1's general body
    does."""
    from .relax import _lifted_dual_data, certificate_delta

    grp, d = ctx.group, ctx.problem.d
    Q, Lo, Hi, Cd, T = _lifted_dual_data(grp, ctx.k, ctx.Y0)
    D = 1.0 / np.maximum(np.median(0.5 * (Hi - Lo), axis=0), 1e-300)
    D[:d] = 1.0
    W = np.ascontiguousarray(grp.W * D[:, None])
    Q, Lo, Hi, Cd, T = Q * D, Lo * D, Hi * D, Cd * D, T * D * D
    return W, grp.p, Q, Lo, Hi, Cd, T, certificate_delta(Q)


def _weighted_slice_data(ctx):
    """The weighted dual's data on slice rows: the slice's own ``W`` about ``q = A^+ b``."""
    from .relax import _dual_data, certificate_delta

    prob = ctx.problem
    Q = ctx.Q
    Lo, Hi = np.broadcast_to(prob.lo, Q.shape), np.broadcast_to(prob.hi, Q.shape)
    Cd, T = _dual_data(prob, Q)
    return prob.W, prob.p, Q, Lo, Hi, Cd, T, certificate_delta(Q)


def image_rcc1(ctx: Context, Lf: np.ndarray, solver: str, data=None) -> MethodOutput:
    """The weighted EBT dual of every row in cvxpy (:class:`chebcenter._core.cvxpy_forms.WeightedEbtDual`),
    certified at its weights (:func:`weighted_certificate`). A row whose solver fails is
    SOLVER_ERROR (the caller keeps the mapped center there); INACCURATE where the solver says
    so or the certified value sits above its objective by more than its tolerance. ``data``:
    the dual's data (:func:`_weighted_slice_data` on the slices' route; the general body's
    :func:`_weighted_lifted_data` by default)."""
    from .._core.cvxpy_forms import WeightedEbtDual, status_of

    prob = ctx.problem
    d, q = prob.d, Lf.shape[0]
    n = ctx.rows.size
    C = np.full((n, q), np.nan)
    R, eta, value = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    codes = np.full(n, Status.OPTIMAL, dtype=np.int8)
    check = np.full(n, None, dtype=object)
    W, p, Q, Lo, Hi, Cd, T, delta = _weighted_lifted_data(ctx) if data is None else data
    Wx = W[:d]
    if p == 0:   # one point
        C[:] = Q[:, :d] @ Lf.T
        R[:], eta[:] = 0.0, 0.0
        return MethodOutput(np.full((n, d), np.nan), R, codes, {"image_center": C, "eta": eta, "solver_value": value})
    # the map scaled by a power of two (exactly) to norm about 1, for the solver's sake
    sig = float(np.linalg.norm(Lf, 2))
    two = 2.0 ** round(math.log2(sig)) if sig > 0 else 1.0
    Ls = Lf / two
    K = Ls @ Wx
    Td = (Q - Lo + delta[:, None]) * (Q - Hi - delta[:, None])
    svals = np.linalg.svd(Wx, compute_uv=False)
    smin = float(svals[-1]) - 4.0 * d * EPS * float(svals[0]) if svals.size else 0.0
    name = solver if solver in ("clarabel", "scs") else ("clarabel" if p <= 12 else "scs")
    dual = WeightedEbtDual(name, W, K.T @ K)
    for j in range(n):
        qx = Q[j, :d]
        if not smin > 0.0:
            codes[j], check[j] = Status.SOLVER_ERROR, "the slice's basis is rank deficient in x"
            continue
        reach = np.maximum(Hi[j, :d] - qx, qx - Lo[j, :d]) + delta[j]
        rho = float(np.linalg.norm(reach)) / smin * (1.0 + 1e-12)
        alpha, status, val = dual.solve(Cd[j][:, None] * W, T[j])
        st = status_of(status, dual=True)
        if alpha is None or st > Status.INACCURATE:
            codes[j], check[j] = Status.SOLVER_ERROR, f"cvxpy {name}: {status}"
            continue
        z, e = weighted_certificate(W, K, Ls, Q[j], Cd[j], Td[j], alpha, rho)
        if z is None:
            codes[j], check[j] = Status.SOLVER_ERROR, f"cvxpy {name}: no certificate from its weights"
            continue
        x = qx + Wx @ z
        c = Lf @ x
        # the rounding of Lf x, in the core's units
        rounding = (d + p + 2) * EPS * float(np.linalg.norm(np.abs(Lf) @ (np.abs(qx) + np.abs(Wx) @ np.abs(z))))
        C[j], eta[j], value[j] = c, e * two * two, val * two * two
        R[j] = two * math.sqrt(e) * (1.0 + 4.0 * EPS) + rounding
        if st != Status.OPTIMAL:
            codes[j], check[j] = Status.INACCURATE, f"cvxpy {name}: {status}"
        elif not eta[j] <= (math.sqrt(max(value[j], 0.0)) * (1.0 + _WEIGHTED_GAP) + _WEIGHTED_FLOOR) ** 2:
            codes[j] = Status.INACCURATE
            check[j] = "the certified weighted rcc1 value is above the solver's objective (not the optimum)"
    out = {"image_center": C, "eta": eta, "solver_value": value}
    if any(v is not None for v in check):
        out["check"] = check
    return MethodOutput(np.full((n, d), np.nan), R, codes, out)


def image_hull_radius(L: np.ndarray, C: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """The interval-hull bound about image centers ``C`` (rows, (N, q)) given directly: every x
    of a set inside ``[lo, hi]`` has ``|L_i x - c_i| <= |L_i m - c_i| + |L_i| w`` (m, w: the
    midpoint and half-widths), so ``max ||L x - c|| <= ||h||``, rounded up by ``8 (d + q + 2) eps``
    relative plus the rounding of ``L m``, ``(d + 2) eps ||(|L| |m|)||``. Returns
    ``(L m, h, bound)``; NaN rows of C give NaN."""
    q, d = L.shape
    up = 1.0 + 8.0 * (d + q + 2) * EPS
    absL = np.abs(L)
    with np.errstate(invalid="ignore"):
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        Lm = mid @ L.T
        h = np.abs(Lm - C) + half @ absL.T
        bound = np.linalg.norm(h, axis=1) * up + (d + 2) * EPS * np.linalg.norm(np.abs(mid) @ absL.T, axis=1)
    bound[~np.all(np.isfinite(C), axis=1)] = np.nan
    return Lm, h, bound
