"""Link functions and their preimages (vflattack/links.py, docs/links.md): every z whose value
lies in a published interval is inside the preimage (brute force, down to giant z and the
polynomial links' turning points), the preimage is tight to a grid, `outer` marks a gap, the
forward values are those of the SecretFlow-Serving source worked by hand, and bad input is
refused naming the argument."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from vflattack._validate import InvalidInputError
from vflattack.links import LINKS, exp_taylor, get_link

ALL = [*LINKS.values(), exp_taylor(3)]
IDS = [lk.name for lk in ALL]
SPECIAL = [0.0, -2.0, 2.0, -4.0, 4.0, -3.75, 3.75, -35.75, 35.75, -5.87, 5.87, 1e6, -1e6, 1e20, -1e20, 1e45, -1e45,
           1e62, -1e62, 1e110, -1e110, 1e160, -1e160, 1e300, -1e300, -8.0, 8.0]
#: the grid's range per link (finite, where the link is not flat to float64)
RANGE = {"LF_SIGMOID_SEG5": (-40.0, 40.0), "LF_EXP": (-5.0, 5.0), "LF_EXP_TAYLOR:3": (-14.0, 3.0)}


def _z(lk, rng):
    lo, hi = RANGE.get(lk.name, (-8.0, 8.0))
    tp = lk.turning_points()
    tp = tp[np.abs(tp) < 1e100]
    z = np.concatenate([rng.uniform(lo, hi, 30), 30.0 * rng.standard_normal(6), SPECIAL, tp,
                        np.nextafter(tp, np.inf), np.nextafter(tp, -np.inf)])
    with np.errstate(all="ignore"):
        return z[~np.isnan(lk(z))]


@pytest.mark.parametrize("lk", ALL, ids=IDS)
@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_preimage_holds_every_z_whose_value_is_published(lk, scale):
    rng = np.random.default_rng(7)
    z = _z(lk, rng)
    with np.errstate(all="ignore"):
        v = scale * lk(z)          # as the framework publishes it: fl(scale * h(z))
    # one call: each z with four widths, once with z free and once within [z - 1, z + 1]
    t = np.tile(np.repeat([0.0, 1e-6, 1e-3, 0.05], z.size), 2)
    zz, vv = np.tile(z, 8), np.tile(v, 8)
    free = np.arange(zz.size) < 4 * z.size
    zl, zh = np.where(free, -np.inf, zz - 1.0), np.where(free, np.inf, zz + 1.0)
    with np.errstate(all="ignore"):
        lo, hi, outer = lk.preimage(vv - t, vv + t, zl, zh, scale=scale)
    miss = ~((lo <= zz) & (zz <= hi))
    assert not miss.any(), (zz[miss][:5], vv[miss][:5], lo[miss][:5], hi[miss][:5])
    assert np.all((lo >= zl) & (hi <= zh))


@pytest.mark.parametrize("lk", ALL, ids=IDS)
def test_preimage_is_tight_on_a_grid_and_outer_marks_a_gap(lk):
    """Grid of 200 001 points: every feasible grid point is inside [lo, hi]; lo and hi are
    within a grid spacing plus 1e-6 (the padding: 4 error bounds of h over |h'|, below 1e-6
    on these ranges, turning points included) of a feasible grid point; a gap of more than 3
    spacings in the feasible grid means outer, and a monotone link is never outer."""
    zl, zh = RANGE.get(lk.name, (-8.0, 8.0))
    g = np.linspace(zl, zh, 200_001)
    step = g[1] - g[0]
    tol = step + 1e-6
    with np.errstate(all="ignore"):
        hg = lk(g)
        jump = np.abs(np.diff(hg))
    dv = np.maximum(np.r_[jump, 0.0], np.r_[0.0, jump]) + 1e-12   # h's move to a grid neighbour
    rng = np.random.default_rng(3)
    picks = rng.choice(g.size, 5, replace=False)
    tp = lk.turning_points()
    tp = tp[(tp > zl) & (tp < zh)]
    picks = np.concatenate([picks, np.searchsorted(g, tp), [0, g.size - 1]])
    picks = picks[~np.isnan(hg[picks])]
    k = picks.size
    v = np.tile(hg[picks], 3)
    ts = np.repeat([0.0, 1e-3, 0.05], k)
    lo, hi, outer = lk.preimage(v - ts, v + ts, zl, zh)   # one call for all rows
    for i in range(v.size):
        t = ts[i]
        feas = (hg >= v[i] - t) & (hg <= v[i] + t)
        idx = np.nonzero(feas)[0]
        assert idx.size
        assert lo[i] <= g[idx[0]] and g[idx[-1]] <= hi[i], (lk.name, v[i], t)
        # near-feasible: within the move to a neighbour (a crossing between grid points)
        near = np.nonzero((hg >= v[i] - t - dv) & (hg <= v[i] + t + dv))[0]
        assert lo[i] >= g[near[0]] - tol and hi[i] <= g[near[-1]] + tol, (lk.name, v[i], t, lo[i], g[near[0]], hi[i])
        if idx.size > 1 and np.max(np.diff(idx)) > 3:
            assert outer[i], (lk.name, v[i], t)
        if lk.turning_points().size == 0:
            assert not outer[i]


def test_turning_points_bracket_a_sign_change_of_the_exact_derivative():
    """Each guard [tau - d, tau + d] holds a root of p' (p with the links' exact float64
    coefficients, in rational arithmetic), and p' keeps its sign on the monotone pieces."""
    n = 0
    for lk in LINKS.values():
        for p in lk.pieces:
            if p.kind != 2:
                continue
            c = [Fraction(x) for x in p.coefs]

            def dp(x, c=c):
                x = Fraction(x)
                return sum(k * c[k] * x ** (k - 1) for k in range(1, len(c)))
            assert dp(p.a) * dp(p.b) < 0, (lk.name, p.a, p.b)
            n += 1
    assert n >= 8   # MM3 2, T3 2, T7 2, LS7 2, SEGLS 2
    for name in ("LF_SIGMOID_T7", "LF_SIGMOID_MM3", "LF_SIGMOID_LS7"):
        lk = LINKS[name]
        mono = [p for p in lk.pieces if p.kind in (1, -1)]
        guard = next(p for p in lk.pieces if p.kind == 2)
        c = [Fraction(x) for x in guard.coefs]
        for p in mono:
            a, b = max(p.a, -50.0), min(p.b, 50.0)
            for x in np.linspace(a, b, 41):
                d = sum(k * c[k] * Fraction(float(x)) ** (k - 1) for k in range(1, len(c)))
                assert d * p.kind > 0, (name, x)


