"""How a trace is shown to a model: bucket words for the tiny word-level model, chat
messages (tool schemas in the system prompt, results as JSON) for any chat model.

The tiny model's vocabulary is closed: the task words, the tags, the reasoning words the
scripted agent writes, the whitespace pieces of canonical tool calls
(``json.dumps({"name": …, "arguments": …})``) and the digest words of tool results
(returns, RSI, sentiment and counts as buckets) — so no prompt meets ``<unk>``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from stocker_core.agent.data import MACRO_SYMBOLS
from stocker_core.agent.fundamentals import FUNDAMENTAL_KINDS
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.trace import Trace
from stocker_core.market.indicators import INDICATOR_COLUMNS
from stocker_core.text_events.masking import PromptMask, mask_json

TASK_WORDS = "decide buy sell or hold at the close use tools first"
TAG_WORDS = [f"<{t}>" for t in ("plan", "think", "tool", "answer", "result")]
TAG_WORDS += [w.replace("<", "</") for w in TAG_WORDS]
REASONING_WORDS = [
    "check",
    "price",
    "trend",
    "then",
    "indicators",
    "news",
    "forum",
    "sentiment",
    "and",
    "decide",
    "up",
    "down",
    "flat",
    "rsi",
    "high",
    "low",
    "mid",
    "positive",
    "negative",
    "neutral",
    "none",
    "outlook",
    "bullish",
    "bearish",
]
LOOKBACKS = (5, 10, 20, 60)
TEXT_DAYS = (0, 3, 7, 14, 30)
MACRO_DAYS = (7, 30, 90)


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """The canonical text of a tool call (what the scripted agent writes)."""
    return json.dumps({"name": name, "arguments": arguments})


def canonical_calls() -> list[str]:
    """Tool calls the tiny vocabulary can spell (every tool, typical arguments)."""
    calls = [call_text("get_price_history", {"lookback_days": n}) for n in LOOKBACKS]
    calls += [
        call_text("get_indicators", {"names": [name], "lookback_days": n})
        for name in INDICATOR_COLUMNS
        for n in LOOKBACKS
    ]
    calls += [call_text("get_fundamentals", {"kind": kind}) for kind in FUNDAMENTAL_KINDS]
    calls += [call_text(tool, {"days": d}) for tool in ("get_news", "get_forum_posts") for d in TEXT_DAYS]
    calls += [
        call_text("get_macro_series", {"symbol": s, "lookback_days": n})
        for s in MACRO_SYMBOLS
        for n in LOOKBACKS
    ]
    calls += [call_text("get_macro_events", {"days": d}) for d in MACRO_DAYS]
    return calls


def _signed(prefix: str, value: float, low: int = -5, high: int = 5) -> str:
    bucket = 0 if not math.isfinite(value) else int(min(high, max(low, round(value))))
    return f"{prefix}{bucket:+d}"


def _count(prefix: str, n: int, top: int = 5) -> str:
    return f"{prefix}{min(top, max(0, int(n)))}"


DIGEST_WORDS = (
    [_signed("r", v) for v in range(-5, 6)]
    + [_signed("x", v) for v in range(-5, 6)]
    + [_signed("s", v) for v in range(-5, 6)]
    + [f"v{i}" for i in range(6)]
    + [f"k{i}" for i in range(11)]
    + [f"n{i}" for i in range(6)]
    + [f"hawk{i}" for i in range(4)]
    + [f"dove{i}" for i in range(4)]
    + [f"left{i}" for i in range(9)]
    + ["price", "macro", "events", "fund", "news", "forum", "na", "ok", "error", "pos", "neg", "zero"]
    + list(INDICATOR_COLUMNS)
)


def _indicator_words(result: dict[str, Any]) -> list[str]:
    close = result.get("last_close") or 0.0
    words = []
    for name, value in (result.get("latest") or {}).items():
        if value is None:
            words += [name, "na"]
        elif name == "rsi14":
            words += [name, f"k{int(min(10, max(0, round(value / 10))))}"]
        elif name in ("macd", "macd_signal", "macd_hist"):
            words += [name, "pos" if value > 0 else "neg" if value < 0 else "zero"]
        elif name == "atr14":
            words += [name, _count("v", round(100 * value / close)) if close else "na"]
        else:  # a price level: distance of the close from it, in steps of 2%
            words += [name, _signed("x", 100 * (close / value - 1) / 2) if value else "na"]
    return words


def digest_words(name: str | None, result: dict[str, Any] | None) -> list[str]:
    """A tool result as a few bucket words the tiny model can read."""
    result = result or {}
    if "error" in result:
        return ["error"]
    if name == "get_indicators":
        return ["price", *(_indicator_words(result) if result.get("available") else ["na"])]
    if name in ("get_price_history", "get_macro_series"):
        head = "price" if name == "get_price_history" else "macro"
        if not result.get("available"):
            return [head, "na"]
        return [
            head,
            _signed("r", (result.get("return_pct") or 0.0) / 2),
            _count("v", round(result.get("daily_volatility_pct") or 0.0)),
        ]
    if name in ("get_news", "get_forum_posts"):
        head = "news" if name == "get_news" else "forum"
        n = int(result.get("count") or 0)
        words = [head, _count("n", n)]
        return words + [_signed("s", 5 * (result.get("mean_sentiment") or 0.0))] if n else words
    if name == "get_macro_events":
        return [
            "events",
            _count("n", result.get("count") or 0),
            _count("hawk", result.get("hawkish") or 0, 3),
            _count("dove", result.get("dovish") or 0, 3),
        ]
    if name == "get_fundamentals":
        return ["fund", "ok" if result.get("available") else "na"]
    return ["error"]


def vocabulary() -> list[str]:
    """Every word the tiny agent format can contain (no special tokens), without repeats."""
    pieces: Iterable[str] = (
        *TASK_WORDS.split(),
        *TAG_WORDS,
        *REASONING_WORDS,
        *DECISIONS,
        *DIGEST_WORDS,
        *(piece for call in canonical_calls() for piece in call.split()),
    )
    return list(dict.fromkeys(pieces))


def render_words(trace: Trace) -> str:
    """The tiny model's view of ``trace`` so far: task words, then each turn's text and each
    tool answer as ``<result> digest left<n> </result>``."""
    parts = [TASK_WORDS]
    for turn in trace.turns[1:]:  # the first turn is the task itself
        if turn.role == "assistant":
            parts.append(" ".join(turn.text.split()))
        elif turn.role == "tool":
            words = digest_words((turn.tool_call or {}).get("name"), turn.tool_result)
            parts.append(" ".join(["<result>", *words, _count("left", turn.calls_left or 0, 8), "</result>"]))
        else:  # the loop's note on a turn with neither a call nor an answer
            parts.append("<result> error </result>")
    return " ".join(parts)


def system_prompt(tools: list[dict[str, Any]], max_calls: int) -> str:
    """Instructions for a chat model: the loop, the tags and the tools' JSON schemas."""
    return (
        "You decide BUY, SELL or HOLD for one stock at the close of one day, using tools. "
        "First write a plan in <plan>...</plan>. Then, one turn at a time, reason in "
        "<think>...</think> and either call exactly one tool as "
        '<tool>{"name": "...", "arguments": {...}}</tool> or give the decision as '
        f"<answer>BUY</answer>, <answer>SELL</answer> or <answer>HOLD</answer>. At most {max_calls} "
        "tool calls. BUY means the price should rise more than 1.5% over the next 5 sessions, "
        "SELL fall more than 1.5%, HOLD otherwise.\nTools:\n" + "\n".join(json.dumps(t) for t in tools)
    )


