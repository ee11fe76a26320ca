"""agent_scripted: a deterministic agent that always queries market and sentiment tools and
decides from their answers — the baseline that makes the RL gain measurable.

It calls, in order (as many as the call cap allows): 20-day price history, 7 days of
news, 7 days of forum posts, 5 days of RSI. Its forecast of the move over the horizon is
``ret20 · horizon / 20 + 1% · news sentiment + 1% · forum sentiment`` with ∓0.5% when
RSI is above 70 / below 30; BUY above +θ, SELL below −θ, HOLD within — so a larger θ
gives more HOLD.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.render import call_text
from stocker_core.agent.trace import Trace

SCRIPT: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_price_history", {"lookback_days": 20}),
    ("get_news", {"days": 7}),
    ("get_forum_posts", {"days": 7}),
    ("get_indicators", {"names": ["rsi14"], "lookback_days": 5}),
)
PLAN = "check price trend then news forum sentiment then indicators and decide"
SENTIMENT_WEIGHT = 0.01
RSI_TILT = 0.005


@dataclass(frozen=True)
class Evidence:
    """What the scripted agent read: 20-day return (%), sentiments, RSI (None when absent)."""

    return_pct: float | None = None
    news: float | None = None
    forum: float | None = None
    rsi: float | None = None


def evidence_of(trace: Trace) -> Evidence:
    """The numbers the scripted agent uses, taken from the trace's valid tool answers."""
    found: dict[str, float | None] = {}
    for turn in trace.tool_turns():
        result, name = turn.tool_result or {}, (turn.tool_call or {}).get("name")
        if not turn.valid:
            continue
        if name == "get_price_history" and result.get("available"):
            found["return_pct"] = result.get("return_pct")
        elif name == "get_news" and result.get("count"):
            found["news"] = result.get("mean_sentiment")
        elif name == "get_forum_posts" and result.get("count"):
            found["forum"] = result.get("mean_sentiment")
        elif name == "get_indicators" and result.get("available"):
            found["rsi"] = (result.get("latest") or {}).get("rsi14")
    return Evidence(**found)


def expected_move(evidence: Evidence, horizon: int) -> float:
    """The scripted forecast of the return over ``horizon`` sessions (a fraction)."""
    move = (evidence.return_pct or 0.0) / 100 * horizon / 20
    move += SENTIMENT_WEIGHT * ((evidence.news or 0.0) + (evidence.forum or 0.0))
    if evidence.rsi is not None:
        move += -RSI_TILT if evidence.rsi > 70 else RSI_TILT if evidence.rsi < 30 else 0.0
    return move


def scripted_decision(evidence: Evidence, theta: float, horizon: int) -> str:
    """BUY above +θ, SELL below −θ, HOLD within, on the scripted forecast."""
    move = expected_move(evidence, horizon)
    return "BUY" if move > theta else "SELL" if move < -theta else "HOLD"


def _observation(name: str, result: dict[str, Any]) -> str:
    if name == "get_price_history":
        r = result.get("return_pct")
        return (
            "trend none" if r is None else "trend up" if r > 2 else "trend down" if r < -2 else "trend flat"
        )
    if name == "get_indicators":
        rsi = (result.get("latest") or {}).get("rsi14")
        return "rsi none" if rsi is None else "rsi high" if rsi > 70 else "rsi low" if rsi < 30 else "rsi mid"
    head = "news" if name == "get_news" else "forum"
    if not result.get("count"):
        return f"{head} none"
    s = result.get("mean_sentiment") or 0.0
    return f"{head} " + ("positive" if s > 0.05 else "negative" if s < -0.05 else "neutral")


class ScriptedWriter:
    """Writes the scripted agent's turns (a TurnWriter)."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.script = SCRIPT[: config.max_tool_calls]

    def next_turn(self, trace: Trace) -> str:
        done = len(trace.assistant_turns())
        if done == 0:
            name, args = self.script[0]
            return f"<plan> {PLAN} </plan> <tool> {call_text(name, args)} </tool>"
        last = trace.tool_turns()[-1] if trace.tool_turns() else None
        seen = _observation(last.tool_call["name"], last.tool_result or {}) if last and last.valid else "none"
        if done < len(self.script):
            name, args = self.script[done]
            return f"<think> {seen} </think> <tool> {call_text(name, args)} </tool>"
        decision = scripted_decision(evidence_of(trace), self.config.theta, self.config.horizon)
        outlook = {"BUY": "bullish", "SELL": "bearish", "HOLD": "neutral"}[decision]
        return f"<think> {seen} outlook {outlook} </think> <answer> {decision} </answer>"

    def write(self, traces: Sequence[Trace]) -> list[str]:
        return [self.next_turn(t) for t in traces]


FORMAT_SCRIPT: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_price_history", {"lookback_days": 20}),
    ("get_forum_posts", {"days": 7}),
    ("get_indicators", {"names": ["rsi14"], "lookback_days": 5}),
    ("get_news", {"days": 0}),
)
"""The format teacher's calls: the decision day's own headlines last, next to the answer."""
FORMAT_PLAN = "check price trend forum indicators then news and decide"


def balanced_decision(ticker: str, day: str, seed: int) -> str:
    """BUY, SELL or HOLD with equal odds, fixed by the pair and the seed: a verdict that says
    nothing about the evidence, so a warm start on it learns the format, not a rule."""
    import hashlib

    digest = hashlib.sha256(f"format|{seed}|{ticker}|{day}".encode()).digest()
    return ("BUY", "SELL", "HOLD")[digest[0] % 3]


class FormatWriter(ScriptedWriter):
    """Writes the warm start's turns: ``FORMAT_SCRIPT``'s calls, each result read back in
    ``<think>``, then a balanced decision (``balanced_decision``) with no verdict word before it."""

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config)
        self.script = FORMAT_SCRIPT[-config.max_tool_calls :]

    def next_turn(self, trace: Trace) -> str:
        done = len(trace.assistant_turns())
        if done == 0:
            name, args = self.script[0]
            return f"<plan> {FORMAT_PLAN} </plan> <tool> {call_text(name, args)} </tool>"
        last = trace.tool_turns()[-1] if trace.tool_turns() else None
        seen = _observation(last.tool_call["name"], last.tool_result or {}) if last and last.valid else "none"
        if done < len(self.script):
            name, args = self.script[done]
            return f"<think> {seen} </think> <tool> {call_text(name, args)} </tool>"
        decision = balanced_decision(trace.ticker, trace.date, self.config.seed)
        return f"<think> {seen} </think> <answer> {decision} </answer>"
