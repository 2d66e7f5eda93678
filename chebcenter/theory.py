r"""The bounds of docs/theory.md §2 (the project's Theorems 1 and 2) as functions.

All functions take the shared matrix ``A`` and data ``X`` (rows are samples,
known to lie in the box ``[lo, hi]``) and return exact finite-sample
quantities, so users can check the theory on their own data. Notation:
``m = (lo + hi)/2``, ``P = I - A^+ A`` (projector onto Null(A)), r = rank(A),
``MSE = (1/(N d)) sum_n ||X_n - Xhat_n||^2`` (per-feature mean squared error).

* Theorem 1a: ``||X - half*||^2 = ||X - m||^2 - ||A^+ A (X - m)||^2`` per
  sample, hence ``MSE(half) - MSE(half*) = (1/(Nd)) sum_n ||A^+A(X_n - m)||^2 >= 0``.
* Theorem 1b: ``MSE(ls) - MSE(half*) = (1/(Nd)) sum_n m^T P (2 X_n - m)``
  (``= (1/(Nd)) sum_n 1^T P (X_n - 1/4)`` for the unit box).
* Theorem 2a (von Neumann): with ``K = (1/N) sum (X_n - m)(X_n - m)^T`` and
  eigenvalues ``l_1 >= ... >= l_d``:
  ``(1/d) sum_{i>r} l_i <= MSE(half*) <= (1/d) sum_{i<=d-r} l_i <= ((d-r)/d) l_1``;
  the same with ``K0 = (1/N) sum X_n X_n^T`` for ``ls``.
* Theorem 2b: every x in S_F has ``||x - half*||^2 <= R^2 = sum_i ((hi_i-lo_i)/2)^2
  - ||half* - m||^2``; hence ``r(S_F)^2 <= eta_RCC1 <= R^2`` and any estimate in
  S_F errs by at most 2R.
* The center of a linear image (docs/theory.md, "The center of a linear image"):
  ``r*(L S) <= ||L||_2 r*(S)`` (:func:`image_radius_bound`), and for a partition of the
  coordinates into blocks p, ``r*_p <= r*(S) <= sqrt(sum_p r*_p^2)``
  (:func:`block_radius_bound`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core.validate import as_matrix
from ._errors import InvalidInputError

__all__ = [
    "TheoryReport",
    "block_radius_bound",
    "check",
    "eigenvalue_bounds",
    "half_star_gain",
    "image_radius_bound",
    "ls_minus_half_star",
    "mse",
    "worst_case_radius",
]


def _box_slice(A, lo, hi):
    from .sets import BoxSlice
    return BoxSlice(A, lo=lo, hi=hi)


def _data(X, prob) -> np.ndarray:
    X = as_matrix("X", X)
    if X.shape[1] != prob.d:
        raise InvalidInputError(f"X must have {prob.d} columns (one per column of A); got shape {X.shape}")
    return X


def mse(X: Any, X_hat: Any) -> float:
    """Per-feature mean squared error ``(1/(N d)) sum_n ||X_n - Xhat_n||^2``.

    Examples
    --------
    >>> mse([[0.0, 1.0]], [[0.5, 0.5]])
    0.25
    """
    X, X_hat = np.asarray(X, dtype=float), np.asarray(X_hat, dtype=float)
    if X.shape != X_hat.shape:
        raise InvalidInputError(f"X and X_hat must have the same shape; got {X.shape} and {X_hat.shape}")
    return float(np.mean((X - X_hat) ** 2))


def half_star_gain(A: Any, X: Any, lo: Any = 0.0, hi: Any = 1.0) -> float:
    """Theorem 1a: ``MSE(half) - MSE(half*) = (1/(Nd)) sum_n ||A^+ A (X_n - m)||^2``.

    Examples
    --------
    >>> round(half_star_gain([[1.0, 0.0]], [[1.0, 0.0]]), 6)   # (1 - 1/2)^2 / 2
    0.125
    """
    prob = _box_slice(A, lo, hi)
    return _half_star_gain(prob, _data(X, prob))


def _half_star_gain(prob, X) -> float:
    D = X - prob.mid
    row_part = D - D @ prob.null_projector
    return float(np.sum(row_part ** 2) / X.size)


def ls_minus_half_star(A: Any, X: Any, lo: Any = 0.0, hi: Any = 1.0) -> float:
    """Theorem 1b: ``MSE(ls) - MSE(half*) = (1/(Nd)) sum_n m^T P (2 X_n - m)``.

    Examples
    --------
    >>> abs(ls_minus_half_star([[1.0, 1.0]], [[1.0, 0.0]])) < 1e-12   # P m = 0 here
    True
    """
    prob = _box_slice(A, lo, hi)
    return _ls_minus_half_star(prob, _data(X, prob))


def _ls_minus_half_star(prob, X) -> float:
    return float(np.sum((2.0 * X - prob.mid) @ prob.p_mid) / X.size)


def eigenvalue_bounds(A: Any, X: Any, estimator: str = "half_star", lo: Any = 0.0,
                      hi: Any = 1.0) -> tuple[float, float, float]:
    """Theorem 2a: von Neumann bounds ``(lower, upper, loose_upper)`` on the MSE.

    ``estimator="half_star"`` uses ``K = (1/N) sum (X_n - m)(X_n - m)^T``,
    ``estimator="ls"`` uses ``K0 = (1/N) sum X_n X_n^T``; with eigenvalues
    ``l_1 >= ... >= l_d``: lower ``(1/d) sum_{i>r} l_i``, upper
    ``(1/d) sum_{i<=d-r} l_i``, loose upper ``((d-r)/d) l_1``.

    Examples
    --------
    >>> lo, up, loose = eigenvalue_bounds([[1.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]])
    >>> (lo, up, loose)
    (0.0, 0.25, 0.25)
    """
    if estimator not in ("half_star", "ls"):
        raise InvalidInputError(f"estimator must be one of ('half_star', 'ls'); got {estimator!r}")
    prob = _box_slice(A, lo, hi)
    return _eigenvalue_bounds(prob, _data(X, prob), estimator)


def _eigenvalue_bounds(prob, X, estimator) -> tuple[float, float, float]:
    D = X - prob.mid if estimator == "half_star" else X
    Kmat = D.T @ D / X.shape[0]
    lam = np.sort(np.linalg.eigvalsh(Kmat))[::-1]
    d, r, p = prob.d, prob.rank, prob.p
    lower = float(np.sum(lam[r:]) / d)
    upper = float(np.sum(lam[:p]) / d)
    loose = float(p / d * lam[0])
    return lower, upper, loose


def worst_case_radius(A: Any, b: Any, lo: Any = 0.0, hi: Any = 1.0) -> np.ndarray | float:
    """Theorem 2b: ``R = sqrt(sum_i ((hi_i - lo_i)/2)^2 - ||half* - m||^2)``.

    ``b`` of shape (m,) gives a float, a batch (N, m) an (N,) array. Every x in
    S_F lies within R of half*, so ``r(S_F) <= sqrt(eta_RCC1) <= R``.

    Examples
    --------
    >>> round(worst_case_radius([[1.0, 1.0]], [1.0]), 6)   # segment (1,0)-(0,1)
    0.707107
    """
    prob = _box_slice(A, lo, hi)
    B = np.asarray(b, dtype=float)
    single = B.ndim <= 1
    B = B.reshape(1, -1) if single else B
    if B.shape[1] != prob.m:
        raise InvalidInputError(f"b must have {prob.m} entries per right-hand side; got shape {np.shape(b)}")
    H = B @ prob.A_pinv.T + prob.p_mid
    R = np.sqrt(np.maximum(prob.half_diag_sq - np.sum((H - prob.mid) ** 2, axis=1), 0.0))
    return float(R[0]) if single else R


@dataclass(frozen=True)
class TheoryReport:
    """Measured MSEs beside the quantities of Theorems 1-2 (see :func:`check`)."""

    d: int
    rank: int
    n_samples: int
    mse_half: float
    mse_half_star: float
    mse_ls: float
    half_star_gain: float
    ls_minus_half_star: float
    half_star_bounds: tuple[float, float, float]
    ls_bounds: tuple[float, float, float]
    max_error_over_R: float

    def holds(self, rtol: float = 1e-9) -> dict:
        """Each statement of Theorems 1-2 checked on this data (``rtol`` on the identities)."""
        tol = rtol * max(1.0, self.mse_half)
        hb, lb = self.half_star_bounds, self.ls_bounds
        return {
            "T1a identity": abs(self.mse_half - self.mse_half_star - self.half_star_gain) <= tol,
            "T1a half* <= half": self.mse_half_star <= self.mse_half + tol,
            "T1b identity": abs(self.mse_ls - self.mse_half_star - self.ls_minus_half_star) <= tol,
            "T2a half* bounds": hb[0] - tol <= self.mse_half_star <= hb[1] + tol <= hb[2] + 2 * tol,
            "T2a ls bounds": lb[0] - tol <= self.mse_ls <= lb[1] + tol <= lb[2] + 2 * tol,
            "T2b ||X - half*|| <= R": self.max_error_over_R <= 1.0 + 1e-9,
        }

    def __str__(self) -> str:
        hb, lb = self.half_star_bounds, self.ls_bounds
        lines = [
            f"d = {self.d}, rank(A) = {self.rank}, N = {self.n_samples}",
            f"MSE(half) = {self.mse_half:.6g}   MSE(half*) = {self.mse_half_star:.6g}   MSE(ls) = {self.mse_ls:.6g}",
            f"T1a  MSE(half) - MSE(half*) = {self.mse_half - self.mse_half_star:.6g}  (formula {self.half_star_gain:.6g})",
            f"T1b  MSE(ls) - MSE(half*)   = {self.mse_ls - self.mse_half_star:.6g}  (formula {self.ls_minus_half_star:.6g})",
            f"T2a  half*: {hb[0]:.6g} <= {self.mse_half_star:.6g} <= {hb[1]:.6g} <= {hb[2]:.6g}",
            f"T2a  ls:    {lb[0]:.6g} <= {self.mse_ls:.6g} <= {lb[1]:.6g} <= {lb[2]:.6g}",
            f"T2b  max_n ||X_n - half*_n|| / R_n = {self.max_error_over_R:.6g} (<= 1)",
        ]
        lines += [f"  {k}: {'holds' if v else 'FAILS'}" for k, v in self.holds().items()]
        return "\n".join(lines)


def check(A: Any, X: Any, lo: Any = 0.0, hi: Any = 1.0) -> TheoryReport:
    """Measure half, half*, ls on data X (b_n = A X_n) and evaluate Theorems 1-2.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> rep = check(rng.standard_normal((2, 6)), rng.random((100, 6)))
    >>> all(rep.holds().values())
    True
    """
    prob = _box_slice(A, lo, hi)
    X = _data(X, prob)
    if np.any(X < prob.lo - prob.box_tol) or np.any(X > prob.hi + prob.box_tol):
        raise InvalidInputError("X must lie in the box [lo, hi] (the theorems assume it)")
    B = X @ prob.A.T
    Q = B @ prob.A_pinv.T
    H = Q + prob.p_mid
    R = np.sqrt(np.maximum(prob.half_diag_sq - np.sum((H - prob.mid) ** 2, axis=1), 0.0))
    err = np.linalg.norm(X - H, axis=1)
    ratio = float(np.max(np.where(R > 0, err / np.where(R > 0, R, 1.0), np.where(err > 1e-12, np.inf, 0.0))))
    return TheoryReport(
        d=prob.d, rank=prob.rank, n_samples=X.shape[0],
        mse_half=mse(X, np.broadcast_to(prob.mid, X.shape)), mse_half_star=mse(X, H), mse_ls=mse(X, Q),
        half_star_gain=_half_star_gain(prob, X), ls_minus_half_star=_ls_minus_half_star(prob, X),
        half_star_bounds=_eigenvalue_bounds(prob, X, "half_star"),
        ls_bounds=_eigenvalue_bounds(prob, X, "ls"), max_error_over_R=ratio)


def image_radius_bound(L: Any, radius: Any) -> np.ndarray | float:
    """``||L||_2 r``: a bound on the Chebyshev radius of the image ``L S`` from a radius r of S.

    If every x in S lies within r of c, every ``L x`` lies within ``||L||_2 r`` of ``L c``, so
    ``r*(L S) <= ||L||_2 r*(S)`` (docs/theory.md, "The center of a linear image"). ``radius``
    may be a float or an array (one per set).

    Examples
    --------
    >>> round(image_radius_bound([[3.0, 4.0]], 0.5), 12)   # ||L||_2 = 5
    2.5
    """
    L = as_matrix("L", L)
    r = np.asarray(radius, dtype=float)
    if np.any(r < 0) or not np.all(np.isfinite(r)):
        raise InvalidInputError(f"radius must be finite and >= 0; got {radius!r}")
    out = float(np.linalg.norm(L, 2)) * r
    return float(out) if out.ndim == 0 else out


def block_radius_bound(radii: Any) -> np.ndarray | float:
    """``sqrt(sum_p r_p^2)``: a bound on ``r*(S)`` from the radii of S's projections onto the
    blocks of a partition of the coordinates (the parties of a vertical split).

    The center ``(c*_1, ..., c*_P)`` assembled from the blocks' own centers is within
    ``sqrt(sum_p r*_p^2)`` of every point of S, since each block of ``x - c`` is within r*_p
    of zero. The last axis of ``radii`` holds the blocks.

    Examples
    --------
    >>> round(block_radius_bound([0.3, 0.4]), 12)
    0.5
    """
    r = np.asarray(radii, dtype=float)
    if r.ndim == 0 or r.shape[-1] == 0 or np.any(r < 0) or not np.all(np.isfinite(r)):
        raise InvalidInputError(f"radii must be a nonempty array of finite numbers >= 0; got {radii!r}")
    out = np.sqrt(np.sum(r * r, axis=-1))
    return float(out) if out.ndim == 0 else out
