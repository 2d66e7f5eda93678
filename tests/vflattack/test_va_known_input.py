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
