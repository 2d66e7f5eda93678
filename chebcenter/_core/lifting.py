r"""The lifting of a bounded-error set to a box slice (docs/theory.md §8.2).

Private module, on the methods' floor: :func:`chebcenter.methods.dispatch.solve` groups and lifts the
interval rows of a batch here, and each method solves on the groups (its function, with
:attr:`chebcenter.methods.Context.group` set). For one batch
row, the rows with ``L_j = U_j`` (after the intervals are
clamped to what ``a_j^T x`` reaches over the box) are equalities: ``x = q + N u`` with
``N`` an orthonormal basis of their null space and ``q`` their minimum-norm solution. The
other rows are intervals, scaled to unit norm. In the lifted coordinates

    y = (x, A_I x) = (q, A_I q) + W u,      W = [N; A_I N],

``S`` is the box slice ``{y : V y = V (q, A_I q), lo_y <= y <= hi_y}`` with the box
``[lo, L_I] x [hi, U_I]`` and ``V`` the orthonormal complement of ``range(W)``. The map
``u -> y`` is affine and one to one, so vertices, feature ranges and emptiness are those
of a box slice (the compiled kernels, with a box per row), and ``||x - x'|| = ||u - u'||``
because N is orthonormal. Rows of a batch with the same equality pattern share W and V.

:class:`LiftedGroup` holds one equality pattern of a batch; :func:`group_ranges` and
:func:`interval_vertices` are the feature ranges and the vertices of its sets.
"""

from __future__ import annotations

import numpy as np

from ..kernels import interval_rows as lifted
from ..kernels.cuts import CUTS_OK, CUTS_TOO_MANY, cut_vertices, slab_vertices
from ..kernels.edge_walk import PIVOT_OK, PIVOT_TOO_MANY, pivot_vertices
from ..kernels.linalg import EPS, numerical_rank, rows_times
from ..kernels.parallel import row_blocks
from ..kernels.projection import EMPTY, PROJECT_MAXIT, PROJECTED
from ..kernels.qp import QP_OPTIMAL
from ..kernels.simplex import RANGES_EMPTY, RANGES_OK, lp_max
from ..kernels.vertices import candidate_count, distinct_rows, enumerate_vertices
from .normalised import consistent_rows

__all__ = ["LiftedGroup", "clamp", "groups", "group_ranges", "interval_vertices", "vacuous_rows",
           "vertices_of"]

_QP_MAXIT = 2000