def masked_task_text(mask: PromptMask) -> str:
    """The task message with the stock's label and no calendar date."""
    return (
        f"Decide BUY, SELL or HOLD for {mask.name(mask.ticker)} at the close of session 0 "
        "(dates are sessions before it; prices are rebased to 100 at the month's first session). "
        "Plan first, then call tools one at a time, then answer."
    )


def chat_messages(
    trace: Trace, tools: list[dict[str, Any]], max_calls: int, mask: PromptMask | None = None
) -> list[dict[str, str]]:
    """``trace`` as chat messages: system, the task, then assistant turns and tool answers
    (``<result>{json}</result>``) as user messages; seen through ``mask`` when given (the
    task names no ticker or date, tool results are masked with ``mask_json``)."""
    messages = [{"role": "system", "content": system_prompt(tools, max_calls)}]
    for index, turn in enumerate(trace.turns):
        if index == 0 and turn.role == "user" and mask is not None and mask.enabled:
            messages.append({"role": "user", "content": masked_task_text(mask)})
        elif turn.role == "assistant":
            messages.append({"role": "assistant", "content": turn.text})
        elif turn.role == "tool":
            result = mask_json(turn.tool_result, mask) if mask is not None else turn.tool_result
            body = json.dumps(result, separators=(",", ":"), default=str)
            messages.append(
                {"role": "user", "content": f"<result>{body}</result> calls left: {turn.calls_left}"}
            )
        else:
            messages.append({"role": "user", "content": turn.text})
    return messages
