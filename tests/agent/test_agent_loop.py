"""The ReAct loop with scripted and hand-written writers: call cap, one action per turn,
malformed turns, no answer; the scripted agent's rule and its trace."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent_testing import DECISION_DAY

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.loop import run_decision
from stocker_core.agent.render import render_words, vocabulary
from stocker_core.agent.rewards import score_trace
from stocker_core.agent.scripted import Evidence, ScriptedWriter, expected_move, scripted_decision
from stocker_core.agent.tools import AgentTools
from stocker_core.agent.trace import Trace

PRICE = '<tool>{"name": "get_price_history", "arguments": {"lookback_days": 5}}</tool>'


class Replay:
    """Writes the given turns in order, the same for every trace."""

    def __init__(self, turns: Sequence[str]) -> None:
        self.turns = list(turns)

    def write(self, traces: Sequence[Trace]) -> list[str]:
        return [self.turns[len(t.assistant_turns())] for t in traces]


def test_scripted_agent_queries_market_and_sentiment_then_decides(planted):
    config = AgentConfig(result_mode="band")
    trace = run_decision(ScriptedWriter(config), AgentTools(planted, DECISION_DAY), config, "agent_scripted")
    names = [t.tool_call["name"] for t in trace.tool_turns()]
    assert names == ["get_price_history", "get_news", "get_forum_posts", "get_indicators"]
    assert all(t.valid for t in trace.tool_turns())
    # 20-day return of closes rising by 1 a day, news and forum sentiment positive, RSI 100
    assert trace.decision == "BUY"
    scores = score_trace(trace, 0.05, config)
    assert (scores.result, scores.format, scores.tool) == (1.0, 1.0, 1.0)
    assert set(render_words(trace).split()) <= set(vocabulary())  # the tiny model can read it all
    assert json.loads(trace.to_json())["decision"] == "BUY"
    assert "get_news" in trace.to_text() and "scores: result 1.000" in trace.to_text()


def test_scripted_rule_by_hand():
    # ret20 = +8%: 8% * 5/20 = 2% ; news +0.5 -> +0.5% ; RSI 75 -> -0.5%  => 2.0%
    evidence = Evidence(return_pct=8.0, news=0.5, forum=None, rsi=75.0)
    assert abs(expected_move(evidence, 5) - 0.02) < 1e-12
    assert scripted_decision(evidence, 0.015, 5) == "BUY"
    assert scripted_decision(evidence, 0.025, 5) == "HOLD"  # a larger θ holds more
    assert scripted_decision(Evidence(return_pct=-8.0), 0.015, 5) == "SELL"
    assert scripted_decision(Evidence(), 0.015, 5) == "HOLD"


def test_the_call_cap_refuses_further_calls(planted):
    config = AgentConfig(max_tool_calls=1, max_turns=4)
    writer = Replay(
        [
            f"<plan> a b </plan> {PRICE}",
            f"<think> more data </think> {PRICE}",
            "<think> ok now </think> <answer>SELL</answer>",
        ]
    )
    trace = run_decision(writer, AgentTools(planted, DECISION_DAY), config, "t")
    calls = trace.tool_turns()
    assert [c.valid for c in calls] == [True, False]
    assert "cap" in calls[1].tool_result["error"]
    assert calls[0].calls_left == 0
    assert trace.decision == "SELL"


def test_only_the_first_call_of_a_turn_runs(planted):
    config = AgentConfig()
    news = '<tool>{"name": "get_news", "arguments": {"days": 7}}</tool>'
    writer = Replay(
        [f"<plan> a b </plan> {PRICE} {news}", "<think> fine then </think> <answer>HOLD</answer>"]
    )
    trace = run_decision(writer, AgentTools(planted, DECISION_DAY), config, "t")
    assert [t.tool_call["name"] for t in trace.tool_turns()] == ["get_price_history"]
    assert trace.assistant_turns()[0].extra_calls == 1
    assert (
        score_trace(trace, 0.0, config).parts["one_call_per_turn"] == 0.0
    )  # its one calling turn made two calls


def test_malformed_turns_never_crash_and_no_answer_holds(planted):
    config = AgentConfig(max_turns=3)
    writer = Replay(["gibberish", '<tool>{"name": 5}</tool>', "<answer>LATER</answer>"])
    trace = run_decision(writer, AgentTools(planted, DECISION_DAY), config, "t")
    assert trace.decision is None and trace.action == "HOLD"
    assert len(trace.assistant_turns()) == 3
    assert trace.tool_turns()[0].valid is False
    scores = score_trace(trace, 0.0, config)
    assert scores.result == 0.0 and scores.format < 0.5
