"""Pooled significance: each statistic against a worked example or a reference implementation."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from stocker_core.evaluation.significance import (
    deflated_sharpe,
    deflated_sharpe_of_best,
    expected_max_sharpe,
    holm,
    independent_windows,
    min_detectable_difference,
    spa_test,
)
from stocker_core.evaluation.stats import StatsError


def _rolling(tickers=("AAA", "BBB"), windows=20, window=63, step=7):
    days = pd.bdate_range("2020-01-01", periods=windows * step + window)
    rows = []
    for ticker in tickers:
        for index in range(windows):
            lo = index * step
            for policy in ("buy_and_hold", "council"):
                rows.append(
                    {
                        "ticker": ticker,
                        "window_index": index,
                        "start_date": days[lo],
                        "end_date": days[lo + window - 1],
                        "policy": policy,
                    }
                )
    return pd.DataFrame(rows)


def test_independent_windows_are_every_ninth_for_63_by_7():
    kept = independent_windows(_rolling())
    for _, part in kept.groupby("ticker"):
        assert sorted(part["window_index"].unique()) == [0, 9, 18]
    assert len(kept) == 2 * 3 * 2  # tickers x windows x policies


def test_independent_windows_share_no_day():
    kept = independent_windows(_rolling(windows=40, window=10, step=3)).drop_duplicates(
        ["ticker", "window_index"]
    )
    for _, part in kept.groupby("ticker"):
        part = part.sort_values("start_date")
        assert (part["start_date"].to_numpy()[1:] > part["end_date"].to_numpy()[:-1]).all()
        # greedy: windows 0, 4, 8, ... (start 12 days later > end 9 days later)
        assert list(part["window_index"]) == list(range(0, 40, 4))


def test_min_detectable_difference_worked_values():
    # G*Power, one-sample t-test two-sided, alpha 0.05, power 0.8, n = 30: d = 0.5292
    assert min_detectable_difference(1.0, 30) == pytest.approx(0.5292, abs=1e-4)
    # large n: the normal approximation (z_0.975 + z_0.8) * sd / sqrt(n)
    assert min_detectable_difference(0.02, 10_000) == pytest.approx(2.801585 * 0.02 / 100, rel=1e-3)
    assert min_detectable_difference(1.0, 1) is None
    assert min_detectable_difference(0.0, 50) is None


def test_min_detectable_difference_has_the_stated_power():
    # a noncentral t computed with scipy: the power at the returned effect is 0.8
    n, sd = 40, 0.5
    effect = min_detectable_difference(sd, n) / sd
    critical = stats.t.ppf(0.975, n - 1)
    nc = effect * math.sqrt(n)
    power = stats.nct.sf(critical, n - 1, nc) + stats.nct.cdf(-critical, n - 1, nc)
    assert power == pytest.approx(0.8, abs=1e-6)


def test_holm_worked_example_and_gaps():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005, None]) == pytest.approx([0.03, 0.06, 0.06, 0.02, None])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 0.9 lifted to the running maximum
    assert holm([None, float("nan")]) == [None, None]


def test_holm_agrees_with_statsmodels_reference():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(0)
    families = [rng.uniform(0, 0.2, 16), rng.uniform(0, 1, 40), np.array([0.01, 0.01, 0.3, 0.01]), np.ones(3)]
    families += [rng.choice([0.001, 0.02, 0.5], size=12) for _ in range(20)]  # ties
    for p in families:
        assert holm(list(p)) == pytest.approx(list(multipletests(p, method="holm")[1]), abs=1e-15)


def test_spa_finds_a_planted_edge_and_not_a_missing_one():
    rng = np.random.default_rng(0)
    bench = rng.normal(0.0, 0.01, 500)
    worse = {f"p{i}": bench - 0.001 + rng.normal(0, 0.005, 500) for i in range(5)}
    result = spa_test(bench, {**worse, "edge": bench + 0.002 + rng.normal(0, 0.005, 500)}, reps=1000, seed=1)
    assert result.p_consistent < 0.05 and result.best == "edge" and result.policies == 6
    assert result.p_lower <= result.p_consistent <= result.p_upper
    none = spa_test(bench, worse, reps=1000, seed=1)
    assert none.p_consistent > 0.2  # nothing beats the benchmark: no rejection


def test_spa_rejects_bad_input():
    with pytest.raises(StatsError):
        spa_test([0.1, 0.2], {})
    with pytest.raises(StatsError):
        spa_test([0.1, 0.2], {"a": [0.1]})


def test_deflated_sharpe_worked_example_of_the_paper():
    # Bailey & López de Prado (2014), "The Deflated Sharpe Ratio", section 5's example:
    # annual SR 2.5 over 5 years of daily returns (T = 1250, 250 a year), 100 trials with
    # annualised Sharpe variance 1/2, skew -3, kurtosis 10 -> DSR = 0.9004
    daily = 2.5 / math.sqrt(250)
    assert deflated_sharpe(daily, 1250, -3.0, 10.0, 0.5 / 250, 100) == pytest.approx(0.9004, abs=1e-4)
    # SR0 of that example, annualised: 1.7893
    assert expected_max_sharpe(0.5, 100) == pytest.approx(1.7893, abs=1e-3)


def test_deflated_sharpe_of_best_one_trial_is_the_probabilistic_sharpe():
    r = np.random.default_rng(3).normal(0.001, 0.01, 400)
    out = deflated_sharpe_of_best({"only": r}, "only")
    sr = r.mean() / r.std(ddof=1)
    psr = stats.norm.cdf(
        sr
        * math.sqrt(399)
        / math.sqrt(1 - stats.skew(r) * sr + (stats.kurtosis(r, fisher=False) - 1) / 4 * sr**2)
    )
    assert out.threshold == 0.0 and out.dsr == pytest.approx(psr)
    many = deflated_sharpe_of_best(
        {"only": r, **{f"x{i}": np.random.default_rng(i).normal(0, 0.01, 400) for i in range(9)}}, "only"
    )
    assert many.threshold > 0 and many.dsr < out.dsr and many.trials == 10
