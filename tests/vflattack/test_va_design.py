"""Release design (vflattack.design_release): the finest release that meets a certified target.

Every expectation comes from outside the design's own code path: closed forms on one passive
feature (the set is an interval of x, r* its half length), brute force on two (the preimage
polygon clipped by hand from the exact k = 2 preimage, its minimum enclosing circle over all
pairs and triples of vertices), and the white-box attack run on the chosen release as a
deployment would publish it (``Release.publish``), whose exact method's dual bound is read.
"""

from __future__ import annotations

import itertools
import json
import math
import pathlib

import numpy as np
import pytest

import vflattack as va
from vflattack.audit import Target, build_scenario, load_data
from vflattack.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::vflattack.UnreadableReleaseWarning")


def _logit(p):
    return math.log(p) - math.log1p(-p)


def _one_feature(w, b):
    """k = 2, no active feature, one passive: P(class 1) = sigmoid(w x + b)."""
    return va.VFLModel(np.zeros((2, 0)), np.array([[0.0], [w]]), np.array([0.0, b]))


# the record of docs/vflattack.md: P(class 1) = 0.0502 and the box maps to P in [0.0451, 0.0505]
_W = _logit(0.0505) - _logit(0.0451)
_B = _logit(0.0451)
_X0 = (_logit(0.0502) - _B) / _W


def _x_interval(p_lo, p_hi):
    """{x in [0, 1] : P(class 1) in [p_lo, p_hi]} for the model (_W, _B): closed form."""
    lo = 0.0 if p_lo <= 0 else max(0.0, (_logit(p_lo) - _B) / _W)
    hi = 1.0 if p_hi >= 1 else min(1.0, (_logit(p_hi) - _B) / _W)
    return lo, hi


def _closed_form_radius(K):
    """r* of the record's preimage at K decimals: half the x interval (d = 1)."""
    c = round(0.0502, K)
    delta = 0.5 * 10.0 ** -K
    lo, hi = _x_interval(c - delta, c + delta)
    return 0.5 * (hi - lo)


def test_the_record_where_decimals_are_not_monotone():
    # closed forms first: 2 decimals hide the record, 1 and 3 do not (the grids are not nested)
    r = {K: _closed_form_radius(K) for K in (1, 2, 3)}
    assert r[2] == pytest.approx(0.5, abs=1e-12) and r[1] < 0.1 and r[3] < 0.1
    m = _one_feature(_W, _B)
    assert m.predict_proba(None, np.array([[_X0]]))[0, 1] == pytest.approx(0.0502, abs=1e-12)
    res = va.design_release(m, None, np.array([[_X0]]), target="radius=0.1", kinds=("round",))
    curve = {c.release: c for c in res.curve}
    assert [curve[f"round:{K}"].meets for K in (1, 2, 3)] == [False, True, False]
    for K in (1, 2, 3):   # the certified value is a true lower bound, and tight in one dimension
        v = curve[f"round:{K}"].worst
        assert v <= r[K] + 1e-10
        assert v >= r[K] * (1 - 1e-6) - 1e-9
    assert res.release.spec == "round:2"
    assert res.finer.release == "round:3" and not res.finer.meets
    assert res.binding.tolist() == [0]


