r"""Score-preserving defences: disclose ``W_pas R`` (R orthogonal, secret) instead of ``W_pas``.

The deployed model keeps computing ``W_pas x``, so every score is bit-identical;
only what the active party is *told* changes. With ``A = J W_pas``, the white-box
adversary solves ``(A R) xhat = b'`` and, using half* (ls when rank A = d), gets

    xhat_n = R^T (Pi x_n + P R m),     Pi = A^+ A,  P = I - Pi,  m = 1/2 1

(for rank A = d: ``xhat_n = R^T x_n``). The passive party picks R to maximise the
adversary's MSE ``f(R) = (1/(N d)) sum_n ||x_n - xhat_n||^2`` on its own data
subject to the distortion budget ``||W_pas - W_pas R||_F <= epsilon``
(``dist^2 = 2 tr G - 2 tr(G R)``, ``G = W_pas^T W_pas``): privacy vs
interpretability.

* rank A = d: ``f(R) = (2/d)(tr K0 - tr(R K0))``, ``K0 = (1/N) sum x x^T``, linear in R;
  the Lagrangian ``min_R tr(R (K0 - mu G))`` over O(d) is solved by
  ``R = -Q sign(Lambda) Q^T`` (``K0 - mu G = Q Lambda Q^T``), bisection on ``mu >= 0``.
  Each such R is optimal for its own distortion, but the family is discrete (its
  sign flips are reflections), so budgets between its jumps need the optimiser below.
* in general: Riemannian gradient ascent on O(d) (Cayley retraction, Armijo
  steps) of ``f(R) - mu dist^2(R)`` with bisection on ``mu``, started from a
  random rotation at the budget; the optimised R is the best feasible of these
  candidates (and the closed form), polished by an ascent that never leaves the
  budget, from ``n_starts`` random starts. It is a local method on a non-convex problem;
  it is never worse than the random defence with the same ``rng``.
* ``kind="random"``: ``R = expm(t S)`` for a random skew-symmetric S, with t chosen so
  the distortion equals epsilon.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import InvalidInputError, as_2d
from ..model import VFLModel

__all__ = ["Defence", "adversary_mse", "orthogonal_defence"]


@dataclass(frozen=True)
class Defence:
    """A deployed defence: scores from ``model``, ``disclosed`` shown to the active party."""

    model: VFLModel
    R: np.ndarray
    disclosed: VFLModel
    distortion: float
    epsilon: float
    kind: str
    predicted_mse: float

    def predict_proba(self, Y: Any, X: Any) -> np.ndarray:
        """The scores the deployment reveals: exactly the undefended model's."""
        return self.model.predict_proba(Y, X)


class _Objective:
    """``f(R)`` (the white-box adversary's MSE on X) and ``dist^2(R)`` with gradients."""

    def __init__(self, model: VFLModel, X: np.ndarray):
        sl = model.box_slice  # chebcenter's factored A = J W_pas: projectors, rank and box midpoint
        d = model.n_passive
        self.X = X
        self.P = sl.null_projector
        self.Pi = np.eye(d) - self.P
        self.full_rank = sl.rank == d
        self.m = sl.mid
        self.G = model.W_pas.T @ model.W_pas
        self.K0 = X.T @ X / X.shape[0]
        self.PiX = X @ self.Pi.T
        self.scale = 2.0 / (X.shape[0] * d)

    def f(self, R):
        V = self.PiX + self.P @ R @ self.m
        E = self.X - V @ R
        return float(np.sum(E * E) / self.X.size), V, E

    def grad_f(self, R):
        val, V, E = self.f(R)
        g = -self.scale * (V.T @ E + np.outer(self.P @ R @ E.sum(axis=0), self.m))
        return val, g

    def dist2(self, R):
        return max(2.0 * np.trace(self.G) - 2.0 * np.trace(self.G @ R), 0.0)


def adversary_mse(model: VFLModel, X: Any, R: Any) -> float:
    """``f(R)``: the white-box adversary's per-feature MSE on X when ``W_pas R`` is disclosed."""
    return _Objective(model, np.asarray(X, dtype=float)).f(np.asarray(R, dtype=float))[0]


def _closed_form(obj: _Objective, mu: float) -> np.ndarray:
    lam, Q = np.linalg.eigh(obj.K0 - mu * obj.G)
    return -(Q * np.where(lam >= 0, 1.0, -1.0)) @ Q.T


