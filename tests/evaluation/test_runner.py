"""The runner takes any registered policy, reports failures, and plays the council from its cache."""

import numpy as np
import pytest
from evaluation_testing import episode_with_history, random_walk

from stocker_core.env.actions import Action
from stocker_core.env.policies import register_policy, unregister_policy
from stocker_core.errors import InvalidNameError
from stocker_core.evaluation.backtests import backtest, check_policy_names, ordered_policies


def test_unknown_policy_lists_the_valid_names():
    with pytest.raises(InvalidNameError, match=r"unknown policy 'nope': use any of .*macd.*zmr.*ideal"):
        check_policy_names(["buy_and_hold", "nope"])


def test_default_is_every_registered_policy_with_upper_bounds_last():
    names = ordered_policies()
    for name in ("buy_and_hold", "hold", "random", "macd", "zmr", "council", "ideal", "forecast"):
        assert name in names
    assert names[-1] == "ideal" and names[0] == "buy_and_hold"


class _BuyOneEachDay:
    def act(self, observation):
        return Action.buy(1)


class _Broken:
    def act(self, observation):
        raise RuntimeError("model file missing")


@pytest.fixture
def extra_policies():
    register_policy("buy_one_each_day", lambda env, seed, settings: _BuyOneEachDay())
    register_policy("broken", lambda env, seed, settings: _Broken())
    yield
    unregister_policy("buy_one_each_day")
    unregister_policy("broken")


def test_a_newly_registered_policy_is_backtested_without_code_changes(extra_policies):
    assert "buy_one_each_day" in ordered_policies()
    episode = episode_with_history(random_walk(70, 4), 30)
    result = backtest(episode, ["buy_and_hold", "buy_one_each_day", "broken", "ideal"])
    assert [r.policy for r in result.runs] == ["buy_and_hold", "buy_one_each_day", "ideal"]
    assert result.failures == {"broken": "RuntimeError: model file missing"}
    run = result.run_of("buy_one_each_day")
    assert run.method == "per_step" and run.metrics["trades"] == 40
    assert run.positions.tolist() == list(range(1, 41))
    row = result.rows()[-1]
    assert row["label"] == "ideal (hindsight upper bound)" and row["upper_bound"]


def test_random_is_seeded():
    episode = episode_with_history(random_walk(70, 4), 30)
    a = backtest(episode, ["random"], seed=3).runs[0]
    b = backtest(episode, ["random"], seed=3).runs[0]
    c = backtest(episode, ["random"], seed=4).runs[0]
    assert np.array_equal(a.sides, b.sides) and not np.array_equal(a.sides, c.sides)


@pytest.mark.slow
def test_cached_council_equals_the_registered_council(files_env):
    from stocker_core.env.episode import load_episode
    from stocker_core.evaluation.council_votes import load_vote_book
    from stocker_core.warehouse.db import Warehouse

    episode = load_episode("task_easy", files_env)
    warehouse = Warehouse(files_env.warehouse_path)
    live = backtest(episode, ["council"], settings=files_env).runs[0]  # computes and caches votes
    book = load_vote_book(warehouse, files_env, episode.ticker, list(episode.dates))
    assert book.covers(episode.dates) and book.version.startswith("rule:")
    cached = backtest(episode, ["council"], settings=files_env, vote_book=book).runs[0]
    assert (live.method, cached.method) == ("per_step", "cached_votes")
    assert np.array_equal(live.sides, cached.sides) and np.array_equal(live.quantities, cached.quantities)
    assert np.array_equal(live.rewards, cached.rewards) and live.metrics["trades"] > 0