class LiftedGroup:
    """The rows of a batch with one equality pattern, lifted (module docstring).

    It is the reduction in front of the methods on bounded-error rows, as CVXPY's
    reductions are: the methods solve on the lifted box slice (``V``, ``Beta``, ``Lo``, ``Hi``,
    ``tol``, with the metric on x's coordinates only), :meth:`apply` maps points of S into
    it and :meth:`invert` maps the answers back. The map is affine and one to one on S, and
    distances in x are the lifted metric's, so a ball, a vertex list or a projection keeps
    its meaning both ways. The routes of :func:`vertices_of` that work in x itself (the
    slab, the cuts) read the group's x-space rows ``AI`` and bounds directly."""

    def __init__(self, core, rows, eq, Lp, Up, tau, vacuous=None):
        A, d = core.A, core.d
        self.rows, self.d = rows, d
        n = rows.size
        interval = ~eq if vacuous is None else ~eq & ~vacuous
        AE, AI = A[eq], A[interval]
        norms = np.linalg.norm(AI, axis=1)
        self.AI = AI / norms[:, None]
        Li, Ui = Lp[:, interval] / norms, Up[:, interval] / norms
        tau_i = tau[:, interval] / norms
        self.consistent = np.ones(n, dtype=bool)
        if eq.any():
            UE, s, Vt = np.linalg.svd(AE, full_matrices=True)
            r = numerical_rank(s, AE.shape, core.rank_tol_given)
            self.N = np.ascontiguousarray(Vt[r:].T)
            bE = Lp[:, eq]
            q = rows_times(rows_times(bE, UE[:, :r].T) / s[:r], Vt[:r].T) if r else np.zeros((n, d))
            self.consistent = consistent_rows(bE - rows_times(q, AE), bE, tau[:, eq])
            self.AE, self.bE, self.tauE = AE, bE, tau[:, eq]
        else:
            self.N = np.eye(d)
            q = np.zeros((n, d))
            self.AE, self.bE, self.tauE = np.zeros((0, d)), np.zeros((n, 0)), np.zeros((n, 0))
        self.p = self.N.shape[1]
        W = np.vstack([self.N, self.AI @ self.N])
        # a lifted row that is constant on the slice (rounding-level row of W) carries no constraint
        W[np.linalg.norm(W, axis=1) <= 64.0 * EPS * max(W.shape)] = 0.0
        self.W = np.ascontiguousarray(W)
        self.K = W.shape[0]
        Qf, _ = np.linalg.qr(W, mode="complete") if self.p else (np.eye(self.K), None)
        self.V = np.ascontiguousarray(Qf[:, self.p:].T)
        self.Qt = np.ascontiguousarray(np.hstack([q, rows_times(q, self.AI)]))
        self.Lo = np.ascontiguousarray(np.hstack([np.broadcast_to(core.lo, (n, d)), Li]))
        self.Hi = np.ascontiguousarray(np.hstack([np.broadcast_to(core.hi, (n, d)), Ui]))
        self.Beta = rows_times(self.Qt, self.V)
        # the box coordinates at their own tolerance (core.coord_tol), the interval rows at
        # their tau (unit rows: tau / ||a_j||)
        self.tol = np.ascontiguousarray(np.hstack([np.broadcast_to(core.coord_tol, (n, d)), tau_i]))
        self.metric = np.zeros(self.K)
        self.metric[:d] = 1.0
        self._pinv = None   # [A_E; A_I]^+, built on first use (feasible_points)

    def apply(self, X):
        """Points of S (x, the core's frame, one row each) to the lifted slice: ``y = (x, A_I x)``."""
        return np.hstack([X, rows_times(X, self.AI)])

    def invert(self, Y):
        """The methods' answers on the lifted slice (centers, vertices, points) back to x."""
        return np.ascontiguousarray(Y[:, : self.d])

    def feasible_points(self, k):
        """A point of the lifted slice for each row ``k`` (NaN rows: S is empty)."""
        if self.p == 0:   # one point: the equalities' solution, in the box (to the tolerance) or not
            inside = np.all((self.Qt[k] >= self.Lo[k] - self.tol[k]) & (self.Qt[k] <= self.Hi[k] + self.tol[k]), axis=1)
            return np.where(inside[:, None], np.clip(self.Qt[k], self.Lo[k], self.Hi[k]), np.nan)
        if self.AE.shape[0] == 0 and self.AI.shape[0] == 1:
            # a slab (one interval row, no equation) is never empty once its interval is clamped
            # to the row's reach: x = t sign(a) hi meets a^T x = t reach, the interval's midpoint
            # at t = mid / reach in [-1, 1] (the box is [-hi, hi] in the core's frame)
            d, a = self.d, self.AI[0]
            mid = 0.5 * (self.Lo[k, d] + self.Hi[k, d])
            reach = np.abs(a) @ self.Hi[0, :d]
            t = np.clip(mid / reach, -1.0, 1.0)
            X = t[:, None] * (np.sign(a) * self.Hi[0, :d])
            return self.apply(X)
        Y = np.full((k.size, self.K), np.nan)
        # first the minimum-norm solution of the rows at their values nearest the box's midpoint
        # (the equations' own, each interval's clamp of 0): where it lies in the lifted box it is a
        # point of the set, and no projection is needed (most rows of a release: 10 000 rows of
        # three intervals at d = 10 took 37 ms in the projection)
        found = self._min_norm_points(k, Y)
        todo = np.flatnonzero(~found)
        if todo.size == 0:
            return Y
        kt = k[todo]
        C = np.ascontiguousarray(0.5 * (self.Lo[kt] + self.Hi[kt]))
        Yt = np.full((todo.size, self.K), np.nan)
        state = np.zeros(todo.size, dtype=np.int64)
        its = np.zeros(todo.size, dtype=np.int64)
        Beta, Lo, Hi = self.Beta[kt], self.Lo[kt], self.Hi[kt]
        tol = 1e-11 * (1.0 + float(np.max(np.abs(self.Hi), initial=1.0)))
        row_blocks(todo.size, 1, lambda a, b: lifted.project_points_boxes(
            C[a:b], self.V, Beta[a:b], Lo[a:b], Hi[a:b], Yt[a:b], state[a:b], its[a:b], PROJECT_MAXIT, tol))
        Yt[state == EMPTY] = np.nan
        for j in np.flatnonzero((state != PROJECTED) & (state != EMPTY)):
            Yt[j] = self._lp_point(kt[j])
        Y[todo] = Yt
        return Y

    def _min_norm_points(self, k, Y):
        """Rows ``k`` whose minimum-norm point ``x = [A_E; A_I]^+ [b_E; t]``, t the clamp of 0 into
        each interval shrunk by 1e-6 of its width,
        lies in the lifted box exactly (every coordinate and every interval row, no tolerance)
        and meets the equations to their tau: those rows of ``Y`` get its lift. Returns the mask."""
        rows = np.vstack([self.AE, self.AI])
        if self._pinv is None:
            u, sv, vt = np.linalg.svd(rows, full_matrices=False)
            r = numerical_rank(sv, rows.shape)
            self._pinv = (vt[:r].T / sv[:r]) @ u[:, :r].T if r == rows.shape[0] else np.zeros((self.d, 0))
        if self._pinv.shape[1] == 0:   # dependent rows: their values need not be consistent
            return np.zeros(k.size, dtype=bool)
        d = self.d
        lo_i, hi_i = self.Lo[k, d:], self.Hi[k, d:]
        inset = 1e-6 * (hi_i - lo_i)   # a clamp a hair inside, so that rounding keeps A_I x within the interval
        t = np.hstack([self.bE[k], np.clip(0.0, lo_i + inset, hi_i - inset)])
        X = rows_times(t, self._pinv)
        Yk = self.apply(X)
        ok = np.all((Yk >= self.Lo[k]) & (Yk <= self.Hi[k]), axis=1)
        if self.AE.shape[0]:
            ok &= np.all(np.abs(rows_times(X, self.AE) - self.bE[k]) <= self.tauE[k], axis=1)
        Y[ok] = Yk[ok]
        return ok

    def _lp_point(self, j):
        """HiGHS on ``Lo <= Qt + W u <= Hi`` (the rows the projection left undecided), or, when
        that is infeasible, on the bounds widened by the tolerances (a set that is nonempty only
        at its tolerance), or NaN. The exact bounds first: the point starts the QPs, which keep
        whatever it misses of the slice."""
        from scipy.optimize import linprog  # here, not at import: an import does no work
        for widen in (0.0, 1.0):
            res = linprog(np.zeros(self.p), A_ub=np.vstack([self.W, -self.W]),
                          b_ub=np.concatenate([self.Hi[j] + widen * self.tol[j] - self.Qt[j],
                                               self.Qt[j] - self.Lo[j] + widen * self.tol[j]]),
                          bounds=[(None, None)] * self.p, method="highs",
                          options={"primal_feasibility_tolerance": 1e-10})
            if res.status == 0:
                return np.clip(self.Qt[j] + self.W @ res.x, self.Lo[j], self.Hi[j])
        return np.full(self.K, np.nan)

    def project(self, k, anchors, start, metric=None):
        """``argmin (x - a)^T P (x - a)`` over S for rows ``k`` (lifted), from feasible ``start``."""
        P = np.diag(self.metric) if metric is None else _lifted_metric(metric, self.K)
        Y = np.ascontiguousarray(start.copy())
        An = np.zeros((k.size, self.K))
        An[:, : self.d] = anchors
        status = np.zeros(k.size, dtype=np.int64)
        its = np.zeros(k.size, dtype=np.int64)
        row_blocks(k.size, 1, lambda a, b: lifted.project_metric_boxes(
            P, self.V, self.Beta[k[a:b]], self.Lo[k[a:b]], self.Hi[k[a:b]], An[a:b], Y[a:b], status[a:b], its[a:b],
            _QP_MAXIT, 1e-12))
        return Y, status == QP_OPTIMAL, its


