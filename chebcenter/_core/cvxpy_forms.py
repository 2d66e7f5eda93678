"""The cvxpy backend: every cvxpy formulation the library uses, one status map, one solve.

cvxpy is the reference route, beside the compiled kernels: the RCC1 dual of a box slice
on request (``solver="clarabel"`` / ``"scs"``) or for rows the compiled solver could not
certify, the RCC2 projection QP on request (``solver="clarabel"`` or ``"scs"``), and the EBT dual of a
general set (:class:`chebcenter.Polytope`, :class:`chebcenter.QuadraticSet`).

Each problem is built once with cvxpy Parameters and solved under a lock (cvxpy problems
and their solver objects are not safe to share between threads), never warm-started, so
an answer does not depend on what was solved before. Statuses map to
:class:`chebcenter.Status` through :func:`status_of`. The radius of an RCC1 answer is never
the solver's objective: it is recomputed from the solver's weights by the compiled
certificate (:func:`chebcenter.kernels.rcc1_certificate.certified_value`).
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

from .._errors import MissingBackendError
from ..results import Status

__all__ = ["EbtDual", "ProjectionQP", "WeightedEbtDual", "import_cvxpy", "status_of"]


def import_cvxpy(what: str = "this route"):
    """The cvxpy module, or an error that says what needs it and how to install it."""
    try:
        import cvxpy as cp
    except ImportError as exc:  # pragma: no cover - cvxpy is a runtime dependency
        raise MissingBackendError(f"{what} needs cvxpy; install it with: pip install cvxpy clarabel scs") from exc
    return cp


#: cvxpy status -> Status, for a primal problem (the QP) and for a dual one (the EBT dual,
#: which is unbounded exactly when the set is empty)
_PRIMAL = {"optimal": Status.OPTIMAL, "optimal_inaccurate": Status.INACCURATE,
           "infeasible": Status.INFEASIBLE, "infeasible_inaccurate": Status.INFEASIBLE}
_DUAL = {"optimal": Status.OPTIMAL, "optimal_inaccurate": Status.INACCURATE,
         "unbounded": Status.INFEASIBLE, "unbounded_inaccurate": Status.INFEASIBLE}


def status_of(cvxpy_status: str, dual: bool = False) -> Status:
    """The :class:`Status` of a cvxpy status string (anything unknown is SOLVER_ERROR)."""
    return (_DUAL if dual else _PRIMAL).get(cvxpy_status, Status.SOLVER_ERROR)


class _Parametric:
    """A cvxpy problem built once; :meth:`_solve` sets its Parameters and solves it cold."""

    def __init__(self, solver: str):
        self.solver = solver.upper()
        self._lock = threading.Lock()

    def _solve(self, values, variable):
        cp = import_cvxpy()
        kwargs = {"eps": 1e-9, "max_iters": 100_000} if self.solver == "SCS" else {}
        with self._lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for param, value in values:
                param.value = value
            try:
                self.problem.solve(solver=self.solver, warm_start=False, **kwargs)
            except cp.error.SolverError:
                return None, "solver_error"
            value = None if variable.value is None else np.array(variable.value)
            return value, self.problem.status


class EbtDual(_Parametric):
    r"""The Eldar-Beck-Teboulle dual of ``{x : x^T Q_i x + 2 g_i^T x + t_i <= 0, i < k}``.

    ``minimise tau - t^T alpha`` over ``alpha >= 0`` subject to
    ``[[M, v], [v^T, tau]] >= 0`` and ``M >= G``, with ``M = sum alpha_i Q_i`` and
    ``v = sum alpha_i g_i``; the relaxed center is ``-M^{-1} v``. ``G`` is ``I`` (the set's
    own center) or a fixed ``gram = K^T K`` (the image ``K u``: docs/theory.md §10, "rcc1
    with of="). The ``Q_i`` are fixed: either given (``Qs``, shape (k, n, n)) or rank one,
    ``Q_i = f_i f_i^T`` with ``f_i`` the rows of ``factors`` (a box slice in u-space: the rows
    of W). ``g`` and ``t`` are Parameters, set per solve.
    """

    def __init__(self, solver: str, Qs=None, factors=None, gram=None):
        super().__init__(solver)
        cp = import_cvxpy("the RCC1 relaxation" if gram is None else "the weighted RCC1 relaxation (rcc1 with of=)")
        if factors is not None:
            F = np.asarray(factors, dtype=float)
            k, n = F.shape
            self.alpha = cp.Variable(k, nonneg=True)
            M = F.T @ cp.diag(self.alpha) @ F
        else:
            Qs = np.asarray(Qs, dtype=float)
            k, n = Qs.shape[0], Qs.shape[1]
            self.alpha = cp.Variable(k, nonneg=True)
            M = cp.reshape(Qs.reshape(k, n * n).T @ self.alpha, (n, n), order="C")
        self.g = cp.Parameter((k, n))
        self.t = cp.Parameter(k)
        tau = cp.Variable((1, 1))
        v = cp.reshape(self.g.T @ self.alpha, (n, 1), order="F")
        big = cp.bmat([[M, v], [v.T, tau]])
        if gram is None:
            above = (M + M.T) / 2 >> np.eye(n)
        else:
            G = np.asarray(gram, dtype=float)
            above = (M + M.T) / 2 - 0.5 * (G + G.T) >> 0
        self.problem = cp.Problem(cp.Minimize(tau[0, 0] - self.t @ self.alpha), [(big + big.T) / 2 >> 0, above])

    def solve(self, g, t):
        """``(alpha, cvxpy status)``; alpha None when the solver gave no point."""
        return self._solve([(self.g, g), (self.t, t)], self.alpha)


class WeightedEbtDual(EbtDual):
    r""":class:`EbtDual` for the image ``K u`` (``gram = K^T K``): the box slice's rank-one
    quadratics (``factors``, the rows of W). The center is ``K (-M^{-1} v)``; its radius is the
    certificate recomputed from alpha (:func:`chebcenter.methods.image.weighted_certificate`),
    never the objective."""

    def __init__(self, solver: str, factors, gram):
        super().__init__(solver, factors=factors, gram=gram)

    def solve(self, g, t):
        """``(alpha, cvxpy status, objective)``; alpha None when the solver gave no point."""
        alpha, status = super().solve(g, t)
        value = self.problem.value
        return alpha, status, float(value) if value is not None else float("nan")


class ProjectionQP(_Parametric):
    """``argmin ||x - mid||^2`` subject to ``V x = rhs``, ``lo <= x <= hi`` (rhs a Parameter).

    With ``V`` the orthonormal rows spanning the row space of A and ``rhs = V q``, this is
    the projection of the box midpoint onto S_F (RCC2)."""

    def __init__(self, solver: str, V, lo, hi, mid):
        super().__init__(solver)
        cp = import_cvxpy("method 'rcc2' with solver='clarabel' or 'scs'")
        self.x = cp.Variable(lo.size)
        cons = [self.x >= lo, self.x <= hi]
        self.rhs = cp.Parameter(V.shape[0]) if V.shape[0] else None
        if self.rhs is not None:
            cons.append(V @ self.x == self.rhs)
        self.problem = cp.Problem(cp.Minimize(cp.sum_squares(self.x - mid)), cons)

    def solve(self, rhs):
        """``(x, cvxpy status)``; x None when the solver gave no point."""
        return self._solve([] if self.rhs is None else [(self.rhs, rhs)], self.x)
