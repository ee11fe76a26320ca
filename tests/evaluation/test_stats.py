"""Bootstrap CIs, the t-interval and t-test, the sign test and the timing test on inputs
with known answers."""

import math

import numpy as np
import pytest
from scipy import stats

from stocker_core.evaluation.stats import (
    Interval,
    StatsError,
    TTest,
    bootstrap_ci,
    mean_ci,
    sign_test,
    t_interval,
    t_test,
    timing_test,
)


def test_bootstrap_of_a_constant_is_that_constant():
    ci = bootstrap_ci([2.5] * 10, seed=1)
    assert (ci.mean, ci.low, ci.high, ci.n) == (2.5, 2.5, 2.5, 10)


def test_bootstrap_of_two_values_spans_both():
    # resampled means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4
    ci = bootstrap_ci([0.0, 1.0], resamples=20_000, seed=0)
    assert ci.mean == 0.5 and ci.low == 0.0 and ci.high == 1.0


def test_block_as_long_as_the_series_resamples_the_series_itself():
    ci = bootstrap_ci([1.0, 2.0, 6.0], block=3, seed=0)
    assert ci.low == ci.high == pytest.approx(3.0)


def test_bootstrap_matches_the_normal_interval_and_is_seeded():
    data = np.random.default_rng(7).normal(0.0, 1.0, 400)
    ci = bootstrap_ci(data, resamples=4000, seed=3)
    half = 1.96 * data.std(ddof=1) / np.sqrt(len(data))
    assert ci.low == pytest.approx(data.mean() - half, abs=0.02)
    assert ci.high == pytest.approx(data.mean() + half, abs=0.02)
    assert bootstrap_ci(data, resamples=4000, seed=3) == ci


def test_bootstrap_edge_cases():
    assert bootstrap_ci([]).mean is None
    one = bootstrap_ci([4.0, float("nan")])
    assert one.mean == 4.0 and one.low is None and one.n == 1
    with pytest.raises(StatsError):
        bootstrap_ci([1.0, 2.0], confidence=1.5)


def test_sign_test_known_p_values():
    half = sign_test([1.0] * 15 + [0.0] * 15, [0.5] * 30)
    assert (half.wins, half.losses, half.p_value) == (15, 15, 1.0)
    # 7 wins of 30: p = 2 * sum_{k<=7} C(30, k) / 2^30 = 2 * 2,804,012 / 1,073,741,824
    low = sign_test([1.0] * 7 + [0.0] * 23, [0.5] * 30)
    assert low.p_value == pytest.approx(2 * 2_804_012 / 2**30)
    assert low.p_value == pytest.approx(0.0052228, rel=1e-4)


def test_sign_test_drops_ties():
    result = sign_test([1.0, 1.0, 2.0], [1.0, 0.0, 3.0])
    assert (result.wins, result.losses, result.ties, result.n, result.p_value) == (1, 1, 1, 2, 1.0)
    assert sign_test([1.0, 2.0], [1.0, 2.0]).p_value is None
    with pytest.raises(StatsError):
        sign_test([1.0], [1.0, 2.0])


def test_timing_test_perfect_timing_beats_all_other_orders():
    # 7 days with a next-day move (3 up, 3 down, 1 flat; the last day earns nothing); in
    # the market exactly on the 3 up days: of the C(7, 3) = 35 orders of three 1s only the
    # policy's own is as good, so it beats 34/35 of the shuffles
    closes = [100, 110, 99, 108.9, 98.01, 107.811, 97.0299, 97.0299]
    exposure = [1, 0, 1, 0, 1, 0, 0, 0]
    result = timing_test(exposure, closes, shuffles=4000, seed=0)
    assert result.actual_return == pytest.approx(1.1**3 - 1)
    assert result.share_beaten == pytest.approx(34 / 35, abs=0.01)


def test_timing_test_constant_exposure_has_nothing_to_shuffle():
    assert timing_test([1.0, 1.0, 1.0], [10.0, 11.0, 12.0]).share_beaten is None
    assert timing_test([1.0], [10.0]).share_beaten is None


def test_verdict_names_tied_windows_it_leaves_out():
    from stocker_core.evaluation.rolling import verdict

    line = verdict("a2c", "buy_and_hold", wins=1, n=2, p_value=1.0, ties=55)
    assert line == (
        "a2c beats buy_and_hold in 1/2 independent windows (55 tied windows left out), p = 1"
        " — not distinguishable from chance"
    )
    # with a Holm-adjusted p the verdict rests on it
    adjusted = verdict("zmr", "random", wins=30, n=33, p_value=0.001, p_holm=0.2)
    assert adjusted.endswith("p = 0.001, Holm p = 0.2 — not distinguishable from chance")
    reliable = verdict("zmr", "random", wins=30, n=33, p_value=0.001, p_holm=0.004)
    assert reliable.endswith("— reliably better (sign test, Holm-adjusted, α = 0.05)")
    assert "tied" not in verdict("council", "random", wins=15, n=30, p_value=1.0)


