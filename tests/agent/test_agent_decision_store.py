"""The agent's decisions kept on disk between evaluation stages: a second backtest in a fresh
process (the in-process traces cleared) decides nothing and plays the same runs; anything that
changes a decision (settings, model, data, code) is another key."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stocker_core.agent import policy as agent_policy
from stocker_core.agent.config import agent_config
from stocker_core.agent.decision_store import DecisionStore, code_digest, data_digest, store_key
from stocker_core.config import get_settings
from stocker_core.env.episode import load_episode
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation.backtests import backtest_many

KEYS = ("GOOGL|2016-03-01", "GOOGL|2016-04-01")  # overlapping two-month episodes


@pytest.fixture
def sample_home(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    agent_policy._TRACES.clear()
    yield get_settings(fresh=True)
    agent_policy._TRACES.clear()
    get_settings(fresh=True)


def _play(settings, vectorised: bool = True):
    episodes = [load_episode(key, settings) for key in KEYS]
    results = backtest_many(episodes, ["agent_scripted"], RewardParams(), 0, settings, vectorised=vectorised)
    assert all(not r.failures for r in results), [r.failures for r in results]
    return [r.run_of("agent_scripted") for r in results]


def test_a_second_stage_reads_the_decisions_and_plays_the_same_runs(sample_home, monkeypatch):
    first = _play(sample_home)
    folder = sample_home.home / "cache" / "agent_decisions"
    files = list(folder.rglob("GOOGL-*.json"))
    assert len(files) == 1
    days = sorted({d for run in first for d in run.dates})
    kept = json.loads(files[0].read_text())
    assert sorted(kept) == [d.isoformat() for d in days]  # every day once, overlaps included
    assert set(kept.values()) <= {"BUY", "SELL", "HOLD", None}

    agent_policy._TRACES.clear()  # a new process: nothing remembered in memory

    def no_deciding(*args, **kwargs):
        raise AssertionError("every decision should come from the store")

    monkeypatch.setattr(agent_policy, "run_decisions", no_deciding)
    second = _play(sample_home)
    monkeypatch.undo()
    agent_policy._TRACES.clear()
    reference = _play(sample_home, vectorised=False)  # one episode at a time, no store
    for a, b, c in zip(first, second, reference, strict=True):
        assert a.episode_key == b.episode_key == c.episode_key
        assert np.array_equal(a.traded, b.traded) and np.array_equal(a.traded, c.traded)
        assert np.array_equal(a.values, b.values) and np.array_equal(a.values, c.values)
        assert a.row() == b.row() == {**c.row(), "method": "batched"}  # only how it was played differs


def test_what_changes_a_decision_changes_the_key(sample_home):
    data = agent_policy.agent_data("GOOGL", sample_home)
    config = agent_config()
    base = store_key("agent_rl", "agent_rl:run-1", config.model_dump_json(), False, data)
    assert base == store_key("agent_rl", "agent_rl:run-1", config.model_dump_json(), False, data)
    other_config = config.model_copy(update={"max_turns": config.max_turns + 1}).model_dump_json()
    assert base != store_key("agent_rl", "agent_rl:run-2", config.model_dump_json(), False, data)
    assert base != store_key("agent_rl", "agent_rl:run-1", other_config, False, data)
    assert base != store_key("agent_rl", "agent_rl:run-1", config.model_dump_json(), True, data)
    assert base != store_key("agent_base", "agent_rl:run-1", config.model_dump_json(), False, data)
    before = data_digest(data)
    data.bars.loc[data.bars.index[-1], "close"] += 1.0  # a corrected bar
    assert data_digest(data) != before
    assert len(code_digest()) == 64


def test_writers_fold_files_and_never_lose_a_day(tmp_path):
    import pandas as pd

    store = DecisionStore(tmp_path, "key")
    day = pd.Timestamp
    store.save("AAA", {day("2020-01-02"): "BUY"})
    other = DecisionStore(tmp_path, "key")
    other.save("AAA", {day("2020-01-03"): None})
    store.save("BBB", {day("2020-01-02"): "SELL"})
    assert store.load("AAA") == {day("2020-01-02"): "BUY", day("2020-01-03"): None}
    assert len(list(store.folder.glob("AAA-*.json"))) == 1  # the second write folded the first
    assert store.load("BBB") == {day("2020-01-02"): "SELL"} and store.load("CCC") == {}