def test_chosen_release_meets_by_the_attack_and_one_step_finer_fails():
    F, labels, _ = load_data("breast_cancer")
    sc = build_scenario(F, labels, 0, n_passive=10)
    tau = 0.45
    res = va.design_release(sc.model, sc.Y, sc.X, target=f"radius={tau}", kinds=("round", "sig"))
    assert res.met and res.unreachable.size == 0
    d = sc.X.shape[1]
    # the independent route: publish as the deployment would, attack, read exact's dual bound
    pub = res.release.publish(sc.model, sc.Y, sc.X)
    att = va.whitebox_attack(sc.model, pub, sc.Y, ("exact",), release=res.release)
    lower = att.radius_lower["exact"] / np.sqrt(d)
    optimal = np.array([s == va.attacks.whitebox.cc.Status.OPTIMAL for s in att.status["exact"]])
    assert optimal.mean() > 0.9
    # exact's gap: radius <= radius_lower (1 + 1e-6) on OPTIMAL rows, so its lower bound may sit
    # that far below a radius the design certified with the ranges' half width
    assert np.all(lower[optimal] >= tau * (1 - 1e-6))
    finer = res.finer
    assert finer is not None and not finer.meets and finer.refuted >= 1
    # the binding records are exactly the ones one step finer leaves below the target
    assert res.binding.size == finer.failing
    assert np.all(res.records["finer_value"][res.binding] < tau)
    assert np.all(res.records["value"][res.binding] >= tau)
    rel = va.Release.parse(finer.release)
    att = va.whitebox_attack(sc.model, rel.publish(sc.model, sc.Y, sc.X), sc.Y, ("exact",), release=rel)
    ok = np.array([s == va.attacks.whitebox.cc.Status.OPTIMAL for s in att.status["exact"]])
    # a proven miss: some record's exact radius (an upper bound on r*) is below the target
    assert np.any(att.radii["exact"][ok] / np.sqrt(d) < tau)


def _clip(poly, a, c, keep_below):
    """Sutherland-Hodgman: the part of ``poly`` with a.x <= c (or >= c)."""
    s = 1.0 if keep_below else -1.0
    out = []
    n = len(poly)
    for i in range(n):
        p, q = poly[i], poly[(i + 1) % n]
        fp, fq = s * (a @ p - c), s * (a @ q - c)
        if fp <= 0:
            out.append(p)
        if fp * fq < 0:
            t = fp / (fp - fq)
            out.append(p + t * (q - p))
    return out


def _meb_radius(pts):
    """Minimum enclosing circle of a few points, by brute force over pairs and triples."""
    pts = np.array(pts)
    best = math.inf
    cands = []
    for i, j in itertools.combinations(range(len(pts)), 2):
        cands.append(((pts[i] + pts[j]) / 2, np.linalg.norm(pts[i] - pts[j]) / 2))
    for i, j, k in itertools.combinations(range(len(pts)), 3):
        a, b, c = pts[i], pts[j], pts[k]
        D = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
        if abs(D) < 1e-14:
            continue
        ux = ((a @ a) * (b[1] - c[1]) + (b @ b) * (c[1] - a[1]) + (c @ c) * (a[1] - b[1])) / D
        uy = ((a @ a) * (c[0] - b[0]) + (b @ b) * (a[0] - c[0]) + (c @ c) * (b[0] - a[0])) / D
        u = np.array([ux, uy])
        cands.append((u, np.linalg.norm(a - u)))
    for center, r in cands:
        if np.all(np.linalg.norm(pts - center, axis=1) <= r * (1 + 1e-12) + 1e-12):
            best = min(best, r)
    return 0.0 if len(pts) == 1 else best


def _two_feature_model(seed):
    rng = np.random.default_rng(seed)
    W_pas = np.vstack([np.zeros(2), rng.normal(0, 3, 2)])
    W_act = np.vstack([np.zeros(1), rng.normal(0, 1, 1)])
    b = np.array([0.0, rng.normal()])
    return va.VFLModel(W_act, W_pas, b), rng.random((12, 1)), rng.random((12, 2))