def _near(got, want, tol=1e-13):
    """``got`` is ``want`` up to the padding (a few ulps of the value over |h'|: below 1e-13
    here), and on the outer side of it where ``want`` is an end of the exact preimage."""
    lo, hi = float(got[0]), float(got[1])
    return (lo <= want[0] and lo >= want[0] - tol) and (hi >= want[1] and hi <= want[1] + tol)


def test_closed_forms_by_hand():
    t1 = get_link("t1")
    lo, hi, outer = t1.preimage(0.75, 0.75)          # 0.5 + 0.25 z = 0.75  =>  z = 1
    assert _near((lo, hi), (1.0, 1.0)) and not outer
    assert _near(t1.preimage(1.0, 1.0, -10.0, 10.0), (2.0, 10.0))   # saturated: z >= 2
    assert _near(t1.preimage(0.0, 0.0), (-np.inf, -2.0))             # z <= -2
    assert _near(get_link("identity").preimage(-1.5, 2.0), (-1.5, 2.0), 1e-15)   # one float outward
    assert _near(get_link("sigmoid").preimage(0.5, 0.5), (0.0, 0.0))   # logit(0.5) = 0
    assert _near(get_link("sigmoid").preimage(0.5, 1.0), (0.0, np.inf))   # one-sided: z >= 0
    s2 = 1 / (1 + np.exp(-2.0))
    lo, hi, _ = get_link("sigmoid").preimage(s2, s2)
    assert abs(float(lo) - 2.0) < 1e-13 and abs(float(hi) - 2.0) < 1e-13
    lo, hi, _ = get_link("exp").preimage(np.e, np.e)     # log
    assert abs(float(lo) - 1.0) < 1e-14 and abs(float(hi) - 1.0) < 1e-14
    assert _near(get_link("seg3").preimage(0.25, 0.75), (-2.0, 2.0))   # 0.5 + 0.125 z in [0.25, 0.75]
    lo, hi, outer = get_link("reciprocal").preimage(-1.0, 1.0, -4.0, 4.0)   # 1/z in [-1, 1]: |z| >= 1
    assert (float(lo), float(hi), bool(outer)) == (-4.0, 4.0, True)
    assert _near(get_link("reciprocal").preimage(0.5, 1.0), (1.0, 2.0))     # 1/z in [0.5, 1]: z in [1, 2]
    lo, hi, outer = exp_taylor(3).preimage(1.0, 1.0)     # (1 + z/8)^8 = 1: z = 0 or z = -16
    assert _near((lo, hi), (-16.0, 0.0), 1e-12) and bool(outer)
    lo, hi, _ = get_link("exp").preimage(-1.0, -0.5)     # nothing fits
    assert float(lo) == np.inf and float(hi) == -np.inf
    assert _near(get_link("t3").preimage(1.0, 1.0), (2.0, np.inf), 0.0)   # 1 for z > 2 (the source: x > 2)
    lo, hi, _ = get_link("t3").preimage(0.9, 0.95)       # T3 jumps from 0.8333 to 1 at 2: nothing
    assert float(lo) > float(hi)
    # scale 2: h in [0.125, 0.375] => 0.5 + 0.25 z there => z in [-1.5, -0.5]
    assert _near(get_link("t1").preimage(0.25, 0.75, scale=2.0), (-1.5, -0.5))


