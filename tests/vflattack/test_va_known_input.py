"""Known-input attack on distance-preserving perturbation (docs/theory.md §4)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import ortho_group

import chebcenter as cc
from vflattack.attacks import known_input as ki
from vflattack.cli import main


def _perturbed(m=200, n=6, seed=0, shift=False):
    rng = np.random.default_rng(seed)
    X = rng.random((m, n)) + 0.2
    M_T = ortho_group.rvs(n, random_state=seed)
    perm = rng.permutation(m)
    v = rng.standard_normal(n) * 3 if shift else np.zeros(n)
    Y = np.empty_like(X)
    Y[perm] = X @ M_T.T + v
    return X, Y, M_T, perm, v


@pytest.mark.parametrize("seed", range(5))
def test_link_returns_the_true_permutation(seed):
    X, Y, M_T, perm, _ = _perturbed(seed=seed)
    known = np.random.default_rng(seed).choice(200, 5, replace=False)
    r = ki.link(X[known], Y)
    assert r.complete and r.known.tolist() == list(range(5))
    np.testing.assert_array_equal(r.perturbed, perm[known[r.known]])


def test_papers_four_point_example():
    """x3 and x4 are equidistant from x1 and x2 (90 degrees clockwise, identity permutation):
    {1,2,3} is not uniquely valid, {1,2} is."""
    X = np.array([[1.0, 0], [2, 0], [1, 1], [1, -1]])
    Y = X @ np.array([[0.0, 1], [-1, 0]])
    r = ki.link(X[:3], Y)
    assert r.known.tolist() == [0, 1] and r.perturbed.tolist() == [0, 1]
    # knowing x4 as well does not help: the reflection across the x-axis swaps x3 and x4
    assert ki.link(X, Y).known.tolist() == [0, 1]


def test_node_budget_reports_instead_of_hanging():
    X, Y, M_T, perm, v = _perturbed(m=300, n=5, seed=1, shift=True)
    r = ki.link(X[:5], Y, max_nodes=50, translation=True)
    assert not r.complete and r.nodes == 51 and r.known.size == 0
    with pytest.raises(cc.InvalidInputError, match="complete=False"):
        ki.known_input_attack(X[:5], Y, max_nodes=50, translation=True)
    # identical records: never uniquely valid, and the search says so quickly
    same = np.tile(X[:1], (60, 1))
    r = ki.link(same[:6], same)
    assert r.complete and r.known.size == 0


@pytest.mark.parametrize("q", [0, 1, 3, 6])
def test_sampled_map_is_orthogonal_and_fits_the_known_pairs(q):
    X, Y, M_T, perm, _ = _perturbed(n=6, seed=q)
    Xq, Yq = X[:q], Y[perm[:q]]
    M = ki.sample_orthogonal(Xq, Yq, rng=q)
    np.testing.assert_allclose(M @ M.T, np.eye(6), atol=1e-10)
    if q:
        np.testing.assert_allclose(M @ Xq.T, Yq.T, atol=1e-10)
    if q == 6:
        np.testing.assert_allclose(M, M_T, atol=1e-9)


def _rho_integral(N, theta):
    num = quad(lambda t: np.sin(t) ** (N - 2), 0, theta)[0]
    return num / quad(lambda t: np.sin(t) ** (N - 2), 0, np.pi)[0]


@pytest.mark.parametrize("N", [2, 3, 4, 7, 12])
@pytest.mark.parametrize("theta", [0.2, 1.0, 1.5, 2.0, 2.9])
def test_closed_form_matches_numerical_integration(N, theta):
    R = np.array([1.0])
    delta = np.array([2 * np.sin(theta / 2)])
    assert ki._rho(N, R, delta)[0] == pytest.approx(_rho_integral(N, theta), abs=1e-8)


def test_special_cases_of_rho():
    R, delta = np.array([1.0, 0.0, 1.0]), np.array([0.5, 0.5, 2.5])
    assert ki._rho(0, R, delta).tolist() == [1.0, 1.0, 1.0]
    assert ki._rho(1, R, delta).tolist() == [0.5, 1.0, 1.0]
    assert ki._rho(2, np.array([1.0]), np.array([2 * np.sin(0.5)]))[0] == pytest.approx(1.0 / np.pi)


def test_rho_matches_monte_carlo_over_algorithm_4_and_the_true_record():
    X, Y, M_T, perm, _ = _perturbed(m=30, n=5, seed=3)
    q = 2
    Xq, Yq = X[:q], Y[perm[:q]]
    eps = 0.25
    rho = ki.breach_probability(Xq, Yq, Y, eps)
    # from the true record's side: R = distance of x from span(X_q), delta = eps ||x||
    _, U_c = ki._complement(Xq, 5)
    for i in range(q, 8):
        R_true = np.linalg.norm(X[i] @ U_c)
        assert rho[perm[i]] == pytest.approx(ki._rho(3, np.array([R_true]), np.array([eps * np.linalg.norm(X[i])]))[0],
                                             abs=1e-9)
    # Monte Carlo: 2000 draws, standard error <= 0.0112, tolerance 0.05 (> 4 s.e.)
    rng = np.random.default_rng(0)
    for i in range(q, 6):
        j = perm[i]
        hits = np.mean([np.linalg.norm(ki.sample_orthogonal(Xq, Yq, rng).T @ Y[j] - X[i]) <= eps * np.linalg.norm(X[i])
                        for _ in range(2000)])
        assert abs(hits - rho[j]) <= 0.05


def test_attack_estimates_and_rho_of_linked_rows():
    X, Y, M_T, perm, _ = _perturbed(m=100, n=5, seed=4)
    att = ki.known_input_attack(X[:3], Y, epsilon=0.1, rng=0)
    assert np.all(att.rho[perm[:3]] == 1.0) and att.best not in perm[:3]
    assert att.order[0] == att.best and np.all(np.diff(att.rho[att.order]) <= 0)
    np.testing.assert_allclose(att.estimates[perm[:3]], X[:3], atol=1e-9)  # M fits the linked pairs
    assert att.rho[att.best] == att.rho[np.setdiff1d(np.arange(100), perm[:3])].max()


def test_translation_links_on_distances_and_estimates_relative_to_an_anchor():
    X, Y, M_T, perm, v = _perturbed(m=40, n=4, seed=5, shift=True)
    r = ki.link(X[:4], Y, translation=True)
    np.testing.assert_array_equal(r.perturbed, perm[r.known])
    att = ki.known_input_attack(X[:5], Y, rng=0, translation=True)
    np.testing.assert_allclose(att.estimates[perm], X, atol=1e-8)  # 5 pairs = anchor + 4 directions
    assert ki.link(X[:4], Y).known.size < 4  # lengths are not preserved: without the flag linking fails


def test_vfl_defence_is_undone_with_d_known_records():
    from vflattack import VFLModel, orthogonal_defence

    rng = np.random.default_rng(0)
    m = VFLModel(rng.standard_normal((6, 2)), rng.standard_normal((6, 4)), np.zeros(6))
    Y, X = rng.random((300, 2)), rng.random((300, 4))
    dfn = orthogonal_defence(m, X, 2.0, kind="random", rng=0)
    br = ki.attack_orthogonal_defence(dfn.disclosed, dfn.predict_proba(Y, X), Y, X[:4], R_true=dfn.R)
    np.testing.assert_allclose(br.before, X @ dfn.R, atol=1e-8)  # rows R^T x
    assert br.rotation_error < 1e-8
    np.testing.assert_allclose(br.after, X, atol=1e-8)
    wide = VFLModel(rng.standard_normal((2, 2)), rng.standard_normal((2, 4)), np.zeros(2))
    with pytest.raises(cc.InvalidInputError, match="does not apply"):
        ki.attack_orthogonal_defence(wide, wide.predict_proba(Y, X), Y, X[:4])


def test_cli_known_input(capsys, tmp_path):
    assert main(["known-input", "--dataset", "digits", "--known", "4", "--trials", "2", "--records", "300",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rho(best)" in out and "linked 4 (correct)" in out
    assert (tmp_path / "known_input.json").exists()
    assert main(["known-input", "--dataset", "digits", "--vfl", "--passive", "6", "--known", "6"]) == 0
    assert "after undoing the rotation" in capsys.readouterr().out
    assert main(["known-input", "--dataset", "wine", "--vfl", "--passive", "5"]) == 2


def test_cli_known_input_runs_offline_by_default(capsys, tmp_path, monkeypatch):
    """The defaults read scikit-learn's bundled digits: nothing is fetched, and --no-progress
    is taken as by every other subcommand."""
    from vflattack import datasets

    def no_download(*args, **kwargs):
        raise AssertionError("known-input tried to download a dataset")

    monkeypatch.setattr(datasets, "fetch", no_download)
    monkeypatch.setenv("VFLATTACK_DATA", str(tmp_path / "empty"))
    assert main(["known-input", "--trials", "1", "--records", "200", "--no-progress"]) == 0
    assert "known-input attack on digits" in capsys.readouterr().out


# ---- rounded releases: linking within 2 delta sqrt(n), M by orthogonal Procrustes ----

def _digits_like(m=3000, n=16, seed=0):
    """Pendigits-like records (integers 0..100, 16 features), a Haar rotation and a permutation."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 101, (m, n)).astype(float)
    M_T = ortho_group.rvs(n, random_state=seed)
    perm = rng.permutation(m)
    Y = np.empty_like(X)
    Y[perm] = X @ M_T.T
    return X, Y, M_T, perm


