"""The agent's turn format and its tolerant parser.

A turn is text with tags: ``<plan>…</plan>`` (first turn), ``<think>…</think>``, then one
action: ``<tool>{"name": …, "arguments": {…}}</tool>`` or ``<answer>BUY|SELL|HOLD</answer>``.
``parse_turn`` never raises: whatever is wrong is listed in ``problems`` (the format score
counts them) and a malformed tool call keeps its raw text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

DECISIONS = ("BUY", "SELL", "HOLD")
TAGS = ("plan", "think", "tool", "answer")

_BLOCK = {tag: re.compile(rf"<{tag}>(.*?)</{tag}>", re.DOTALL | re.IGNORECASE) for tag in TAGS}
_OPEN = {tag: re.compile(rf"<{tag}>", re.IGNORECASE) for tag in TAGS}
_CLOSE = {tag: re.compile(rf"</{tag}>", re.IGNORECASE) for tag in TAGS}
_ANY_TAG = re.compile(r"</?(?:plan|think|tool|answer)>", re.IGNORECASE)


@dataclass(frozen=True)
class ToolCallText:
    """One ``<tool>`` block: its raw text and, when it parsed, the name and arguments."""

    raw: str
    name: str | None = None
    arguments: dict[str, Any] | None = None
    error: str | None = None

    @property
    def parsed(self) -> bool:
        return self.error is None

    def key(self) -> str:
        """Identity of the call for duplicate detection (name + canonical arguments)."""
        if not self.parsed:
            return f"raw:{' '.join(self.raw.split())}"
        return f"{self.name}:{json.dumps(self.arguments, sort_keys=True)}"


@dataclass(frozen=True)
class ParsedTurn:
    """What a turn says, and what is wrong with its format."""

    text: str
    plan: str | None
    think: str | None
    tool_calls: tuple[ToolCallText, ...]
    answer: str | None
    decision: str | None
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def reasoning(self) -> list[str]:
        return [t for t in (self.plan, self.think) if t is not None]


def word_count(text: str) -> int:
    return len(text.split())


def parse_tool_call(raw: str) -> ToolCallText:
    """``{"name": str, "arguments": {...}}`` from a tool block; an error instead of raising."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolCallText(raw, error=f"tool call is not JSON ({exc.msg})")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return ToolCallText(raw, error='tool call needs {"name": ..., "arguments": {...}}')
    arguments = data.get("arguments", {})
    if not isinstance(arguments, dict):
        return ToolCallText(raw, name=data["name"], error="tool arguments must be a JSON object")
    return ToolCallText(raw, name=data["name"], arguments=arguments)


def _first(tag: str, text: str) -> tuple[str | None, int]:
    found = _BLOCK[tag].findall(text)
    return (found[0].strip() if found else None), len(found)


def parse_turn(text: str) -> ParsedTurn:
    """Parse one assistant turn; every format problem is listed, nothing raises."""
    text = text if isinstance(text, str) else ""
    problems: list[str] = []
    for tag in TAGS:
        if len(_OPEN[tag].findall(text)) != len(_CLOSE[tag].findall(text)):
            problems.append(f"unbalanced <{tag}> tags")
    plan, plans = _first("plan", text)
    think, thinks = _first("think", text)
    if plans > 1 or thinks > 1:
        problems.append("repeated reasoning tag")
    calls = tuple(parse_tool_call(raw.strip()) for raw in _BLOCK["tool"].findall(text))
    answer, answers = _first("answer", text)
    decision = answer.upper() if answer is not None and answer.upper() in DECISIONS else None
    if answer is not None and decision is None:
        problems.append(f"answer {answer!r} is not BUY, SELL or HOLD")
    if answers > 1:
        problems.append("several answers")
    if calls and answer is not None:
        problems.append("a tool call and an answer in one turn")
    if len(calls) > 1:
        problems.append(f"{len(calls)} tool calls in one turn")
    if not calls and answer is None:
        problems.append("no tool call and no answer")
    stray = _ANY_TAG.sub(
        " ", "".join(re.split(r"<(plan|think|tool|answer)>.*?</\1>", text, flags=re.S | re.I)[::2])
    )
    if stray.strip():
        problems.append("text outside the tags")
    return ParsedTurn(text, plan, think, calls, answer, decision, tuple(problems))