def _lifted_metric(Pm, K):
    d = Pm.shape[0]
    P = np.zeros((K, K))
    P[:d, :d] = Pm
    return P


def clamp(core, Lc, Uc, tau, given=None):
    """The one clamp-and-snap rule of bounded-error rows (docs/theory.md §6.2): each interval
    clamped to what ``a_j^T x`` reaches over the box (the same set), then every interval no
    wider than ``2 tau`` (core.bound_tol; one inverted by at most that included: a bound at a
    box corner's value, or a gap within the tolerance) replaced by its midpoint, an equation.
    ``given`` (N, m), optional: the caller's own equations (``L == U`` as typed), kept as
    given, unclamped. Returns ``(L', U', empty, eq, slack)``: ``empty`` a row with an interval
    inverted beyond ``2 tau`` or a bound at ``+inf`` / ``-inf`` on the wrong side (a NaN row
    is not empty: its caller calls it invalid), ``eq`` the finite points, ``slack`` the
    half-width each snapped interval had (0 elsewhere), which the certificates add to their
    forward error. Idempotent: the dispatcher applies it again to the rows the set handed on."""
    reach = np.abs(core.A) @ core.hi
    with np.errstate(invalid="ignore", over="ignore"):
        Lp, Up = np.maximum(Lc, -reach), np.minimum(Uc, reach)
        if given is not None:
            Lp, Up = np.where(given, Lc, Lp), np.where(given, Uc, Up)
        finite = np.isfinite(Lp) & np.isfinite(Up)
        thin = finite & (np.abs(Up - Lp) <= 2.0 * tau)
        slack = np.where(thin, 0.5 * np.abs(Up - Lp), 0.0)
        mid = np.where(finite, 0.5 * Lp + 0.5 * Up, 0.0)
        empty = np.any((Lp > Up + 2.0 * tau) | (Lp == np.inf) | (Up == -np.inf), axis=1)
    Lp, Up = np.where(thin, mid, Lp), np.where(thin, mid, Up)
    return Lp, Up, empty, finite & (Lp == Up), slack


