"""The agent's tools, bound to one (ticker, decision day): four families over AgentData.

Each public method is a tool: typed arguments and a Google-style docstring, so
``transformers.utils.get_json_schema`` (what TRL uses) turns it into a JSON schema. Every
answer is point in time (bars on or before the day, text published before its close,
statements once published), bounded in size and rounded. ``call`` validates a call by
name and never raises on bad arguments: it returns the error as the tool's answer.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from stocker_core.agent import fundamentals as fundamentals_tool
from stocker_core.agent import tools_macro, tools_market, tools_text
from stocker_core.agent.arguments import ToolArgumentError
from stocker_core.agent.data import AgentData, decision_day
from stocker_core.agent.tool_catalog import SCHEMAS_FILE, TOOL_FAMILIES, TOOL_NAMES, tool_schemas
from stocker_core.decision_context.point_in_time import decision_cutoff

__all__ = ["TOOL_FAMILIES", "TOOL_NAMES", "AgentTools", "ToolOutcome", "result_text", "tool_schemas"]


@dataclass(frozen=True)
class ToolOutcome:
    """A tool call's answer; ``valid`` is False for an unknown tool or bad arguments."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    valid: bool

    @property
    def error(self) -> str | None:
        return None if self.valid else str(self.result.get("error"))


class AgentTools:
    """The tools of one decision: ``ticker`` at the close of ``day``."""

    def __init__(self, data: AgentData, day: pd.Timestamp | str) -> None:
        self.data = data
        self.day = decision_day(day)
        self.cutoff = decision_cutoff(self.day)

    @cached_property
    def _bars(self) -> pd.DataFrame:
        return self.data.bars_until(self.day)

    def get_price_history(self, lookback_days: int) -> dict:
        """Closing prices of the ticker up to the decision day: return, range and volatility.

        Args:
            lookback_days: Trading days to look back, from 1 to 250.
        """
        return tools_market.price_history(self._bars, lookback_days)

    def get_indicators(self, names: list[str], lookback_days: int) -> dict:
        """Technical indicators (TA-Lib) of the ticker up to the decision day.

        Args:
            names: Indicators among rsi14, macd, macd_signal, macd_hist, sma20, sma50, sma200,
                bb_lower, bb_mid, bb_upper, atr14.
            lookback_days: Trading days of values to return, from 1 to 60.
        """
        return tools_market.indicators(self._bars, names, lookback_days)

    def get_fundamentals(self, kind: str) -> dict:
        """Company fundamentals published before the decision day (yfinance when online).

        Args:
            kind: One of income_statement, balance_sheet, cash_flow, earnings_estimates,
                insider_transactions, dividends.
        """
        return fundamentals_tool.fundamentals(
            kind,
            self.data.ticker,
            self.day,
            self.data.online_fundamentals,
            self.data.fundamentals_download,  # type: ignore[arg-type]
            self.data.fundamentals_cache,
        )

    def get_news(self, days: int) -> dict:
        """News headlines about the ticker published before the decision, with sentiment scores,
        their mean and their recency-weighted mean (a headline's weight halves each day of age).

        Args:
            days: Calendar days to look back, from 1 to 30; 0 for the decision day's headlines alone.
        """
        return tools_text.news(self.data.text_until("news", self.day), self.cutoff, days)

    def get_forum_posts(self, days: int) -> dict:
        """Forum posts about the ticker published before the decision, with sentiment scores.

        Args:
            days: Calendar days to look back, from 1 to 30.
        """
        return tools_text.forum_posts(self.data.text_until("forums", self.day), self.cutoff, days)

    def get_macro_series(self, symbol: str, lookback_days: int) -> dict:
        """A rate, commodity or index series up to the decision day.

        Args:
            symbol: One of ^GSPC, ^VIX, ^IRX, ^FVX, ^TNX, ^TYX, CL=F, HG=F, GC=F.
            lookback_days: Trading days to look back, from 1 to 250.
        """
        closes = self.data.macro_until(symbol, self.day) if isinstance(symbol, str) else None
        return tools_macro.macro_series(closes, symbol, lookback_days, self.data.source)

    def get_macro_events(self, days: int) -> dict:
        """Macro events (CPI prints, FOMC decisions, ...) published before the decision.

        Args:
            days: Calendar days to look back, from 1 to 90.
        """
        return tools_text.macro_events(self.data.text_until("macro", self.day), self.cutoff, days)

    def call(self, name: Any, arguments: Any) -> ToolOutcome:
        """Run tool ``name`` with ``arguments`` (a dict); an unknown tool, a wrong or missing
        argument comes back as ``{"error": ...}`` with ``valid=False``."""
        args = arguments if isinstance(arguments, dict) else {}
        if not isinstance(name, str) or name not in TOOL_FAMILIES:
            known = ", ".join(TOOL_NAMES)
            return ToolOutcome(
                str(name), args, {"error": f"unknown tool {name!r}: use one of {known}"}, False
            )
        if not isinstance(arguments, dict):
            return ToolOutcome(name, args, {"error": "arguments must be a JSON object"}, False)
        key = (self.day, name, json.dumps(arguments, sort_keys=True, default=str))
        if key not in self.data.tool_answers:
            self.data.tool_answers[key] = self._answer(name, arguments)
        result, valid = self.data.tool_answers[key]
        return ToolOutcome(name, args, copy.deepcopy(result), valid)

    def _answer(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        try:
            return getattr(self, name)(**arguments), True
        except ToolArgumentError as exc:
            return {"error": str(exc)}, False
        except TypeError as exc:  # a missing or unexpected argument name
            return {"error": f"bad arguments for {name}: {exc}"}, False


def result_text(result: dict[str, Any]) -> str:
    """A tool result as compact JSON (what a chat model reads)."""
    return json.dumps(result, separators=(",", ":"), ensure_ascii=False, default=str)


def derived_tool_schemas() -> list[dict[str, Any]]:
    """The tools' schemas as ``get_json_schema`` derives them from ``AgentTools`` now (the
    stored ones, ``tool_catalog.tool_schemas``, must equal them)."""
    from transformers.utils import get_json_schema

    return [get_json_schema(getattr(AgentTools, name)) for name in TOOL_NAMES]


def write_tool_schemas() -> Path:
    """Store the derived schemas in ``tool_catalog.SCHEMAS_FILE`` (after a tool's signature or
    docstring changed)."""
    from stocker_core.atomic_files import write_text_atomic

    write_text_atomic(SCHEMAS_FILE, json.dumps(derived_tool_schemas(), indent=2) + "\n")
    return SCHEMAS_FILE


if __name__ == "__main__":
    print(write_tool_schemas())
