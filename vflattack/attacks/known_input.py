r"""Known-input attack on distance-preserving perturbation (docs/theory.md §4; Giannella, Liu, Kargupta).

Records are ROWS (the paper uses columns). The owner releases
``Y[pi(i)] = M_T x_i (+ v_T)`` with ``M_T`` orthogonal and ``pi`` a secret
permutation; the attacker knows a few original records ``X_known`` but not
which released rows they became.

1. :func:`link` -- Algorithm 1: the maximal uniquely valid subset of the known
   records, level-wise from the largest, each level's subsets tested by the
   depth-first search with pruning of Algorithms 2-3 (always extend the smallest
   unassigned index, so no assignment is counted twice). A pair (i, j) is
   consistent when lengths (without translation) and pairwise distances agree
   within ``tol``; a node budget stops the worst case (``complete=False``).
2. :func:`sample_orthogonal` -- Algorithm 4: ``M = Y_q^T (X_q^T)^+ + V P U^T`` with
   ``U``, ``V`` orthonormal bases of the complements of the known records' and
   their images' spans, ``P`` Haar-uniform on O(n - k): a uniform draw from
   ``{M orthogonal : M x_i = y_i}``.
3. :func:`breach_probability` -- ``rho(x, eps) = Pr(||M^T y_j - x|| <= eps ||x||)`` in
   closed form from the attacker's information only: with ``N = n - k``,
   ``R = ||V^T y_j||``, ``delta = eps ||y_j||``: 1 if N = 0, R = 0 or delta >= 2R;
   1/2 if N = 1; else with ``theta0 = 2 arcsin(delta / (2R))``,
   ``rho = 1/2 I_{sin^2 theta0}((N-1)/2, 1/2)`` (theta0 <= pi/2) or one minus that.
4. :func:`known_input_attack` -- link, sample M, score every released row by rho,
   estimate ``xhat_j = M^T y_j``; the best row is the one of largest rho.

On a rounded or noisy release (``noise=delta``: every released coordinate is off by at
most delta, e.g. 0.5 10^-K for K decimals; ``noise="infer"`` reads K off the data) a length
moves by at most ``delta sqrt(n)`` and a distance by at most ``2 delta sqrt(n)``: linking widens
its tolerances by exactly that. M is then the orthogonal Procrustes fit over the linked pairs
(:func:`fit_orthogonal`, least squares; with fewer links than features the unfitted
complement is drawn as in Algorithm 4), and rho is computed for the radius left once the
released row's own noise is taken off, ``eps ||y_j|| - delta sqrt(n)``; the error of the fitted
M is not in it, so rho is then approximate (``KnownInputResult.rho_note`` says so).

With a translation (``translation=True``) lengths are not preserved: link on
distances only, then work relative to a linked anchor pair ``(x_a, y_a)``:
``xhat = x_a + M^T (y_j - y_a)`` and rho is relative to ``||x - x_a||``. Linking
then has no length filter, so it costs O(m^2 n) in the worst case (51 s for
m = 10 992, n = 16 here, against 12 ms without translation).

In VFL (:func:`attack_orthogonal_defence`): when d <= k - 1 the white-box
reconstructions under the disclosed ``W_pas R`` are exactly ``R^T x``, so a few
known passive records undo the defence.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import InvalidInputError, as_2d
from ..release import decimals_of

__all__ = ["DefenceBreach", "KnownInputResult", "LinkResult", "attack_orthogonal_defence", "breach_probability",
           "default_tol", "fit_orthogonal", "infer_decimals", "known_input_attack", "link", "sample_orthogonal"]


@dataclass(frozen=True)
class LinkResult:
    """The maximal uniquely valid subset: ``known[i]`` (row of X_known) is ``perturbed[i]`` (row of Y)."""

    known: np.ndarray
    perturbed: np.ndarray
    complete: bool
    nodes: int
    tol: float
    noise: float = 0.0   # per-coordinate bound on the release's noise the tolerances allow for


def infer_decimals(Y: Any, max_decimals: int = 12) -> int | None:
    """The fewest decimals K with every entry of ``Y`` a multiple of 10^-K (to floating-point
    accuracy), or None when there are more than ``max_decimals`` (a full-precision release).

    Examples
    --------
    >>> infer_decimals([[0.25, 1.5], [3.0, 0.75]]), infer_decimals([[1 / 3]])
    (2, None)
    """
    return decimals_of(Y, max_decimals)


def _noise_bound(noise: Any, Y: np.ndarray) -> float:
    if noise is None:
        return 0.0
    if isinstance(noise, str):
        if noise != "infer":
            raise InvalidInputError(f"noise must be a number >= 0 or 'infer'; got {noise!r}")
        K = infer_decimals(Y)
        return 0.0 if K is None else 0.5 * 10.0 ** -K
    if not (np.isfinite(noise) and noise >= 0):
        raise InvalidInputError(f"noise must be a finite number >= 0 (a bound per coordinate); got {noise!r}")
    return float(noise)


def default_tol(X_known: np.ndarray, Y: np.ndarray) -> float:
    """``1e-9 * sqrt(n) * max record norm``: rotation round-off is ~1e-16 of that."""
    scale = max(float(np.max(np.linalg.norm(X_known, axis=1))), float(np.max(np.linalg.norm(Y, axis=1))), 1e-300)
    return 1e-9 * np.sqrt(X_known.shape[1]) * scale


class _Budget(Exception):
    pass


def _uniquely_valid(I, X, Y, cand, tol, state):
    """Algorithms 2-3: number of valid assignments of I (stopping at 2) and the first one.

    A node extends the smallest unassigned index of I; its candidates (rows of
    Y with a matching length, precomputed in ``cand``) are filtered against every
    assigned pair at once (vectorised distance check).
    """
    found = []
    beta: dict = {}

    def dfs(pos):
        state["nodes"] += 1
        if state["nodes"] > state["max_nodes"]:
            raise _Budget
        if pos == len(I):
            found.append(dict(beta))
            return
        i = I[pos]
        js = cand[i]
        if beta:
            used = np.fromiter(beta.values(), dtype=np.int64)
            js = js[~np.isin(js, used)]
            for i1, j1 in beta.items():
                if js.size == 0:
                    break
                gap = np.abs(np.linalg.norm(Y[js] - Y[j1], axis=1) - np.linalg.norm(X[i1] - X[i]))
                js = js[gap <= tol]
        for j in js:
            beta[i] = int(j)
            dfs(pos + 1)
            del beta[i]
            if len(found) > 1:
                return

    dfs(0)
    return len(found), (found[0] if found else None)


def link(X_known: Any, Y: Any, tol: float | None = None, max_nodes: int | None = None,
         translation: bool = False, noise: float = 0.0) -> LinkResult:
    """Algorithm 1: the maximal uniquely valid subset of the known records and its assignment.

    Parameters
    ----------
    X_known : array_like, shape (a, n)
    Y : array_like, shape (m, n)
    tol : float, optional
        Distance tolerance (default :func:`default_tol`).
    max_nodes : int, optional
        Search-node budget (default ``10**6``); when it runs out the best
        subset found so far is returned with ``complete=False``.
    translation : bool
        Link on pairwise distances only (y = M x + v).
    noise : float
        A bound on every released coordinate's noise (0.5 10^-K for a release rounded to K
        decimals): lengths must then agree within ``tol + noise sqrt(n)`` and distances
        within ``tol + 2 noise sqrt(n)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0], [2, 0], [1, 1], [1, -1]])
    >>> Y = X @ np.array([[0.0, -1], [1, 0]]).T     # 90 degrees clockwise, identity permutation
    >>> r = link(X[:3], Y)                           # {1,2,3} is not uniquely valid, {1,2} is
    >>> r.known.tolist(), r.perturbed.tolist()
    ([0, 1], [0, 1])
    """
    X = as_2d("X_known", X_known)
    Y = as_2d("Y", Y, n_cols=X.shape[1])
    tol = default_tol(X, Y) if tol is None else float(tol)
    if not tol >= 0:
        raise InvalidInputError(f"tol must be >= 0; got {tol!r}")
    noise = _noise_bound(noise, Y)
    spread = noise * np.sqrt(X.shape[1])   # how far the noise can move a length
    state = {"nodes": 0, "max_nodes": int(max_nodes) if max_nodes is not None else 10**6}
    ynorm = np.linalg.norm(Y, axis=1)
    if translation:  # lengths are not preserved: every row is a candidate
        cand = {i: np.arange(Y.shape[0]) for i in range(X.shape[0])}
    else:
        order = np.argsort(ynorm, kind="stable")
        sorted_norms = ynorm[order]
        cand = {}
        for i, xn in enumerate(np.linalg.norm(X, axis=1)):
            lo = np.searchsorted(sorted_norms, xn - tol - spread, side="left")
            hi = np.searchsorted(sorted_norms, xn + tol + spread, side="right")
            cand[i] = np.sort(order[lo:hi])
    a = X.shape[0]
    try:
        for size in range(a, 0, -1):
            for I in itertools.combinations(range(a), size):
                count, beta = _uniquely_valid(list(I), X, Y, cand, tol + 2 * spread, state)
                if count == 1:
                    known = np.array(I, dtype=np.int64)
                    return LinkResult(known, np.array([beta[i] for i in I], dtype=np.int64), True, state["nodes"], tol,
                                      noise)
    except _Budget:
        return LinkResult(np.zeros(0, np.int64), np.zeros(0, np.int64), False, state["nodes"], tol, noise)
    return LinkResult(np.zeros(0, np.int64), np.zeros(0, np.int64), True, state["nodes"], tol, noise)


def _complement(B: np.ndarray, n: int, rtol: float = 1e-10):
    """Orthonormal bases of span(rows of B) and of its orthogonal complement in R^n."""
    if B.shape[0] == 0:
        return np.zeros((n, 0)), np.eye(n)
    U, s, _ = np.linalg.svd(B.T, full_matrices=True)
    k = int(np.sum(s > rtol * s.max())) if s.size else 0
    return U[:, :k], U[:, k:]


def _haar(N: int, rng: Any) -> np.ndarray:
    """A Haar-uniform draw from O(N): the Q of a Gaussian matrix, columns signed by diag(R)."""
    Q, Rr = np.linalg.qr(np.random.default_rng(rng).standard_normal((N, N)))
    return Q * np.sign(np.where(np.diag(Rr) == 0, 1.0, np.diag(Rr)))


def sample_orthogonal(X_q: Any, Y_q: Any, rng: Any = 0) -> np.ndarray:
    """Algorithm 4: a uniform draw from ``{M orthogonal : M x_i = y_i}`` (rows x_i, y_i).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import ortho_group
    >>> M_T = ortho_group.rvs(4, random_state=0); X_q = np.eye(4)[:2] + 0.1
    >>> M = sample_orthogonal(X_q, X_q @ M_T.T, rng=1)
    >>> bool(np.allclose(M @ X_q.T, M_T @ X_q.T) and np.allclose(M @ M.T, np.eye(4)))
    True
    """
    Xq = as_2d("X_q", X_q)
    Yq = as_2d("Y_q", Y_q, n_cols=Xq.shape[1], n_rows=Xq.shape[0])
    n = Xq.shape[1]
    _, U_c = _complement(Xq, n)
    _, V_c = _complement(Yq, n)
    if U_c.shape[1] != V_c.shape[1]:
        raise InvalidInputError("X_q and Y_q span subspaces of different dimension: they are not related by an "
                                "orthogonal map (check the linking tolerance)")
    N = U_c.shape[1]
    M = Yq.T @ np.linalg.pinv(Xq.T) if Xq.shape[0] else np.zeros((n, n))
    if N:
        M = M + V_c @ _haar(N, rng) @ U_c.T
    return M


def fit_orthogonal(X_q: Any, Y_q: Any, rng: Any = 0) -> np.ndarray:
    """The orthogonal M that fits noisy pairs ``y_i ~ M x_i`` best in least squares
    (orthogonal Procrustes), with its unfitted part drawn as in Algorithm 4.

    ``min ||M X_q^T - Y_q^T||_F`` over orthogonal M is attained exactly by the M with
    ``M V_k = U_k`` for ``C = Y_q^T X_q = U S V^T`` (k its rank): ``M = U_k V_k^T + U_c P V_c^T``
    with ``P`` Haar-uniform on O(n - k), the complements' map left free by the fit. With n
    linearly independent pairs M is the Procrustes solution; with exact pairs it maps each
    x_i to y_i, as :func:`sample_orthogonal` does.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import ortho_group
    >>> M_T = ortho_group.rvs(3, random_state=0); X_q = np.random.default_rng(1).random((5, 3))
    >>> M = fit_orthogonal(X_q, np.round(X_q @ M_T.T, 4))
    >>> bool(np.abs(M - M_T).max() < 1e-3 and np.allclose(M @ M.T, np.eye(3)))
    True
    """
    Xq = as_2d("X_q", X_q)
    Yq = as_2d("Y_q", Y_q, n_cols=Xq.shape[1], n_rows=Xq.shape[0])
    n = Xq.shape[1]
    U, s, Vt = np.linalg.svd(Yq.T @ Xq)
    k = int(np.sum(s > 1e-10 * s.max())) if s.size and s.max() > 0 else 0
    M = U[:, :k] @ Vt[:k]
    if k < n:
        M = M + U[:, k:] @ _haar(n - k, rng) @ Vt[k:]
    return M


def _rho(N: int, R: np.ndarray, delta: np.ndarray) -> np.ndarray:
    out = np.ones_like(R)
    if N == 0:
        return out
    live = (R > 0) & (delta < 2 * R)
    if N == 1:
        out[live] = 0.5
        return out
    from scipy.special import betainc  # here, not at import: importing vflattack loads no scipy.special

    theta = 2 * np.arcsin(np.clip(delta[live] / (2 * R[live]), 0, 1))
    half = 0.5 * betainc((N - 1) / 2.0, 0.5, np.sin(theta) ** 2)
    out[live] = np.where(theta <= np.pi / 2, half, 1.0 - half)
    return out


def breach_probability(X_q: Any, Y_q: Any, Y: Any, epsilon: float, anchor: Any = None,
                       noise: float = 0.0) -> np.ndarray:
    """``rho(x_j, eps)`` for every row of Y, from the attacker's view only (module docstring).

    ``anchor = (x_a, y_a)`` measures everything relative to a linked anchor pair
    (translation case): ``delta = eps ||y_j - y_a||``. ``noise`` (a bound per released
    coordinate) takes the released row's own noise off the radius:
    ``delta = max(eps ||y_j|| - noise sqrt(n), 0)``.

    Examples
    --------
    >>> import numpy as np
    >>> Xq = np.array([[1.0, 0.0, 0.0]])
    >>> breach_probability(Xq, Xq, np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), 0.1).round(4).tolist()
    [0.0318, 1.0]
    """
    Xq = as_2d("X_q", X_q)
    Yq = as_2d("Y_q", Y_q, n_cols=Xq.shape[1], n_rows=Xq.shape[0])
    Yall = as_2d("Y", Y, n_cols=Xq.shape[1])
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise InvalidInputError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
    if anchor is not None:
        ya = np.asarray(anchor[1], dtype=float)
        Yq, Yall = Yq - ya, Yall - ya
    _, V_c = _complement(Yq, Yq.shape[1])
    R = np.linalg.norm(Yall @ V_c, axis=1)
    scale = np.linalg.norm(Yall, axis=1)
    R = np.where(R <= 1e-12 * np.maximum(scale, 1e-300), 0.0, R)
    if not (np.isfinite(noise) and noise >= 0):
        raise InvalidInputError(f"noise must be a finite number >= 0; got {noise!r}")
    return _rho(V_c.shape[1], R, np.maximum(epsilon * scale - noise * np.sqrt(Yall.shape[1]), 0.0))


@dataclass(frozen=True)
class KnownInputResult:
    """``best`` row of Y, its ``estimate`` (n,), ``rho`` (m,), every row's ``estimates`` (m, n),
    ``order`` (rows by decreasing rho), the ``link``, the sampled ``M`` and the ``seconds``."""

    best: int
    estimate: np.ndarray
    rho: np.ndarray
    estimates: np.ndarray
    order: np.ndarray
    link: LinkResult
    M: np.ndarray
    seconds: float
    anchor: Any = None
    #: why rho is approximate ("" when it is the paper's closed form on exact links)
    rho_note: str = ""


def known_input_attack(X_known: Any, Y: Any, epsilon: float = 0.07, rng: Any = 0, *, tol: float | None = None,
                       max_nodes: int | None = None, translation: bool = False, noise: Any = None) -> KnownInputResult:
    """Link the known records, sample M, and estimate every released record (module docstring).

    Linked rows have rho = 1 (their originals are known); the best row is
    chosen among the others. Raises if no known record can be linked. ``noise`` is a
    bound on every released coordinate's noise, or ``"infer"`` (half a unit of the
    release's last decimal, read off the data; 0 at full precision): linking allows for
    it and M is the Procrustes fit (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import ortho_group
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((50, 5)); M_T = ortho_group.rvs(5, random_state=1); perm = rng.permutation(50)
    >>> Y = np.empty_like(X); Y[perm] = X @ M_T.T
    >>> att = known_input_attack(X[:5], Y, epsilon=0.07)          # 5 known records span R^5
    >>> bool(np.allclose(att.estimates[perm], X, atol=1e-8))
    True
    """
    t0 = time.perf_counter()
    Xk = as_2d("X_known", X_known)
    Yall = as_2d("Y", Y, n_cols=Xk.shape[1])
    delta = _noise_bound(noise, Yall)
    lk = link(Xk, Yall, tol=tol, max_nodes=max_nodes, translation=translation, noise=delta)
    if lk.known.size == 0:
        raise InvalidInputError("no known record could be linked uniquely (raise tol, or max_nodes if "
                                f"the search stopped: complete={lk.complete}; a rounded release needs noise=)")
    Xq, Yq = Xk[lk.known], Yall[lk.perturbed]
    anchor = None
    if translation:
        anchor = (Xq[0], Yq[0])
        Xq, Yq = Xq[1:] - anchor[0], Yq[1:] - anchor[1]
    note = ""
    if delta > 0:   # noisy links: the least-squares fit, and rho on the fitted images of the links
        M = fit_orthogonal(Xq, Yq, rng)
        Yq = Xq @ M.T
        note = (f"approximate: rho allows for the released row's own noise (|w| <= {delta:g} per coordinate) but "
                "not for the error of M fitted on noisy links")
    else:
        M = sample_orthogonal(Xq, Yq, rng)
    if translation:  # Xq, Yq are already relative to the anchor pair
        estimates = anchor[0] + (Yall - anchor[1]) @ M
        rho = breach_probability(Xq, Yq, Yall - anchor[1], epsilon, noise=delta)
    else:
        estimates = Yall @ M  # rows: (M^T y_j)^T
        rho = breach_probability(Xq, Yq, Yall, epsilon, noise=delta)
    rho = rho.copy()
    rho[lk.perturbed] = 1.0
    unlinked = np.setdiff1d(np.arange(Yall.shape[0]), lk.perturbed)
    if unlinked.size == 0:
        raise InvalidInputError("every released row is linked: nothing left to estimate")
    best = int(unlinked[np.argmax(rho[unlinked])])
    order = unlinked[np.argsort(-rho[unlinked], kind="stable")]
    return KnownInputResult(best, estimates[best], rho, estimates, order, lk, M, time.perf_counter() - t0, anchor, note)


@dataclass(frozen=True)
class DefenceBreach:
    """The known-input attack on the orthogonal defence (see :func:`attack_orthogonal_defence`)."""

    before: np.ndarray       # the white-box reconstructions under the disclosed weights, (N, d)
    after: np.ndarray        # after undoing the estimated rotation, (N, d)
    attack: KnownInputResult
    rotation_error: float    # ||M - R^T||_F when the true R is given, else nan


def attack_orthogonal_defence(disclosed: Any, scores: Any, Y: Any, X_known: Any, *, epsilon: float = 0.07,
                              rng: Any = 0, R_true: Any = None, tol: float | None = None) -> DefenceBreach:
    """Undo the orthogonal defence of docs/theory.md §3 with a few known passive records.

    When rank(J W_pas) = d (d <= k - 1), the white-box reconstruction under the
    disclosed ``W_pas R`` is exactly ``R^T x`` for every prediction: a
    distance-preserving perturbation of the passive records. Knowing a few
    passive records (not which predictions they are), the active party links
    them, samples ``M ~ R^T`` and maps every reconstruction back with ``M^T``.
    With as many linked records as passive features, M is exactly ``R^T``.
    """
    from ..system import scores_to_system

    system = scores_to_system(disclosed, scores, Y)
    sl = disclosed.box_slice
    d = sl.d
    if sl.rank < d:
        raise InvalidInputError(
            f"rank(J W_pas) = {sl.rank} < d = {d}: the reconstructions are not an orthogonal "
            "image of the records (they also lose Null(A)), so the known-input attack does not apply; it needs "
            "d <= k - 1 passive features")
    # the unconstrained least-squares (ESA) reconstruction A^+ b' from chebcenter's factors:
    # under the defence the disclosed slice often misses the box, where centers() would
    # report INFEASIBLE, and this attack needs the linear map on every row
    Z = system.B @ sl.A_pinv.T
    ok = system.valid
    att = known_input_attack(X_known, Z[ok], epsilon=epsilon, rng=rng, tol=tol)
    after = np.full_like(Z, np.nan)
    after[ok] = att.estimates
    err = float(np.linalg.norm(att.M - np.asarray(R_true).T)) if R_true is not None else float("nan")
    return DefenceBreach(Z, after, att, err)
