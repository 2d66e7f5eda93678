"""Releases: what a published score implies (docs/theory.md §3, "Releases"). The record always lies in
the set a release gives (an outer approximation), so every certificate computed on it holds
for the record; saturated and label-only rows are attacked, impossible ones refused."""

from __future__ import annotations

import numpy as np
import pytest

import vflattack as va
from vflattack.system import ScoreFlag

SLACK = 1e-9


def _model(k, d=4, d_a=2, seed=0, scale=2.0):
    rng = np.random.default_rng(seed)
    return va.VFLModel(scale * rng.standard_normal((k, d_a)), scale * rng.standard_normal((k, d)), rng.standard_normal(k))


def _data(model, n=300, seed=1):
    rng = np.random.default_rng(seed)
    return rng.random((n, model.n_active)), rng.random((n, model.n_passive))


def _inside(sysb, X):
    """The record's A x (as floating point computes it) inside [L, U], with no tolerance: the
    bounds are rounded outward by more than the rounding error of A x itself."""
    ax = X @ sysb.A.T
    ok = sysb.valid
    return np.all((ax[ok] >= sysb.L[ok]) & (ax[ok] <= sysb.U[ok]))


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("decimals", [1, 2, 4])
def test_rounded_probabilities_keep_the_record_in_the_set(k, decimals):
    m = _model(k)
    Y, X = _data(m)
    S = np.round(m.predict_proba(Y, X), decimals)
    sysb = va.release_to_bounds(m, S, Y, va.Release("round", decimals))
    assert sysb.valid.all()                      # 0.00 and 1.00 are attacked, not refused
    assert _inside(sysb, X)
    assert sysb.A.shape == (k * (k - 1) // 2, m.n_passive)


@pytest.mark.parametrize("release", ["label", "clip:0.05", "noise:0.02", "loground:2", "top1:2"])
@pytest.mark.parametrize("k", [2, 3])
def test_every_release_keeps_the_record_in_the_set(release, k):
    m = _model(k)
    Y, X = _data(m)
    rel = va.Release.parse(release)
    P = m.predict_proba(Y, X)
    rng = np.random.default_rng(2)
    if rel.kind == "label":
        shown = np.argmax(P, axis=1)
    elif rel.kind == "clip":
        shown = np.clip(P, 0.05, 0.95)
    elif rel.kind == "noise":
        shown = P + rng.uniform(-0.02, 0.02, P.shape)
    elif rel.kind == "loground":
        shown = np.round(m.predict_log_proba(Y, X), 2)
    else:
        shown = (np.argmax(P, axis=1), np.round(P.max(axis=1), 2))
    sysb = va.release_to_bounds(m, shown, Y, rel)
    assert sysb.valid.all()
    assert _inside(sysb, X)


def test_gaussian_noise_holds_with_the_stated_probability():
    """sigma = 0.01, confidence 0.95 (union bound over the k classes): on 3000 records the set
    holds the record at least 0.95 of the time up to 3 binomial standard deviations (0.012)."""
    m = _model(3)
    Y, X = _data(m, n=3000)
    P = m.predict_proba(Y, X)
    shown = P + np.random.default_rng(4).normal(0.0, 0.01, P.shape)
    sysb = va.release_to_bounds(m, shown, Y, va.Release("gaussian", 0.01, confidence=0.95))
    ax = X @ sysb.A.T
    held = np.all((ax >= sysb.L - 1e-12) & (ax <= sysb.U + 1e-12), axis=1) | ~sysb.valid
    assert held.mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 3000)


KINDS = ["round:2", "round:4", "loground:1", "clip:0.01", "label", "top1:2", "noise:0", "noise:0.01",
         "gaussian:0.005", "laplace:0.005"]


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("release", KINDS)
def test_the_attack_on_a_release_certifies_the_record(release, k):
    """For every kind: no row is refused or reported empty (each set holds its record: noise:0 and
    unclipped scores give point intervals, which rounding once made empty), and every OPTIMAL row
    of every set method covers the record with its radius (random noise: the draw here falls
    inside the stated confidence, so the same holds)."""
    m = _model(k, d=5)
    Y, X = _data(m, n=40)
    rel = va.Release.parse(release)
    shown = rel.publish(m, Y, X, rng=3)
    sysb = va.release_to_bounds(m, shown, Y, rel)
    inside = np.all((X @ sysb.A.T >= sysb.L) & (X @ sysb.A.T <= sysb.U), axis=1)
    res = va.whitebox_attack(m, shown, Y, methods=("exact", "rcc1", "rcc2", "half"), release=rel)
    for name in ("exact", "rcc1", "rcc2", "half"):
        names = np.array(["REFUSED" if s is None else s.name for s in res.status[name]])
        assert not np.any(np.isin(names, ["REFUSED", "INFEASIBLE", "INVALID_INPUT"])[inside]), (name, set(names))
        ok = (names == "OPTIMAL") & inside
        assert ok.mean() > 0.5, (name, set(names))
        err = np.linalg.norm(res.reconstructions[name][ok] - X[ok], axis=1)
        assert np.all(err <= res.radii[name][ok] + SLACK), name
    if rel.kind not in ("gaussian", "laplace"):
        assert inside.all()


def test_impossible_and_nonfinite_releases_are_refused_with_a_flag():
    m = _model(3)
    Y, X = _data(m, n=4)
    S = np.round(m.predict_proba(Y, X), 2)
    S[0] = [0.9, 0.9, 0.9]        # no probability vector rounds to it
    S[1, 0] = np.nan
    S[2] = [1.5, -0.5, 0.0]
    sysb = va.release_to_bounds(m, S, Y, va.Release("round", 2))
    assert sysb.flags[0] & ScoreFlag.IMPOSSIBLE and sysb.flags[1] & ScoreFlag.NONFINITE
    assert sysb.flags[2] & ScoreFlag.IMPOSSIBLE and sysb.flags[3] == 0
    assert _inside(sysb, X)


