"""Adding a baseline policy (docs/extending.md): one class, one ``register_policy`` call, and
the backtest plays it: its row appears with the trades and the return worked out by hand, on
a made-up episode and on an episode of the packaged sample."""

from __future__ import annotations

import numpy as np
import pytest

from stocker_core.config import Settings
from stocker_core.env.environment import Observation
from stocker_core.env.episode import episode_from_closes, load_episode
from stocker_core.env.policies import long_flat_action, policy_names, register_policy, unregister_policy
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import InvalidNameError
from stocker_core.evaluation.backtests import backtest

# --- the toy baseline: everything it is, in this module -----------------------------------


class UpDayPolicy:
    """Long (all in, whole shares) after a day that closed up, flat after any other day."""

    def __init__(self, cost: float) -> None:
        self.cost = cost

    def act(self, observation: Observation):
        closes = observation.price_history  # closes up to and including the decision day
        up = len(closes) >= 2 and closes[-1] > closes[-2]
        return long_flat_action(up, observation, self.cost)


@pytest.fixture
def up_day():
    register_policy("up_day", lambda env, seed, settings: UpDayPolicy(env.params.transaction_cost))
    yield "up_day"
    unregister_policy("up_day")


# --- the tests -------------------------------------------------------------------------------


def test_one_registration_and_the_backtest_plays_it(up_day):
    assert up_day in policy_names()
    episode = episode_from_closes([100.0, 101.0, 102.0, 101.0, 103.0, 104.0])
    params = RewardParams(starting_cash=10_000.0, transaction_cost=0.0)
    result = backtest(episode, [up_day, "buy_and_hold"], params)
    assert not result.failures
    row = next(r for r in result.rows() if r["policy"] == up_day)
    # day 1 (101 > 100): buy 99 shares for 9,999, cash 1; day 2 (102 > 101): keep; day 3
    # (101 < 102): sell 99 at 101, cash 10,000; day 4 (103 > 101): buy 97 for 9,991, cash 9;
    # day 5 (104 > 103): keep. Final value 9 + 97 * 104 = 10,097.
    run = result.run_of(up_day)
    assert run.traded.tolist() == [0, 99, 0, -99, 97, 0]
    assert row["trades"] == 3 and row["final_value"] == pytest.approx(10_097.0)
    assert row["total_return"] == pytest.approx(0.0097)
    assert row["label"] == up_day and not row["upper_bound"]  # no flag: an ordinary strategy
    assert run.method == "per_step"  # no plan registered: the environment is stepped


def test_on_a_sample_episode_it_trades_on_every_turn_of_the_closes(up_day, tmp_path):
    settings = Settings(home=tmp_path / "home", source="sample")
    episode = load_episode("GOOGL|2016-03-01", settings)
    closes, offset = episode.all_closes, len(episode.history)
    want = [
        offset + t >= 1 and closes[offset + t] > closes[offset + t - 1] for t in range(episode.trading_days)
    ]
    turns = int(np.count_nonzero(np.diff(np.r_[False, want])))  # flat -> long and long -> flat
    row = next(r for r in backtest(episode, [up_day], settings=settings).rows() if r["policy"] == up_day)
    assert row["trades"] == turns > 0 and row["invalid_steps"] == 0


def test_unregistered_it_is_unknown_again(up_day):
    unregister_policy(up_day)
    with pytest.raises(InvalidNameError, match="unknown policy 'up_day'"):
        backtest(episode_from_closes([100.0, 101.0]), [up_day])
