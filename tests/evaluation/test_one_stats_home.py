"""One statistics home: the learning check, the report's leaderboard and the model checks
give the same interval (and the same t-test) for the same per-window excess returns, because
all three call ``stocker_core.evaluation.stats``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stocker_core.evaluation.model_checks import model_figures
from stocker_core.evaluation.pooled import EvidenceConfig, leaderboard_table, pooled_evidence
from stocker_core.evaluation.stats import mean_ci, t_test
from stocker_core.moderator.learning_check import format_table, verdicts

EXCESS = np.array([0.021, -0.013, 0.034, 0.002, -0.008, 0.017, 0.026, -0.019, 0.011, 0.005, 0.029, -0.004])
"""One policy's excess total return over buy-and-hold, window by window (buy-and-hold makes 0
on every window, so each caller's own subtraction gives these values exactly)."""
SEED = 7


def _learning_check_rows() -> pd.DataFrame:
    """Backtest rows as the learning check plays them: one per policy and test episode."""
    rows = []
    for i, excess in enumerate(EXCESS):
        rows.append({"policy": "buy_and_hold", "episode": f"E{i:02d}", "total_return": 0.0})
        rows.append({"policy": "moderator_grpo", "episode": f"E{i:02d}", "total_return": float(excess)})
    return pd.DataFrame(rows)


def _rolling_rows() -> pd.DataFrame:
    """``eval.rolling`` rows of disjoint windows of one ticker (all independent)."""
    rows = []
    for i, excess in enumerate(EXCESS):
        start = pd.Timestamp("2021-01-04") + pd.Timedelta(weeks=2 * i)
        window = {
            "ticker": "AAA",
            "window_index": i,
            "start_date": start,
            "end_date": start + pd.Timedelta(days=4),
        }
        for policy, value in (("buy_and_hold", 0.0), ("moderator_grpo", float(excess))):
            rows.append(
                {
                    **window,
                    "policy": policy,
                    "upper_bound": False,
                    "sharpe": value,
                    "volatility": 0.1,
                    "total_return": value,
                }
            )
    return pd.DataFrame(rows)


def _heldout_records() -> list[dict]:
    """A training report's ``heldout_episodes``: the model and buy-and-hold on each valid episode."""
    return [
        {
            "policy": policy,
            "episode_key": f"AAA|W{i:02d}",
            "total_return": value,
            "unparsable": 0,
            "steps": 10,
        }
        for i, excess in enumerate(EXCESS)
        for policy, value in (("buy_and_hold", 0.0), ("moderator_grpo", float(excess)))
    ]


def test_the_check_the_report_and_the_model_checks_give_one_interval():
    home = mean_ci(EXCESS, 0.95, reps=2000, seed=SEED)
    assert home.low is not None and home.low < EXCESS.mean() < home.high

    check = verdicts(_learning_check_rows(), seed=SEED)["moderator_grpo"]
    evidence = pooled_evidence(_rolling_rows(), pd.DataFrame(), EvidenceConfig(reps=2000, seed=SEED))
    report = evidence.leaderboard.set_index("policy").loc["moderator_grpo"]
    model = model_figures(_heldout_records(), None, "moderator_grpo", seed=SEED)

    assert (check.excess, check.ci_low, check.ci_high) == (home.mean, home.low, home.high)
    assert (report["d_return"], report["d_return_low"], report["d_return_high"]) == (
        home.mean,
        home.low,
        home.high,
    )
    assert (model.delta_mean, model.delta_low, model.delta_high) == (home.mean, home.low, home.high)
    # the Sharpe column carries the same values here, so its interval and t-test are the same too
    assert (report["d_sharpe_low"], report["d_sharpe_high"]) == (home.low, home.high)
    test = t_test(EXCESS)
    assert check.p_value == test.p_value == report["p_value"]
    assert check.t_stat == test.statistic


def test_the_printed_intervals_are_those_numbers():
    home = mean_ci(EXCESS, 0.95, reps=2000, seed=SEED)
    found = verdicts(_learning_check_rows(), seed=SEED)
    result = {
        "ic": 0.3,
        "seed": SEED,
        "tickers": ["AAA"],
        "windows": len(EXCESS),
        "policies": {name: v.as_dict() for name, v in found.items()},
        "verdict": [],
        "seconds": 1.0,
    }
    assert f"[{home.low:+.4f}, {home.high:+.4f}]" in format_table(result)

    evidence = pooled_evidence(_rolling_rows(), pd.DataFrame(), EvidenceConfig(reps=2000, seed=SEED))
    row = leaderboard_table(evidence).iloc[0]
    assert row["Δ total return [95% CI]"] == f"{home.mean:+.3f} [{home.low:+.3f}, {home.high:+.3f}]"


def test_a_different_seed_moves_every_caller_alike():
    other = mean_ci(EXCESS, seed=SEED + 1)
    assert (other.low, other.high) != pytest.approx(
        (mean_ci(EXCESS, seed=SEED).low, mean_ci(EXCESS, seed=SEED).high)
    )
    check = verdicts(_learning_check_rows(), seed=SEED + 1)["moderator_grpo"]
    model = model_figures(_heldout_records(), None, "moderator_grpo", seed=SEED + 1)
    assert (check.ci_low, check.ci_high) == (model.delta_low, model.delta_high) == (other.low, other.high)
