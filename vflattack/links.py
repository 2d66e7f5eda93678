r"""Link functions, and the interval of logits each published value allows (docs/links.md).

A VFL deployment publishes ``v = yhat_scale * h(z)`` with ``z`` a linear logit and ``h`` a
*link*. For every link this module gives the forward map ``h`` as the framework computes it
(float64, elementwise) and :meth:`Link.preimage`: for a published interval ``[v_lo, v_hi]``
and the range ``[z_lo, z_hi]`` that ``z`` can take, the smallest interval (up to the padding
below) that holds every ``z`` in the range whose value lies in ``[v_lo, v_hi]``.

What holds:

* **Outward.** For every float ``z`` in ``[z_lo, z_hi]`` with ``scale * h(z)`` (this module's
  forward, rounded to float64 as the framework rounds it) in ``[v_lo, v_hi]``,
  ``lo <= z <= hi``. The same holds for the framework's own value of ``h(z)`` wherever its
  rounding error is within the bound the module uses (``_err``: a few units in the last place
  of the terms, see :class:`_Piece`).
* **Monotone pieces.** Each link is cut where its source branches and where ``h'`` changes
  sign (the real roots of the derivative polynomial, from ``numpy.roots``, each inside a guard
  of half-width ``1e-9 max(1, |tau|)`` that the tests check holds the true root). On each piece
  the exact ``h`` is monotone; the ends of its feasible part are found by bisection over the
  floats of the piece (bracketed; it ends at two neighbouring floats), never by an
  unbracketed root finder.
* **Padding.** A point is declared infeasible only when its computed value misses the target
  by more than twice the value's error bound ``e``: ``h^(m) + 2 e(m) < v_lo`` (or
  ``h^(m) - 2 e(m) > v_hi``). As ``|h^ - h| <= e``, the exact ``h`` there is below
  ``v_lo - e``; by monotonicity so is every ``z`` on the far side of ``m``, and a float ``z``
  with ``h^(z) >= v_lo`` has ``h(z) >= v_lo - e``. So the returned end is the last float
  certified infeasible: an outer bound, loose by the ``z``-width over which ``h`` moves by
  ``4 e`` (a few ulps of ``v`` divided by ``|h'|``) plus one float.
* **Not an interval.** Where the feasible set has a gap (a polynomial that turns, a
  reciprocal on both sides of 0, a jump against the trend) the hull is returned and
  ``outer`` is True.

SecretFlow-Serving links are transcribed from ``secretflow_serving/core/link_func.cc`` of
github.com/secretflow/serving at commit ``d8167b6c6f55b5b42806430f9b9796072f2ee05d``
(2025-08-01); line numbers below refer to that file. Every caller in that repository
(``ops/merge_y.cc``, ``ops/tree_ensemble_predict.cc`` and their HE variants) instantiates
``ApplyLinkFunc<double>``: the arithmetic is float64, and float32 enters only through constants
written with an ``F`` suffix (``0.197F``, ``1.0F / 48``), which are rounded to float32 and then
promoted. :attr:`Link.float32` is True for the links with such a constant that float32 does
not hold exactly (``0.5F``, ``0.25F``, ``0.125F`` and ``1.0F`` are exact).

Examples
--------
>>> t1 = get_link("t1")
>>> t1.name, float(t1(1.0)), float(t1(3.0))
('LF_SIGMOID_T1', 0.75, 1.0)
>>> lo, hi, outer = t1.preimage(1.0, 1.0, -10.0, 10.0)   # a published 1: z >= 2 (padded by ~1e-14)
>>> round(float(lo), 12), float(hi), bool(outer)
(2.0, 10.0, False)
>>> lo, hi, outer = get_link("LF_SIGMOID_T7").preimage(0.85, 0.86)   # T7 turns: two pieces
>>> bool(outer), float(lo) < 2.3 < float(hi)
(True, True)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._validate import InvalidInputError, as_array

__all__ = ["LINKS", "SOURCE", "Link", "exp_taylor", "get_link"]

#: where the SecretFlow-Serving formulas come from
SOURCE = {"repo": "secretflow/serving", "path": "secretflow_serving/core/link_func.cc",
          "commit": "d8167b6c6f55b5b42806430f9b9796072f2ee05d"}
_SRC = "secretflow_serving/core/link_func.cc"

_U = 2.0 ** -53            # float64 unit roundoff
_MAX = sys.float_info.max
_MIN_SUB = 2.0 ** -1074    # smallest subnormal
_UNDER = 2.0 ** -1021      # absolute error of a result that underflowed (twice the smallest normal)
_GUARD = 1e-9              # half-width of the guard around a turning point, relative to max(1, |tau|)


def _f32(x: float) -> float:
    """A float literal with an ``F`` suffix: the float32 nearest to it, promoted."""
    return float(np.float32(x))


def _f32div(a: float, b: float) -> float:
    """``aF / b`` in C++: float32 division of float32 operands (correctly rounded)."""
    return float(np.float32(a) / np.float32(b))


# --------------------------------------------------------------------------- the forward maps
# Each mirrors the source expression term by term, in its order of evaluation (left to right),
# std::pow(x, k) as np.power(x, k) (libm pow, as the C++ calls it).

_T3 = _f32div(-1.0, 48)          # link_func.cc:38  auto t3 = -1.0F / 48;
_T5 = _f32div(1.0, 480)          # link_func.cc:129 auto t5 = 1.0F / 480;
_T7_3 = _f32div(1.0, 48)         # link_func.cc:134 (1.0F / 48)
_T7_5 = _f32div(1.0, 480)        # link_func.cc:135 (1.0F / 480)
_T7_7 = _f32div(17.0, 80640)     # link_func.cc:135 (17.0F / 80640)
_T9_9 = _f32div(31.0, 1451520)   # link_func.cc:140 (31.0F / 1451520)
_MM3_1, _MM3_3 = _f32(0.197), _f32(0.004)          # link_func.cc:115
_GA_1, _GA_3 = _f32(0.15012), _f32(0.001593)       # link_func.cc:118
_LS7 = (5.00052959e-01, 2.35176260e-01, -3.97212202e-05, -1.23407424e-02, 4.04588962e-06,
        3.94330487e-04, -9.74060972e-08, -4.74674505e-06)   # link_func.cc:92-95 (double literals)


def _pw(x, k):
    return np.power(x, float(k))


def _ls7(x):   # link_func.cc:92-95, as written
    return (5.00052959e-01 + 2.35176260e-01 * x - 3.97212202e-05 * _pw(x, 2) - 1.23407424e-02 * _pw(x, 3)
            + 4.04588962e-06 * _pw(x, 4) + 3.94330487e-04 * _pw(x, 5) - 9.74060972e-08 * _pw(x, 6)
            - 4.74674505e-06 * _pw(x, 7))


def _sr(x):
    return 0.5 * (x / np.sqrt(1.0 + _pw(x, 2))) + 0.5


def _fwd_identity(x):
    return x + 0.0


def _fwd_sigmoid(x):   # the exact logistic, evaluated without overflow on either side
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _fwd_exp(x):
    return np.exp(x)


def _fwd_reciprocal(x):   # 1.0F / x; the framework's +-inf at 0 is outside the domain here: NaN
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, np.nan, 1.0 / safe)


def _fwd_raw(x):
    return 1.0 / (1.0 + np.exp(-x))


def _fwd_mm1(x):
    return 0.5 + 0.125 * x


def _fwd_mm3(x):
    return 0.5 + _MM3_1 * x - _MM3_3 * _pw(x, 3)


def _fwd_ga(x):
    return 0.5 + _GA_1 * x + _GA_3 * _pw(x, 3)


def _fwd_t1(x):
    return np.clip(0.5 + 0.25 * x, 0.0, 1.0)


def _t3_raw(x):
    return (0.5 + 0.25 * x) + _pw(x, 3) * _T3


def _fwd_t3(x):
    return np.where(x < -2, 0.0, np.where(x > 2, 1.0, _t3_raw(x)))


def _t5_raw(x):
    return _t3_raw(x) + _pw(x, 5) * _T5


def _fwd_t5(x):
    return np.clip(_t5_raw(x), 0.0, 1.0)


def _fwd_mm1_t1(x):   # T1 before its clamp
    return 0.5 + 0.25 * x


def _fwd_t7(x):
    return 0.5 + 0.25 * x - _T7_3 * _pw(x, 3) + _T7_5 * _pw(x, 5) - _T7_7 * _pw(x, 7)


def _fwd_t9(x):
    return 0.5 + 0.25 * x - _T7_3 * _pw(x, 3) + _T7_5 * _pw(x, 5) - _T7_7 * _pw(x, 7) + _T9_9 * _pw(x, 9)


def _fwd_seg3(x):
    return np.where(x > 4, 1.0, np.where(x < -4, 0.0, 0.5 + 0.125 * x))


def _fwd_seg5(x):
    return np.where(x > 35.75, 1.0, np.where(x > 3.75, 0.965087890625 + x * 0.0009765625,
                    np.where(x >= -3.75, 0.5 + 0.125 * x,
                             np.where(x >= -35.75, 0.034912109375 + x * 0.0009765625, 0.0))))


def _fwd_df(x):
    return 0.5 * (x / (1.0 + np.abs(x))) + 0.5


def _fwd_segls(x):
    return np.where(np.abs(x) <= 5.87, _ls7(x), _sr(x))


def _sq_limit() -> float:
    """The largest float whose square is finite: beyond it ``std::pow(x, 2)`` is inf, so SR's
    ``x / sqrt(inf)`` is 0 and the link returns 0.5 (a float artefact of the source)."""
    x = math.sqrt(_MAX)
    while math.isfinite(math.nextafter(x, math.inf) * math.nextafter(x, math.inf)):
        x = math.nextafter(x, math.inf)
    while not math.isfinite(x * x):
        x = math.nextafter(x, 0.0)
    return x


_SQ = _sq_limit()


# --------------------------------------------------------------------------- error bounds
def _poly_err(coefs):
    """``16 u P(|x|)`` with ``P(t) = sum_k |c_k| t^k``: a left-to-right sum of m <= 10 terms,
    each a correctly rounded pow times a constant, errs by at most ``(m + 3) u P(|x|)`` (Higham,
    Accuracy and Stability of Numerical Algorithms, §3.1); 16 covers m <= 10 with room for a
    libm pow a little worse than correctly rounded, a contracted multiply-add, and the
    ``(n + 1) u`` by which the Horner evaluation of ``P`` itself (positive terms) may fall short."""
    c = [abs(float(x)) for x in coefs][::-1]

    def err(x, y):
        ax = np.abs(x)
        s = np.full(ax.shape, c[0])
        for ck in c[1:]:
            s = s * ax + ck
        return 16.0 * _U * s + _MIN_SUB
    return err


def _clamped(err, raw):
    """The error of ``clamp(q^, 0, 1)`` against ``clamp(q, 0, 1)`` (``q^ = raw(x)``): at most that
    of ``q^``, and none where ``q^`` is beyond the clamp by more than its own error bound (both
    are then the bound itself, exactly)."""
    def e(x, y):
        q = raw(x)
        eq = err(x, q)
        return np.where((q < -eq) | (q > 1.0 + eq), 0.0, eq)
    return e


def _rel_err(k: float, floor: float = _UNDER):
    """``k u |y| + floor``: a short chain of correctly rounded operations (the factor is stated
    where used) and, through ``floor``, results that underflowed."""
    def err(x, y):
        return k * _U * np.abs(y) + floor
    return err


def _abs_err(a: float):
    def err(x, y):
        return np.full(np.shape(y), a * _U)
    return err


# --------------------------------------------------------------------------- pieces
@dataclass(frozen=True)
class _Piece:
    """A stretch of z on which the exact link is monotone (or constant, or a guard around a
    turning point). ``a, b``: the first and last float of the piece (finite); ``ra, rb``: its
    ends as reported (the real boundary: ``2`` for ``x > 2``, ``-inf`` for an unbounded piece).
    ``kind``: +1 increasing, -1 decreasing, 0 constant ``value``, 2 guard (value: h at the
    turning point, ``slack``: how far h can move inside the guard). ``err(x, y)`` bounds
    ``|h^(x) - h(x)|`` where ``h^(x) = y`` is finite; ``nan_sign(x)`` says which way a NaN of
    the source's overflowing terms lies (the sign of the leading term), or is None."""
    a: float
    b: float
    ra: float
    rb: float
    kind: int
    err: Callable | None = None
    value: float = 0.0
    slack: float = 0.0
    nan_sign: Callable | None = None
    coefs: tuple = ()   # for a guard: the polynomial (ascending powers), so that tests can check its root