def test_infer_decimals():
    assert ki.infer_decimals(np.round(np.random.default_rng(0).random((50, 4)) * 100, 4)) == 4
    assert ki.infer_decimals(np.array([[3.0, 12.0]])) == 0
    assert ki.infer_decimals(np.array([[0.1 + 0.2]])) == 1      # 0.30000000000000004 is 0.3 to float accuracy
    assert ki.infer_decimals(np.random.default_rng(1).random((5, 5))) is None


@pytest.mark.parametrize("decimals", [8, 6, 4, 2])
def test_linking_a_rounded_release_within_its_tolerance(decimals):
    """Every coordinate moves by at most delta = 0.5 10^-K, so a length by at most delta sqrt(n) and
    a distance by at most 2 delta sqrt(n): with those tolerances the true links are always admitted,
    and on records this spread out they are the only ones (planted rotations, 10 trials)."""
    linked = 0
    for seed in range(10):
        X, Y, M_T, perm = _digits_like(seed=seed)
        Yr = np.round(Y, decimals)
        known = np.random.default_rng(seed).choice(X.shape[0], 4, replace=False)
        r = ki.link(X[known], Yr, noise="infer")
        assert r.noise == 0.5 * 10.0 ** -decimals
        linked += r.known.size == 4 and np.array_equal(r.perturbed, perm[known])
    assert linked == 10
    # without the release's tolerance (the full-precision one, 1e-9 sqrt(n) max ||x||) a release
    # rounded to 4 decimals or fewer links nothing (the bug this fixes)
    if decimals <= 4:
        assert ki.link(X[known], Yr).known.size == 0