#: the routes of :func:`vertices_of`, as ``extras["route"]`` names them
ROUTE_SLAB = "two slices and the corners between"
ROUTE_WALK = "lifted edge walk"
ROUTE_CUTS = "cuts of the box in x"
ROUTE_ENUMERATE = "lifted basis enumeration"


def vertices_of(core, grp, kk, capacity, max_candidates=None):
    """The distinct vertices (their x parts) of the lifted slice of row ``kk`` and the route
    that found them, ``(P, route)``; P is None past ``capacity`` (or past
    ``max_candidates``, the exact method's option of that name, on the enumeration route).

    The routes, by cost (docs/theory.md §8.7):

    * the edge walk from an LP vertex, where the lifted slice has K <= 31 coordinates and
      the walk can prove it saw every vertex (every vertex simple);
    * without equation rows, the cuts of the box in x (:func:`chebcenter.kernels.cuts.cut_vertices`):
      about 13 ns times ``(number of cuts) 4^d``, where the enumeration visits
      ``C(K, r) 2^(K - r)`` (basis, bound pattern) pairs; the cheaper of the two by the cost
      model below runs (a release over k = 8 classes lifts d = 6 to K = 34: 8.6e7 candidates,
      20 s a row, against 56 cuts of about 250 vertices, 3 ms);
    * the basis-by-basis enumeration of the lifted slice (as for box slices,
      :func:`chebcenter.methods.exact.slice_vertices`), or None at once when it would visit
      more than ``max_candidates`` pairs (a release over k = 9 classes lifts d = 8 to K = 44,
      4.5e10 candidates: hours of work, where TOO_LARGE is the useful answer)."""
    V, beta, lo, hi = grp.V, grp.Beta[kk], grp.Lo[kk], grp.Hi[kk]
    if _is_slab(core, grp):
        return _slab_vertices(core, grp, kk, capacity), ROUTE_SLAB
    if grp.K <= 31:
        x0 = np.empty(grp.K)
        if lp_max(V, beta, lo, hi, np.sin(1.0 + 2.718281828 * np.arange(grp.K)), x0) == RANGES_OK:
            Vt, count, code = pivot_vertices(V, beta, lo, hi, x0, capacity, 100.0 * core.box_tol, 1e-9)
            if code == PIVOT_OK:
                return np.ascontiguousarray(Vt[:count, : core.d]), ROUTE_WALK
            if code == PIVOT_TOO_MANY:
                return None, ROUTE_WALK
    enumeration = candidate_count(grp.K, V.shape[0])
    if grp.AE.shape[0] == 0 and core.d <= _CUTS_MAX_D:
        G, h, tol = _cut_rows(core, grp, kk)
        cuts = _cuts_ns(G.shape[0], core.d)
        if cuts < _ENUMERATION_NS_PER_CANDIDATE * enumeration:
            # the candidate budget holds for the cuts too, in the same time: past it, TOO_LARGE
            if max_candidates is not None and cuts > _ENUMERATION_NS_PER_CANDIDATE * max_candidates:
                return None, ROUTE_CUTS
            P, count, code = cut_vertices(G, h, tol, core.lo, core.hi, max(capacity, 2 ** core.d))
            if code == CUTS_OK and 0 < count <= capacity:
                return np.ascontiguousarray(distinct_rows(P[:count], _grid(core.lo, core.hi))), ROUTE_CUTS
            if code == CUTS_TOO_MANY or count > capacity:
                return None, ROUTE_CUTS
            # no vertex, on a set the projection found a point of: the routes disagree at the
            # tolerance, and the enumeration below decides (an empty vertex list would make
            # that point the answer, radius 0)
    if max_candidates is not None and enumeration > max_candidates:
        return None, ROUTE_ENUMERATE
    Vt, count = enumerate_vertices(V, beta, lo, hi, capacity, grp.tol[kk], 1e-10)
    if count < 0:
        return None, ROUTE_ENUMERATE
    return np.ascontiguousarray(distinct_rows(Vt[:count], _grid(lo, hi))[:, : core.d]), ROUTE_ENUMERATE