def _ends(lo: float, hi: float, lo_open: bool, hi_open: bool) -> tuple[float, float]:
    a = math.nextafter(lo, math.inf) if lo_open else lo
    b = math.nextafter(hi, -math.inf) if hi_open else hi
    return max(a, -_MAX), min(b, _MAX)


def _piece(lo, hi, kind, err=None, value=0.0, lo_open=False, hi_open=False, nan_sign=None, slack=0.0):
    a, b = _ends(lo, hi, lo_open, hi_open)
    return _Piece(a, b, lo, hi, kind, err, value, slack, nan_sign)


def _poly_pieces(coefs, lo, hi, lo_open=False, hi_open=False, err=None) -> tuple[list[_Piece], list[float]]:
    """Cut ``sum c_k x^k`` on [lo, hi] at the real roots of its derivative (numpy.roots), each
    inside a guard ``[tau - d, tau + d]``, ``d = 1e-9 max(1, |tau|)``; between the guards the
    polynomial is strictly monotone, its direction read from p' at an interior point."""
    c = np.asarray(coefs, dtype=float)
    n = int(np.max(np.nonzero(c)[0]))
    err = err or _poly_err(coefs)
    lead = float(c[n])

    def nan_sign(x, _n=n, _lead=lead):
        return np.sign(_lead) * np.sign(x) ** _n
    dcoef = (np.arange(1, n + 1) * c[1:n + 1])[::-1]
    taus = []
    if n >= 2:
        for r in np.roots(dcoef):
            if abs(r.imag) <= 1e-12 * max(1.0, abs(r)) and lo < r.real < hi:
                taus.append(float(r.real))
    taus.sort()
    cuts = [lo] + taus + [hi]
    pieces: list[_Piece] = []
    for i in range(len(cuts) - 1):
        s, t = cuts[i], cuts[i + 1]
        s_in = s + _GUARD * max(1.0, abs(s)) if i > 0 else s
        t_in = t - _GUARD * max(1.0, abs(t)) if i < len(cuts) - 2 else t
        if math.isinf(s_in) and math.isinf(t_in):
            probe = 0.0
        elif math.isinf(s_in):
            probe = t_in - 1.0
        elif math.isinf(t_in):
            probe = s_in + 1.0
        else:
            probe = 0.5 * (s_in + t_in)
        slope = float(np.polyval(dcoef, probe))
        kind = 1 if slope > 0 else -1
        pieces.append(_piece(s_in, t_in, kind, err, lo_open=(i == 0 and lo_open), hi_open=(i == len(cuts) - 2 and hi_open),
                             nan_sign=nan_sign))
        if i < len(cuts) - 2:   # the guard around tau = t
            d = _GUARD * max(1.0, abs(t))
            x = np.array([t - d, t, t + d])
            # |h(z) - h(tau)| <= 2 d^2 max|h''| on the guard (h'(tau) = 0); |h''| <= sum k(k-1)|c_k| |x|^(k-2)
            h2 = sum(k * (k - 1) * abs(c[k]) * (abs(t) + d) ** (k - 2) for k in range(2, n + 1))
            pieces.append(_Piece(t - d, t + d, t - d, t + d, 2, err, value=float(np.polyval(c[::-1], t)),
                                 slack=4.0 * d * d * h2 + float(np.max(err(x, x))) * 4.0, coefs=tuple(map(float, c))))
    return pieces, taus


