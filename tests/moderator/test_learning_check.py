"""The learning check's judgement on hand-made backtests, and a short run end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from stocker_core.moderator.learning_check import (
    excess_verdict,
    non_overlapping,
    verdict_lines,
    verdicts,
)


def _rows(excess_by_policy: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    n = len(next(iter(excess_by_policy.values())))
    for i in range(n):
        rows.append({"policy": "buy_and_hold", "episode": f"E{i}", "total_return": 0.01 * i})
        for name, values in excess_by_policy.items():
            rows.append({"policy": name, "episode": f"E{i}", "total_return": 0.01 * i + values[i]})
    return pd.DataFrame(rows)


def test_verdicts_are_excess_over_buy_and_hold_window_by_window():
    found = verdicts(_rows({"oracle": [0.02, 0.04, 0.03, 0.03], "moderator_grpo": [0.01, 0.02, 0.02, 0.01]}))
    assert found["buy_and_hold"].excess == 0.0 and found["buy_and_hold"].p_value == 1.0
    assert found["oracle"].excess == pytest.approx(0.03)
    assert found["moderator_grpo"].excess == pytest.approx(0.015)
    assert found["moderator_grpo"].captured == pytest.approx(0.5)
    assert found["oracle"].ci_low <= 0.03 <= found["oracle"].ci_high
    # one-sample t-test of [0.01, 0.02, 0.02, 0.01]: mean .015, sd .005774, t = 5.196, 3 df
    assert found["moderator_grpo"].p_value == pytest.approx(0.01385, abs=2e-4)


def test_a_policy_with_no_edge_does_not_pass():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.02, 40)
    verdict = excess_verdict(noise - noise.mean(), oracle_mean=0.03, seed=1)
    assert verdict.p_value > 0.5 and verdict.ci_low < 0 < verdict.ci_high
    lines = verdict_lines(0.0, {"moderator_grpo": verdict})
    assert "no trained policy beats buy-and-hold" in lines[0]


def test_non_overlapping_windows_per_ticker():
    episodes = pd.DataFrame(
        {
            "episode_key": ["A|1", "A|2", "A|3", "B|1"],
            "ticker": ["A", "A", "A", "B"],
            "start": pd.to_datetime(["2020-01-02", "2020-02-03", "2020-03-02", "2020-01-02"]),
            "end": pd.to_datetime(["2020-02-28", "2020-03-31", "2020-04-30", "2020-02-28"]),
        }
    )
    assert non_overlapping(episodes) == ["A|1", "A|3", "B|1"]


@pytest.mark.slow
def test_check_learning_runs_end_to_end_on_a_small_market(tmp_path):
    """A short version of `stocker check-learning --json`: builds, trains, judges, prints the keys."""
    home = tmp_path / "home"
    command = [
        sys.executable,
        "-m",
        "stocker_assets.cli",
        "check-learning",
        "--ic",
        "0.1",
        "--seed",
        "7",
        "--tickers",
        "2",
        "--years",
        "1",
        "--home",
        str(home),
        "--json",
        "--quick",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert {"ic", "seed", "tickers", "windows", "policies", "verdict", "training"} <= set(result)
    assert {"moderator_sft", "moderator_grpo", "agent_rl"} <= set(result["training"])
    assert len(json.dumps(result)) < 20_000  # the per-step curves stay beside the models
    assert any(line.startswith("power: the oracle") for line in result["verdict"])
    assert result["ic"] == 0.1 and result["seed"] == 7 and len(result["tickers"]) == 2
    for name in ("oracle", "buy_and_hold", "council", "moderator_sft", "moderator_grpo", "agent_rl"):
        assert {"excess", "ci_low", "ci_high", "p_value", "t_stat", "captured", "min_detectable"} <= set(
            result["policies"][name]
        )
    assert result["policies"]["buy_and_hold"]["excess"] == 0.0
    assert result["windows"] >= 2 and "step" in done.stderr  # progress went to stderr
