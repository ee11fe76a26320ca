"""The agent's reward: result score (θ band on the forward return) plus the process score
(format and tool use), each a pure function of a Trace.

- result, ``result_mode="graded"`` (the default): the decision's excess return over
  buy-and-hold across the ``horizon``, after costs, in units of θ and clipped to [−1, 1]:
  ``clip(((pos − 1) · r − c · |pos − held|) / θ)`` with pos 1 for BUY, 0 for SELL and, as in
  the backtest, ``held`` for HOLD or no answer: HOLD keeps the position. The agent does not
  see its position, so each (ticker, day) carries one drawn as the backtest would leave a
  balanced agent, long or flat with even odds (``held_position``, seeded by the pair); ``c``
  is the environment's cost rate. BUY from a long position scores 0 (it is buy-and-hold); a
  SELL before a fall scores up to +1, before a rise down to −1.
  ``result_mode="band"`` (SPEC §2): 1 when the decision matches the label of the forward
  return — BUY when r > θ, SELL when r < −θ, HOLD otherwise — else 0 (no answer: 0).
- format, the mean of five checks: a valid label was answered; the first turn has a
  ``<plan>``; the share of turns with a reasoning tag; the share of reasoning texts whose
  length is within [min, max] words; the share of turns without format problems.
- tool, the mean of four checks: the share of calls with valid arguments; the share of
  calls that repeat no earlier call; a sensible count (1 … ``max_tool_calls`` calls); the
  share of turns with calls that made only one call.
- total = w_result·result + w_format·format + w_tool·tool.
"""

from __future__ import annotations

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.parsing import parse_turn, word_count
from stocker_core.agent.trace import Scores, Trace


def label_for(forward_return: float, theta: float) -> str:
    """BUY above +θ, SELL below −θ, HOLD within (bounds inclusive)."""
    if forward_return > theta:
        return "BUY"
    if forward_return < -theta:
        return "SELL"
    return "HOLD"


EXPOSURE = {"BUY": 1.0, "SELL": 0.0}
"""Exposure after each decision; HOLD (or no answer) keeps the position held before it."""


def held_position(ticker: str, day: str, seed: int = 0) -> float:
    """The position (1 long, 0 flat) a HOLD keeps on this (ticker, day) in training: even
    odds, fixed by the pair and the seed (a hash, not the process's random state)."""
    import hashlib

    digest = hashlib.sha256(f"{seed}|{ticker}|{day}".encode()).digest()
    return float(digest[0] & 1)


def result_score(
    decision: str | None,
    forward_return: float,
    theta: float,
    mode: str = "band",
    held: float = 0.5,
    cost: float = 0.0,
) -> float:
    """``band``: 1.0 when ``decision`` is the θ-band label of ``forward_return``, else 0.0.
    ``graded``: the decision's excess over buy-and-hold after the cost of moving from ``held``
    (what HOLD keeps), in units of θ, clipped to [−1, 1]."""
    if mode == "graded":
        exposure = EXPOSURE.get(decision or "", held)
        excess = (exposure - 1.0) * forward_return - cost * abs(exposure - held)
        return float(min(1.0, max(-1.0, excess / theta)))
    if mode != "band":
        raise ValueError(f"unknown result mode {mode!r}: use 'graded' or 'band'")
    return 1.0 if decision is not None and decision == label_for(forward_return, theta) else 0.0


def format_parts(trace: Trace, config: AgentConfig) -> dict[str, float]:
    """The five format checks of SPEC §2, each in [0, 1]."""
    parsed = [parse_turn(t.text) for t in trace.assistant_turns()]
    if not parsed:
        return {"valid_label": 0.0, "plan": 0.0, "reasoning_tags": 0.0, "reasoning_length": 0.0, "clean": 0.0}
    reasoning = [text for p in parsed for text in p.reasoning]
    in_range = [config.min_reasoning_words <= word_count(t) <= config.max_reasoning_words for t in reasoning]
    return {
        "valid_label": 1.0 if trace.decision is not None else 0.0,
        "plan": 1.0 if parsed[0].plan else 0.0,
        "reasoning_tags": sum(bool(p.reasoning) for p in parsed) / len(parsed),
        "reasoning_length": sum(in_range) / len(in_range) if in_range else 0.0,
        "clean": sum(not p.problems for p in parsed) / len(parsed),
    }


def tool_parts(trace: Trace, config: AgentConfig) -> dict[str, float]:
    """The four tool-use checks of SPEC §2, each in [0, 1]."""
    calls = trace.tool_turns()
    n = len(calls)
    keys = [_call_key(t.tool_call or {}) for t in calls]
    duplicates = n - len(set(keys))
    turns_with_calls = [t for t in trace.assistant_turns() if parse_turn(t.text).tool_calls]
    multi = sum(len(parse_turn(t.text).tool_calls) > 1 for t in turns_with_calls)
    return {
        "valid_arguments": sum(bool(t.valid) for t in calls) / n if n else 1.0,
        "no_duplicates": 1.0 - duplicates / n if n else 1.0,
        "sensible_count": 1.0 if 1 <= n <= config.max_tool_calls else 0.0,
        "one_call_per_turn": 1.0 - multi / len(turns_with_calls) if turns_with_calls else 1.0,
    }


def _call_key(call: dict) -> str:
    import json

    if call.get("raw") is not None and call.get("name") is None:
        return "raw:" + " ".join(str(call["raw"]).split())
    return f"{call.get('name')}:{json.dumps(call.get('arguments') or {}, sort_keys=True)}"


def score_trace(trace: Trace, forward_return: float, config: AgentConfig) -> Scores:
    """Score ``trace`` against ``forward_return``; also stores label, θ, horizon and the
    scores on the trace."""
    fmt = format_parts(trace, config)
    tool = tool_parts(trace, config)
    held = held_position(trace.ticker, trace.date, config.seed)
    result = result_score(
        trace.decision, forward_return, config.theta, config.result_mode, held, config.transaction_cost
    )
    format_score = sum(fmt.values()) / len(fmt)
    tool_score = sum(tool.values()) / len(tool)
    total = config.w_result * result + config.w_format * format_score + config.w_tool * tool_score
    scores = Scores(result, format_score, tool_score, total, {**fmt, **tool})
    trace.forward_return = forward_return
    trace.held = held
    trace.label = label_for(forward_return, config.theta)
    trace.theta = config.theta
    trace.horizon = config.horizon
    trace.scores = scores
    return scores