def test_forward_values_worked_by_hand_from_the_source():
    f32_1_48 = 11184811 / 2 ** 29      # float32(1/48): 2^29 / 48 = 11184810.67 -> 11184811 (24 bits)
    f32_1_480 = 8947849 / 2 ** 32      # float32(1/480): 2^32 / 480 = 8947848.53 -> 8947849
    f32_17_80640 = 14486993 / 2 ** 36  # float32(17/80640): 2^36 * 17 / 80640 = 14486992.86 -> 14486993
    f32_0197 = 6610223 / 2 ** 25       # float32(0.197): 0.197 * 2^25 = 6610223.10 -> 6610223
    f32_0004 = 8589935 / 2 ** 31       # float32(0.004): 0.004 * 2^31 = 8589934.59 -> 8589935
    cases = [
        ("t1", 1.0, 0.75),                                 # 0.5 + 0.25
        ("t1", -3.0, 0.0),                                 # 0.5 - 0.75 = -0.25, clamped to 0
        ("t1", 2.0, 1.0),
        ("t3", 1.0, 0.75 - f32_1_48),                      # 0.5 + 0.25 + 1^3 * (-1/48 in float32)
        ("t3", 2.5, 1.0), ("t3", -2.5, 0.0),               # x > 2 -> 1, x < -2 -> 0
        ("t3", 2.0, 1.0 - 8 * f32_1_48),                   # 0.5 + 0.5 - 8 / 48: the jump to 1 comes after 2
        ("t5", 1.0, 0.75 - f32_1_48 + f32_1_480),          # T3 unclamped + 1^5 / 480
        ("t7", 1.0, 0.75 - f32_1_48 + f32_1_480 - f32_17_80640),
        ("mm1", 2.0, 0.75),                                # 0.5 + 0.125 * 2, not clamped:
        ("mm1", 8.0, 1.5),                                 # 0.5 + 1
        ("mm3", 1.0, 0.5 + f32_0197 - f32_0004),
        ("seg3", 2.0, 0.75), ("seg3", 4.0, 1.0), ("seg3", 5.0, 1.0), ("seg3", -5.0, 0.0),
        ("seg5", 10.0, 0.974853515625),                    # 0.965087890625 + 10/1024 = 0.965087890625 + 0.009765625
        ("seg5", -10.0, 0.025146484375),                   # 0.034912109375 - 0.009765625
        ("seg5", 2.0, 0.75), ("seg5", 36.0, 1.0), ("seg5", -36.0, 0.0),
        ("df", 1.0, 0.75),                                 # 0.5 * (1 / 2) + 0.5
        ("df", 3.0, 0.875),                                # 0.5 * (3 / 4) + 0.5
        ("sr", 1.0, 0.5 / np.sqrt(2.0) + 0.5),             # 0.5 * 1 / sqrt(2) + 0.5
        ("sr", 1e200, 0.5),                                # pow(x, 2) = inf: x / inf = 0 -> 0.5
        ("raw", 0.0, 0.5), ("exp", 0.0, 1.0),
        ("reciprocal", 4.0, 0.25),
        ("ls7", 0.0, 5.00052959e-01),                      # the constant term
        ("segls", 10.0, 0.5 * 10.0 / np.sqrt(101.0) + 0.5),   # |x| > 5.87: SR
        ("exp_taylor:3", 8.0, 256.0),                      # (1 + 8/8)^8
        ("exp_taylor:3", -16.0, 1.0),                      # (1 - 2)^8
        ("exp_taylor:3", -8.0, 0.0),
    ]
    for name, z, want in cases:
        assert float(get_link(name)(z)) == want, (name, z)
    assert np.isnan(get_link("reciprocal")(0.0))


def test_spellings_and_catalogue():
    assert get_link("LF_SIGMOID_T1") is get_link("t1") is get_link("Sigmoid_T1") is LINKS["LF_SIGMOID_T1"]
    assert get_link("EXP").name == "LF_EXP" and get_link("seg3").name == "LF_SIGMOID_SEG3"
    assert get_link(LINKS["identity"]) is LINKS["identity"]
    for lk in LINKS.values():
        assert lk.description and lk.source and all(get_link(s) is lk for s in lk.spellings)
    assert {lk.name for lk in LINKS.values() if lk.float32} == {
        "LF_SIGMOID_MM3", "LF_SIGMOID_GA", "LF_SIGMOID_T3", "LF_SIGMOID_T5", "LF_SIGMOID_T7", "LF_SIGMOID_T9"}
    assert LINKS["LF_SIGMOID_T9"].turning_points().size == 0
    assert np.allclose(np.abs(LINKS["LF_SIGMOID_T7"].turning_points()), 2.27788794, atol=1e-8)


def test_bad_input_is_refused():
    with pytest.raises(InvalidInputError, match="link") as e:
        get_link("softplus")
    assert "LF_SIGMOID_T1" in str(e.value) and "identity" in str(e.value)
    with pytest.raises(InvalidInputError, match="link"):
        get_link("LF_EXP_TAYLOR")
    with pytest.raises(InvalidInputError, match="link"):
        get_link(3)
    for s in (0.0, -1.0, np.nan, np.inf, "2"):
        with pytest.raises(InvalidInputError, match="scale"):
            LINKS["sigmoid"].preimage(0.1, 0.2, scale=s)
    with pytest.raises(InvalidInputError, match="v_lo"):
        LINKS["sigmoid"].preimage(np.nan, 0.2)
