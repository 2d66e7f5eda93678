"""Confidence intervals of the audit's headline numbers (vflattack.audit.intervals): coverage on
a synthetic audit whose true MSE is known in closed form, shrinking with more records, the
verdict read off the interval, and the intervals in every report format."""

import csv
import json

import numpy as np
import pytest

import vflattack as va
from vflattack.audit.intervals import audit_replicates, bootstrap, combine_seeds, interval
from vflattack.report import render

#: one equation x1 - x2 = t on the unit square: the slice is a segment whose Chebyshev center is
#: its midpoint ((1 + t)/2, (1 - t)/2); x - mid = (u - 1)/2 (1, 1) with u = x1 + x2, so for x
#: uniform each feature's squared error has mean Var(u)/4 = (1/6)/4 = 1/24
TRUE_MSE = 1.0 / 24.0
MODEL = va.VFLModel(np.zeros((2, 0)), np.array([[0.0, 0.0], [1.0, -1.0]]), np.zeros(2))


def _exact_mse_interval(n, seed, resamples=1000):
    X = np.random.default_rng(seed).random((n, 2))
    res = va.whitebox_attack(MODEL, MODEL.predict_proba(None, X), None, methods=("exact",))
    rows = res.common_rows()
    reps = audit_replicates(X, res.reconstructions, rows, None, None, resamples=resamples, seed=seed)
    return res.mse(X)["exact"], interval(reps["mse"]["exact"], 0.95)


def test_coverage_on_an_audit_whose_true_mse_is_known():
    """At least 90 % of 200 repetitions cover the true MSE at a nominal 95 % (the issue's bar; the
    percentile bootstrap of a mean of 100 records sits near its nominal level)."""
    covered = 0
    for rep in range(200):
        _, (lo, hi) = _exact_mse_interval(100, rep)
        covered += lo <= TRUE_MSE <= hi
    assert covered >= 180, covered


def test_intervals_shrink_with_more_records():
    widths = {n: np.mean([np.diff(_exact_mse_interval(n, s)[1])[0] for s in range(5)]) for n in (100, 400)}
    # the standard error falls as 1 / sqrt(n): 4 times the records, about half the width
    assert widths[400] < 0.65 * widths[100], widths


def test_bootstrap_is_seeded_and_combines_seeds():
    v = np.random.default_rng(1).random(50)
    assert np.array_equal(bootstrap(v, seed=3), bootstrap(v, seed=3))
    assert not np.array_equal(bootstrap(v, seed=3), bootstrap(v, seed=4))
    a = bootstrap(v, seed=0)
    assert np.array_equal(combine_seeds([a]), a)
    both = combine_seeds([a, a + 1.0], seed=0)    # seeds that differ by 1: the spread over seeds shows
    assert interval(both)[1] - interval(both)[0] > interval(a)[1] - interval(a)[0]
    assert np.isnan(bootstrap([np.nan, np.nan])).all()


@pytest.mark.parametrize("ci, words", [([0.01, 0.03], "the scores leak beyond the prior"),
                                       ([-0.01, 0.02], "cannot tell whether the scores leak"),
                                       ([-0.03, -0.01], "do not leak beyond the prior")])
def test_the_verdict_reads_the_interval(ci, words):
    group = {"dataset": "x", "n_passive": 2, "prior_mse": 0.05, "best_mse": 0.04, "best_attacks": ["exact"],
             "lower_share": 0.2, "exposure": {"ci": {"leakage": ci}}, "ci_level": 0.95}
    text = va.report.AuditReport.headline(group)
    assert words in text and "95% interval" in text


def test_intervals_in_every_report_format(tmp_path):
    res = va.run_audit("wine", n_passive=(3,), methods=("half_star", "exact", "mean", "gaussian"), seeds=(0, 1))
    rec = res.records[0]
    assert rec.intervals["level"] == 0.95 and rec.intervals["resamples"] == 1000
    lo, hi = rec.intervals["mse"]["exact"]
    assert lo <= rec.mse["exact"] <= hi
    rep = render(res)
    text = rep.table()
    assert "95% interval" in text and "1000 resamples" in text
    rep.write(tmp_path / "out")
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert "intervals" in doc["records"][0] and "replicates" not in doc["records"][0]
    row = next(r for r in doc["summary"] if r["method"] == "exact")
    assert row["mse_lo"] <= row["mse"] <= row["mse_hi"]      # two seeds: the two-level bootstrap
    with open(tmp_path / "out" / "mse.csv") as fh:
        assert {"mse_lo", "mse_hi"} <= set(next(csv.reader(fh)))
    with open(tmp_path / "out" / "privacy.csv") as fh:
        assert {"leakage_lo", "leakage_hi", "ci_level", "ci_resamples"} <= set(next(csv.reader(fh)))
    assert "mse_lo" in (tmp_path / "out" / "report.html").read_text()