def _riemannian(R, g):
    """``skew(R^T g)``: the Riemannian gradient direction on O(d) for the Euclidean gradient g."""
    M = R.T @ g
    return 0.5 * (M - M.T)


def _cayley(R, Omega, t):
    d = R.shape[0]
    I = np.eye(d)
    return R @ np.linalg.solve(I - 0.5 * t * Omega, I + 0.5 * t * Omega)


def _backtrack(trial, value, accept, step, min_step):
    """Halve ``step`` until ``accept(trial(step), value, step)``; return the accepted point,
    its value and the next (doubled) step, or None below ``min_step``."""
    while step > min_step:
        R_new = trial(step)
        v_new = value(R_new)
        if accept(R_new, v_new, step):
            return R_new, v_new, min(step * 2.0, 1e3)
        step *= 0.5
    return None


def _ascent(obj: _Objective, mu: float, R: np.ndarray, max_iter: int) -> np.ndarray:
    """Riemannian gradient ascent of ``f(R) - mu dist^2(R)`` on O(d) (Cayley retraction)."""
    def phi(R):
        return obj.f(R)[0] - mu * obj.dist2(R)

    step = 1.0
    val = phi(R)
    for _ in range(max_iter):
        _, gf = obj.grad_f(R)
        Omega = _riemannian(R, gf + 2.0 * mu * obj.G)
        nrm2 = float(np.sum(Omega * Omega))
        if nrm2 < 1e-24:
            break
        found = _backtrack(lambda t, R=R, Omega=Omega: _cayley(R, Omega, t), phi,
                           lambda R_new, v_new, t, val=val, nrm2=nrm2: v_new >= val + 1e-4 * t * nrm2, step, 1e-12)
        if found is None:
            break
        R, val, step = found
    return R


def _skew_grad_dist(obj: _Objective, R: np.ndarray) -> np.ndarray:
    """``skew(R^T grad dist^2)`` with ``grad dist^2 = -2 G``."""
    return _riemannian(R, -2.0 * obj.G)


def _restore(obj: _Objective, R: np.ndarray, epsilon: float) -> np.ndarray:
    """First-order steps down ``dist^2`` until ``dist <= epsilon`` (a few suffice)."""
    for _ in range(8):
        excess = obj.dist2(R) - epsilon ** 2
        if excess <= 0:
            return R
        Od = _skew_grad_dist(obj, R)
        n2 = float(np.sum(Od * Od))
        if n2 < 1e-30:
            break
        R = _cayley(R, -Od, 1.05 * excess / n2)
    return R


def _feasible_ascent(obj: _Objective, R: np.ndarray, epsilon: float, max_iter: int) -> np.ndarray:
    """Riemannian ascent of f inside ``dist <= epsilon``: on the boundary the direction is
    projected onto the tangent of the level set of ``dist^2`` and each trial point is pulled
    back inside (:func:`_restore`); only improving, feasible steps are accepted."""
    val = obj.f(R)[0]
    step = 1.0
    for _ in range(max_iter):
        Omega = _riemannian(R, obj.grad_f(R)[1])
        if np.sqrt(obj.dist2(R)) >= epsilon * (1 - 1e-6):
            Od = _skew_grad_dist(obj, R)
            inner = float(np.sum(Omega * Od))
            if inner > 0:
                Omega = Omega - inner / float(np.sum(Od * Od)) * Od
        nrm2 = float(np.sum(Omega * Omega))
        if nrm2 < 1e-20:
            break
        found = _backtrack(lambda t, R=R, Omega=Omega: _restore(obj, _cayley(R, Omega, t), epsilon),
                           lambda R_new: obj.f(R_new)[0],
                           lambda R_new, v_new, t, val=val, nrm2=nrm2: v_new > val + 1e-6 * t * nrm2
                           and np.sqrt(obj.dist2(R_new)) <= epsilon, step, 1e-10)
        if found is None:
            break
        R, val, step = found
    return R


def _bisect(make_R, obj: _Objective, epsilon: float, iters: int = 50):
    """Smallest mu >= 0 (largest adversary MSE) whose R meets ``dist <= epsilon``."""
    R0 = make_R(0.0, None)
    if np.sqrt(obj.dist2(R0)) <= epsilon:
        return R0
    lo, hi = 0.0, 1.0
    R_hi = make_R(hi, None)
    while np.sqrt(obj.dist2(R_hi)) > epsilon and hi < 1e12:
        lo, hi = hi, hi * 10.0
        R_hi = make_R(hi, R_hi)
    best = R_hi
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        R = make_R(mid, best)
        if np.sqrt(obj.dist2(R)) <= epsilon:
            hi, best = mid, R
        else:
            lo = mid
    return best