def _true_radii(m, Y, X, K):
    """r*/sqrt(2) of each record's exact preimage at K decimals (k = 2, d = 2), by brute force:
    the unit square clipped by the two lines of the log-odds interval, then the smallest
    circle enclosing the polygon's vertices."""
    P = m.predict_proba(Y, X)
    a = m.W_pas[1] - m.W_pas[0]
    square = [np.array(v, float) for v in ((0, 0), (1, 0), (1, 1), (0, 1))]
    delta = 0.5 * 10.0 ** -K
    out = []
    for n in range(len(X)):
        c1, c0 = round(P[n, 1], K), round(P[n, 0], K)
        lo, hi = max(c1 - delta, 1 - c0 - delta, 0.0), min(c1 + delta, 1 - c0 + delta, 1.0)
        shift = (m.W_act[1] - m.W_act[0]) @ Y[n] + m.b[1] - m.b[0]
        poly = square
        if lo > 0:
            poly = _clip(poly, a, _logit(lo) - shift, keep_below=False)
        if hi < 1:
            poly = _clip(poly, a, _logit(hi) - shift, keep_below=True)
        out.append(_meb_radius(poly) / math.sqrt(2))
    return np.array(out)


@pytest.mark.parametrize("seed", range(3))
def test_certificates_against_brute_force_in_two_dimensions(seed):
    m, Y, X = _two_feature_model(seed)
    tau = 0.2
    res = va.design_release(m, Y, X, target=f"radius={tau}", kinds=("round",), levels=(1, 2, 3))
    for cand in res.curve:
        r_true = _true_radii(m, Y, X, int(cand.parameter))
        # the curve keeps the smallest certified value: a lower bound of the smallest true r*
        # (where the feature ranges already settle a record, the certificate is their half width,
        # not r* itself); the verdict matches the brute force outside exact's gap (1e-6 relative)
        assert cand.worst <= r_true.min() + 1e-10
        if np.all(r_true >= tau + 1e-6):
            assert cand.meets
        if np.any(r_true < tau - 1e-6):
            assert not cand.meets


@pytest.mark.parametrize("K", [2, 3])
def test_every_record_certificate_is_a_lower_bound(K):
    """Record by record, on sets whose bounding box overstates r*: three classes whose
    log-odds are x1 + x2, x1 - x2 and x2 make each set a tilted polygon (a box's radius, an
    upper bound, exceeds its r*), at a target the feature ranges settle for most records.
    r* by brute force on the polygon the release's rows cut from the square."""
    s = 6.0
    m = va.VFLModel(np.zeros((3, 0)), np.array([[0.0, 0.0], [s, s], [s, -s]]), np.array([0.0, -s, 0.0]))
    X = np.random.default_rng(0).uniform(0.2, 0.8, (20, 2))
    res = va.design_release(m, None, X, target="radius=1e-6", kinds=("round",), levels=(K,))
    assert res.met
    rel = va.Release("round", K)
    sysb = va.release_to_bounds(m, rel.publish(m, None, X), None, rel)
    square = [np.array(v, float) for v in ((0, 0), (1, 0), (1, 1), (0, 1))]
    overstated = 0
    for n in range(len(X)):
        poly = square
        for a, lo, hi in zip(sysb.A, sysb.L[n], sysb.U[n]):
            if np.isfinite(lo):
                poly = _clip(poly, a, lo, keep_below=False)
            if np.isfinite(hi):
                poly = _clip(poly, a, hi, keep_below=True)
        r_true = _meb_radius(poly) / math.sqrt(2)
        assert res.records["value"][n] <= r_true + 1e-10, n
        box = np.ptp(np.array(poly), axis=0)
        overstated += 0.5 * np.linalg.norm(box) / math.sqrt(2) > r_true * (1 + 1e-3)
    assert overstated >= 10      # the family does what it is for


def test_records_the_label_cannot_protect_are_listed():
    w = 20.0
    m = _one_feature(w, -w * 0.1)             # the label says whether x > 0.1
    X = np.array([[0.05], [0.6], [0.8]])
    res = va.design_release(m, None, X, target="radius=0.1", kinds=("round",))
    # label 0 leaves x in [0, 0.1], r* = 0.05 < 0.1: proven, for every release that reveals the label
    assert res.unreachable.tolist() == [0] and res.proven_unreachable.tolist() == [0]
    assert res.records["label_upper"][0] == pytest.approx(0.05, abs=1e-9)
    assert res.records["label_value"][1] == pytest.approx(0.45, abs=1e-9)
    assert res.met          # judged on records 1 and 2
    assert "not protected even by the label alone" in res.headline()