# --------------------------------------------------------------------------- Link
def _bits_key(x: np.ndarray) -> np.ndarray:
    """Order-preserving map of finite floats to int64 (neighbouring floats: neighbouring keys)."""
    b = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(b < 0, -(b & np.int64(0x7FFFFFFFFFFFFFFF)), b)


def _key_float(k: np.ndarray) -> np.ndarray:
    b = np.where(k < 0, (-k) | np.int64(-0x8000000000000000), k)
    return np.ascontiguousarray(b, dtype=np.int64).view(np.float64)


@dataclass(frozen=True)
class Link:
    """A link function: forward map and preimage (module docstring).

    Examples
    --------
    >>> lk = get_link("sigmoid")
    >>> float(lk(0.0))
    0.5
    >>> lo, hi, outer = lk.preimage(0.5, 0.5)
    >>> abs(float(lo)) < 1e-14 and abs(float(hi)) < 1e-14     # logit(0.5) = 0, padded outward
    True
    >>> lo, hi, _ = get_link("LF_SIGMOID_SEG3").preimage(1.0, 1.0)   # saturated: a half-line
    >>> round(float(lo), 12), float(hi)
    (4.0, inf)
    >>> lo, hi, _ = get_link("exp").preimage(-1.0, -0.5)            # nothing fits: empty
    >>> float(lo), float(hi)
    (inf, -inf)
    """
    name: str
    spellings: tuple[str, ...]
    description: str
    source: str
    float32: bool
    forward: Callable = field(repr=False, compare=False)
    pieces: tuple = field(repr=False, compare=False, default=())
    turns: tuple = field(repr=False, compare=False, default=())

    def __call__(self, z) -> np.ndarray:
        """The link ``h(z)`` as the framework computes it (float64, elementwise)."""
        x = as_array("z", z)
        with np.errstate(all="ignore"):
            return np.asarray(self.forward(x), dtype=np.float64)

    def turning_points(self) -> np.ndarray:
        """Sorted z where h stops being monotone: sign changes of h' (roots of the derivative
        polynomial) and jumps against the trend (SEGLS at 5.87, the reciprocal at 0, SR's
        overflow); empty where h is monotone (non-strictly: saturation is not a turn)."""
        return np.array(sorted(self.turns), dtype=np.float64)

    # -- preimage ---------------------------------------------------------------------------
    def _val(self, p: _Piece, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = np.asarray(self.forward(x), dtype=np.float64)
        e = np.asarray(p.err(x, y), dtype=np.float64) if p.err is not None else np.zeros_like(y)
        bad = ~np.isfinite(y)
        if bad.any():
            e = np.where(bad, 0.0, e)
            if p.nan_sign is not None:
                y = np.where(np.isnan(y), np.asarray(p.nan_sign(x)) * np.inf, y)
        return y, e

    def _search(self, p, A, B, w, side, kind):
        """First/last possibly-feasible float of an increasing/decreasing piece, per row.

        ``side`` 'lo': the predicate 'certainly infeasible, as is all of the piece to the left'
        holds on a prefix; returns (end, certified_empty). 'hi': mirror image."""
        # the predicate P(x): y + 2e < w_lo (below) or y - 2e > w_hi (above)
        below = (side == "lo") == (kind > 0)
        wl, wh = w

        def pred(x, rows):
            y, e = self._val(p, x)
            if below:
                return y + 2.0 * e < wl[rows]
            return y - 2.0 * e > wh[rows]
        rows = np.arange(A.size)
        start, end = (A, B) if side == "lo" else (B, A)   # the search runs from start towards end
        p_start, p_end = pred(start, rows), pred(end, rows)
        out = start.copy()
        empty = p_start & p_end
        need = p_start & ~p_end
        l, r = _bits_key(A[need]), _bits_key(B[need])
        idx = np.nonzero(need)[0]
        # bisection over the floats of [l, r]: the predicate holds at l ('lo') or r ('hi')
        while idx.size:
            gap = r.view(np.uint64) - l.view(np.uint64)
            live = gap > 1
            if not live.any():
                break
            m = (l >> 1) + (r >> 1) + (l & r & 1)
            lv, mv = np.nonzero(live)[0], m[live]
            hit = pred(_key_float(mv), idx[lv])
            if side == "lo":
                l[lv] = np.where(hit, mv, l[lv])
                r[lv] = np.where(hit, r[lv], mv)
            else:
                r[lv] = np.where(hit, mv, r[lv])
                l[lv] = np.where(hit, l[lv], mv)
        if idx.size:
            out[idx] = _key_float(l if side == "lo" else r)
        return out, empty, need

    def preimage(self, v_lo, v_hi, z_lo=-np.inf, z_hi=np.inf, *, scale=1.0):
        """The interval of z allowed by a published value in ``[v_lo, v_hi]``.

        Parameters
        ----------
        v_lo, v_hi : array_like
            The published interval (already widened for rounding by the caller); ``+-inf``
            for a one-sided bound.
        z_lo, z_hi : array_like
            The range z can take (finite or infinite). All four broadcast together.
        scale : float
            ``yhat_scale > 0``: ``v = scale * h(z)`` as float64 computes it.

        Returns
        -------
        (lo, hi, outer) : arrays of the broadcast shape
            Every z in ``[z_lo, z_hi]`` with its value in ``[v_lo, v_hi]`` lies in ``[lo, hi]``;
            ``outer`` is True where that set is not an interval (the hull is returned). Rows
            with no such z have ``lo = +inf``, ``hi = -inf``.

        Examples
        --------
        >>> lo, hi, outer = get_link("identity").preimage([1.0, 2.0], 3.0, scale=2.0)
        >>> np.allclose(lo, [0.5, 1.0], rtol=1e-15), bool(lo[0] <= 0.5 and hi[0] >= 1.5), outer.tolist()
        (True, True, [False, False])
        """
        s = scale
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)) \
                or not (math.isfinite(float(s)) and float(s) > 0):
            raise InvalidInputError(f"scale (yhat_scale) must be a finite number > 0; got {scale!r}")
        s = float(s)
        arrs = [as_array(n, v) for n, v in (("v_lo", v_lo), ("v_hi", v_hi), ("z_lo", z_lo), ("z_hi", z_hi))]
        for n, a in zip(("v_lo", "v_hi", "z_lo", "z_hi"), arrs, strict=True):
            if np.isnan(a).any():
                raise InvalidInputError(f"{n} must not be NaN")
        vl, vh, zl, zh = (np.ascontiguousarray(a.ravel()) for a in np.broadcast_arrays(*arrs))
        shape = np.broadcast_shapes(*(a.shape for a in arrs))
        with np.errstate(all="ignore"):
            wl, wh = vl / s, vh / s
            if s != 1.0:
                # v = fl(s h), so s h >= v_lo (1 - u) and h >= (v_lo / s)(1 - u)(1 - u) in magnitude
                # terms: widen the quotient by 4 ulps of itself and one subnormal (a finite h whose
                # product overflowed published +-inf: h >= MAX / s)
                wl = np.where(np.isposinf(vl), _MAX / s, wl)
                wh = np.where(np.isneginf(vh), -_MAX / s, wh)
                wl = wl - 4.0 * _U * np.abs(wl) - _MIN_SUB
                wh = wh + 4.0 * _U * np.abs(wh) + _MIN_SUB
            lo, hi, outer = self._preimage(wl, wh, zl, zh)
        return lo.reshape(shape), hi.reshape(shape), outer.reshape(shape)

    def _preimage(self, wl, wh, zl, zh):
        n = wl.size
        lo = np.full(n, np.inf)
        hi = np.full(n, -np.inf)
        outer = np.zeros(n, dtype=bool)
        for p in self.pieces:
            A = np.maximum(zl, p.a)
            B = np.minimum(zh, p.b)
            rows = np.nonzero((A <= B) & (wl <= wh))[0]
            if not rows.size:
                continue
            A, B = A[rows], B[rows]
            wlr, whr = wl[rows], wh[rows]
            if p.kind == 0:
                ok = (wlr <= p.value) & (p.value <= whr)
                plo, phi = A, B
            elif p.kind == 2:
                ok = (wlr <= p.value + p.slack) & (p.value - p.slack <= whr)
                plo, phi = A, B
            else:
                plo, e1, _ = self._search(p, A, B, (wlr, whr), "lo", p.kind)
                phi, e2, _ = self._search(p, A, B, (wlr, whr), "hi", p.kind)
                ok = ~e1 & ~e2 & (plo <= phi)
            # report the piece's real ends where the search stopped at them
            plo = np.where((plo == p.a) & (zl[rows] < p.a), p.ra, plo)
            phi = np.where((phi == p.b) & (zh[rows] > p.b), p.rb, phi)
            r = rows[ok]
            plo, phi = plo[ok], phi[ok]
            had = hi[r] > -np.inf
            outer[r] |= had & (plo > hi[r])
            lo[r] = np.minimum(lo[r], plo)
            hi[r] = np.maximum(hi[r], phi)
        return lo, hi, outer


