"""The release table (vflattack.release.TABLE): every kind is one entry, the one source of
how it is spelled, published, bounded, logged and worded; ``top1:D`` and ``topk:1:D`` are
one set; ``privee`` is audited without the defender's rho."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import vflattack as va
from vflattack.audit.logs import _published, _published_columns
from vflattack.release import KINDS, TABLE, Release, ReleaseKind, release_to_bounds

#: one spelling of every kind (a kind added to the table must be added here)
SPECS = {"exact": "exact", "round": "round:2", "loground": "loground:2", "clip": "clip:0.01", "label": "label",
         "top1": "top1:2", "noise": "noise:0.01", "gaussian": "gaussian:0.005:0.999999",
         "laplace": "laplace:0.002:0.999999", "rank": "rank", "topk": "topk:2:2", "roundnorm": "roundnorm:2",
         "sig": "sig:3", "float32": "float32", "privee": "privee:1", "priveeplus": "priveeplus"}


def _model(k=4, d=5, seed=0, n=60):
    rng = np.random.default_rng(seed)
    m = va.VFLModel(rng.standard_normal((k, 2)), 2.0 * rng.standard_normal((k, d)), 0.3 * rng.standard_normal(k))
    return m, rng.random((n, 2)), rng.random((n, d))


def _holds(system, X, tol=1e-9):
    v = system.valid
    ax = X @ system.A.T
    return bool(np.all(system.L[v] <= ax[v] + tol) and np.all(ax[v] <= system.U[v] + tol))


def test_every_kind_has_a_spelling_here_and_the_table_keeps_kinds_order():
    assert set(SPECS) == set(TABLE)
    assert list(KINDS) == list(TABLE) and all(isinstance(e, ReleaseKind) and e.name == n for n, e in TABLE.items())


@pytest.mark.parametrize("kind", list(SPECS))
def test_every_kind_round_trips_publishes_and_its_bounds_hold_the_record(kind):
    spec = SPECS[kind]
    rel = Release.parse(spec)
    assert rel.kind == kind and rel.spec == spec and Release.parse(rel.spec) == rel
    m, Y, X = _model()
    pub = rel.publish(m, Y, X, rng=1)
    system = release_to_bounds(m, pub, Y, rel)
    assert system.valid.mean() > 0.9, (spec, system.valid.mean())
    assert _holds(system, X), spec
    assert rel.describe() and rel.top_class(pub).shape == (Y.shape[0],)
    # its log columns read back to what was published
    cols = _published_columns(pub, rel)
    back, log_scores = _published(pd.DataFrame(cols), m.n_classes, rel)
    assert log_scores == (kind == "loground")
    for a, b in zip(*(v if isinstance(v, tuple) else (v,) for v in (pub, back))):
        np.testing.assert_array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


def test_the_gaussian_mechanism_spelling_round_trips():
    rel = Release.parse("gaussian:eps=1,delta=1e-05,sens=0.01:0.9")
    assert Release.parse(rel.spec) == rel and rel.spec == "gaussian:eps=1,delta=1e-05,sens=0.01:0.9"


@pytest.mark.parametrize("k", [2, 5])
def test_top1_and_topk_of_one_class_are_one_set(k):
    m, Y, X = _model(k=k, n=300, seed=k)
    top1, topk = Release.parse("top1:2"), Release.parse("topk:1:2")
    lab, p = top1.publish(m, Y, X)
    S = np.full((lab.size, k), np.nan)
    S[np.arange(lab.size), lab] = p
    np.testing.assert_array_equal(S, topk.publish(m, Y, X))    # the same data in the two formats
    a, b = release_to_bounds(m, (lab, p), Y, top1), release_to_bounds(m, S, Y, topk)
    np.testing.assert_array_equal(a.valid, b.valid)
    np.testing.assert_array_equal(a.L, b.L)
    np.testing.assert_array_equal(a.U, b.U)
    assert a.valid.mean() > 0.99 and _holds(a, X) and _holds(b, X)


def test_top1_data_no_top_class_could_have_is_refused_by_both():
    m, Y, X = _model(k=5, n=3)
    lab, p = np.array([0, 1, 2]), np.array([0.1, 0.5, 0.9])   # 0.1 < 1/5: no top class has it
    S = np.full((3, 5), np.nan)
    S[np.arange(3), lab] = p
    a = release_to_bounds(m, (lab, p), Y, Release.parse("top1:2"))
    b = release_to_bounds(m, S, Y, Release.parse("topk:1:2"))
    assert a.valid.tolist() == b.valid.tolist() == [False, True, True]


def test_privee_is_audited_without_rho_and_published_with_it():
    rel = Release.parse("privee")
    assert rel.value is None and rel.spec == "privee" and "rho" in rel.describe()
    m, Y, X = _model(n=80)
    with pytest.raises(va.InvalidInputError, match="rho"):
        rel.publish(m, Y, X)
    with pytest.raises(va.InvalidInputError, match="rho must be > 0"):
        Release.parse("privee:0")
    pub = Release.parse("privee:1").publish(m, Y, X, rng=3)
    a, b = release_to_bounds(m, pub, Y, rel), release_to_bounds(m, pub, Y, Release.parse("privee:1"))
    np.testing.assert_array_equal(a.L, b.L)
    np.testing.assert_array_equal(a.U, b.U)
    assert a.valid.mean() > 0.9 and _holds(a, X)


def test_the_recovery_lives_in_the_attacks_and_is_registered_with_the_table():
    from vflattack.attacks.privee import recover_privee

    assert TABLE["privee"].recover is recover_privee and TABLE["priveeplus"].recover is recover_privee
    assert not hasattr(va.release, "recover_privee")


def test_the_table_is_the_one_source():
    from vflattack.audit.design import _NOISE
    from vflattack.outputs import OUTPUT_RELEASES
    from vflattack.release import _WORDS

    assert KINDS == {n: None if e.param is None else e.param.name for n, e in TABLE.items()}
    assert set(OUTPUT_RELEASES) == {n for n, e in TABLE.items() if e.output_links}
    assert set(_NOISE) == {n for n, e in TABLE.items() if e.noisy} == {"gaussian", "laplace"}
    assert _WORDS == {n: e.words for n, e in TABLE.items() if isinstance(e.words, str)}
    for kind, spec in SPECS.items():
        rel = Release.parse(spec)
        words = TABLE[kind].words
        v = rel.value
        assert rel.describe() == (words(rel) if callable(words) else words.format(
            v=v, d=None if v is None else int(v), w=None if v is None else 1 - v, top=rel.top))
        assert (rel.decimals is not None) == TABLE[kind].decimals


def test_adding_a_release_is_one_entry(monkeypatch):
    """A new kind (here: rounding written another way) is parsed, spelled, worded, published
    and bounded from its entry alone."""
    entry = dataclasses.replace(TABLE["round"], name="rounded", words="probabilities to {d} places")
    monkeypatch.setitem(TABLE, "rounded", entry)
    rel = Release.parse("rounded:3")
    assert rel.spec == "rounded:3" and rel.describe() == "probabilities to 3 places" and rel.decimals == 3
    m, Y, X = _model()
    pub = rel.publish(m, Y, X)
    np.testing.assert_array_equal(pub, Release.parse("round:3").publish(m, Y, X))
    assert _holds(release_to_bounds(m, pub, Y, rel), X)
    with pytest.raises(va.InvalidInputError, match="decimals must be an integer"):
        Release("rounded", 2.5)
