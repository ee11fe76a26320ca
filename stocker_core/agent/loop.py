"""The ReAct loop: plan, then one tool call per turn (capped), then a decision.

A ``TurnWriter`` writes the next assistant turn for each unfinished trace (the scripted
agent, or a language model, many traces at once). The loop parses each turn, runs its
first tool call (further calls in the same turn are recorded, not run, and penalised),
refuses calls past ``max_tool_calls``, and stops a trace at its answer or after
``max_turns`` turns (no answer: the decision stays None and the environment holds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.parsing import parse_turn
from stocker_core.agent.tools import AgentTools
from stocker_core.agent.trace import Trace, Turn

NO_ACTION_NOTE = "format error: write one <tool>{...}</tool> call or an <answer>BUY|SELL|HOLD</answer>"


class TurnWriter(Protocol):
    """Writes the next assistant turn of each trace."""

    def write(self, traces: Sequence[Trace]) -> list[str]: ...


def task_text(tools: AgentTools) -> str:
    """The task message of a decision."""
    return (
        f"Decide BUY, SELL or HOLD for {tools.data.ticker} at the close of {tools.day.date().isoformat()}. "
        "Plan first, then call tools one at a time, then answer."
    )


def new_trace(tools: AgentTools, policy: str) -> Trace:
    """A trace holding only the task."""
    return Trace(tools.data.ticker, tools.day.date().isoformat(), policy, [Turn("user", task_text(tools))])


def apply_turn(trace: Trace, tools: AgentTools, text: str, config: AgentConfig) -> bool:
    """Record one assistant turn and its consequence; True while the trace goes on."""
    parsed = parse_turn(text)
    extra = max(0, len(parsed.tool_calls) - 1)
    trace.turns.append(Turn("assistant", text, problems=list(parsed.problems), extra_calls=extra))
    if parsed.tool_calls:
        call = parsed.tool_calls[0]
        made = len(trace.tool_turns())
        record = {"name": call.name, "arguments": call.arguments or {}}
        if not call.parsed:
            record["raw"] = call.raw
            result, valid = {"error": call.error}, False
        elif made >= config.max_tool_calls:
            result, valid = {"error": f"tool call cap ({config.max_tool_calls}) reached: answer now"}, False
        else:
            outcome = tools.call(call.name, call.arguments)
            result, valid = outcome.result, outcome.valid
        left = max(0, config.max_tool_calls - made - 1)
        trace.turns.append(
            Turn("tool", "", tool_call=record, tool_result=result, valid=valid, calls_left=left)
        )
        return True
    if parsed.decision is not None:
        trace.decision = parsed.decision
        return False
    trace.turns.append(Turn("user", NO_ACTION_NOTE))
    return True


def run_decisions(
    writer: TurnWriter, tools: Sequence[AgentTools], config: AgentConfig, policy: str
) -> list[Trace]:
    """Run the loop for every decision in ``tools`` together (one writer call per turn)."""
    traces = [new_trace(t, policy) for t in tools]
    active = list(range(len(traces)))
    for _ in range(config.max_turns):
        if not active:
            break
        texts = writer.write([traces[i] for i in active])
        active = [
            i for i, text in zip(active, texts, strict=True) if apply_turn(traces[i], tools[i], text, config)
        ]
    return traces


def run_decision(writer: TurnWriter, tools: AgentTools, config: AgentConfig, policy: str) -> Trace:
    """The loop for one decision."""
    return run_decisions(writer, [tools], config, policy)[0]