# --------------------------------------------------------------------------- the catalogue
def _turns_from(pieces, forward, taus=()) -> tuple[float, ...]:
    """Turning points: the polynomial roots ``taus`` and the boundaries where a piece's
    direction, or the jump onto it, goes against the trend so far."""
    out = set(taus)
    trend = 0
    prev = None
    for p in pieces:
        if p.kind == 2:
            trend = 0
            prev = p
            continue
        if prev is not None and prev.kind != 2:
            with np.errstate(all="ignore"):
                yl = float(forward(np.array([prev.b]))[0])
                yr = float(forward(np.array([p.a]))[0])
            j = 0 if yl == yr or math.isnan(yl - yr) else (1 if yr > yl else -1)
            for d in (j, p.kind if p.kind in (1, -1) else 0):
                if d and trend and d != trend:
                    out.add(p.ra)
                    trend = d
                elif d:
                    trend = d
        elif p.kind in (1, -1):
            trend = p.kind
        prev = p
    return tuple(sorted(out))


def _make(name, spellings, description, source, float32, forward, pieces, taus=()):
    pieces = tuple(pieces)
    return Link(name, tuple(spellings), description, source, float32, forward, pieces,
                _turns_from(pieces, forward, taus))


def _poly_link(name, spellings, description, line, float32, forward, coefs, pre=(), post=(), lo=-math.inf, hi=math.inf,
               lo_open=False, hi_open=False, clamp_of=None):
    err = _clamped(_poly_err(coefs), clamp_of) if clamp_of is not None else None
    ps, taus = _poly_pieces(coefs, lo, hi, lo_open, hi_open, err)
    return _make(name, spellings, description, f"{_SRC}:{line}", float32, forward, [*pre, *ps, *post], taus)