def test_release_arguments_are_checked():
    assert va.Release.parse("gaussian:0.1:0.9") == va.Release("gaussian", 0.1, 0.9)
    for bad, match in [("round", "needs decimals"), ("round:x", "must be a number"), ("label:2", "takes no parameter"),
                       ("rounded:2", "kind must be one of"), ("round:1.5", "must be an integer"), ("clip:0.7", "below 0.5")]:
        with pytest.raises(va.InvalidInputError, match=match):
            va.Release.parse(bad)


def test_the_audit_of_a_rounded_release_attacks_every_row_and_names_the_release(tmp_path, capsys):
    """The audit publishes the scores as the release says, attacks every row (rounded 0.00 and
    1.00 included: the naive attack refuses most of them), covers each record with the exact
    method's certificate, and says which release it audited on the first line."""
    res = va.run_audit("wine", n_passive=(4,), methods=("half_star", "exact", "mean"), release=va.Release.parse("round:2"))
    rec = res.records[0]
    assert rec.status["exact"] == {"OPTIMAL": rec.n_predictions}
    assert rec.status["naive"]["refused"] > 0 and rec.status["naive"]["used"] + rec.status["naive"]["refused"] == rec.n_predictions
    arr = rec.arrays
    err = np.linalg.norm(arr["recon_exact"] - arr["X"], axis=1)
    assert np.all(err <= arr["radius_upper"] * np.sqrt(rec.n_passive) + SLACK)       # r* bounds the record
    assert va.render(res).table().splitlines()[0].startswith("wine, d = 4, release: probabilities rounded to 2 decimals:")
    from vflattack.cli import main

    assert main(["audit", "--dataset", "wine", "--passive", "4", "--methods", "half_star", "mean", "--release", "round:3",
                 "label", "--no-progress", "--out", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr().out
    assert "release: probabilities rounded to 3 decimals" in out and "release: the label only (argmax)" in out
    assert (tmp_path / "rep" / "release-round-3" / "report.json").exists() and va.verify_report(tmp_path / "rep")
    with pytest.raises(SystemExit):
        main(["audit", "--release", "round:x", "--no-progress"])
    assert "argument --release" in capsys.readouterr().err


@pytest.mark.parametrize("decimals", [1, 2, 4])
def test_k2_rounded_is_the_exact_preimage(decimals):
    """k = 2: the interval on z_1 - z_0 is the exact preimage of the released pair. A score just
    inside either endpoint (1e-9 in log-ratio) rounds to the released values; one just outside
    (1e-6 beyond the rounding unit's reach) does not. (The outward rounding adds ~1e-13.)"""
    m = _model(2)
    Y, X = _data(m, n=200)
    P = m.predict_proba(Y, X)
    shown = np.round(P, decimals)
    sysb = va.release_to_bounds(m, shown, Y, va.Release("round", decimals))
    shift = (Y @ (m.W_act[1] - m.W_act[0]) + m.b[1] - m.b[0])
    checked = 0
    for n in range(200):
        for end, inward in ((sysb.L[n, 0], 1.0), (sysb.U[n, 0], -1.0)):
            if not np.isfinite(end):
                continue
            def rounds_to(t, n=n):
                c1 = 1.0 / (1.0 + np.exp(-(t + shift[n])))
                return np.round(c1, decimals) == shown[n, 1] and np.round(1.0 - c1, decimals) == shown[n, 0]
            assert rounds_to(end + inward * 1e-9)
            assert not rounds_to(end - inward * 1e-6)
            checked += 1
    assert checked > 200


def test_the_naive_attack_certifies_a_wrong_point_and_the_release_aware_one_does_not():
    """k = d + 1 (rank A = d): exact scores pin the record down, so the naive attack, which takes
    4-decimal scores as exact, reports a single point with radius 0, a certificate the record is
    not in. The release-aware attack covers the record on every row it certifies. (Its exact
    method reports TOO_LARGE here: 36 pair rows lift d = 8 to K = 44, 4.5e10 enumeration
    candidates; rcc2 and project solve the lifted QP, which on these dependent pair rows once
    ended QP_SINGULAR on most rows.)"""
    m = _model(9, d=8, scale=1.0)
    Y, X = _data(m, n=100)
    shown = np.round(m.predict_proba(Y, X), 4)
    with pytest.warns(va.UnreadableReleaseWarning, match="the data fit: round:4"):   # the verdict sees it
        naive = va.whitebox_attack(m, shown, Y, ("exact",))
    ok = np.array([s is not None and s.name == "OPTIMAL" for s in naive.status["exact"]])
    err = np.linalg.norm(naive.reconstructions["exact"][ok] - X[ok], axis=1)
    assert ok.sum() >= 10 and np.all(naive.radii["exact"][ok] < 1e-6)
    assert np.mean(err > naive.radii["exact"][ok] + 1e-6) > 0.9          # false on (almost) every row
    aware = va.whitebox_attack(m, shown, Y, ("rcc2", "project"), release=va.Release("round", 4))
    for name in ("rcc2", "project"):
        good = np.array([s is not None and s.name == "OPTIMAL" for s in aware.status[name]])
        assert good.sum() >= 50
        e = np.linalg.norm(aware.reconstructions[name][good] - X[good], axis=1)
        assert np.all(e <= aware.radii[name][good] + SLACK), name