def test_a_target_no_release_meets_says_so():
    res = va.design_release(_one_feature(_W, _B), None, np.array([[_X0]]), target="radius=0.6", kinds=("round",))
    assert not res.met and res.release is None and res.unreachable.tolist() == [0]
    assert res.headline().startswith("no release of kinds round meets radius=0.6")
    # the label meets it, no rounding does: x in [0, 1] maps to P in [0.12, 0.88], steep
    m = _one_feature(4.0, -2.0)
    res = va.design_release(m, None, np.array([[0.7]]), target="radius=0.2", kinds=("round",))
    assert res.label.meets and not res.met and all(not c.meets for c in res.curve)
    assert "the label alone meets it" in res.headline()


def test_exact_scores_that_meet_the_target_say_no_rounding_is_needed():
    """One equation x1 - x2 = 0 on the unit square: the slice is the diagonal, r* = sqrt(2)/2, so
    r*/sqrt(2) = 0.5 >= 0.1 from the exact scores themselves (closed form)."""
    m = va.VFLModel(np.zeros((2, 0)), np.array([[0.0, 0.0], [3.0, -3.0]]), np.zeros(2))
    res = va.design_release(m, None, np.array([[0.5, 0.5], [0.3, 0.3]]), target="radius=0.1", kinds=("round",))
    # the certified value is a lower bound on r*/sqrt(d) = 0.5, settled once it decides the target
    assert res.exact is not None and res.exact.meets and 0.1 <= res.exact.worst <= 0.5 + 1e-9
    assert res.headline().startswith("the exact scores already meet radius=0.1: no rounding or noise is needed")
    assert res.to_result().config["exact_meets"] is True
    # where the exact scores pin the record, the headline names a release as before
    res = va.design_release(_one_feature(_W, _B), None, np.array([[_X0]]), target="radius=0.01", kinds=("round",))
    assert not res.exact.meets and "already meet" not in res.headline()


def test_pinned_target_by_closed_form():
    m = _one_feature(_W, _B)
    res = va.design_release(m, None, np.array([[_X0]]), target="pinned=0.2", kinds=("round",))
    for c in res.curve:   # the width of the one feature's range is the x interval's length
        width = 2 * _closed_form_radius(int(c.parameter))
        assert c.worst == pytest.approx(width, abs=1e-9)
        assert c.meets == (width > 0.2)
    assert res.release.spec == "round:2"


def test_leakage_target_is_measured_by_the_prior_aware_attacks():
    F, labels, _ = load_data("breast_cancer")
    sc = build_scenario(F, labels, 0, n_passive=10)
    prior = va.Prior.from_data(sc.X_train)
    eps = 0.005
    res = va.design_release(sc.model, sc.Y, sc.X, target=f"leakage={eps}", kinds=("round",), prior=prior)
    assert res.met
    # the same numbers by hand: the prior mean's MSE minus the best projection's
    pub = res.release.publish(sc.model, sc.Y, sc.X)
    att = va.whitebox_attack(sc.model, pub, sc.Y, ("prior", "gaussian"), prior=prior, release=res.release)
    rows = att.common_rows()
    prior_mse = np.mean((sc.X[rows] - prior.mean) ** 2)
    best = min(np.mean((att.reconstructions[k][rows] - sc.X[rows]) ** 2) for k in ("prior", "gaussian"))
    assert prior_mse - best <= eps
    assert res.chosen.leakage == pytest.approx(prior_mse - best, rel=1e-9, abs=1e-12)
    assert res.finer.leakage > eps