def test_timing_shuffles_are_drawn_once_per_seed_and_length_with_the_same_result():
    from stocker_core.evaluation.stats import shuffle_orders

    rng = np.random.default_rng(5)
    exposure, closes = rng.random(40), 100 * np.exp(np.cumsum(rng.normal(0, 0.01, 40)))
    first = timing_test(exposure, closes, shuffles=300, seed=3)
    assert shuffle_orders(3, 300, 39) is shuffle_orders(3, 300, 39)  # kept, read-only
    assert not shuffle_orders(3, 300, 39).flags.writeable
    # the shuffles as drawn before they were kept: argsort of one seeded uniform draw
    order = np.argsort(np.random.default_rng(3).random((300, 39)), axis=1)
    market = closes[1:] / closes[:-1] - 1.0
    expected = np.mean(
        np.prod(1.0 + exposure[:-1][order] * market, axis=1) - 1.0 < first.actual_return - 1e-12
    )
    assert first.share_beaten == expected and timing_test(exposure, closes, 300, 3) == first


def test_mean_ci_two_points_worked_example():
    # resampled means of {0, 1} are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4
    ci = mean_ci([0.0, 1.0], reps=20_000, seed=0)
    assert (ci.mean, ci.low, ci.high, ci.n) == (0.5, 0.0, 1.0, 2)


def test_mean_ci_matches_normal_theory():
    data = np.random.default_rng(4).normal(0.3, 2.0, 900)
    ci = mean_ci(data, reps=4000, seed=1)
    half = 1.959964 * data.std(ddof=1) / math.sqrt(len(data))
    assert ci.low == pytest.approx(data.mean() - half, abs=0.25 * half)
    assert ci.high == pytest.approx(data.mean() + half, abs=0.25 * half)
    assert mean_ci(data, reps=4000, seed=1) == ci


def test_mean_ci_in_blocks_is_wider_on_a_persistent_series():
    rng = np.random.default_rng(2)
    series = np.zeros(600)
    for t in range(1, 600):
        series[t] = 0.9 * series[t - 1] + rng.normal()
    iid = mean_ci(series, reps=2000, seed=0)
    block = mean_ci(series, reps=2000, seed=0, block=30)
    assert (block.high - block.low) > 2 * (iid.high - iid.low)


def test_mean_ci_edges():
    assert mean_ci([]).n == 0
    assert mean_ci([3.0, float("nan")]).low is None
    with pytest.raises(StatsError):
        mean_ci([1.0, 2.0], confidence=1.0)


def test_mean_ci_of_a_constant_is_that_constant_and_needs_two_effective_values():
    assert mean_ci([0.01] * 5) == Interval(0.01, 0.01, 0.01, 5)
    # two overlapping episodes (block 2) are one independent stretch: no interval, however close
    two = mean_ci([0.0107, 0.0108], block=2)
    assert two.mean == pytest.approx(0.01075) and two.low is None and two.high is None


def test_t_interval_worked_example():
    values = [0.05, -0.04, 0.03, -0.02, 0.01, 0.03]  # mean 0.01
    # by hand: squared deviations sum to 0.0058, s = sqrt(0.0058 / 5) = 0.0340588,
    # SE = s / sqrt(6) = 0.0139044, t(0.975, 5) = 2.5705818 -> half-width 0.0357423
    ci = t_interval(values)
    assert ci.mean == pytest.approx(0.01)
    assert (ci.low, ci.high) == pytest.approx((0.01 - 0.0357423, 0.01 + 0.0357423), abs=1e-6)
    # block 2: 3 effective values, SE = s / sqrt(3), t(0.975, 2) = 4.3026527
    wide = t_interval(values, block=2)
    assert wide.high - wide.mean == pytest.approx(4.3026527 * 0.0340588 / 3**0.5, abs=1e-6)
    assert stats.t.ppf(0.975, 2) == pytest.approx(4.3026527)
    assert t_interval([0.0107, 0.0108], block=2).low is None


def test_t_test_is_scipys_one_sample_test_and_none_without_spread():
    values = [0.01, 0.02, 0.02, 0.01]
    test = t_test(values)
    reference = stats.ttest_1samp(values, 0.0)
    assert test == TTest(float(reference.statistic), float(reference.pvalue), 4)
    # mean .015, sd .005774, t = 5.196 with 3 df
    assert test.statistic == pytest.approx(5.196, abs=1e-3) and test.p_value == pytest.approx(
        0.01385, abs=2e-4
    )
    assert t_test([0.02] * 5) is None and t_test([0.3]) is None and t_test([1.0, float("nan")]) is None