@pytest.mark.parametrize("decimals", [8, 4, 2])
def test_procrustes_is_the_least_squares_rotation(decimals):
    """fit_orthogonal against SciPy's orthogonal Procrustes (an independent route) on n noisy pairs,
    and against the truth: the fit error is of the order of the noise relative to the records."""
    from scipy.linalg import orthogonal_procrustes

    X, Y, M_T, perm = _digits_like(m=200, seed=3)
    Xq, Yq = X[:40], np.round(Y[perm[:40]], decimals)
    M = ki.fit_orthogonal(Xq, Yq)
    R, _ = orthogonal_procrustes(Xq, Yq)          # argmin ||Xq R - Yq||: R = M^T
    np.testing.assert_allclose(M, R.T, atol=1e-12)
    np.testing.assert_allclose(M @ M.T, np.eye(16), atol=1e-12)
    # ||M - M_T||_2 <= 2 ||E||_2 / sigma_min(Xq) for the noise E (|E_ij| <= delta: ||E||_2 <= delta sqrt(40 * 16))
    delta = 0.5 * 10.0 ** -decimals
    bound = 2 * delta * np.sqrt(40 * 16) / np.linalg.svd(Xq, compute_uv=False)[-1]
    assert np.linalg.norm(M - M_T, 2) <= bound


def test_fewer_links_than_features_fit_the_span_and_draw_the_rest():
    X, Y, M_T, perm = _digits_like(m=200, seed=4)
    Xq, Yq = X[:4], np.round(Y[perm[:4]], 4)
    M = ki.fit_orthogonal(Xq, Yq, rng=0)
    np.testing.assert_allclose(M @ M.T, np.eye(16), atol=1e-12)
    assert np.abs(Xq @ M.T - Yq).max() < 1e-3                   # the links fit to the noise's order
    assert not np.allclose(M, ki.fit_orthogonal(Xq, Yq, rng=1))   # the complement is drawn
    exact = ki.fit_orthogonal(Xq, Y[perm[:4]], rng=0)          # exact pairs: mapped exactly
    np.testing.assert_allclose(Xq @ exact.T, Y[perm[:4]], atol=1e-9)


