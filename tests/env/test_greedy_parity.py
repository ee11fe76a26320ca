"""The reference greedy rule, exactly as the reference computes it (sells on the last step)."""

from __future__ import annotations

import pytest

from stocker_core.env.ideal import greedy_trajectory, ideal_trajectory


def test_greedy_sells_on_the_last_step_by_hand():
    # cost 0.001: buy floor(10000 / (10 * 1.001)) = 999 shares for 9999.99 (cash 0.01),
    # hold at 11 (12 > 11), sell all 999 at 12 on the last step: 999 * 12 * 0.999 = 11976.012
    greedy = greedy_trajectory([10.0, 11.0, 12.0], 0.001, 10_000.0)
    assert greedy.shares.tolist() == [999, 999, 0]
    assert greedy.long.tolist() == [True, True, False]
    assert greedy.values[-1] == pytest.approx(0.01 + 11976.012, abs=1e-9)
    assert greedy.total == pytest.approx(0.1976022, abs=1e-12)
    assert greedy.trades == 2


def test_greedy_flat_all_along_on_a_falling_series():
    greedy = greedy_trajectory([12.0, 11.0, 10.0], 0.001, 10_000.0)
    assert greedy.total == 0.0 and greedy.trades == 0


def test_greedy_totals_match_the_reference_on_the_seed_tasks(seed_settings):
    from stocker_core.env.episode import load_episode

    published = {"task_easy": 0.182203, "task_medium": 0.236178}
    for task, total in published.items():
        episode = load_episode(task, seed_settings)
        greedy = greedy_trajectory(episode.closes, 0.001, episode.starting_cash)
        assert round(greedy.total, 6) == total
        assert ideal_trajectory(episode.closes, 0.001, episode.starting_cash).total > greedy.total