def _poisson_interval(n, seed, parts=4):
    """The log audit's interval (a Poisson bootstrap summed over ``parts`` partitions, each
    seeded by its first row) of the same closed-form audit of n records."""
    from vflattack.audit.intervals import LOG_RESAMPLES, poisson_replicates, poisson_sums

    X = np.random.default_rng(seed).random((n, 2))
    res = va.whitebox_attack(MODEL, MODEL.predict_proba(None, X), None, methods=("exact",))
    per = np.mean((res.reconstructions["exact"] - X) ** 2, axis=1)
    cuts = np.array_split(np.arange(n), parts)
    sums = [poisson_sums({"mse": per[c]}, resamples=LOG_RESAMPLES, seed=seed, start=int(c[0])) for c in cuts]
    return interval(poisson_replicates(sums, "mse"), 0.95)


def test_the_poisson_weights_belong_to_the_records_not_the_partitions():
    """Cut anywhere, a log gives the same replicates (to the summation order): a record's
    weights depend on the seed and its position only."""
    from vflattack.audit.intervals import poisson_replicates, poisson_sums

    v = np.random.default_rng(0).random(1000)
    whole = poisson_replicates([poisson_sums({"v": v}, seed=3)], "v")
    for cuts in ([0, 1000], [0, 1, 999, 1000], [0, 137, 500, 501, 1000]):
        parts = [poisson_sums({"v": v[a:b]}, seed=3, start=a) for a, b in zip(cuts[:-1], cuts[1:])]
        np.testing.assert_allclose(poisson_replicates(parts, "v"), whole, rtol=1e-12)
    other = poisson_replicates([poisson_sums({"v": v}, seed=4)], "v")
    assert not np.allclose(other, whole)
    # a refused record keeps its position: the others' weights do not move, whether it is left
    # out of a partition by hand or masked in it
    keep = np.ones(1000, dtype=bool)
    keep[[3, 400, 401, 999]] = False
    masked = poisson_replicates([poisson_sums({"v": np.where(keep, v, np.nan)}, seed=3, keep=keep)], "v")
    runs = [(0, 3), (4, 400), (402, 999)]
    by_hand = poisson_replicates([poisson_sums({"v": v[a:b]}, seed=3, start=a) for a, b in runs], "v")
    np.testing.assert_allclose(masked, by_hand, rtol=1e-12)


def test_the_log_audits_poisson_bootstrap_covers_the_true_mse():
    """The same bar as the records' bootstrap: at least 90 % of 200 repetitions at a nominal 95 %."""
    covered = sum(lo <= TRUE_MSE <= hi for lo, hi in (_poisson_interval(100, rep) for rep in range(200)))
    assert covered >= 180, covered
    widths = {n: np.mean([np.diff(_poisson_interval(n, s))[0] for s in range(5)]) for n in (100, 400)}
    assert widths[400] < 0.65 * widths[100], widths


def test_the_log_audit_reports_intervals_in_text_json_and_csv(tmp_path):
    X = np.random.default_rng(5).random((300, 2))
    preds, passive = va.audit.write_log(MODEL, np.zeros((300, 0)), X, tmp_path / "logs")
    rep = va.audit_log(MODEL, preds, tmp_path / "rep", passive_log=passive, methods=("exact",))
    rec = rep.records[0]
    lo, hi = rec["mse_ci"]
    assert lo < rec["mse"] < hi
    # about the normal interval's width, 2 x 1.96 sd / sqrt(n), to the percentile interval's
    # Monte Carlo error at 200 replicates and the sd's own sampling error (25 % covers both)
    res = va.whitebox_attack(MODEL, MODEL.predict_proba(None, X), None, methods=("exact",))
    per = np.mean((res.reconstructions["exact"] - X) ** 2, axis=1)
    normal = 2 * 1.96 * per.std(ddof=1) / np.sqrt(per.size)
    assert (hi - lo) == pytest.approx(normal, rel=0.25)
    assert "intervals: 95%, Poisson bootstrap" in rep.table()
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert doc["records"][0]["mse_ci"] == [lo, hi] and doc["config"]["intervals"]["resamples"] == 200
    with open(tmp_path / "rep" / "mse.csv") as fh:
        row = next(csv.DictReader(fh))
    assert float(row["mse_ci_lo"]) == lo and float(row["mse_ci_hi"]) == hi
    assert "mse_ci_lo" in (tmp_path / "rep" / "report.html").read_text()