def test_noise_candidates_keep_their_confidence():
    F, labels, _ = load_data("wine")
    sc = build_scenario(F, labels, 0, n_passive=4)
    res = va.design_release(sc.model, sc.Y, sc.X, target="radius=0.05", kinds=("gaussian",),
                            sigmas=(1e-3, 1e-2, 0.1), confidence=0.9)
    assert [c.parameter for c in res.curve] == [1e-3, 1e-2, 0.1]
    assert all(c.release.endswith(":0.9") for c in res.curve)
    if res.met:
        assert "Gaussian" in res.release.describe() and res.release.confidence == 0.9


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"target": "radius"}, "radius=TAU"),
    ({"target": "width=0.1"}, "target must be one of"),
    ({"target": "radius=-1"}, ">= 0"),
    ({"target": "radius=0.1", "kinds": ("rank",)}, "kinds must name"),
    ({"target": "radius=0.1", "levels": (0,)}, "levels must be integers"),
    ({"target": "radius=0.1", "sigmas": (0.0,)}, "sigmas must be"),
    ({"target": "radius=0.1", "confidence": 1.0}, "confidence"),
])
def test_bad_arguments_name_themselves(kwargs, words):
    m = _one_feature(_W, _B)
    with pytest.raises(va.InvalidInputError, match=words):
        va.design_release(m, None, np.array([[0.5]]), **kwargs)


def test_bad_data_is_refused():
    m = _one_feature(_W, _B)
    with pytest.raises(va.InvalidInputError, match="give X"):
        va.design_release(m, None, target="radius=0.1")
    with pytest.raises(va.InvalidInputError, match="X must have shape"):
        va.design_release(m, None, np.zeros((2, 3)), target="radius=0.1")
    with pytest.raises(va.InvalidInputError, match="summing to 1"):
        va.design_release(m, None, scores=np.array([[0.5, 0.6]]), target="radius=0.1")
    with pytest.raises(va.InvalidInputError, match="give X"):
        va.design_release(m, None, scores=np.array([[0.5, 0.5]]), target="leakage=0.1")
    assert Target.parse("pinned=0.2") == Target("pinned", 0.2)


def test_scores_instead_of_features_give_the_same_design():
    m = _one_feature(_W, _B)
    X = np.array([[_X0], [0.2], [0.7]])
    a = va.design_release(m, None, X, target="radius=0.1", kinds=("round",))
    b = va.design_release(m, None, scores=m.predict_proba(None, X), target="radius=0.1", kinds=("round",))
    assert a.release == b.release
    assert [c.worst for c in a.curve] == pytest.approx([c.worst for c in b.curve], abs=1e-12)


def test_report_files_and_html(tmp_path):
    res = va.design_release(_one_feature(_W, _B), None, np.array([[_X0], [0.3]]), target="radius=0.1",
                            kinds=("round", "sig"))
    rep = va.render(res)
    assert rep.table().startswith("design: the finest release meeting radius=0.1 is")
    paths = rep.write(tmp_path / "rep")
    doc = json.loads(pathlib.Path(paths["json"]).read_text())
    assert doc["config"]["release"] == res.release.spec
    assert len(doc["records"]) == len(res.curve) + 1          # the curve and the label
    html = pathlib.Path(paths["html"]).read_text()
    assert "design_curve.png" in html and "The binding records" in html
    assert pathlib.Path(paths["records"]).read_text().splitlines()[0].startswith("record,value,upper,reachable,binding")


