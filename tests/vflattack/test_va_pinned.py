""""Pinned" is judged against the deployment's own rounding (vflattack.audit.privacy, module
docstring): with exactly published values, a feature is pinned when its range is at most tau of
its side plus the width the rounding alone leaves, noise_j = sum_i |A^+_ji| min(U_i - L_i, span_i).

The reference for noise_j is a linear program solved by SciPy's HiGHS (the range of x_j over
{x in R^d : L <= A x <= U}, no box), independent of the closed form and of chebcenter's ranges."""

import numpy as np
import pytest
from scipy.optimize import linprog

import vflattack as va
from vflattack.audit.privacy import exposure
from vflattack.outputs import published_outputs
from vflattack.release import release_to_bounds


def _float32_client(d, k, N=40, seed=0):
    rng = np.random.default_rng(seed)
    X = 0.25 + 0.5 * rng.random((N, d))      # inside the box: the box plays no part in the ranges
    m = va.VFLModel(np.zeros((k, 0)), rng.standard_normal((k, d)).astype(np.float32),
                    rng.standard_normal(k).astype(np.float32), link="identity", precision="float32")
    sb = release_to_bounds(m, published_outputs(m, None, X), None, va.Release())
    return m, X, sb


def test_the_noise_width_is_the_linear_programs_range_when_a_is_square():
    m, X, sb = _float32_client(4, 4)
    e = exposure(m, None, sb.valid, system=sb, rounding_only=True)
    A = m.row_matrix
    for n in range(3):
        for j in range(4):
            c = np.zeros(4)
            c[j] = 1.0
            G, h = np.vstack([A, -A]), np.concatenate([sb.U[n], -sb.L[n]])
            lo = linprog(c, A_ub=G, b_ub=h, bounds=[(None, None)] * 4, method="highs")
            hi = linprog(-c, A_ub=G, b_ub=h, bounds=[(None, None)] * 4, method="highs")
            width = -hi.fun - lo.fun
            # HiGHS's primal feasibility tolerance 1e-7 on rows of size ~1: the LP's width is
            # known to ~1e-7 |A^-1| absolute; the widths here are ~1e-5
            assert e.noise[n, j] == pytest.approx(width, rel=0, abs=1e-6 * np.abs(np.linalg.inv(A)).sum())
            assert e.noise[n, j] == pytest.approx(width, rel=0.05)
    # every feature is pinned to float32's precision: a fixed threshold of 1e-12 finds none
    assert e.pinned(0.0).all()
    assert not np.any(e.upper - e.lower <= 1e-12)


def test_a_free_direction_is_not_pinned_and_exact_scores_leave_no_noise():
    m, X, sb = _float32_client(5, 4)
    e = exposure(m, None, sb.valid, system=sb, rounding_only=True)
    assert not e.pinned(0.0).any() and e.pinned(1.0).all()
    rng = np.random.default_rng(1)
    sm = va.VFLModel(np.zeros((3, 0)), rng.standard_normal((3, 4)), np.zeros(3))
    Xs = rng.random((30, 4))
    from vflattack.system import scores_to_system

    # a deliberate release is the protection measured, not a floor: rounded scores keep width <= tau
    rel = va.Release("round", 2)
    sr = release_to_bounds(sm, rel.publish(sm, None, Xs), None, rel)
    er = exposure(sm, None, sr.valid, system=sr)
    assert np.all(er.noise == 0)
    lin = scores_to_system(sm, sm.predict_proba(None, Xs), None)
    es = exposure(sm, np.nan_to_num(lin.B), lin.valid)
    assert np.all(es.noise == 0)
    width = es.upper - es.lower
    assert np.array_equal(es.pinned(0.2), width <= 0.2 + 2 * es.range_error[:, None] + 1e-12)


def test_the_audit_reports_pinned_beyond_the_noise():
    from vflattack.report import render

    res = va.run_audit("wine", n_passive=(3,), methods=("exact",), link="identity", precision="float32",
                       tau=0.0, seeds=(0,))
    rec = res.records[0]
    assert rec.rank == 3 and np.allclose(rec.privacy["pinned"], 1.0)
    # float32's relative rounding (6e-8) of logits of size ~10, amplified by |A^+|: a small share of a range
    assert 0 < rec.privacy["noise_width"] < 1e-2
    assert "beyond the deployment's rounding" in render(res).table()


def test_a_saturated_output_is_no_floor():
    """A sigmoid published as 1.0 bounds its logit by a wide interval: the link is flat, not the
    value rounded; the feature it carries is not pinned at tau = 0 (it was, with its width as
    the floor)."""
    m = va.VFLModel(np.zeros((2, 0)), np.array([[100.0, 0.0], [0.0, 1.0]]), np.zeros(2), link="ovr")
    x = np.array([[0.9, 0.5]])
    sb = release_to_bounds(m, m.outputs(None, x), None, va.Release())
    assert sb.U[0, 0] - sb.L[0, 0] > 1.0            # saturated: the first output is 1.0
    e = exposure(m, None, sb.valid, system=sb, rounding_only=True)
    assert e.noise[0, 0] < 1e-6 and not e.pinned(0.0)[0, 0]


def test_a_float32_release_is_rounding_and_a_rounded_one_is_protection():
    """The release table says which kinds are the deployment's own number format
    (ReleaseKind.arithmetic): float32's width is a floor of the pinned rule, six decimals' is not."""
    kw = dict(n_passive=(2,), methods=("exact",), tau=0.0, seeds=(0,))
    f32 = va.run_audit("wine", release=va.Release("float32"), **kw).records[0].privacy
    r6 = va.run_audit("wine", release=va.Release("round", 6), **kw).records[0].privacy
    assert f32["noise_width"] > 0 and r6["noise_width"] == 0
    assert np.nanmean(f32["pinned"]) > np.nanmean(r6["pinned"])
