"""Robust parsers for specialist votes and moderator actions. They never raise."""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Iterator
from typing import Any

from stocker_core.council.models import SpecialistVote
from stocker_core.env.actions import MAX_QUANTITY, Action
from stocker_core.env.portfolio import max_affordable

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_NUMBER = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
MAX_INPUT = 20_000


def _objects(text: str) -> list[str]:
    """Balanced ``{...}`` substrings of ``text`` (fenced blocks first)."""
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    found: list[str] = []
    for src in sources:
        depth, start, in_str, quote, escape = 0, -1, False, "", False
        for i, ch in enumerate(src):
            if in_str:
                if escape:
                    escape = False
                elif ch == "\\":
                    escape = True
                elif ch == quote:
                    in_str = False
                continue
            if ch in "\"'" and depth > 0:
                in_str, quote = True, ch
            elif ch == "{":
                if depth == 0:
                    start = i
                depth += 1
            elif ch == "}" and depth > 0:
                depth -= 1
                if depth == 0:
                    found.append(src[start : i + 1])
            if len(found) > 20:
                return found
    return found


def _load(obj: str) -> dict[str, Any] | None:
    for attempt in (obj, re.sub(r",\s*([}\]])", r"\1", obj)):
        try:
            value = json.loads(attempt)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
    py = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", obj))
    py = re.sub(r"\bnull\b", "None", py)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = ast.literal_eval(py) if len(py) < 5000 else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = None
    return value if isinstance(value, dict) else None


def _dicts(text: str) -> list[dict[str, Any]]:
    return [d for d in (_load(o) for o in _objects(text)) if d is not None]


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        match = re.search(_NUMBER, value)
        if not match:
            return None
        number = float(match.group(1))
        if value.strip().endswith("%"):
            number /= 100
    else:
        return None
    return number if math.isfinite(number) else None


def _field(text: str, name: str) -> float | None:
    match = re.search(rf"['\"]?{name}['\"]?\s*[:=]\s*['\"]?{_NUMBER}", text, re.IGNORECASE)
    if not match:
        return None
    try:
        number = float(match.group(1))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _reply_text(text: Any) -> str:
    """A model reply as text, cut to ``MAX_INPUT`` characters (None: empty)."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return text[:MAX_INPUT]


def _reply_dicts(text: str) -> Iterator[dict[str, Any]]:
    """The objects a reply holds (``_dicts``), their keys stripped and lower-cased."""
    for d in _dicts(text):
        yield {str(k).strip().lower(): v for k, v in d.items()}


def parse_vote(text: Any, role: str) -> SpecialistVote:
    """A vote from a model reply: JSON (fenced, with prose, single quotes) or key: value
    text; numbers clipped to range. Anything else -> neutral vote, parse_error=True."""
    try:
        text = _reply_text(text)
        for d in _reply_dicts(text):
            signal = _number(d.get("signal"))
            if signal is None:
                continue
            confidence = _number(d.get("confidence"))
            rationale = d.get("rationale", d.get("reason", ""))
            return SpecialistVote(
                role=role,
                signal=signal,
                confidence=0.5 if confidence is None else confidence,
                rationale=str(rationale)[:2000],
            )
        signal, confidence = _field(text, "signal"), _field(text, "confidence")
        if signal is not None:
            return SpecialistVote(
                role=role,
                signal=signal,
                confidence=0.5 if confidence is None else confidence,
                rationale=text.strip()[:500],
            )
    except Exception:  # a parser must never crash a run
        pass
    return SpecialistVote.neutral(role, "unparsable reply; neutral vote", parse_error=True)


def clamp_action(
    side: str, quantity: float, cash: float, position: int, price: float | None, cost_rate: float = 0.001
) -> Action:
    """A feasible action: buys within cash at ``price * (1 + cost_rate)``, sells within the
    position, whole shares; anything infeasible or zero becomes hold."""
    side = side if side in ("buy", "sell", "hold") else "hold"
    try:
        qty = int(max(0.0, math.floor(float(quantity)))) if math.isfinite(float(quantity)) else 0
    except (TypeError, ValueError, OverflowError):
        qty = 0
    if side == "buy":
        if not price or not math.isfinite(price) or price <= 0 or cash <= 0:
            return Action.hold()
        qty = min(qty, max_affordable(cash, price, cost_rate))
    elif side == "sell":
        qty = min(qty, max(0, int(position)))
    if side == "hold" or qty <= 0:
        return Action.hold()
    return Action(side=side, quantity=min(qty, MAX_QUANTITY))


_SIDE_WORDS = {"buy": "buy", "long": "buy", "sell": "sell", "short": "sell", "hold": "hold"}


def parse_action(
    text: Any, cash: float, position: int, price: float | None, cost_rate: float = 0.001
) -> tuple[Action, str, bool]:
    """``(action, rationale, parse_error)`` from a moderator reply, clamped to what is
    feasible. Unparsable -> hold with ``parse_error=True``."""
    try:
        text = _reply_text(text)
        for d in _reply_dicts(text):
            side = _SIDE_WORDS.get(str(d.get("side", d.get("action", ""))).strip().lower())
            if side is None:
                continue
            qty = _number(d.get("quantity", d.get("qty", 0))) or 0.0
            rationale = str(d.get("rationale", ""))[:2000]
            return clamp_action(side, qty, cash, position, price, cost_rate), rationale, False
        match = re.search(r"['\"]?side['\"]?\s*[:=]\s*['\"]?(buy|sell|hold)", text, re.IGNORECASE)
        if match:
            qty = _field(text, "quantity") or 0.0
            action = clamp_action(match.group(1).lower(), qty, cash, position, price, cost_rate)
            return action, text.strip()[:500], False
    except Exception:  # a parser must never crash a run
        pass
    return Action.hold(), "unparsable moderator reply; holding", True
