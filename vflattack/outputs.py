r"""What a model's published outputs imply when its link is not softmax (docs/vflattack.md,
"What each framework publishes, and how to audit it").

A deployment with link h publishes ``v_j = yhat_scale * h(z_j)`` for each output j, with
``z_j = W_act[j] y + W_pas[j] x + b[j]`` (one-vs-rest sigmoids, the logit itself, or one of
SecretFlow-Serving's links). A release (:class:`vflattack.Release`: exact, rounded, noisy,
float32, ...) says the published value lies within ``[v - t, v + t]``; the link maps that
interval to the interval of logits that could have produced it
(:meth:`vflattack.links.Link.preimage`: a point where h is strictly monotone, a half-line where
it saturates, the hull of a union where a polynomial link turns, marked ``outer``). Each output
then gives one **interval row** ``L_j <= W_pas[j] x <= U_j``: k rows, not the k - 1 differences
of a softmax. The record always lies in the set (every bound is rounded outward). An interval no wider
than chebcenter's row tolerance (2 tau, about 1e-9 of the row's reach) is solved as the
equation through its midpoint; chebcenter then widens the radius by a proven bound on what
that moves (its ``extras["forward_error"]``, chebcenter's docs/theory.md section 6.8), so
the record stays inside the certified radius there too.

**float32 deployments** (``VFLModel.precision == "float32"``: SecretFlow's links, a torch
bottom model) compute the logits and the value in float32. Two more terms widen the rows:

* the value: for the identity link the published float32 number is the logit itself (its
  error is the logit's, below); for ``ovr`` the sigmoid is evaluated in float32 as torch does,
  ``1 / (1 + exp(-z))``: three operations of at most half an ulp each and an ``exp`` of at most
  2 ulps (u = 2^-24 relative), together within ``(1 + u)^3 (1 + 4u) - 1 < 8u`` of the exact
  sigmoid of the float32 logit, so each value is widened by ``8 u |v|``, or half a subnormal
  spacing below 2^-126 (precision float32 is refused for SecretFlow's links, which its
  serving applies in double);
* the logit: a float32 dot product of n terms, with the weights and features themselves
  rounded to float32, is within ``gamma_{n+3} (sum |W_act[j]| |y| + sum |W_pas[j]| + |b_j|)``
  of the real one (Higham, Accuracy and Stability, §3.1, ``gamma_m = m u / (1 - m u)``; the 3
  covers the casts of the weight, the feature and the intercept's addition; ``|x| <= 1`` on the
  box).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validate import InvalidInputError, as_active
from .model import VFLModel, _output_link
from .release import TABLE, BoundedSystem
from .system import ScoreFlag

__all__ = ["OUTPUT_RELEASES", "output_bounds", "published_outputs"]

#: the release kinds that bound each published value on its own, which is what a link's
#: outputs take (the others read orders or pairs of softmax scores)
#: (each kind's ``output_links`` in :data:`vflattack.release.TABLE`: any link, then ovr's only)
OUTPUT_RELEASES = tuple([name for name, e in TABLE.items() if e.output_links == "any"]
                        + [name for name, e in TABLE.items() if e.output_links == "ovr"])
_U32 = 2.0 ** -24
_F32_ABS = 2.0 ** -150
_EPS = np.finfo(float).eps


def _gamma32(m: int) -> float:
    return m * _U32 / (1.0 - m * _U32)


def published_outputs(model: VFLModel, Y: Any, X: Any) -> np.ndarray:
    """What a deployment of ``model`` publishes, as it computes it: float64 outputs, or for a
    float32 model, the weights, features and logits in float32 and the value rounded to
    float32 (returned as float64 numbers that are float32 values); ovr's sigmoid is evaluated
    in float32, as ``torch.sigmoid`` is.

    Examples
    --------
    >>> import numpy as np, vflattack as va
    >>> m = va.VFLModel(np.zeros((1, 0)), np.array([[1.0, 1.0]]), np.zeros(1), link="identity", precision="float32")
    >>> v = published_outputs(m, None, np.array([[0.1, 0.2]]))
    >>> bool(v[0, 0] == np.float32(0.1) + np.float32(0.2)), bool(v[0, 0] == 0.1 + 0.2)   # float32's sum
    (True, False)
    """
    if model.precision != "float32":
        return model.outputs(Y, X)
    X = np.asarray(X, dtype=float)
    Y = as_active("Y", Y, X.shape[0], model.n_active)
    f32 = np.float32
    z = (Y.astype(f32) @ model.W_act.T.astype(f32) + X.astype(f32) @ model.W_pas.T.astype(f32)
         + model.b.astype(f32)).astype(float)
    with np.errstate(all="ignore"):
        if model.link == "ovr":   # in float32, as torch.sigmoid
            z32 = z.astype(f32)
            v = f32(1.0) / (f32(1.0) + np.exp(-z32))
        else:
            v = model.yhat_scale * np.asarray(_output_link(model.link)(z), dtype=float)
    return np.asarray(v).astype(f32).astype(float)


def output_bounds(model: VFLModel, released: Any, Y: Any, release: Any):
    """The interval rows ``L <= W_pas x <= U`` that a link model's published outputs imply
    (module docstring): a :class:`vflattack.release.BoundedSystem` with one row per output,
    whose ``outer`` marks the rows where a non-monotone link's preimage was replaced by its hull.

    Examples
    --------
    >>> import numpy as np, vflattack as va
    >>> m = va.VFLModel(np.zeros((1, 0)), np.array([[2.0, 2.0]]), np.zeros(1), link="t1", precision="float64")
    >>> sysb = output_bounds(m, np.array([[1.0], [0.75]]), None, va.Release())
    >>> sysb.L.round(9).tolist(), sysb.U.round(9).tolist()   # a saturated 1: z >= 2, up to z's reach 4
    ([[2.0], [1.0]], [[4.0], [1.0]])
    """
    links = release.entry.output_links
    if links is None or (links == "ovr" and model.link != "ovr"):
        allowed = ", ".join(k for k in OUTPUT_RELEASES if TABLE[k].output_links == "any" or model.link == "ovr")
        raise InvalidInputError(f"release {release.spec!r} reads softmax scores; a model with link {model.link!r} "
                                f"publishes each output on its own: release must be one of {allowed}")
    V = np.asarray(released, dtype=np.float64)
    k = model.n_classes
    if V.ndim == 1 and k == 1:
        V = V[:, None]
    if V.ndim != 2 or V.shape[1] != k:
        raise InvalidInputError(f"released outputs must have shape (N, {k}) (one column per output of link "
                                f"{model.link!r}); got shape {V.shape}")
    N = V.shape[0]
    flags = np.zeros(N, dtype=np.int64)
    finite = np.all(np.isfinite(V), axis=1)
    flags[~finite] |= int(ScoreFlag.NONFINITE)
    Vf = np.where(finite[:, None], V, 0.0)
    v_lo, v_hi = _value_interval(model, Vf, release)
    Y = as_active("Y", Y, N, model.n_active)
    W = model.W_pas
    shift = Y @ model.W_act.T + model.b
    n = model.n_active + model.n_passive
    # the logit's float32 evaluation error (module docstring); zero in float64, where the
    # outward rounding below covers the arithmetic
    s32 = (_gamma32(n + 3) * (np.abs(Y) @ np.abs(model.W_act).T + np.abs(W).sum(axis=1) + np.abs(model.b))
           if model.precision == "float32" else np.zeros((N, k)))
    z_lo = shift + np.minimum(W, 0.0).sum(axis=1) - s32
    z_hi = shift + np.maximum(W, 0.0).sum(axis=1) + s32
    link = _output_link(model.link)
    lo, hi, outer = (np.asarray(a) for a in link.preimage(v_lo, v_hi, z_lo, z_hi, scale=model.yhat_scale))
    lo, hi, outer = (np.broadcast_to(a, (N, k)).copy() for a in (lo, hi, outer))
    empty = ~(lo <= hi)
    flags[finite & np.any(empty, axis=1)] |= int(ScoreFlag.IMPOSSIBLE)
    with np.errstate(invalid="ignore"):
        # outward rounding of the float64 arithmetic here, as release_to_bounds rounds its rows
        slack = 4.0 * (8 + n) * _EPS * (1.0 + np.abs(shift) + np.abs(W).sum(axis=1)
                                        + np.where(np.isfinite(lo), np.abs(lo), 0.0)
                                        + np.where(np.isfinite(hi), np.abs(hi), 0.0))
        L = lo - shift - slack - s32
        U = hi - shift + slack + s32
    L[flags != 0], U[flags != 0] = np.nan, np.nan
    outer[flags != 0] = False
    return BoundedSystem(W, L, U, tuple((j,) for j in range(k)), flags, outer=outer)


def _value_interval(model, V, release):
    """``[v - t, v + t]``: the release's half-width (and for clip, the clipped ends opened),
    widened by the float64 arithmetic of the release itself (4 ulps of the value) and, for a
    float32 model, by float32's rounding of the value."""
    if release.entry.clips:
        t = np.zeros_like(V)
    else:
        t = np.broadcast_to(np.asarray(release.half_widths(V), dtype=float), V.shape)
    t = t + 4.0 * _EPS * np.abs(V)
    if model.precision == "float32":   # module docstring: 8 u |v| bounds ovr's float32 sigmoid (and a cast)
        t = t + np.maximum(8.0 * _U32 * (np.abs(V) + t), _F32_ABS)
    v_lo, v_hi = V - t, V + t
    if release.entry.clips:
        eps = release.value
        v_lo = np.where(np.isclose(V, eps, rtol=0, atol=1e-12), 0.0, v_lo)
        v_hi = np.where(np.isclose(V, 1.0 - eps, rtol=0, atol=1e-12), 1.0, v_hi)
    return v_lo, v_hi