#: the slab route visits the box's 2^d corners
SLAB_MAX_D = 16


def _slab_vertices(core, grp, kk, capacity):
    """The vertices of a slab ``{x in box : l <= a^T x <= u}`` (one interval row, no
    equation), or None past ``capacity``: a vertex has d active constraints, so it is a box
    corner with ``l <= a^T x <= u`` (to the tolerance) or the point where a box edge crosses
    ``a^T x = l`` or ``= u`` (:func:`chebcenter.kernels.cuts.slab_vertices`). A crossing
    within rounding of a corner repeats it; the repeats change no ball, and the public
    vertex list merges them (:func:`interval_vertices`)."""
    d = core.d
    P, count = slab_vertices(np.ascontiguousarray(grp.AI[0]), core.lo, core.hi, grp.Lo[kk, d], grp.Hi[kk, d],
                             grp.tol[kk, d])
    return None if count > capacity else P[:count]


#: the cuts start from the box's 2^d corners
_CUTS_MAX_D = 16
#: the cost model of the two routes after the edge walk, in nanoseconds on this machine's
#: kind (measured, one core): the cuts take about 13 ns per cut and per 4^d (their vertex
#: pairs grow like the square of the vertices, which grow like 2^d times a factor of the
#: cuts: a k = 8 release at d = 6, 56 cuts, 3 ms; k = 10 at d = 10, 90 cuts, 1.2 s; k = 6 at
#: d = 10, 30 cuts, about 0.1 s, where the model says 0.4 s), the enumeration about 230 ns per
#: (basis, pattern) candidate with its pruning (8.6e7 candidates in 20 s)
_CUTS_NS_PER_CUT_4D = 13.0
_ENUMERATION_NS_PER_CANDIDATE = 230.0


def _cuts_ns(n_cuts, d):
    """The cuts' cost model: nanoseconds for ``n_cuts`` cuts of the box in d dimensions."""
    return _CUTS_NS_PER_CUT_4D * n_cuts * 4.0 ** d


def _is_slab(core, grp):
    """One interval row and no equation, in few enough dimensions for the slab route."""
    return grp.AE.shape[0] == 0 and grp.AI.shape[0] == 1 and core.d <= SLAB_MAX_D


def listing_within(core, grp, max_candidates):
    """Is listing the group's vertices cheap, by a cost known before any work, as the
    candidate count ``C(d, r) 2^(d - r)`` is for a slice? True for one interval row (the slab
    route: the box's 2^d corners, d <= SLAB_MAX_D), where the enumeration's candidate count
    ``C(K, r) 2^(K - r)`` is within ``max_candidates``, or (no equation) where the cuts' cost
    model is within the same time. The edge walk, tried first where K <= 31, is usually
    cheaper still, but its cost grows with the vertex count, which nothing gives in advance:
    a thin set (float32 bounds, d = 13, four rows: 2e7 candidates) walks 9 ms a row to auto's
    20 000-vertex limit before giving up, on 80 % of its rows."""
    if grp.p == 0 or _is_slab(core, grp) or candidate_count(grp.K, grp.V.shape[0]) <= max_candidates:
        return True
    # at most two cuts an interval row (vertices_of leaves out a side beyond the row's reach)
    return (grp.AE.shape[0] == 0 and core.d <= _CUTS_MAX_D
            and _cuts_ns(2 * grp.AI.shape[0], core.d) <= _ENUMERATION_NS_PER_CANDIDATE * max_candidates)


def _grid(lo, hi):
    """The de-duplication grid of vertices (per coordinate)."""
    return np.minimum(1e-11, np.maximum(1e-3 * (hi - lo), 1e-300))