def _random(obj: _Objective, epsilon: float, rng) -> np.ndarray:
    from scipy.linalg import expm  # here, not at import: importing vflattack loads no scipy.linalg

    d = obj.G.shape[0]
    S = rng.standard_normal((d, d))
    S = (S - S.T) / np.linalg.norm(S - S.T)
    def dist(t):
        return np.sqrt(obj.dist2(expm(t * S)))

    hi = 1e-3
    while dist(hi) < epsilon and hi < np.pi * np.sqrt(d):
        hi *= 2.0
    if dist(hi) < epsilon:  # the budget exceeds what this direction reaches
        ts = np.linspace(0, hi, 200)
        return expm(ts[np.argmax([dist(t) for t in ts])] * S)
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if dist(mid) < epsilon else (lo, mid)
    return expm(lo * S)


def orthogonal_defence(model: VFLModel, X_passive: Any, epsilon: float, kind: str = "optimised",
                       rng: Any = 0, max_iter: int = 200, n_starts: int = 3) -> Defence:
    """Choose the secret rotation R and the disclosed model ``W_pas R`` (module docstring).

    Parameters
    ----------
    model : VFLModel
        The deployed model (its scores are unchanged by the defence).
    X_passive : array_like, shape (N, d)
        The passive party's own data, on which the adversary's MSE is maximised.
    epsilon : float
        Distortion budget ``||W_pas - W_pas R||_F <= epsilon`` (>= 0).
    kind : {"optimised", "random"}
    rng : seed
        Seeds the random rotation (``kind="random"``) and the optimiser's starts.
    max_iter, n_starts : int
        Ascent iterations per solve and random starts of the (local, non-convex) optimiser.

    Examples
    --------
    >>> import numpy as np
    >>> from vflattack import VFLModel
    >>> rng = np.random.default_rng(0)
    >>> m = VFLModel(rng.standard_normal((4, 2)), rng.standard_normal((4, 3)), np.zeros(4))
    >>> X = rng.random((200, 3))
    >>> dfn = orthogonal_defence(m, X, epsilon=1.0)
    >>> bool(dfn.distortion <= 1.0 + 1e-9 and np.allclose(dfn.R @ dfn.R.T, np.eye(3)))
    True
    """
    if not isinstance(model, VFLModel):
        raise InvalidInputError(f"model must be a VFLModel; got {type(model).__name__}")
    X = as_2d("X_passive", X_passive, n_cols=model.n_passive)
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError):
        raise InvalidInputError(f"epsilon must be a number >= 0; got {epsilon!r}") from None
    if not np.isfinite(epsilon) or epsilon < 0:
        raise InvalidInputError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
    if kind not in ("optimised", "random"):
        raise InvalidInputError(f"kind must be 'optimised' or 'random'; got {kind!r}")
    obj = _Objective(model, X)
    d = model.n_passive
    if epsilon == 0:
        R = np.eye(d)
    elif kind == "random":
        R = _random(obj, epsilon, np.random.default_rng(rng))
    else:
        if n_starts < 1:
            raise InvalidInputError(f"n_starts must be >= 1; got {n_starts!r}")
        # the closed form's family is discrete on O(d) (sign flips are reflections), and the
        # penalty method is non-convex: keep the best feasible candidate, then polish it
        gen = np.random.default_rng(rng)
        candidates = []
        for _ in range(n_starts):
            start = _random(obj, epsilon, gen)
            candidates += [start, _bisect(lambda mu, s, start=start: _ascent(obj, mu, start if s is None else s, max_iter),
                                          obj, epsilon, iters=20)]
        if obj.full_rank:
            candidates.append(_bisect(lambda mu, _: _closed_form(obj, mu), obj, epsilon))
        feasible = [R for R in candidates if np.sqrt(obj.dist2(R)) <= epsilon * (1 + 1e-9)]
        R = max(feasible, key=lambda R: obj.f(R)[0])
        R = _feasible_ascent(obj, R, epsilon, max_iter)
    disclosed = VFLModel(model.W_act, model.W_pas @ R, model.b, model.classes)
    return Defence(model, R, disclosed, float(np.linalg.norm(model.W_pas - model.W_pas @ R)), epsilon,
                   kind, obj.f(R)[0])
