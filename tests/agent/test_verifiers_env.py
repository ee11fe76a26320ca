"""Stocker as a verifiers (0.4.0) environment: the example's rollout with the tiny model scores
what Stocker's reward gives (a hand replay of the episode), a placed trade scores its replay,
the tools are the agent's catalog plus trade, and bad input (an unknown episode, a malformed
tool call or decision, broken model output, a bad request) gets an answer, not a crash."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

pytest.importorskip("verifiers.v1")

from stocker_core.agent.chat_server import ChatServer, completion_message  # noqa: E402
from stocker_core.agent.tool_catalog import TOOL_NAMES  # noqa: E402
from stocker_core.agent.trl_model import trl_chat_model  # noqa: E402
from stocker_core.agent.vf_env import load_environment  # noqa: E402
from stocker_core.agent.vf_taskset import StockerData, StockerTask, StockerTaskConfig  # noqa: E402
from stocker_core.agent.vf_toolset import StockerToolset, StockerToolsetConfig  # noqa: E402
from stocker_core.config import Settings, get_settings  # noqa: E402
from stocker_core.env.actions import Action  # noqa: E402
from stocker_core.env.environment import TradingEnv  # noqa: E402
from stocker_core.env.episode import load_episode  # noqa: E402
from stocker_core.env.portfolio import max_affordable  # noqa: E402
from stocker_core.env.rewards import RewardParams  # noqa: E402
from stocker_core.errors import StockerError  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verifiers_rollout.py"
EASY = ("AAPL|2023-08-01", "2023-08-15")  # task_easy at its 10th session


@pytest.fixture(scope="module")
def sample_settings(tmp_path_factory) -> Settings:
    """The offline sample source in a fresh home, for this process and the rollout's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STOCKER_SOURCE", "sample")
        patch.setenv("STOCKER_HOME", str(tmp_path_factory.mktemp("home")))
        patch.delenv("STOCKER_FILES_DIR", raising=False)
        yield get_settings(fresh=True)
    get_settings(fresh=True)


def _hand_reward(settings: Settings, episode_key: str, day: str, decision: str | None) -> float:
    """SPEC §1 by hand: half invested at the first close, held to ``day``, the decision (HOLD
    and the invalid-action penalty when none), held 4 more sessions; the step rewards summed."""
    params = RewardParams.from_settings(settings)
    env = TradingEnv(load_episode(episode_key, settings), params)
    obs = env.reset()
    obs = env.step(Action.buy(max_affordable(obs.cash / 2, obs.close, params.transaction_cost))).observation
    while obs.date < day:
        obs = env.step(Action.hold()).observation
    assert obs.date == day
    if decision == "BUY":
        action = Action.buy(max_affordable(obs.cash, obs.close, params.transaction_cost))
    elif decision == "SELL":
        action = Action.sell(obs.position)
    else:
        action = Action.hold()
    total = sum(env.step(a).reward for a in [action, *[Action.hold()] * 4])
    return total - (params.invalid_penalty if decision is None else 0.0)


