"""Macro series tool: rate, commodity and index closes up to the decision day."""

from __future__ import annotations

from typing import Any

import pandas as pd

from stocker_core.agent.arguments import int_in_range, one_of
from stocker_core.agent.data import MACRO_SYMBOLS
from stocker_core.agent.tools_market import MAX_LOOKBACK, close_summary


def macro_series(closes: pd.DataFrame | None, symbol: str, lookback_days: int, source: str) -> dict[str, Any]:
    """The ``macro_series`` tool: return and range of ``symbol`` over ``lookback_days``;
    ``available: false`` with the reason when the source has no such series."""
    symbol = one_of("symbol", symbol, list(MACRO_SYMBOLS))
    lookback_days = int_in_range("lookback_days", lookback_days, 1, MAX_LOOKBACK)
    if closes is None:
        return {
            "symbol": symbol,
            "available": False,
            "reason": f"no {symbol} series in the {source or 'configured'} source",
        }
    summary = close_summary(closes, lookback_days)
    return {"symbol": symbol, "name": MACRO_SYMBOLS[symbol], **summary}
