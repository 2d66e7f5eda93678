"""The PRIVEE and PRIVEE++ recovery: the attack that inverts a defence's map from one batch
(docs/vflattack.md, "PRIVEE").

The defence itself (:func:`vflattack.release.privee_publish`) is a release and lives with the
releases; inverting it is what an adversary does, so it lives here, in the attacks layer. On
import this module registers :func:`recover_privee` with the release table
(:func:`vflattack.release.register_recovery`): :func:`vflattack.release.release_to_bounds` of a
``privee`` or ``priveeplus`` release recovers the scores through it, and
:func:`vflattack.release.fitting_kinds` tries it on rows that do not sum to 1, without the
release layer importing the attacks.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._validate import InvalidInputError
from ..release import register_recovery

__all__ = ["recover_privee"]

def recover_privee(U) -> tuple:
    """Invert a PRIVEE or PRIVEE++ release of one batch (docs/vflattack.md, "PRIVEE").

    The map keeps each row's order (``(M s)_i = (1 + n_i) s_i - 2/k`` grows with i when s is
    sorted ascending and n is), so sorting each published row gives ``U_sorted = S_sorted
    M^T``. Every row of S sums to 1, so ``U_sorted w = 1`` for ``w = M^-T 1``: one least
    squares problem over the batch, k unknowns, full rank for N >= k generic rows. Then
    ``M^T w = 1`` with ``M = I - (2/k) 1 1^T + diag(n)`` gives ``n_i = (1 - (w_i - (2/k) sum
    w)) / w_i``, and each row is ``M^-1 u_sorted``, put back in its classes' places.

    Returns ``(S, half, n)``: the recovered scores (N, k), each one's half-width (N, k),
    and the recovered diagonal. PRIVEE++'s diagonal need not grow with i (its scales
    shrink as its cells rise), so the map may reorder close scores within a run of places
    where it does not grow; every order of such a run that keeps the row's scores summing
    to 1 and rising with the rank is tried, and a score's interval spans all that are
    consistent. Beyond that, the half-width is 30 times the error measured by
    refitting (:func:`_privee_delta`): the map is fitted again on 16 copies of the batch,
    each without a random quarter of its rows and with every value moved at random by its
    rounding (float32: 2^-24), and the largest change of a recovered score, plus the
    rounding of u itself through ``|M^-1|``, is the error, ``delta``. On saturated or
    near-uniform batches U_sorted is ill-conditioned, the refits disagree and delta grows:
    the audit then says less, rather than something false. It is a measured estimate, not a
    proof (a worst-case bound through sigma_min(U_sorted) is 10^3 to 10^6 times the real
    error on float32 releases; the margin 30 is measured, see ``_PRIVEE_MARGIN``); the
    tests hold every record inside it, on float32 and float64 releases, k = 2 to 10,
    saturated, near-uniform or with duplicated rows.

    Raises
    ------
    InvalidInputError
        If the batch has fewer than k + 1 rows (the system for w has k unknowns, and k rows
        fit some map exactly, right or wrong), or its rows do not determine w
        (rank-deficient: e.g. repeated rows).
    """
    U = np.asarray(U, dtype=float)
    if U.ndim != 2:
        raise InvalidInputError(f"a PRIVEE release must be a 2-D batch (N, k); got shape {U.shape}")
    N, k = U.shape
    finite = np.all(np.isfinite(U), axis=1)
    if finite.sum() < k + 1:
        raise InvalidInputError(f"PRIVEE's map is recovered from the batch: it needs at least k + 1 = {k + 1} rows "
                                f"with finite scores (one draw per batch, k unknowns, and one row more to check the "
                                f"fit: k rows fit some map exactly, right or wrong); got {int(finite.sum())}")
    order = np.argsort(np.where(finite[:, None], U, 0.0), axis=1, kind="stable")
    Us = np.take_along_axis(U, order, axis=1)
    Uf = Us[finite]
    w, _, rank, _ = np.linalg.lstsq(Uf, np.ones(Uf.shape[0]), rcond=None)
    if rank < k or np.any(w == 0):
        raise InvalidInputError(f"the PRIVEE batch does not determine its map: its sorted rows have rank {rank} < "
                                f"k = {k} (repeated or too few distinct rows)")
    eta = 2.0 ** -24 if _is_float32(U[finite]) else 8 * np.finfo(float).eps
    w, fitted = _privee_fit(Uf, w, eta, k)
    n = (1.0 - (w - (2.0 / k) * w.sum())) / w
    delta, dn = _privee_delta(fitted, w, n, eta, k)
    # each class's interval spans every consistent assignment; a row with none is dropped
    lo_s, hi_s = np.full(Uf.shape, np.inf), np.full(Uf.shape, -np.inf)
    for _, ok, Sa in _privee_candidates(Uf, n, delta, k, dn):
        lo_s[ok], hi_s[ok] = np.minimum(lo_s[ok], Sa[ok] - delta), np.maximum(hi_s[ok], Sa[ok] + delta)
    found = np.isfinite(lo_s).all(axis=1)
    S, half = np.full(U.shape, np.nan), np.full(U.shape, np.nan)
    S_sorted, half_sorted = np.full(U.shape, np.nan), np.full(U.shape, np.nan)
    fin = np.flatnonzero(finite)
    S_sorted[fin[found]] = 0.5 * (lo_s[found] + hi_s[found])
    half_sorted[fin[found]] = 0.5 * (hi_s[found] - lo_s[found])
    np.put_along_axis(S, order, S_sorted, axis=1)
    np.put_along_axis(half, order, half_sorted, axis=1)
    return S, half, n


def _privee_fit(Uf, w, eta, k) -> tuple:
    """The map's ``w`` fitted robustly on the sorted finite rows ``Uf`` from the first least
    squares ``w``, and the rows it was last fitted on."""
    # PRIVEE++'s diagonal need not grow with i (its scales shrink as its cells rise), so the
    # map may swap close scores: such a row, sorted, is not M s_sorted and misses u . w = 1.
    # The map is fitted again without the rows that miss it by more than ten times the
    # median row (or the rounding, if larger), until those rows stop changing.
    tol = 1e3 * eta * float(np.abs(w).sum() * np.abs(Uf).max())
    good = np.ones(Uf.shape[0], dtype=bool)
    for _ in range(20):
        miss = np.abs(Uf @ w - 1.0)
        now = miss <= max(tol, 10.0 * float(np.median(miss)))
        if now.sum() < k or np.array_equal(now, good):
            break
        good = now
        w = np.linalg.lstsq(Uf[good], np.ones(int(good.sum())), rcond=None)[0]
    # Then, three times: each row's consistent assignments of ranks (_privee_candidates)
    # under the fitted map; the map is fitted again on the rows with exactly one, each in it.
    fitted = Uf[good]
    for _ in range(3):
        n = (1.0 - (w - (2.0 / k) * w.sum())) / w
        delta, dn = _privee_delta(fitted, w, n, eta, k)
        cands = _privee_candidates(Uf, n, delta, k, dn)
        count = sum(ok.astype(int) for _, ok, _ in cands)
        ranked = Uf.copy()
        for ranks, ok, _ in cands:
            one = ok & (count == 1)
            if ranks is not None and one.any():
                placed = np.empty((int(one.sum()), k))
                placed[:, ranks] = Uf[one]
                ranked[one] = placed
        good = count == 1
        if good.sum() < k:
            break
        fitted = ranked[good]
        w = np.linalg.lstsq(fitted, np.ones(fitted.shape[0]), rcond=None)[0]
    return w, fitted


def _privee_delta(Ur, w, n, eta, k):
    """The recovered scores' error, measured by fitting the map again on copies of the rows
    ``Ur`` (in rank order): each copy leaves out a random quarter of the rows (at least one)
    and moves every published value at random by eta of its magnitude (float32: 2^-24;
    float64: a few ulps of the defence's arithmetic). The first shows how well the batch
    determines the map (a diagonal entry that only saturated rows see, a row swapped
    unseen), the second the rounding. 10 times the largest change of a recovered score,
    plus the rounding of u through |M^-1|; and the same margin times the largest change of
    the diagonal n (a fall of n within it may be a rise, and the reverse)."""
    gen = np.random.default_rng(0)
    base = _privee_solve(Ur, n, k)
    N = Ur.shape[0]
    keep = max(k, min(N - 1, (3 * N) // 4))
    spread = dn = 0.0
    for _ in range(_PRIVEE_REFITS):
        rows = np.sort(gen.choice(N, size=keep, replace=False))
        Up = Ur[rows] * (1.0 + eta * gen.uniform(-1.0, 1.0, (keep, k)))
        wp = np.linalg.lstsq(Up, np.ones(keep), rcond=None)[0]
        if np.any(wp == 0):
            return np.inf, np.inf
        n_p = (1.0 - (wp - (2.0 / k) * wp.sum())) / wp
        spread = max(spread, float(np.abs(_privee_solve(Ur, n_p, k) - base).max()))
        dn = max(dn, float(np.abs(n_p - n).max()))
    M = np.eye(k) - (2.0 / k) + np.diag(n)
    rounding = float(np.abs(np.linalg.inv(M)).sum(axis=1).max()) * eta * float(np.abs(Ur).max())
    return _PRIVEE_MARGIN * (spread + rounding), _PRIVEE_MARGIN * dn


def _inversion_blocks(n, dn: float = 0.0) -> list:
    """The runs of sorted places ``[lo, hi]`` within which the map may reorder scores: the
    smallest intervals covering every pair i < j with n_i > n_j - dn (``dn``: how far the
    fitted n may be from the true one; between runs, n grows, so the order is kept)."""
    k = n.size
    blocks: list = []
    for i in range(k):
        for j in range(i + 1, k):
            if n[i] > n[j] - dn:
                if blocks and i <= blocks[-1][1]:
                    blocks[-1][1] = max(blocks[-1][1], j)
                else:
                    blocks.append([i, j])
    merged: list = []
    for lo, hi in sorted(blocks):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


#: at most this many rank assignments are tried per batch (the product of the blocks'
#: permutations); past it, each place's score is bounded over its block's ranks instead
_PRIVEE_ASSIGNMENTS = 720


def _privee_candidates(Us, n, delta, k, dn=0.0):
    """Which classes took which rank, row by row. Within an inversion block
    (:func:`_inversion_blocks`) the map may have permuted the scores in any order; every
    permutation of every block is tried, and an assignment is consistent when its scores sum
    to 1 and rise with the rank, up to delta. Returns ``[(ranks, consistent rows, scores by
    sorted place)]``, the sorted order first; ``ranks[p]`` is the rank of the class at
    sorted place p. With more than ``_PRIVEE_ASSIGNMENTS`` assignments, two entries with
    ``ranks`` None bound each place's score over the ranks of its block, on every row."""
    blocks = _inversion_blocks(n, dn)
    sizes = [hi - lo + 1 for lo, hi in blocks]
    if math.prod(math.factorial(m) for m in sizes) > _PRIVEE_ASSIGNMENTS:
        lo_s, hi_s = (Us + 2.0 / k) / (1.0 + n), (Us + 2.0 / k) / (1.0 + n)
        for lo, hi in blocks:
            for r in range(lo, hi + 1):
                v = (Us[:, lo:hi + 1] + 2.0 / k) / (1.0 + n[r])
                lo_s[:, lo:hi + 1], hi_s[:, lo:hi + 1] = np.minimum(lo_s[:, lo:hi + 1], v), np.maximum(hi_s[:, lo:hi + 1], v)
        every = np.ones(Us.shape[0], dtype=bool)
        return [(None, every, lo_s), (None, every, hi_s)]
    out = []
    for perms in itertools.product(*(itertools.permutations(range(lo, hi + 1)) for lo, hi in blocks)):
        ranks = np.arange(k)
        for (lo, hi), perm in zip(blocks, perms):
            ranks[lo:hi + 1] = perm
        Sa = (Us + 2.0 / k) / (1.0 + n[ranks])
        by_rank = np.empty_like(Sa)
        by_rank[:, ranks] = Sa
        ok = (np.abs(Sa.sum(axis=1) - 1.0) <= k * delta) & np.all(np.diff(by_rank, axis=1) >= -2 * delta, axis=1)
        out.append((ranks, ok, Sa))
    return out


#: refits on subsampled, perturbed copies that measure how well the batch determines the
#: recovered scores (recover_privee)
_PRIVEE_REFITS = 16
#: the half-width over the measured spread. The refits sample the error, they do not bound
#: it: over 590 random batches (k = 2..10, N = k + 1..300, Dirichlet alpha 0.01..1000,
#: duplicated rows, float32 and float64) the error reached 15 times the spread, on
#: near-uniform float32 batches (alpha 1000, whose sorted rows are nearly parallel); at 30,
#: with the inversion runs widened by the refits' change of n, 1 000 other batches had no
#: score outside its interval (tests/vflattack/test_va_defences.py runs such batches)
_PRIVEE_MARGIN = 30.0


def _privee_solve(Us, n, k):
    """The sorted scores of each sorted row for the diagonal ``n``: ``M s = u`` with
    ``1^T s = 1`` gives ``s_i = (u_i + 2/k) / (1 + n_i)``."""
    return (Us + 2.0 / k) / (1.0 + n)


def _is_float32(values) -> bool:
    """Whether every value is a float32 number (a float32 release, or one handed over as float64)."""
    return bool(np.all(values.astype(np.float32).astype(float) == values))


register_recovery(("privee", "priveeplus"), recover_privee)
