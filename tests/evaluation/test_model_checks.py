"""The figures of the model checks, from hand-made training-report records."""

import pytest

from stocker_core.evaluation.model_checks import (
    last_tenth_mean,
    model_figures,
    model_policy,
    parse_rate,
)
from stocker_core.evaluation.stats import mean_ci


def _records(policy: str, returns: list[float], unparsable: list[int] | None = None, steps: int = 10):
    return [
        {
            "policy": policy,
            "episode_key": f"AAPL|2023-0{i + 1}-01",
            "final_value": 10_000 * (1 + r),
            "total_return": r,
            "unparsable": (unparsable or [0] * len(returns))[i],
            "steps": steps,
        }
        for i, r in enumerate(returns)
    ]


def test_parse_rate_pools_steps():
    assert parse_rate(_records("m", [0, 0, 0], [0, 1, 1], steps=10)) == pytest.approx(1 - 2 / 30)
    assert parse_rate([{"steps": 10, "unparsable": 0}, {"steps": 30, "unparsable": 2}]) == pytest.approx(0.95)
    assert parse_rate([]) is None


def test_model_equal_to_buy_and_hold_is_not_above_zero():
    bh = [0.02, -0.01, 0.03, 0.00]
    records = _records("moderator_grpo", bh) + _records("buy_and_hold", bh) + _records("random", [0.1] * 4)
    figures = model_figures(records, [1.0] * 18 + [0.6, 0.8], "moderator_grpo", block=2)
    assert figures.policy == "moderator_grpo" and figures.episodes == 4 and figures.paired_episodes == 4
    assert (figures.delta_mean, figures.delta_low, figures.delta_high) == (0.0, 0.0, 0.0)
    assert figures.beats_buy_and_hold is False
    assert figures.parse_rate == 1.0 and figures.parse_ok is True
    # last tenth of 20 steps: the last 2 (0.6, 0.8) -> 0.7 > 0.5
    assert figures.zero_spread_last_tenth == pytest.approx(0.7) and figures.groups_have_spread is False


def test_constant_edge_has_a_degenerate_ci_above_zero():
    bh = [0.01, 0.02, 0.03]
    records = _records("m", [r + 0.01 for r in bh]) + _records("buy_and_hold", bh)
    figures = model_figures(records, [0.0] * 10, "m")
    assert figures.delta_mean == pytest.approx(0.01)
    assert figures.delta_low == pytest.approx(0.01) and figures.delta_high == pytest.approx(0.01)
    assert figures.beats_buy_and_hold is True and figures.groups_have_spread is True


def test_mixed_deltas_give_the_bootstrap_interval_around_the_mean():
    """The interval is ``stats.mean_ci``'s (a percentile bootstrap since the one statistics
    home: the t-interval it replaced gave 0.01 ± 0.0357 here)."""
    bh = [0.0] * 6
    mine = [0.05, -0.04, 0.03, -0.02, 0.01, 0.03]  # mean 0.01
    figures = model_figures(_records("m", mine) + _records("buy_and_hold", bh), None, "m")
    expected = mean_ci(mine, 0.95, reps=2000, seed=0)
    assert figures.delta_mean == pytest.approx(0.01)
    assert (figures.delta_low, figures.delta_high) == (expected.low, expected.high)
    assert figures.delta_low < 0 < figures.delta_high  # straddles zero: WARN
    assert figures.beats_buy_and_hold is False
    assert figures.zero_spread_last_tenth is None and figures.groups_have_spread is None
    seeded = model_figures(_records("m", mine) + _records("buy_and_hold", bh), None, "m", seed=3)
    assert (seeded.delta_low, seeded.delta_high) == (mean_ci(mine, seed=3).low, mean_ci(mine, seed=3).high)


def test_overlapping_episodes_resample_in_blocks_and_need_two_effective_ones():
    bh = [0.0] * 6
    mine = [0.05, -0.04, 0.03, -0.02, 0.01, 0.03]
    records = _records("m", mine) + _records("buy_and_hold", bh)
    blocks = model_figures(records, None, "m", block=2)
    assert (blocks.delta_low, blocks.delta_high) == (mean_ci(mine, block=2).low, mean_ci(mine, block=2).high)
    # two overlapping episodes (block 2) are one independent stretch: no interval, however close
    two = model_figures(
        _records("m", [0.0107, 0.0108]) + _records("buy_and_hold", [0.0, 0.0]), None, "m", block=2
    )
    assert (
        two.delta_mean == pytest.approx(0.01075) and two.delta_low is None and two.beats_buy_and_hold is None
    )


def test_low_parse_rate_and_unpaired_episodes():
    records = _records("m", [0.01, 0.02], [3, 0], steps=20) + _records("buy_and_hold", [0.0])
    figures = model_figures(records, [], "m")
    assert figures.parse_rate == pytest.approx(1 - 3 / 40) and figures.parse_ok is False
    assert figures.paired_episodes == 1 and figures.delta_mean == pytest.approx(0.01)
    assert figures.delta_low is None and figures.beats_buy_and_hold is None  # one pair: no CI


def test_missing_records_give_no_figures():
    figures = model_figures(None, None, "moderator_sft")
    assert figures.policy is None and figures.parse_rate is None and figures.delta_mean is None


def test_policy_name_falls_back_to_the_one_trained_policy():
    records = _records("agent_rl", [0.0]) + _records("buy_and_hold", [0.0]) + _records("random", [0.0])
    assert model_policy(records, "agent_policy") == "agent_rl"
    assert model_policy(records + _records("other_model", [0.0]), "agent_policy") is None


def test_last_tenth_rounds_up():
    assert last_tenth_mean([0.0] * 22 + [1.0, 1.0, 0.0]) == pytest.approx(2 / 3)  # last 3 of 25
    assert last_tenth_mean([0.4]) == pytest.approx(0.4)
    assert last_tenth_mean([float("nan")]) is None
