"""The trace of one decision: every turn (role, text, tool call, tool result), the decision
and its scores; printable as text and as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]


@dataclass
class Turn:
    """One message: the task (user), a model turn (assistant) or a tool's answer (tool)."""

    role: Role
    text: str
    tool_call: dict[str, Any] | None = None
    """``{"name", "arguments"}`` of the executed call (tool turns)."""
    tool_result: dict[str, Any] | None = None
    valid: bool | None = None
    """Tool turns: whether the call had a known name and valid arguments."""
    calls_left: int | None = None
    problems: list[str] = field(default_factory=list)
    """Assistant turns: format problems found by the parser."""
    extra_calls: int = 0
    """Assistant turns: tool calls beyond the first (not executed, penalised)."""


@dataclass
class Scores:
    """Result, format and tool scores and their weighted total."""

    result: float
    format: float
    tool: float
    total: float
    parts: dict[str, float] = field(default_factory=dict)


@dataclass
class Trace:
    """A whole decision: the task, the turns, the decision and (once scored) its scores."""

    ticker: str
    date: str
    policy: str
    turns: list[Turn] = field(default_factory=list)
    decision: str | None = None
    """BUY / SELL / HOLD as answered; None when the agent never answered (acts as HOLD)."""
    forward_return: float | None = None
    held: float | None = None
    """The position HOLD keeps in the training reward (``rewards.held_position``)."""
    label: str | None = None
    theta: float | None = None
    horizon: int | None = None
    scores: Scores | None = None

    @property
    def action(self) -> str:
        """The decision the environment executes (HOLD when there was none)."""
        return self.decision or "HOLD"

    def assistant_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "assistant"]

    def tool_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "tool"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def to_text(self) -> str:
        """A human-readable transcript: plan, each call with arguments and result, reasoning,
        decision and scores."""
        lines = [f"{self.policy}: {self.ticker} at the close of {self.date}"]
        for turn in self.turns:
            if turn.role == "user":
                lines.append(f"[task] {turn.text}")
            elif turn.role == "assistant":
                lines.append(f"[agent] {turn.text.strip()}")
                for problem in turn.problems:
                    lines.append(f"    ! {problem}")
            else:
                call = turn.tool_call or {}
                args = json.dumps(call.get("arguments", {}), sort_keys=True)
                status = "" if turn.valid else "  (invalid)"
                lines.append(f"[tool] {call.get('name')}({args}){status}")
                lines.append(f"    -> {json.dumps(turn.tool_result, default=str)}")
        lines.append(f"decision: {self.decision or 'none (HOLD)'}")
        if self.forward_return is not None:
            lines.append(
                f"forward return over {self.horizon} sessions: {self.forward_return * 100:+.2f}% "
                f"(theta {self.theta * 100:.1f}% -> right answer {self.label})"
            )
        if self.scores is not None:
            s = self.scores
            lines.append(
                f"scores: result {s.result:.3f}  format {s.format:.3f}  tool {s.tool:.3f}  "
                f"total {s.total:.3f}"
            )
        return "\n".join(lines)
