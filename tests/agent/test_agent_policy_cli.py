"""Agent policies in the registry and the ``stocker agent`` commands (an app of the agent area alone)."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from stocker_core.agent import commands as agent_cli
from stocker_core.agent.policy import decision_action
from stocker_core.agent.rewards import held_position
from stocker_core.cli import build_app
from stocker_core.config import get_settings
from stocker_core.env.environment import Observation
from stocker_core.env.policies import make_policy, policy_names


def observation(cash: float, position: int, close: float = 100.0) -> Observation:
    import numpy as np

    return Observation(
        "SYN", "2023-06-14", close, 0, 10, cash, position, cash + position * close, False, np.array([])
    )


def test_decisions_map_to_all_in_flat_and_keep():
    cost = 0.001
    buy = decision_action("BUY", observation(1000.0, 0), cost)
    assert (buy.side, buy.quantity) == ("buy", 9)  # 9 * 100 * 1.001 = 900.9 <= 1000 < 10 * 100.1
    assert decision_action("BUY", observation(50.0, 3), cost).side == "hold"  # nothing affordable
    sell = decision_action("SELL", observation(0.0, 7), cost)
    assert (sell.side, sell.quantity) == ("sell", 7)
    assert decision_action("SELL", observation(1000.0, 0), cost).side == "hold"
    assert decision_action("HOLD", observation(1000.0, 4), cost).side == "hold"


@pytest.fixture
def sample_home(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    yield get_settings(fresh=True)
    get_settings(fresh=True)


def app() -> typer.Typer:
    return build_app([agent_cli.commands])


def test_agent_policies_are_registered_and_untrained_ones_say_what_to_do(sample_home):
    from stocker_core.env.environment import TradingEnv
    from stocker_core.env.episode import load_episode
    from stocker_core.env.rewards import RewardParams

    assert {"agent_scripted", "agent_base", "agent_rl"} <= set(policy_names())
    env = TradingEnv(load_episode("GOOGL|2016-03-01", sample_home), RewardParams())
    policy = make_policy("agent_scripted", env, settings=sample_home)
    assert len(policy.decisions) == env.episode.trading_days
    assert set(policy.decisions) <= {"BUY", "SELL", "HOLD"}
    from stocker_core.agent.errors import AgentNotTrainedError

    with pytest.raises(AgentNotTrainedError, match="materialize agent_policy first"):
        make_policy("agent_rl", env, settings=sample_home)


def test_agent_run_prints_the_trace_and_scores(sample_home):
    runner = CliRunner()
    result = runner.invoke(app(), ["agent", "run", "--episode", "GOOGL|2016-03-01", "--date", "2016-03-15"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "<plan>" in out and "[tool] get_price_history" in out and "[tool] get_news" in out
    assert "decision: HOLD" in out  # 20-day return +4.59%: 1.15% expected, inside ±1.5%
    assert "forward return over 5 sessions: +1.26%" in out
    # graded result (the default): HOLD keeps the pair's held position (long here), so it is
    # buy-and-hold: no excess and no cost
    assert held_position("GOOGL", "2016-03-15", 0) == 1.0
    assert "scores: result 0.000" in out and "format 1.000  tool 1.000" in out

    as_json = runner.invoke(app(), ["agent", "run", "--date", "2016-03-15", "--json"])
    trace = json.loads(as_json.output)
    assert trace["decision"] == "HOLD" and trace["held"] == 1.0 and trace["scores"]["result"] == 0.0
    assert [t["role"] for t in trace["turns"]][:3] == ["user", "assistant", "tool"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--date", "2016-05-15"], "not a trading day of episode"),
        (["--date", "someday"], "invalid date"),
        (["--policy", "oracle"], "unknown agent policy"),
        (["--policy", "agent_rl", "--date", "2016-03-15"], "materialize agent_policy first"),
        (["--theta", "0"], "bad agent config"),  # inside the option's range, refused by the config
    ],
)
def test_agent_run_bad_input_exits_2(sample_home, args, message):
    result = CliRunner().invoke(app(), ["agent", "run", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_agent_tools_lists_schemas():
    result = CliRunner().invoke(app(), ["agent", "tools", "--json"])
    assert result.exit_code == 0
    names = [s["function"]["name"] for s in json.loads(result.output)]
    assert names[0] == "get_price_history" and "get_macro_events" in names
    text = CliRunner().invoke(app(), ["agent", "tools"]).output
    assert "get_fundamentals  [fundamentals]" in text