def _build() -> dict[str, Link]:
    inf = math.inf
    L: list[Link] = []
    L.append(_make("identity", ("identity", "id", "linear", "none"), "identity: h(z) = z", "vflattack (definition)", False,
                   _fwd_identity, [_piece(-inf, inf, 1, lambda x, y: np.zeros_like(y))]))
    # exact logistic: exp, 1 + e, one division: relative error <= 4u (numpy's exp within 1-2 ulp); 8u
    L.append(_make("sigmoid", ("sigmoid", "logistic", "expit"), "exact logistic: h(z) = 1 / (1 + e^-z)",
                   "vflattack (definition)", False, _fwd_sigmoid, [_piece(-inf, inf, 1, _rel_err(8.0))]))
    L.append(_make("LF_EXP", ("LF_EXP", "exp"), "exp: h(z) = std::exp(z)", f"{_SRC}:100", False, _fwd_exp,
                   [_piece(-inf, inf, 1, _rel_err(8.0))]))
    # one correctly rounded division: 2u relative (u for the rounding, u for a subnormal result)
    L.append(_make("LF_RECIPROCAL", ("LF_RECIPROCAL", "reciprocal"), "reciprocal: h(z) = 1.0F / z (NaN at 0)",
                   f"{_SRC}:103", False, _fwd_reciprocal,
                   [_piece(-inf, 0.0, -1, _rel_err(2.0, _MIN_SUB), hi_open=True),
                    _piece(0.0, inf, -1, _rel_err(2.0, _MIN_SUB), lo_open=True)]))
    L.append(_make("LF_IDENTITY", ("LF_IDENTITY", "lf_identity"), "identity: h(z) = z", f"{_SRC}:106", False,
                   _fwd_identity, [_piece(-inf, inf, 1, lambda x, y: np.zeros_like(y))]))
    L.append(_make("LF_SIGMOID_RAW", ("LF_SIGMOID_RAW", "sigmoid_raw", "raw"),
                   "logistic as written: h(z) = 1.0F / (1.0F + exp(-z))", f"{_SRC}:109", False, _fwd_raw,
                   [_piece(-inf, inf, 1, _rel_err(8.0))]))
    L.append(_poly_link("LF_SIGMOID_MM1", ("LF_SIGMOID_MM1", "mm1", "sigmoid_mm1"),
                        "minimax order 1: 0.5F + 0.125F z (not clamped)", 112, False, _fwd_mm1, [0.5, 0.125]))
    L.append(_poly_link("LF_SIGMOID_MM3", ("LF_SIGMOID_MM3", "mm3", "sigmoid_mm3"),
                        "minimax order 3: 0.5F + 0.197F z - 0.004F z^3", 115, True, _fwd_mm3, [0.5, _MM3_1, 0.0, -_MM3_3]))
    L.append(_poly_link("LF_SIGMOID_GA", ("LF_SIGMOID_GA", "ga", "sigmoid_ga"),
                        "global approximation: 0.5F + 0.15012F z + 0.001593F z^3", 118, True, _fwd_ga,
                        [0.5, _GA_1, 0.0, _GA_3]))
    L.append(_poly_link("LF_SIGMOID_T1", ("LF_SIGMOID_T1", "t1", "sigmoid_t1"),
                        "Taylor order 1: clamp(0.5F + 0.25F z, 0, 1)", 27, False, _fwd_t1, [0.5, 0.25],
                        clamp_of=_fwd_mm1_t1))
    t3c = [0.5, 0.25, 0.0, _T3]
    L.append(_poly_link("LF_SIGMOID_T3", ("LF_SIGMOID_T3", "t3", "sigmoid_t3"),
                        "Taylor order 3: 0 for z < -2, 1 for z > 2, else 0.5F + 0.25F z + z^3 (-1.0F / 48)", 37, True,
                        _fwd_t3, t3c, pre=[_piece(-inf, -2.0, 0, value=0.0, hi_open=True)],
                        post=[_piece(2.0, inf, 0, value=1.0, lo_open=True)], lo=-2.0, hi=2.0))
    L.append(_poly_link("LF_SIGMOID_T5", ("LF_SIGMOID_T5", "t5", "sigmoid_t5"),
                        "Taylor order 5: clamp(T3 unclamped + z^5 (1.0F / 480), 0, 1)", 129, True, _fwd_t5,
                        [0.5, 0.25, 0.0, _T3, 0.0, _T5], clamp_of=_t5_raw))
    t7c = [0.5, 0.25, 0.0, -_T7_3, 0.0, _T7_5, 0.0, -_T7_7]
    L.append(_poly_link("LF_SIGMOID_T7", ("LF_SIGMOID_T7", "t7", "sigmoid_t7"),
                        "Taylor order 7: 0.5F + 0.25F z - (1.0F/48) z^3 + (1.0F/480) z^5 - (17.0F/80640) z^7", 134, True,
                        _fwd_t7, t7c))
    L.append(_poly_link("LF_SIGMOID_T9", ("LF_SIGMOID_T9", "t9", "sigmoid_t9"),
                        "Taylor order 9: T7 + (31.0F/1451520) z^9", 138, True, _fwd_t9, [*t7c, 0.0, _T9_9]))
    L.append(_poly_link("LF_SIGMOID_LS7", ("LF_SIGMOID_LS7", "ls7", "sigmoid_ls7"),
                        "least-squares order 7 on [-6, 6] (double constants)", 92, False, _ls7, list(_LS7)))
    L.append(_poly_link("LF_SIGMOID_SEG3", ("LF_SIGMOID_SEG3", "seg3", "sigmoid_seg3"),
                        "segmented: 1 for z > 4, 0 for z < -4, else 0.5F + 0.125F z", 146, False, _fwd_seg3, [0.5, 0.125],
                        pre=[_piece(-inf, -4.0, 0, value=0.0, hi_open=True)],
                        post=[_piece(4.0, inf, 0, value=1.0, lo_open=True)], lo=-4.0, hi=4.0))
    seg5 = [_piece(-inf, -35.75, 0, value=0.0, hi_open=True),
            *_poly_pieces([0.034912109375, 0.0009765625], -35.75, -3.75, hi_open=True)[0],
            *_poly_pieces([0.5, 0.125], -3.75, 3.75)[0],
            *_poly_pieces([0.965087890625, 0.0009765625], 3.75, 35.75, lo_open=True)[0],
            _piece(35.75, inf, 0, value=1.0, lo_open=True)]
    L.append(_make("LF_SIGMOID_SEG5", ("LF_SIGMOID_SEG5", "seg5", "sigmoid_seg5"),
                   "segmented, five pieces: 0 | 0.034912109375 + z/1024 | 0.5 + 0.125 z | 0.965087890625 + z/1024 | 1 "
                   "(breaks at -35.75, -3.75, 3.75, 35.75)", f"{_SRC}:155", False, _fwd_seg5, seg5))
    # DF: 1 + |x| (u), division (u): the quotient within 2u + u^2 relative, |quotient| <= 1;
    # half of it exact; + 0.5 rounds by u |y| <= u: |error| <= 2.5 u absolute; 4u
    L.append(_make("LF_SIGMOID_DF", ("LF_SIGMOID_DF", "df", "sigmoid_df"),
                   "dataflow: 0.5F (z / (1.0F + |z|)) + 0.5F", f"{_SRC}:170", False, _fwd_df,
                   [_piece(-inf, inf, 1, _abs_err(4.0))]))
    # SR: x^2 (u), 1 + x^2 (u), sqrt (u/2 + half the argument's), division (u): the quotient
    # within ~3.5u relative, |quotient| <= 1; + 0.5 rounds by <= u: <= 2.75u absolute; 4u
    sr_mid = _piece(-_SQ, _SQ, 1, _abs_err(4.0))
    sr_pieces = [_piece(-inf, -_SQ, 0, value=0.5, hi_open=True), sr_mid, _piece(_SQ, inf, 0, value=0.5, lo_open=True)]
    L.append(_make("LF_SIGMOID_SR", ("LF_SIGMOID_SR", "sr", "sigmoid_sr"),
                   "square root: 0.5F (z / sqrt(1.0F + z^2)) + 0.5F (0.5 where z^2 overflows, |z| > 1.34e154)",
                   f"{_SRC}:54", False, _fwd_sr_link, sr_pieces))
    ls_mid, ls_taus = _poly_pieces(list(_LS7), -5.87, 5.87)
    segls = [_piece(-inf, -_SQ, 0, value=0.5, hi_open=True), _piece(-_SQ, -5.87, 1, _abs_err(4.0), hi_open=True),
             *ls_mid, _piece(5.87, _SQ, 1, _abs_err(4.0), lo_open=True), _piece(_SQ, inf, 0, value=0.5, lo_open=True)]
    L.append(_make("LF_SIGMOID_SEGLS", ("LF_SIGMOID_SEGLS", "segls", "sigmoid_segls"),
                   "LS7 where |z| <= 5.87, else SR", f"{_SRC}:176", False, _fwd_segls, segls, ls_taus))
    return {lk.name: lk for lk in L}