def test_cli_design_on_the_bundled_data(tmp_path, capsys):
    out = tmp_path / "design"
    assert main(["design", "--target", "radius=0.45", "--kinds", "round", "--no-progress", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "the finest release meeting radius=0.45 is round:3" in text
    assert (out / "design_curve.png").exists() and va.verify_report(out)
    # a target no release meets: exit 4, and the reason
    assert main(["design", "--target", "radius=0.6", "--kinds", "round", "--no-progress"]) == 4
    assert "no release of kinds round meets radius=0.6" in capsys.readouterr().out


def test_cli_design_on_a_prediction_log(tmp_path, capsys):
    pytest.importorskip("dask")
    logdir = tmp_path / "log"
    assert main(["export-log", "--dataset", "wine", "--passive", "4", "--out", str(logdir)]) == 0
    capsys.readouterr()
    rc = main(["design", "--target", "radius=0.1", "--kinds", "round", "--no-progress",
               "--model", str(logdir / "model.json"), "--log", str(logdir / "predictions.parquet"),
               "--passive-log", str(logdir / "passive.parquet")])
    text = capsys.readouterr().out
    assert rc in (0, 4) and text.startswith("design: ")
    # the same design from the dataset directly: the log holds the same records and scores
    rc2 = main(["design", "--target", "radius=0.1", "--kinds", "round", "--no-progress", "--dataset", "wine",
                "--passive", "4"])
    assert rc2 == rc and capsys.readouterr().out.splitlines()[0] == text.splitlines()[0]
    assert main(["design", "--target", "radius=0.1", "--model", str(logdir / "model.json")]) == 2


def test_leakage_target_binds_no_record_and_needs_a_prior():
    rng = np.random.default_rng(1)
    m = va.VFLModel(rng.normal(size=(3, 2)), rng.normal(size=(3, 3)) * 3, rng.normal(size=3))
    Y, X = rng.normal(size=(6, 2)), rng.uniform(size=(6, 3))
    res = va.design_release(m, Y, X, target="leakage=0.02", kinds=("round",), levels=(1, 2, 3, 4))
    assert res.binding.size == 0 and not res.records["binding"].any()
    if res.finer is not None:
        assert f"leakage {res.finer.leakage:.3g} > 0.02" in res.headline()
    one = va.VFLModel(np.zeros((2, 0)), np.array([[0.0, 0.0], [1.0, 2.0]]), np.zeros(2))
    with pytest.raises(va.InvalidInputError, match="needs the adversary's prior"):
        va.design_release(one, None, np.array([[0.2, 0.3]]), target="leakage=0.5", kinds=("round",))


def test_the_chosen_release_is_the_one_evaluated():
    # a sigma and a confidence that their 6-digit names would round
    m = _one_feature(4.0, -2.0)
    res = va.design_release(m, None, np.array([[0.5], [0.9]]), target="radius=0.01", kinds=("gaussian",),
                            sigmas=(0.012345649,), confidence=0.9999999)
    assert res.release is not None
    assert res.release.value == 0.012345649 and res.release.confidence == 0.9999999
    with pytest.raises(va.InvalidInputError, match="sigmas must differ"):
        va.design_release(m, None, np.array([[0.5]]), target="radius=0.01", kinds=("gaussian",),
                          sigmas=(0.01, 0.0100000001))


@pytest.mark.parametrize("levels", [[float("nan")], [float("inf")], ["x"], [2.5], [True]])
def test_bad_levels_are_invalid_input(levels):
    with pytest.raises(va.InvalidInputError, match="levels must be integers"):
        va.design_release(_one_feature(_W, _B), None, np.array([[0.5]]), target="radius=0.1", levels=levels)


@pytest.mark.parametrize("sigmas", [["x"], [float("nan")], [-1.0], [True]])
def test_bad_sigmas_are_invalid_input(sigmas):
    with pytest.raises(va.InvalidInputError, match="sigmas must be"):
        va.design_release(_one_feature(_W, _B), None, np.array([[0.5]]), target="radius=0.1", sigmas=sigmas)


def test_a_model_of_another_link_is_refused():
    """The design's candidates are releases of softmax scores: an ovr or SecretFlow model is
    refused by name rather than designed on the wrong sets."""
    m = va.VFLModel(np.zeros((1, 0)), np.array([[1.0, 2.0]]), np.zeros(1), link="t1")
    with pytest.raises(va.InvalidInputError, match="model's link is 'LF_SIGMOID_T1'"):
        va.design_release(m, None, np.array([[0.5, 0.5]]), target="radius=0.1")
