"""Held-out evaluation: window metrics by hand, the θ table's action mix on the sample data."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.evaluation import window_metrics


def test_window_metrics_by_hand():
    run = SimpleNamespace(values=[100.0, 110.0, 99.0, 120.0, 120.0])
    frame = window_metrics(run, 2)
    assert len(frame) == 2
    assert frame["mdd"].tolist() == pytest.approx([0.1, 0.0])  # (110 - 99) / 110, then no drawdown
    # ARR of 100 -> 99 over 2 days: 0.99 ** (252 / 2) - 1
    assert frame["arr"].iloc[0] == pytest.approx(0.99**126 - 1)


@pytest.fixture
def sample_home(tmp_path, monkeypatch):
    from stocker_core.config import get_settings

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    monkeypatch.setenv("STOCKER_DEFAULT_TICKERS", '["GOOGL"]')  # one ticker: the sample's default has 11
    yield get_settings(fresh=True)
    get_settings(fresh=True)


@pytest.mark.slow
def test_a_larger_theta_holds_more(sample_home):
    from stocker_core.agent.evaluation import theta_table

    table = theta_table(["agent_scripted"], sample_home, AgentConfig(), (0.01, 0.015, 0.02))
    holds = table["share_hold"].tolist()
    # the scripted HOLD band |forecast| <= θ only widens with θ
    assert holds == sorted(holds) and holds[0] < holds[-1]
    assert table[["share_buy", "share_sell", "share_hold"]].sum(axis=1).round(9).eq(1.0).all()
    assert table["result"].between(0, 1).all() and table["mdd"].between(0, 1).all()


@pytest.mark.slow
def test_the_agent_held_out_table_equals_the_backtest_of_the_same_episode(sample_home):
    """One scoring home: the agent's held-out row is evaluation.backtests's run of that episode."""
    from stocker_core.agent.evaluation import evaluate_split, split_episode
    from stocker_core.agent.pairs import agent_splits
    from stocker_core.agent.policy import agent_data
    from stocker_core.config import use_settings
    from stocker_core.evaluation.backtests import backtest

    config = AgentConfig()
    row = evaluate_split(["agent_scripted"], sample_home, config, "valid", tickers=["GOOGL"]).iloc[0]
    data = agent_data("GOOGL", sample_home)
    splits = agent_splits(None, {"GOOGL": data}).splits
    episode = split_episode(data, splits, "valid", sample_home.starting_cash)
    with use_settings(sample_home):
        run = backtest(episode, ["agent_scripted"], settings=sample_home).run_of("agent_scripted")
    for metric in ("arr", "sharpe", "mdd", "trades"):
        assert row[metric] == pytest.approx(run.metrics[metric], abs=1e-12), metric
