"""MACD and Z-score mean reversion: positions by hand, vectorised = per-step, no look-ahead."""

import numpy as np
import pytest
from evaluation_testing import episode_with_history, random_walk

from stocker_core.baselines.rules import (
    MACD_MIN_CLOSES,
    macd_long,
    zmr_long,
    zscores,
)
from stocker_core.config import Settings
from stocker_core.env.episode import episode_from_closes
from stocker_core.env.policies import has_plan, policy_names
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation.backtests import backtest


def test_zmr_positions_by_hand():
    # 19 days at 100 then 90: mean 99.5, population std sqrt(4.75) -> z = -4.36: buy.
    # 95: z = -1.78 (stay long); 99: z = -0.08 (keep); 101: z > 0: sell; 101: flat.
    closes = np.array([100.0] * 19 + [90.0, 95.0, 99.0, 101.0, 101.0])
    z = zscores(closes)
    assert np.isnan(z[:19]).all()  # fewer than 20 closes, then a flat window (std 0)
    assert z[19] == pytest.approx((90 - 99.5) / np.sqrt(4.75))
    assert z[20] == pytest.approx((95 - 99.25) / np.sqrt(5.6875))
    assert z[21] == pytest.approx((99 - 99.2) / np.sqrt(5.66))
    assert zmr_long(z).tolist() == [False] * 19 + [True, True, True, False, False]
    run = backtest(episode_from_closes(closes), ["zmr"]).runs[0]
    assert run.sides.tolist() == [0] * 19 + [1, 0, 0, 2, 0]  # buy on day 20, sell on day 23
    assert run.quantities[19] == 111  # all in: 111 * 90 * 1.001 = 9,999.99 <= 10,000


def test_macd_positions_by_hand():
    # 40 flat days, 10 rising days, 10 falling days: the fast EMA leads the slow one up
    # (line above its signal while rising) and down (below while falling).
    closes = np.array(
        [100.0] * 40 + [100 + 2 * i for i in range(1, 11)] + [120 - 3 * i for i in range(1, 11)]
    )
    long = macd_long(closes)
    assert not long[: MACD_MIN_CLOSES - 1].any()  # no MACD before 34 closes
    assert not long[MACD_MIN_CLOSES - 1 : 40].any()  # flat prices: line = signal = 0, not above
    # long from the first rising day; the signal line lags, so the cross down comes on the
    # 4th falling day (index 53), not at the peak (index 49)
    assert np.flatnonzero(long).tolist() == list(range(40, 53))
    run = backtest(episode_from_closes(closes), ["macd"]).runs[0]
    assert np.flatnonzero(run.sides).tolist() == [40, 53] and run.sides[40] == 1 and run.sides[53] == 2


def test_short_history_is_reported_and_uses_what_is_stored():
    closes = random_walk(60, seed=1)
    run = backtest(episode_with_history(closes, 10), ["macd"]).runs[0]
    assert "macd: needs 34 closes" in run.notes[0] and "stores 10 before the window" in run.notes[0]
    assert "23 of 50 day(s) had too little history" in run.notes[0]
    assert not run.positions[:23].any()
    enough = backtest(episode_with_history(closes, 40), ["macd"]).runs[0]
    assert enough.notes == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_equals_per_step(seed, tmp_path):
    episode = episode_with_history(random_walk(140, seed), 80)
    params = RewardParams(starting_cash=episode.starting_cash)
    names = [n for n in policy_names() if has_plan(n)]  # every policy that registered a plan
    assert {"hold", "buy_and_hold", "macd", "zmr", "forecast", "oracle", "ideal"} <= set(names)
    settings = Settings(home=tmp_path / "home")  # the oracle reads its headlines with them
    fast = backtest(episode, names, params, settings=settings, vectorised=True)
    slow = backtest(episode, names, params, settings=settings, vectorised=False)
    for name in names:
        a, b = fast.run_of(name), slow.run_of(name)
        assert (a.method, b.method) == ("vectorised", "per_step")
        assert np.array_equal(a.sides, b.sides) and np.array_equal(a.quantities, b.quantities), name
        np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-9)
        np.testing.assert_allclose(a.rewards, b.rewards, rtol=0, atol=1e-9)
        assert a.metrics == pytest.approx(b.metrics, abs=1e-9)
    assert fast.run_of("macd").metrics["trades"] > 0 and fast.run_of("zmr").metrics["trades"] > 0


@pytest.mark.parametrize("vectorised", [True, False])
def test_a_future_price_spike_does_not_change_earlier_decisions(vectorised):
    closes = random_walk(120, seed=5)
    spiked = closes.copy()
    spiked[100:] *= 3.0  # from day 100 of the series (day 40 of the window) on
    before = backtest(episode_with_history(closes, 60), ["macd", "zmr"], vectorised=vectorised)
    after = backtest(episode_with_history(spiked, 60), ["macd", "zmr"], vectorised=vectorised)
    for name in ("macd", "zmr"):
        a, b = before.run_of(name), after.run_of(name)
        assert np.array_equal(a.sides[:40], b.sides[:40]) and np.array_equal(
            a.quantities[:40], b.quantities[:40]
        )
