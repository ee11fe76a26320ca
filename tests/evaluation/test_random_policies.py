"""Random-policy percentiles: vectorised paths against a per-policy loop, worked values."""

import numpy as np
import pytest

from stocker_core.evaluation.random_policies import (
    exposure_return,
    exposure_returns,
    random_exposures,
    random_percentile,
    trade_count,
)


def _prices(days=120, seed=0):
    return 100 * np.cumprod(1 + np.random.default_rng(seed).normal(0, 0.01, days))


def test_exposure_return_worked_example():
    closes = np.array([100.0, 110.0, 99.0, 99.0])
    # long at day 0's close (earns +10%), flat on day 1 (skips -10%), long day 2 (earns 0)
    assert exposure_return([1, 0, 1, 1], closes) == pytest.approx(0.10)
    # with 1% cost per unit of exposure change: 3 changes of size 1
    assert exposure_return([1, 0, 1, 1], closes, cost=0.01) == pytest.approx(1.10 * 0.99**3 - 1)
    assert exposure_return([0.5, 0.5, 0.5, 0.5], closes) == pytest.approx(1.05 * 0.95 * 1.0 - 1)


def test_vectorised_returns_equal_a_loop():
    px = _prices()
    paths = random_exposures(len(px), 9, 50, np.random.default_rng(1))
    loop = []
    for w in paths:
        value = 1.0
        for t in range(len(px) - 1):
            value *= 1 + w[t] * (px[t + 1] / px[t] - 1)
        value *= np.prod(1 - 0.002 * np.abs(np.diff(w, prepend=0.0)))
        loop.append(value - 1)
    assert exposure_returns(paths, px, cost=0.002) == pytest.approx(loop)


def test_random_paths_trade_exactly_as_often():
    paths = random_exposures(60, 11, 200, np.random.default_rng(0))
    assert {trade_count(p) for p in paths} == {11}
    assert paths.min() >= 0.0 and paths.max() <= 1.0 and (paths[:, 0] == 0).mean() > 0.5
    # the last day cannot earn a return, so no trade is drawn on it
    assert (paths[:, -1] == paths[:, -2]).all()
    assert {trade_count(p) for p in random_exposures(5, 99, 10, np.random.default_rng(0))} == {4}
    # levels are held between trades: a path with 1 trade is flat, then one level
    one = random_exposures(30, 1, 50, np.random.default_rng(3))
    assert all(len(np.unique(p)) == 2 and p[0] == 0 or p[0] > 0 and len(np.unique(p)) == 1 for p in one)


def test_daily_rebalancing_policies_get_a_real_distribution():
    px = _prices(250)
    daily = np.random.default_rng(5).random(250)  # trades every day
    rank = random_percentile([daily], [px], 1000, 0)
    assert 0.0 < rank.percentile < 100.0  # not a degenerate all-identical comparison


def test_trade_counts_can_be_given():
    px = _prices(100)
    w = px[0] * np.ones(100) / px  # a fixed number of shares: exposure drifts, never traded after day 0
    given = random_percentile([w], [px], 500, 0, trades=[1])
    assert given.actual == pytest.approx(exposure_return(w, px))
    with pytest.raises(Exception, match="one trade count per close path"):
        random_percentile([w], [px], 10, 0, trades=[1, 2])


def test_percentile_of_hindsight_and_of_flat():
    px = _prices(250)
    ideal = np.r_[px[1:] > px[:-1], False].astype(float)
    assert random_percentile([ideal], [px], 1000, 0).percentile == 100.0
    flat = random_percentile([np.zeros(250)], [px], 1000, 0)
    assert (flat.percentile, flat.actual, flat.random_median) == (50.0, 0.0, 0.0)  # all tie


def test_percentile_pools_tickers_and_is_seeded():
    pxs = [_prices(100, s) for s in range(3)]
    ws = [np.r_[np.zeros(20), np.ones(80)] for _ in pxs]
    a = random_percentile(ws, pxs, 1000, seed=7)
    assert a == random_percentile(ws, pxs, 1000, seed=7)
    assert a.actual == pytest.approx(np.mean([exposure_return(w, p) for w, p in zip(ws, pxs, strict=True)]))
    assert 0.0 <= a.percentile <= 100.0 and a.random_count == 1000
