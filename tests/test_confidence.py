"""The statistics of repeated runs, checked against scipy's own (computed independently here)."""

from __future__ import annotations

import math

import pytest
from agentdiff.core.scoring.confidence import drop_p_value, interval, more_runs, pass_at_k, pass_hat_k, settled
from scipy import stats


@pytest.mark.parametrize("passes, runs", [(0, 1), (1, 1), (0, 10), (10, 10), (7, 10), (8, 10), (19, 20), (3, 50), (35, 35)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_interval_is_wilsons_as_scipy_computes_it(passes, runs, confidence):
    reference = stats.binomtest(passes, runs).proportion_ci(confidence_level=confidence, method="wilson")
    low, high = interval(passes, runs, confidence)
    assert math.isclose(low, reference.low, abs_tol=1e-9) and math.isclose(high, reference.high, abs_tol=1e-9)


def test_what_the_rule_implies_at_the_edges():
    assert round(interval(10, 10)[0], 2) == 0.72  # 10/10 against 0.9 is not yet a pass
    assert settled(10, 10, 0.9) == "inconclusive" and settled(8, 10, 0.9) == "inconclusive"
    assert more_runs(10, 10, 0.9) == 25  # a clean pass needs 35 runs in all
    assert settled(35, 35, 0.9) == "passed" and settled(0, 10, 0.5) == "failed" and more_runs(0, 10, 0.5) == 0
    assert interval(0, 0) == (0.0, 1.0) and settled(1, 1, 0.5) == "inconclusive"
    assert more_runs(9, 10, 0.9) is None  # a rate on the minimum never settles
    assert interval(1_000_000, 1_000_000)[0] < 1.0  # no lower bound reaches 1.0


def test_pass_hat_k_and_pass_at_k_are_the_unbiased_estimates():
    assert pass_hat_k(7, 10, 1) == pytest.approx(0.7) and pass_hat_k(7, 10, 3) == pytest.approx(math.comb(7, 3) / math.comb(10, 3))
    assert pass_hat_k(10, 10, 5) == 1.0 and pass_hat_k(9, 10, 10) == 0.0 and pass_hat_k(3, 2, 3) is None
    assert pass_at_k(1, 10, 10) == 1.0 and pass_at_k(0, 10, 3) == 0.0 and pass_at_k(5, 10, 2) == pytest.approx(1 - 10 / 45)


@pytest.mark.parametrize("before, now", [((9, 10), (8, 10)), ((10, 10), (2, 10)), ((5, 5), (0, 5)), ((3, 10), (3, 10)), ((0, 4), (0, 4))])
def test_a_drop_is_fishers_exact_test_as_scipy_computes_it(before, now):
    table = [[before[0], before[1] - before[0]], [now[0], now[1] - now[0]]]
    reference = stats.fisher_exact(table, alternative="greater").pvalue
    assert drop_p_value(before[0], before[1], now[0], now[1]) == pytest.approx(reference, abs=1e-12)


def test_a_small_drop_is_chance_and_a_large_one_is_not():
    assert drop_p_value(9, 10, 8, 10) > 0.4
    assert drop_p_value(10, 10, 2, 10) < 0.001


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 19, 49, 999])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_t_quantile_is_students_as_scipy_computes_it(df, confidence):
    from agentdiff.core.scoring.confidence import t_quantile

    reference = stats.t.ppf(1 - (1 - confidence) / 2, df)
    assert t_quantile(confidence, df) == pytest.approx(reference, rel=1e-9)


def test_a_metrics_mean_and_interval_over_runs_match_scipys():
    from agentdiff.core.scoring.confidence import mean_interval

    values = [0.2, 0.9, 0.75, 1.0, 0.6]
    mean, low, high = mean_interval(values)
    reference = stats.t.interval(0.95, len(values) - 1, loc=stats.tmean(values), scale=stats.sem(values))
    assert mean == pytest.approx(0.69) and low == pytest.approx(reference[0]) and high == pytest.approx(reference[1])
    assert mean_interval([0.4]) == (0.4, 0.4, 0.4)


def test_run_until_confident_looks_a_few_times_each_at_a_stricter_level():
    from agentdiff.core.scoring.confidence import each_look, looks, next_runs

    assert looks(5, 100) == 6  # 5, 10, 20, 40, 80, 100
    assert next_runs(5, 100) == 5 and next_runs(80, 100) == 20 and next_runs(100, 100) == 0
    assert looks(10, 10) == 1 and each_look(0.95, 1) == 0.95
    assert each_look(0.95, 5) == pytest.approx(0.99)