@pytest.mark.parametrize("decimals", [None, 8, 6, 4, 2])
def test_known_input_breaches_rounded_releases_as_full_precision_ones(decimals):
    """With as many known records as features the rotation is pinned down by Procrustes; every
    record is then recovered to far better than eps = 0.07 at every precision (the error is of
    the order of delta sqrt(n) / ||x|| plus the fit's error, both below 1e-3 here)."""
    X, Y, M_T, perm = _digits_like(m=1000, seed=5)
    X = X + 1.0                                          # no zero record (its relative error is undefined)
    Y = np.empty_like(X)
    Y[perm] = X @ M_T.T
    Yr = Y if decimals is None else np.round(Y, decimals)
    known = np.random.default_rng(0).choice(1000, 16, replace=False)
    att = ki.known_input_attack(X[known], Yr, epsilon=0.07, noise="infer")
    assert att.link.known.size == 16
    rel = np.linalg.norm(att.estimates[perm] - X, axis=1) / np.linalg.norm(X, axis=1)
    assert rel.max() < (1e-3 if decimals is not None else 1e-9)
    assert (att.rho_note != "") == (decimals is not None)


def test_rho_takes_the_rows_own_noise_off_the_radius():
    X, Y, M_T, perm = _digits_like(m=100, seed=6)
    Xq, Yq = X[:3], Y[perm[:3]]
    r0 = ki.breach_probability(Xq, Yq, Y, 0.07)
    r1 = ki.breach_probability(Xq, Yq, Y, 0.07, noise=0.05)
    assert np.all(r1 <= r0 + 1e-15) and np.any(r1 < r0)
    assert np.all(ki.breach_probability(Xq, Yq, Y, 0.07, noise=1e6)[np.linalg.norm(Y, axis=1) > 0] <= r0)


def test_cli_known_input_on_a_rounded_release(capsys):
    with pytest.raises(SystemExit):
        main(["known-input", "--decimals", "-1"])
    assert main(["known-input", "--vfl", "--decimals", "3", "--dataset", "breast_cancer"]) == 2
    assert "decimals" in capsys.readouterr().err


SHARED = __import__("pathlib").Path(__file__).resolve().parents[3] / "shared" / "datasets"


@pytest.mark.skipif(not (SHARED / "pendigits").exists(), reason=f"the UCI pendigits files are not at {SHARED}")
def test_pendigits_rounded_to_four_decimals_links_and_breaches_as_at_full_precision(tmp_path, capsys):
    """The target of the 'audit real releases' issue: pendigits (16 features, 0..100), 4 known
    records, 10 rotations. Rounded to 4 decimals, linking succeeds in 10 of 10 and the breach
    rate is within one trial of full precision (the trials draw the same rotations)."""
    import vflattack as va

    full = va.run_known_input("pendigits", data_dir=SHARED).records
    four = va.run_known_input("pendigits", data_dir=SHARED, decimals=4).records
    assert sum(r["linked"] == 4 and r["link_correct"] for r in four) == 10
    assert abs(sum(r["breach"] for r in four) - sum(r["breach"] for r in full)) <= 1
    assert main(["known-input", "--data-dir", str(SHARED), "--decimals", "2", "--trials", "2",
                 "--out", str(tmp_path / "ki")]) == 0
    out = capsys.readouterr().out
    assert "released rounded to 2 decimals" in out and "linked correctly in 2/2 trials" in out
    assert va.verify_report(tmp_path / "ki")


@pytest.mark.parametrize("k, n", [(10, 10), (3, 10), (0, 5), (1, 1)])
def test_the_breach_rate_interval_is_clopper_pearsons(k, n):
    """Against SciPy's own exact binomial interval (binomtest), a second route to the same numbers."""
    from scipy.stats import binomtest

    from vflattack.report.known_input import _clopper_pearson

    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert _clopper_pearson(k, n) == pytest.approx([ref.low, ref.high], abs=1e-12)
