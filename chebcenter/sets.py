r"""General sets for estimation users: H-polytopes and intersections of ellipsoids.

* :class:`Polytope` ``{x : G x <= h, A_eq x = b_eq}`` (bounded; checked). Methods
  ``"exact"`` (vertex enumeration after the null-space reduction, then the minimum
  enclosing ball), ``"rcc1"`` (EBT relaxation: pairs of parallel rows
  ``l <= a^T x <= u`` become one quadratic ``(a^T x - l)(a^T x - u) <= 0``, lone rows stay
  linear; if the paired rows do not span every direction, redundant bounding-box rows
  computed by LP are added so the relaxation is well posed) and ``"inscribed"``: the
  center of the largest INSCRIBED ball (one LP) -- the other notion, for comparison only.
* :class:`QuadraticSet` ``{x : x^T Q_i x + 2 g_i^T x + t_i <= 0}`` (Q_i PSD; checked):
  ``"rcc1"`` is EBT Theorem III.1 in its native setting; there is no exact method.

Both return :class:`chebcenter.CenterResult` with the statuses of :class:`BoxSlice`.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import numpy as np
from scipy.optimize import linprog

from ._errors import InvalidInputError
from ._exact_kernels import certified_ball
from ._validate import as_array, as_matrix, as_positive_float, as_positive_int, check_choice
from .methods.ebt import ebt_certificate, ebt_dual
from .results import CenterResult, Status

__all__ = ["Polytope", "QuadraticSet"]


def _vector(name, value, n):
    arr = as_array(name, value)
    if arr.shape != (n,):
        raise InvalidInputError(f"{name} must be a finite array of shape ({n},); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be finite; got {arr.tolist()}")
    return arr


def _nan_result(n, status, method, t0, **extras):
    return CenterResult(np.full(n, np.nan), float("nan"), status, method, time.perf_counter() - t0, extras=extras)


class Polytope:
    """``{x in R^n : G x <= h, A_eq x = b_eq}``, bounded.

    Examples
    --------
    >>> import numpy as np, chebcenter as cc
    >>> simplex = cc.Polytope(np.vstack([-np.eye(3), np.ones((1, 3))]), np.r_[np.zeros(3), 1.0])
    >>> simplex.center("exact").center.round(4).tolist()          # minimax: 1/3
    [0.3333, 0.3333, 0.3333]
    >>> simplex.center("inscribed").center.round(4).tolist()      # inscribed: 1/(3 + sqrt 3)
    [0.2113, 0.2113, 0.2113]
    """

    METHODS = ("exact", "rcc1", "inscribed")

    def __init__(self, G: Any, h: Any, A_eq: Any = None, b_eq: Any = None, *, feas_tol: float = 1e-9):
        G = as_matrix("G", G)
        self.G, self.h = G, _vector("h", h, G.shape[0])
        n = G.shape[1]
        if A_eq is None and b_eq is not None:
            raise InvalidInputError("b_eq was given without A_eq: pass both (the equalities A_eq x = b_eq) or neither")
        if A_eq is not None and b_eq is None:
            raise InvalidInputError("A_eq was given without b_eq: pass both (the equalities A_eq x = b_eq) or neither")
        feas_tol = as_positive_float("feas_tol", feas_tol)
        if A_eq is None:
            self.A_eq, self.b_eq = np.zeros((0, n)), np.zeros(0)
        else:
            self.A_eq = as_matrix("A_eq", A_eq)
            if self.A_eq.shape[1] != n:
                raise InvalidInputError(f"A_eq must have {n} columns like G; got shape {self.A_eq.shape}")
            self.b_eq = _vector("b_eq", b_eq, self.A_eq.shape[0])
        self.n = n
        self.feas_tol = feas_tol
        if self.A_eq.shape[0]:
            U, s, Vt = np.linalg.svd(self.A_eq)
            r = int(np.sum(s > s[0] * max(self.A_eq.shape) * np.finfo(float).eps)) if s.size else 0
            self.W = Vt[r:].T
            self.x0 = np.linalg.pinv(self.A_eq) @ self.b_eq
            self.consistent = np.linalg.norm(self.A_eq @ self.x0 - self.b_eq) <= feas_tol * (1 + np.linalg.norm(self.b_eq))
        else:
            self.W, self.x0, self.consistent = np.eye(n), np.zeros(n), True
        self.p = self.W.shape[1]
        self.Gu = G @ self.W                    # u-space rows: Gu u <= hu
        self.hu = self.h - G @ self.x0
        self._check_bounded()

    def _check_bounded(self):
        """The recession cone {d : Gu d <= 0} must be {0}: 2p small LPs."""
        if self.Gu.shape[0] == 0 and self.p > 0:
            raise InvalidInputError(
                f"the polytope is unbounded: with no inequalities it is an affine set of dimension {self.p}"
                " (add constraints, e.g. bounds on every coordinate)")
        for i in range(self.p if self.Gu.shape[0] else 0):
            for sgn in (1.0, -1.0):
                c = np.zeros(self.p)
                c[i] = -sgn
                res = linprog(c, A_ub=self.Gu, b_ub=np.zeros(self.Gu.shape[0]), bounds=[(-1, 1)] * self.p,
                              method="highs")
                if res.status == 0 and -res.fun > 1e-9:
                    d = self.W @ res.x
                    raise InvalidInputError(
                        f"the polytope is unbounded: it contains the ray x + t d, t >= 0, with d = {np.round(d, 6).tolist()}"
                        " (add constraints, e.g. bounds on every coordinate)")

    def __repr__(self) -> str:
        return f"Polytope(n={self.n}, inequalities={self.G.shape[0]}, equalities={self.A_eq.shape[0]}, dim={self.p})"

    def _feasible_point(self):
        if not self.consistent:
            return None
        if self.Gu.shape[0] == 0:
            return np.zeros(self.p)
        res = linprog(np.zeros(self.p), A_ub=self.Gu, b_ub=self.hu + self.feas_tol * (1 + np.abs(self.hu)),
                      bounds=[(None, None)] * self.p, method="highs")
        return res.x if res.status == 0 else None

    def center(self, method: str = "exact", **options: Any) -> CenterResult:
        """Minimax center (``exact``), its EBT relaxation (``rcc1``), or the inscribed-ball center.

        ``exact`` accepts ``max_candidates`` (default 2e6 row subsets of size
        dim) and returns the radius with a dual lower bound ``radius_lower``;
        ``rcc1`` accepts ``solver`` ("clarabel" or "scs"). An empty set is
        INFEASIBLE; a too large enumeration TOO_LARGE.
        """
        method = check_choice("method", method, self.METHODS)
        allowed = {"exact": {"max_candidates"}, "rcc1": {"solver"}, "inscribed": set()}[method]
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise InvalidInputError(f"unknown option(s) {unknown} for method {method!r}; allowed: {sorted(allowed) or 'none'}")
        t0 = time.perf_counter()
        if self._feasible_point() is None:
            return _nan_result(self.n, Status.INFEASIBLE, method, t0)
        return getattr(self, f"_{method}")(t0, **options)

    # -- exact ------------------------------------------------------------------------
    def vertices(self, max_candidates: int = 2_000_000) -> np.ndarray | None:
        """Vertices (x-space) by solving every dim-subset of rows; None past ``max_candidates``."""
        p, m = self.p, self.Gu.shape[0]
        if p == 0:
            return self.x0[None, :]
        if math.comb(m, p) > max_candidates:
            return None
        tol = self.feas_tol * (1 + np.abs(self.hu).max())
        found = []
        combos = itertools.combinations(range(m), p)
        while True:
            chunk = np.array(list(itertools.islice(combos, 20000)), dtype=np.int64)
            if chunk.size == 0:
                break
            Ms, rhs = self.Gu[chunk], self.hu[chunk]
            scale = np.prod(np.linalg.norm(Ms, axis=2), axis=1)
            ok = np.abs(np.linalg.det(Ms)) > 1e-10 * np.maximum(scale, 1e-300)
            if not ok.any():
                continue
            U = np.linalg.solve(Ms[ok], rhs[ok][:, :, None])[:, :, 0]
            feas = np.all(U @ self.Gu.T <= self.hu + tol, axis=1)
            found.append(U[feas])
        U = np.vstack(found) if found else np.zeros((0, p))
        if U.shape[0] > 1:
            _, first = np.unique(np.round(U / (10 * tol)), axis=0, return_index=True)
            U = U[np.sort(first)]
        return self.x0 + U @ self.W.T

    def _exact(self, t0, max_candidates=2_000_000):
        max_candidates = as_positive_int("max_candidates", max_candidates)
        V = self.vertices(max_candidates)
        if V is None:
            return _nan_result(self.n, Status.TOO_LARGE, "exact", t0)
        U = np.ascontiguousarray((V - self.x0) @ self.W)
        c, radius, low, sup, st = certified_ball(U)
        status = Status.OPTIMAL if st == 0 and radius - low <= 1e-9 * (1 + radius) else Status.INACCURATE
        return CenterResult(self.x0 + self.W @ c, radius, status, "exact", time.perf_counter() - t0,
                            extras={"radius_lower": low, "n_vertices": V.shape[0], "support": V[sup]})

    # -- rcc1 ---------------------------------------------------------------------------
    def quadratic_form(self):
        """The constraints as EBT data ``(Qs, gs, ts)`` in u-space (``x = x0 + W u``).

        Rows of G that are negatives of each other (after normalisation, in x-space, i.e.
        as the user wrote them) form ``l <= a^T x <= u`` and become one quadratic
        ``(a^T x - l)(a^T x - u) <= 0``; lone rows stay linear; rows constant on the affine
        set are dropped (feasibility is checked separately). If the quadratics do not span
        every direction, redundant bounding-box rows (from LPs) are added.
        """
        norms = np.linalg.norm(self.G, axis=1)
        keep = np.flatnonzero(norms > 1e-14)
        unit = self.G[keep] / norms[keep, None]
        hn = self.h[keep] / norms[keep]
        used = np.zeros(keep.size, dtype=bool)
        pairs, lone = [], []
        for i in range(keep.size):
            if used[i]:
                continue
            opp = np.flatnonzero(~used & (np.abs(unit + unit[i]).max(axis=1) <= 1e-12))
            if opp.size:
                j = opp[0]
                used[[i, j]] = True
                pairs.append((unit[i], -hn[j], hn[i]))  # -h_j <= a^T x <= h_i
            else:
                used[i] = True
                lone.append((unit[i], hn[i]))
        quads, lins = [], []
        for a, l, u in pairs:  # to u-space: a^T x = a^T x0 + (W^T a)^T u
            au, shift = self.W.T @ a, a @ self.x0
            if np.linalg.norm(au) > 1e-12:
                quads.append((au, l - shift, u - shift))
        for a, b in lone:
            au = self.W.T @ a
            if np.linalg.norm(au) > 1e-12:
                lins.append((au, b - a @ self.x0))
        P = sum((np.outer(a, a) for a, _, _ in quads), np.zeros((self.p, self.p)))
        if np.linalg.matrix_rank(P) < self.p:  # add the bounding box of the set (redundant rows)
            for i in range(self.p):
                e = np.zeros(self.p)
                e[i] = 1.0
                lo = linprog(e, A_ub=self.Gu, b_ub=self.hu, bounds=[(None, None)] * self.p, method="highs").fun
                hi = -linprog(-e, A_ub=self.Gu, b_ub=self.hu, bounds=[(None, None)] * self.p, method="highs").fun
                quads.append((e, lo, hi))
        Qs = [np.outer(a, a) for a, _, _ in quads] + [np.zeros((self.p, self.p)) for _ in lins]
        gs = [-(l + u) / 2 * a for a, l, u in quads] + [a / 2 for a, _ in lins]
        ts = [l * u for _, l, u in quads] + [-b for _, b in lins]
        return np.array(Qs), np.array(gs), np.array(ts), len(quads)

    def _rcc1(self, t0, solver="clarabel"):
        solver = check_choice("solver", solver, ("clarabel", "scs"))
        if self.p == 0:
            return CenterResult(self.x0, 0.0, Status.OPTIMAL, "rcc1", time.perf_counter() - t0)
        Qs, gs, ts, n_pairs = self.quadratic_form()
        return _ebt_result(Qs, gs, ts, solver, t0, lambda u: self.x0 + self.W @ u, self.n,
                           {"n_quadratic": n_pairs, "n_linear": len(ts) - n_pairs})

    # -- inscribed ------------------------------------------------------------------------
    def _inscribed(self, t0):
        norms = np.linalg.norm(self.Gu, axis=1)
        c = np.zeros(self.p + 1)
        c[-1] = -1.0
        res = linprog(c, A_ub=np.hstack([self.Gu, norms[:, None]]), b_ub=self.hu,
                      bounds=[(None, None)] * self.p + [(0, None)], method="highs")
        if res.status != 0:
            return _nan_result(self.n, Status.SOLVER_ERROR, "inscribed", t0)
        return CenterResult(self.x0 + self.W @ res.x[:-1], float(res.x[-1]), Status.OPTIMAL, "inscribed",
                            time.perf_counter() - t0,
                            extras={"note": "center of the largest INSCRIBED ball; radius is the inscribed radius, "
                                            "not a bound on the estimation error"})


def _ebt_result(Qs, gs, ts, solver, t0, to_x, n, extras):
    alpha, status = ebt_dual(Qs, gs, ts, solver.upper())
    if alpha is None or status not in ("optimal", "optimal_inaccurate"):
        st = Status.INFEASIBLE if status in ("unbounded", "unbounded_inaccurate") else Status.SOLVER_ERROR
        return _nan_result(n, st, "rcc1", t0, solver_status=status)
    u, eta, alpha = ebt_certificate(Qs, gs, ts, alpha)
    if u is None:
        return _nan_result(n, Status.SOLVER_ERROR, "rcc1", t0, solver_status=status)
    return CenterResult(to_x(u), float(np.sqrt(max(eta, 0.0))), Status.OPTIMAL if status == "optimal" else Status.INACCURATE,
                        "rcc1", time.perf_counter() - t0, extras=dict(extras, alpha=alpha, eta=eta))


class QuadraticSet:
    """``{x : x^T Q_i x + 2 g_i^T x + t_i <= 0, i = 1..k}`` with every Q_i PSD and ``sum Q_i > 0``.

    Examples
    --------
    >>> import numpy as np, chebcenter as cc
    >>> ball = cc.QuadraticSet([np.eye(2)], [[-1.0, -2.0]], [1.0 + 4.0 - 9.0])   # ||x - (1, 2)|| <= 3
    >>> r = ball.center("rcc1"); r.center.round(6).tolist(), round(r.radius, 6)
    ([1.0, 2.0], 3.0)
    """

    METHODS = ("rcc1",)

    def __init__(self, Qs: Any, gs: Any, ts: Any):
        Qs = as_array("Qs", Qs)
        if Qs.ndim != 3 or Qs.shape[1] != Qs.shape[2] or Qs.shape[0] < 1:
            raise InvalidInputError(f"Qs must have shape (k, n, n); got {Qs.shape}")
        k, n, _ = Qs.shape
        gs = as_array("gs", gs)
        if gs.shape != (k, n):
            raise InvalidInputError(f"gs must have shape ({k}, {n}): one linear term per quadratic; got shape {gs.shape}")
        ts = _vector("ts", ts, k)
        if not (np.all(np.isfinite(Qs)) and np.all(np.isfinite(gs))):
            raise InvalidInputError("Qs and gs must be finite")
        for i in range(k):
            if np.abs(Qs[i] - Qs[i].T).max() > 1e-12 * (1 + np.abs(Qs[i]).max()):
                raise InvalidInputError(f"Qs[{i}] must be symmetric")
            lam = np.linalg.eigvalsh(Qs[i])[0]
            if lam < -1e-10 * (1 + np.abs(Qs[i]).max()):
                raise InvalidInputError(f"Qs[{i}] must be positive semidefinite; its smallest eigenvalue is {lam:.3g}")
        if np.linalg.eigvalsh(Qs.sum(axis=0))[0] <= 1e-12:
            raise InvalidInputError("sum of the Q_i must be positive definite (otherwise the set may be unbounded)")
        self.Qs, self.gs, self.ts, self.n = Qs, gs, ts, n

    def center(self, method: str = "rcc1", **options: Any) -> CenterResult:
        """The EBT relaxed Chebyshev center (``rcc1``); ``solver`` = "clarabel" or "scs"."""
        if method == "exact":
            raise InvalidInputError("method 'exact' is not available for quadratic sets (the exact minimax center "
                                    "is NP-hard here); use method='rcc1', whose radius bounds the exact one")
        method = check_choice("method", method, self.METHODS)
        unknown = sorted(set(options) - {"solver"})
        if unknown:
            raise InvalidInputError(f"unknown option(s) {unknown} for method 'rcc1'; allowed: ['solver']")
        solver = check_choice("solver", options.get("solver", "clarabel"), ("clarabel", "scs"))
        return _ebt_result(self.Qs, self.gs, self.ts, solver, time.perf_counter(), lambda x: x, self.n, {})