def test_the_examples_rollout_scores_stockers_reward_for_the_trades_made(sample_settings, capsys):
    spec = importlib.util.spec_from_file_location("verifiers_rollout", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--model", "tiny", "--tasks", "1", "--max-tokens", "12", "--threads", "1"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(rows) == 1
    row = rows[0]
    assert (row["task"], row["episode_key"], row["day"]) == ("task_easy", *EASY)
    assert row["ok"] and not row["errors"]
    expected = _hand_reward(sample_settings, row["episode_key"], row["day"], row["decision"])
    assert row["reward"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("decision", ["BUY", "SELL", "HOLD", None])
def test_a_placed_trade_scores_its_replay(sample_settings, decision):
    task = StockerTask(StockerData(episode_key=EASY[0], day=EASY[1]), StockerTaskConfig())
    toolset = StockerToolset(StockerToolsetConfig())
    asyncio.run(toolset.setup_task(task.data))
    if decision is not None:
        assert json.loads(toolset.trade(decision.lower())) == {"placed": decision}
    trace = SimpleNamespace(state=toolset.state)  # what the task reads off the rollout's trace
    reward = asyncio.run(task.stocker_reward(trace))
    assert reward == pytest.approx(_hand_reward(sample_settings, *EASY, decision), abs=1e-9)


def test_the_tools_are_the_agents_catalog_plus_trade(sample_settings):
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("stocker")
    StockerToolset(StockerToolsetConfig()).register(server)
    tools = {tool.name: tool for tool in asyncio.run(server.list_tools())}
    assert set(tools) == {*TOOL_NAMES, "trade"}
    assert set(tools["get_price_history"].input_schema["properties"]) == {"lookback_days"}
    assert tools["trade"].input_schema["required"] == ["decision"]


def test_the_taskset_holds_the_reference_tasks_with_masked_prompts(sample_settings):
    tasks = list(load_environment().taskset)
    assert [t.data.name for t in tasks] == ["task_easy", "task_medium", "task_hard"]
    assert (tasks[0].data.episode_key, tasks[0].data.day) == EASY
    assert all("trade" in t.data.prompt and t.data.system_prompt for t in tasks)


def test_an_unknown_episode_is_refused_with_its_name(sample_settings):
    with pytest.raises(StockerError, match="task_nope"):
        list(load_environment(["task_nope"]).taskset)
    with pytest.raises(ValueError, match="decision_step"):
        list(load_environment(["task_easy"], decision_step=400).taskset)
    with pytest.raises(ValueError, match="unknown reward"):
        list(load_environment(reward="sharpe").taskset)


def test_malformed_tool_calls_and_decisions_answer_with_an_error(sample_settings):
    toolset = StockerToolset(StockerToolsetConfig(max_tool_calls=2))
    assert "error" in json.loads(toolset.trade("BUY"))  # before the task is set up
    asyncio.run(toolset.setup_task(StockerData(episode_key=EASY[0], day=EASY[1])))
    assert "error" in json.loads(toolset.get_price_history(lookback_days="many"))
    assert "error" in json.loads(toolset.get_indicators(names=["nope"], lookback_days=5))
    assert "error" in json.loads(toolset.get_news(days=3))  # past the cap of 2
    assert "error" in json.loads(toolset.trade("MAYBE"))
    assert toolset.state.decision is None and toolset.state.invalid_tool_calls >= 2
    assert json.loads(toolset.trade("SELL")) == {"placed": "SELL"}
    assert "error" in json.loads(toolset.trade("BUY"))  # placed once only
    assert toolset.state.decision == "SELL"


def test_broken_model_output_is_a_text_reply_and_a_bad_request_a_400():
    assert completion_message('<tool_call>{"name": "trade", "arguments": {"decision": "BUY"}}</tool_call>')[
        "tool_calls"
    ][0]["function"] == {"name": "trade", "arguments": '{"decision": "BUY"}'}
    for text in ["<tool_call>{not json</tool_call>", "<tool_call>[1, 2]</tool_call>", "\x00 BUY", ""]:
        assert completion_message(text) == {"role": "assistant", "content": text}
    model, tokenizer = trl_chat_model("tiny")
    with ChatServer(model, tokenizer, max_new_tokens=4) as server:
        url = f"{server.base_url}/chat/completions"
        assert httpx.post(url, content=b"{", timeout=30).status_code == 400
        assert httpx.post(url, json={"messages": "hi"}, timeout=30).status_code == 400
        reply = httpx.post(url, json={"messages": [{"role": "user", "content": "hi"}]}, timeout=60)
        assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["role"] == "assistant"
        hello = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
        streamed = httpx.post(url, json=hello, timeout=60)
        assert streamed.text.rstrip().endswith("data: [DONE]")
