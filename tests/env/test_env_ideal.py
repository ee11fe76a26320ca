"""The exact optimum (DP) against brute force and the greedy rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stocker_core.env.ideal import (
    brute_force_total,
    greedy_trajectory,
    ideal_paths,
    ideal_totals,
    ideal_trajectory,
)
from stocker_core.env.plots import ideal_position_png

prices = st.lists(st.floats(1.0, 200.0, allow_nan=False), min_size=1, max_size=12)
costs = st.sampled_from([0.0, 0.0005, 0.001, 0.01, 0.05])


@settings(max_examples=150, deadline=None)
@given(prices, costs)
def test_dp_equals_brute_force(series, cost):
    dp = ideal_trajectory(series, cost, starting_cash=1.0)
    assert dp.total == pytest.approx(brute_force_total(series, cost), abs=1e-12, rel=1e-12)
    # the path's marked values agree with its own positions
    assert dp.values[-1] == pytest.approx(1.0 + dp.total)


@settings(max_examples=60, deadline=None)
@given(prices, costs)
def test_dp_never_below_greedy(series, cost):
    dp = ideal_trajectory(series, cost, 10_000.0)
    greedy = greedy_trajectory(series, cost, 10_000.0)
    assert dp.total >= greedy.total - 1e-12


def test_vectorized_dp_matches_scalar():
    rng = np.random.default_rng(7)
    closes = 50 * np.exp(np.cumsum(rng.normal(0, 0.02, size=(20, 30)), axis=1))
    costs = rng.choice([0.0, 0.001, 0.01], size=20)
    long, _, values = ideal_paths(closes, costs, 10_000.0)
    for i in range(20):
        one = ideal_trajectory(closes[i], float(costs[i]), 10_000.0)
        assert np.array_equal(one.long, long[i])
        np.testing.assert_allclose(one.values, values[i], rtol=1e-12)
    np.testing.assert_allclose(ideal_totals(closes, costs), values[:, -1] / 10_000.0 - 1.0)


def test_costs_make_greedy_suboptimal_on_a_zigzag():
    zigzag = [100, 100.05, 100, 100.05, 100, 110]
    dp = ideal_trajectory(zigzag, 0.001, 10_000.0)
    greedy = greedy_trajectory(zigzag, 0.001, 10_000.0)
    assert dp.total > greedy.total
    assert dp.trades < greedy.trades


def test_dp_beats_greedy_on_seed_tasks(seed_settings):
    from stocker_core.env.episode import load_episode

    for task in ("task_easy", "task_medium", "task_hard"):
        episode = load_episode(task, seed_settings)
        dp = ideal_trajectory(episode.closes, 0.001, episode.starting_cash)
        greedy = greedy_trajectory(episode.closes, 0.001, episode.starting_cash)
        assert dp.total >= greedy.total > 0
        assert len(dp.pnl) == episode.trading_days


def test_plot_returns_png():
    series = [10, 11, 10.5, 12, 11]
    dp = ideal_trajectory(series, 0.001)
    png = ideal_position_png([f"2024-01-0{i + 1}" for i in range(5)], series, dp.long, "t")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