def _fwd_sr_link(x):
    return _sr(x)


def exp_taylor(n: int) -> Link:
    """LF_EXP_TAYLOR with ``exp_iters = n``: ``std::pow(1.0F + z / 2^n, 2^n)``
    (link_func.cc:62; one pow call, no loop). The exponent ``2^n`` is even, so h decreases to
    0 at ``z = -2^n`` and increases after it (a turning point). Spelled ``LF_EXP_TAYLOR:n``.

    Examples
    --------
    >>> lk = exp_taylor(3)
    >>> lk.name, float(lk(8.0)), lk.turning_points().tolist()    # (1 + 8/8)^8
    ('LF_EXP_TAYLOR:3', 256.0, [-8.0])
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or not 1 <= int(n) <= 1023:
        raise InvalidInputError(f"link: LF_EXP_TAYLOR's exp_iters must be an integer in [1, 1023] (the source requires "
                                f"> 0; from 1024 on 2^n overflows and the link is the constant 1); got {n!r}")
    n = int(n)
    N = float(2.0 ** n)

    def fwd(x, _N=N):
        return np.power(1.0 + x / _N, _N)

    # 1 + x/N rounds by a relative u (x/N is exact); raising to the power N multiplies that
    # into (1 + u)^N <= e^(N u); pow itself adds ~1 ulp: relative error <= expm1(2 N u) + 4u
    rel = math.expm1(min(2.0 * N * _U, 700.0)) + 4.0 * _U

    def err(x, y, _r=rel):
        return _r * np.abs(y) + _UNDER
    pieces = [_piece(-math.inf, -N, -1, err), _piece(-N, math.inf, 1, err)]
    return _make(f"LF_EXP_TAYLOR:{n}", (f"LF_EXP_TAYLOR:{n}", f"exp_taylor:{n}"),
                 f"exp by Taylor limit: std::pow(1.0F + z / 2^{n}, 2^{n})", f"{_SRC}:62", False, fwd, pieces, (-N,))


#: canonical name -> Link (LF_EXP_TAYLOR takes a parameter: get_link("LF_EXP_TAYLOR:8") or exp_taylor(8))
LINKS: dict[str, Link] = _build()
_BY_SPELLING = {s.lower(): lk for lk in LINKS.values() for s in (lk.name, *lk.spellings)}


def get_link(name: str | Link) -> Link:
    """The link by any spelling (case-insensitive; ``-`` reads as ``_``); a :class:`Link` is
    returned as is. ``LF_EXP_TAYLOR:n`` (or ``exp_taylor:n``) builds LF_EXP_TAYLOR with
    ``exp_iters = n``.

    Examples
    --------
    >>> get_link("T1").name, get_link("lf_sigmoid_seg5").name, get_link("exp").name
    ('LF_SIGMOID_T1', 'LF_SIGMOID_SEG5', 'LF_EXP')
    >>> get_link("exp_taylor:4").name
    'LF_EXP_TAYLOR:4'
    """
    if isinstance(name, Link):
        return name
    if not isinstance(name, str):
        raise InvalidInputError(f"link must be a link name (str) or a Link; got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    if key in _BY_SPELLING:
        return _BY_SPELLING[key]
    head, sep, tail = key.partition(":")
    if head in ("lf_exp_taylor", "exp_taylor"):
        if not sep:
            raise InvalidInputError("link: LF_EXP_TAYLOR needs its exp_iters: write LF_EXP_TAYLOR:n with n >= 1")
        try:
            n = int(tail)
        except ValueError:
            raise InvalidInputError(f"link: LF_EXP_TAYLOR:n needs an integer n; got {name!r}") from None
        return exp_taylor(n)
    names = ", ".join([*LINKS, "LF_EXP_TAYLOR:<n>"])
    raise InvalidInputError(f"link must be one of {names} (or a short form such as t1, seg3, exp); got {name!r}")

