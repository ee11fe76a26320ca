"""Training pairs never reach valid/test days; a few RL steps with tool calls on the tiny
model, end to end, write an adapter that reloads with identical greedy turns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from stocker_testing import make_bars

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.data import AgentData
from stocker_core.agent.pairs import agent_splits, sample_pairs, split_days
from stocker_core.config import Settings
from stocker_core.evaluation.splits import SplitLeakError


def walk_data(days: int = 400, seed: int = 3) -> AgentData:
    rng = np.random.default_rng(seed)
    closes = 100 * np.exp(np.cumsum(rng.normal(0.0003, 0.015, days)))
    return AgentData("SYN", make_bars(closes, start="2020-01-02"), source="test")


def test_training_days_and_their_labels_stay_inside_the_train_split():
    data = walk_data()
    splits = agent_splits(None, {"SYN": data}).splits
    train, valid = splits.range_of("SYN", "train"), splits.range_of("SYN", "valid")
    days = split_days(data, splits, "train", horizon=5)
    assert days and all(train.start <= d.date() <= train.end for d in days)
    assert all(data.forward_day(d, 5).date() <= train.end for d in days)  # labels too
    assert max(days).date() < valid.start
    # the last 5 train days have their label outside the split: left out
    assert len(days) == train.trading_days - 5
    valid_days = split_days(data, splits, "valid", horizon=5)
    assert all(valid.start <= d.date() <= valid.end for d in valid_days)
    with pytest.raises(SplitLeakError):
        split_days(data, splits, "test", horizon=5)


def test_sample_pairs_spreads_over_time_and_is_seeded():
    pairs = [("SYN", pd.Timestamp("2020-01-01") + pd.Timedelta(days=i)) for i in range(100)]
    picked = sample_pairs(pairs, 10, seed=0)
    assert len(picked) == 10 and picked == sample_pairs(pairs, 10, seed=0)
    assert picked == sorted(picked, key=lambda p: p[1])
    for i, (_, day) in enumerate(picked):  # one pick in each tenth of the range
        assert 10 * i <= (day - pairs[0][1]).days < 10 * (i + 1)


@pytest.mark.slow
def test_a_few_rl_steps_with_tool_calls_end_to_end(tmp_path: Path):
    from stocker_core.agent.model import ModelWriter
    from stocker_core.agent.policy import load_agent_model
    from stocker_core.agent.scoring import run_scored
    from stocker_core.agent.store import current_run
    from stocker_core.agent.training import traces_fingerprint, train_agent

    config = AgentConfig(
        tiny_hidden_size=32,
        tiny_intermediate_size=64,
        tiny_layers=1,
        tiny_heads=2,
        sft_steps=30,
        sft_batch_size=8,
        rl_steps=2,
        rl_prompts_per_step=2,
        num_generations=2,
        max_train_pairs=16,
        max_valid_pairs=4,
        eval_every=1,
        max_new_tokens=24,
        decision_fit_steps=4,
        decision_fit_eval_every=2,
    )
    settings = Settings(home=tmp_path / "home")
    data = {"SYN": walk_data()}
    result = train_agent(config, settings, data=data)

    run_dir = Path(result.run_dir)
    assert (run_dir / "adapter" / "adapter_config.json").is_file()
    assert (run_dir / "base" / "config.json").is_file()
    assert (run_dir / "curves.png").read_bytes()[:4] == b"\x89PNG"
    assert [p["step"] for p in result.curves] == [0, 1, 2]
    assert len(result.rl_log) == 2 and len(result.sha256) == 64
    fit = result.decision_fit  # every train and valid pair's decision, checked at steps 0, 2, 4
    assert fit["steps"] == 4 and [step for step, _ in fit["valid_curve"]] == [0, 2, 4]
    assert fit["train_pairs"] > config.max_train_pairs and fit["kept_step"] in (0, 2, 4)
    manifest = current_run(settings.home)
    assert manifest["run_id"] == result.run_id
    assert json.loads((run_dir / "agent.json").read_text())["valid_fingerprint"] == result.valid_fingerprint
    splits = agent_splits(None, data).splits
    assert pd.Timestamp(result.train_span[1]).date() < splits.range_of("SYN", "valid").start

    reloaded = load_agent_model("rl", settings, config)
    pairs = [(k.split("|")[0], pd.Timestamp(k.split("|")[1])) for k in result.valid_keys]
    traces = run_scored(ModelWriter(reloaded, config), pairs, data, config, "agent_rl")
    assert [t.action for t in traces] == result.valid_decisions
    assert traces_fingerprint(traces) == result.valid_fingerprint
