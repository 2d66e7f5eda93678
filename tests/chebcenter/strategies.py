"""Hypothesis strategies: random full-rank and rank-deficient A, planted x, boxes."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


@st.composite
def instances(draw, max_d=7, min_p=0, general_box=True, bound_hits=True):
    """(A, lo, hi, x) with x planted in [lo, hi]; A may be rank-deficient.

    * rank deficiency by repeating rows or by a low-rank product;
    * some planted coordinates sit exactly at a bound (as after min-max scaling).
    """
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    rank = draw(st.integers(0, max(d - min_p, 0)))
    kind = draw(st.sampled_from(["full", "repeat", "lowrank"]))
    if kind == "full" or rank == 0:
        A = rng.standard_normal((rank, d))
    elif kind == "repeat":  # a duplicated row: m = rank + 1
        base = rng.standard_normal((rank, d))
        A = np.vstack([base, 2.0 * base[:1]])
    else:  # (rank + 1) x d of rank `rank`
        A = rng.standard_normal((rank + 1, rank)) @ rng.standard_normal((rank, d))
    if general_box and draw(st.booleans()):
        lo = rng.uniform(-2.0, 0.5, d)
        hi = lo + rng.uniform(0.2, 2.0, d)
    else:
        lo, hi = np.zeros(d), np.ones(d)
    x = lo + (hi - lo) * rng.random(d)
    if bound_hits and d > 1:
        hits = rng.random(d) < 0.25
        x[hits] = np.where(rng.random(hits.sum()) < 0.5, lo[hits], hi[hits])
    return A, lo, hi, x


def scaled(n: int) -> int:
    """Example count for expensive properties: n by default, 6n under HYPOTHESIS_PROFILE=ci."""
    import os

    return n * 6 if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else n
