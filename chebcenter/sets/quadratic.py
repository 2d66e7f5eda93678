r"""Intersections of ellipsoids ``{x : x^T Q_i x + 2 g_i^T x + t_i <= 0}`` (Q_i PSD; checked).

The methods are the table's that serve quadratic sets (:func:`chebcenter.methods.set_methods`):
``"rcc1"``, EBT Theorem III.1 in its native setting (its route is in
:mod:`chebcenter.methods.general_sets`). There is no exact method: the exact minimax center
is NP-hard here.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .._core.validate import as_array, as_vector
from .._errors import InvalidInputError
from ..methods import choose_set_method, set_methods
from ..results import CenterResult

__all__ = ["QuadraticSet"]


class QuadraticSet:
    """``{x : x^T Q_i x + 2 g_i^T x + t_i <= 0, i = 1..k}`` with every Q_i PSD and ``sum Q_i > 0``.

    Examples
    --------
    >>> import numpy as np, chebcenter as cc
    >>> ball = cc.QuadraticSet([np.eye(2)], [[-1.0, -2.0]], [1.0 + 4.0 - 9.0])   # ||x - (1, 2)|| <= 3
    >>> r = ball.center("rcc1"); r.center.round(6).tolist(), round(r.radius, 6)
    ([1.0, 2.0], 3.0)
    """


    #: the methods of the table that serve quadratic sets (:func:`chebcenter.methods.set_methods`)
    METHODS = tuple(set_methods("quadratic"))

    def __init__(self, Qs: Any, gs: Any, ts: Any):
        Qs = as_array("Qs", Qs)
        if Qs.ndim != 3 or Qs.shape[1] != Qs.shape[2] or Qs.shape[0] < 1:
            raise InvalidInputError(f"Qs must have shape (k, n, n); got {Qs.shape}")
        k, n, _ = Qs.shape
        gs = as_array("gs", gs)
        if gs.shape != (k, n):
            raise InvalidInputError(f"gs must have shape ({k}, {n}): one linear term per quadratic; got shape {gs.shape}")
        ts = as_vector("ts", ts, k)
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
        self.Qs, self.gs, self.ts, self.d = Qs, gs, ts, n
        # a starting frame (see docs/theory.md): c0 minimises sum_i f_i / ||Q_i|| (its Hessian is
        # PD), s0 is the largest radius-like size sqrt(|f_i(c0)| / ||Q_i||) of the quadratics
        q = np.array([np.abs(Q).max() for Q in Qs])
        quad = q > 0
        w = np.where(quad, 1.0 / np.where(quad, q, 1.0), 0.0)
        self._c0 = np.linalg.solve(np.einsum("i,ijk->jk", w, Qs), -(w @ gs))
        f0 = np.einsum("j,ijk,k->i", self._c0, Qs, self._c0) + 2 * gs @ self._c0 + ts
        size = np.sqrt(np.abs(f0[quad]) * w[quad]).max()
        self._s0 = float(size) if size > 0 and np.isfinite(size) else 1.0

    @property
    def n(self) -> int:
        """The dimension, as ``d`` (kept under its first name)."""
        return self.d

    def center(self, method: str = "auto", **options: Any) -> CenterResult:
        """The EBT relaxed Chebyshev center (``rcc1``); ``solver`` = "auto" (= "clarabel") or "scs".
        ``auto`` (the default, as for every set type) is rcc1 here: the exact center of a
        quadratic set is NP-hard (``extras["method"]`` says "rcc1")."""
        _, route, opts = choose_set_method("quadratic", method, options, _REFUSED)
        return route.func(self, time.perf_counter(), **opts)


#: the methods of box slices and polytopes a quadratic set does not offer, with the reason
_REFUSED = {"exact": "method 'exact' is not available for quadratic sets (the exact minimax center is "
                               "NP-hard here); use method='rcc1', whose radius bounds the exact one"}