def _cut_rows(core, grp, kk):
    """The interval rows of row ``kk`` as cuts ``g^T x <= h`` (unit normals) with their
    tolerances; a side at or beyond what its row reaches over the box cuts nothing and is
    left out."""
    d = core.d
    AI = grp.AI
    Li, Ui, tol = grp.Lo[kk, d:], grp.Hi[kk, d:], grp.tol[kk, d:]
    reach = np.abs(AI) @ core.hi
    up = Ui < reach
    down = Li > -reach
    G = np.ascontiguousarray(np.vstack([AI[up], -AI[down]]))
    h = np.ascontiguousarray(np.concatenate([Ui[up], -Li[down]]))
    return G, h, np.ascontiguousarray(np.concatenate([tol[up], tol[down]]))


def group_ranges(grp, k):
    """The lifted ranges of the rows ``k`` of one group (only the first d columns are x's)."""
    lo_, up_ = np.full((k.size, grp.K), np.nan), np.full((k.size, grp.K), np.nan)
    status = np.zeros(k.size, dtype=np.int64)
    if grp.p == 0:   # one point: the equalities' solution, when it meets the bounds (to the tolerance)
        Qt, Lo, Hi, tol = grp.Qt[k], grp.Lo[k], grp.Hi[k], grp.tol[k]
        inside = np.all((Qt >= Lo - tol) & (Qt <= Hi + tol), axis=1)
        point = np.clip(Qt, Lo, Hi)
        status[~inside] = RANGES_EMPTY
        return point, point.copy(), status
    V, Beta, Lo, Hi = grp.V, grp.Beta[k], grp.Lo[k], grp.Hi[k]
    row_blocks(k.size, 1, lambda a, b: lifted.range_boxes(V, Beta[a:b], Lo[a:b], Hi[a:b], lo_[a:b], up_[a:b],
                                                         status[a:b]))
    return lo_, up_, status


def interval_vertices(core, Lc, Uc, tau, capacity):
    """The vertices (x, the core's frame) of ``{x in box : Lc <= A x <= Uc}`` for one row
    (``Lc``, ``Uc`` of shape (1, m)): an empty array for an empty set, None past ``capacity``."""
    Lp, Up, empty, eq, _ = clamp(core, Lc, Uc, tau)
    if empty[0]:
        return np.zeros((0, core.d))
    grp = LiftedGroup(core, np.zeros(1, dtype=np.int64), eq[0], Lp, Up, tau, vacuous=vacuous_rows(core, Lp, Up, eq)[0])
    k = np.flatnonzero(grp.consistent)
    Y0 = grp.feasible_points(k) if k.size else np.zeros((0, grp.K))
    if k.size == 0 or not np.all(np.isfinite(Y0)):
        return np.zeros((0, core.d))
    if grp.p == 0:
        return grp.invert(Y0)
    P, _ = vertices_of(core, grp, 0, capacity)
    if P is not None and P.shape[0]:
        return distinct_rows(P, _grid(core.lo, core.hi))
    return P if P is None else grp.invert(Y0)


def vacuous_rows(core, Lp, Up, eq):
    """Interval rows that constrain nothing: clamped to the whole of what ``a_j^T x`` reaches
    over the box (a one-sided row's missing side, a label-only release's pairs without the
    label). Dropping them leaves the set as it is; when every interval row of a batch row is
    vacuous, its first one is kept (a lifting has at least one interval row)."""
    reach = np.abs(core.A) @ core.hi
    vac = ~eq & (Lp <= -reach) & (Up >= reach)
    every = np.all(vac | eq, axis=1) & np.any(~eq, axis=1)
    if every.any():
        first = np.argmax(~eq[every], axis=1)
        vac[np.flatnonzero(every), first] = False
    return vac


def groups(core, Lp, Up, tau, eq, empty):
    """The non-empty rows of a batch grouped by their pattern of equality and vacuous rows
    (:func:`vacuous_rows`, left out of the lifting), each lifted: yields ``(rows, LiftedGroup)``."""
    live = np.flatnonzero(~empty)
    vac = vacuous_rows(core, Lp, Up, eq)
    code = eq.astype(np.int8) + 2 * vac.astype(np.int8)
    if live.size and np.all(code[live] == code[live[0]]):   # one pattern (a release's rows): no sort
        patterns, inverse = code[live[:1]], np.zeros(live.size, dtype=np.int64)
    else:
        patterns, inverse = np.unique(code[live], axis=0, return_inverse=True)
    for g in range(patterns.shape[0]):
        rows = live[inverse.ravel() == g]
        yield rows, LiftedGroup(core, rows, patterns[g] == 1, Lp[rows], Up[rows], tau[rows], vacuous=patterns[g] == 2)
