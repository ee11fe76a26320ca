"""Argument checks for tool calls: each failure is a ToolArgumentError the model sees."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stocker_core.agent.errors import AgentError

MAX_LIST_ITEMS = 8
"""Longest list a tool returns (newest items first); longer results say ``truncated``."""


class ToolArgumentError(AgentError):
    """A tool called with a missing, mistyped or out-of-range argument."""


def int_in_range(name: str, value: Any, low: int, high: int) -> int:
    """``value`` if it is an int within [low, high]; ToolArgumentError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgumentError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    if not low <= value <= high:
        raise ToolArgumentError(f"{name} must be from {low} to {high}, got {value}")
    return value


def one_of(name: str, value: Any, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``; ToolArgumentError listing them otherwise."""
    if not isinstance(value, str) or value not in allowed:
        raise ToolArgumentError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def subset_of(name: str, values: Any, allowed: Sequence[str], most: int) -> list[str]:
    """A non-empty list of distinct names from ``allowed`` (at most ``most``)."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not values:
        raise ToolArgumentError(f"{name} must be a non-empty list, e.g. {list(allowed[:2])}")
    if len(values) > most:
        raise ToolArgumentError(f"{name} may hold at most {most} names, got {len(values)}")
    for value in values:
        one_of(name, value, allowed)
    if len(set(values)) != len(values):
        raise ToolArgumentError(f"{name} lists a name twice: {values}")
    return list(values)


def rounded(value: Any, digits: int = 4) -> float | None:
    """A float rounded to ``digits`` (None for missing or non-finite values)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return round(number, digits)
