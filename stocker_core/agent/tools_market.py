"""Market tools: price history and technical indicators up to the decision day."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from stocker_core.agent.arguments import MAX_LIST_ITEMS, int_in_range, rounded, subset_of
from stocker_core.market.indicators import INDICATOR_COLUMNS

MAX_LOOKBACK = 250


def close_summary(frame: pd.DataFrame, lookback_days: int) -> dict[str, Any]:
    """Return, range and daily volatility of the last ``lookback_days`` closes, with the
    newest closes (at most ``MAX_LIST_ITEMS``), newest first."""
    window = frame.tail(lookback_days + 1)  # one extra close: the first return needs it
    closes = window["close"].to_numpy(dtype=np.float64)
    shown = frame.tail(lookback_days)
    if len(closes) < 2:
        return {"available": False, "reason": "fewer than two closes before the decision"}
    daily = np.diff(closes) / closes[:-1]
    rows = shown.tail(MAX_LIST_ITEMS).iloc[::-1]
    return {
        "available": True,
        "days": int(len(shown)),
        "last_date": pd.Timestamp(shown["date"].iloc[-1]).date().isoformat(),
        "last_close": rounded(closes[-1], 2),
        "return_pct": rounded((closes[-1] / closes[0] - 1.0) * 100, 2),
        "high": rounded(shown["close"].max(), 2),
        "low": rounded(shown["close"].min(), 2),
        "daily_volatility_pct": rounded(float(np.std(daily, ddof=1)) * 100 if len(daily) > 1 else 0.0, 2),
        "closes": [
            {"date": pd.Timestamp(d).date().isoformat(), "close": rounded(c, 2)}
            for d, c in zip(rows["date"], rows["close"], strict=True)
        ],
        "truncated": len(shown) > MAX_LIST_ITEMS,
    }


def price_history(bars: pd.DataFrame, lookback_days: int) -> dict[str, Any]:
    """The ``price_history`` tool over point-in-time ``bars``."""
    lookback_days = int_in_range("lookback_days", lookback_days, 1, MAX_LOOKBACK)
    return close_summary(bars, lookback_days)


def indicators(bars: pd.DataFrame, names: list[str], lookback_days: int) -> dict[str, Any]:
    """The ``indicators`` tool: the newest values of ``names`` over ``lookback_days``."""
    names = subset_of("names", names, INDICATOR_COLUMNS, len(INDICATOR_COLUMNS))
    lookback_days = int_in_range("lookback_days", lookback_days, 1, 60)
    window = bars.tail(lookback_days)
    if window.empty:
        return {"available": False, "reason": "no bars before the decision"}
    rows = window.tail(MAX_LIST_ITEMS).iloc[::-1]
    last_close = float(window["close"].iloc[-1])
    return {
        "available": True,
        "last_date": pd.Timestamp(window["date"].iloc[-1]).date().isoformat(),
        "last_close": rounded(last_close, 2),
        "latest": {name: rounded(window[name].iloc[-1]) for name in names},
        "values": {name: [rounded(v) for v in rows[name]] for name in names},
        "truncated": len(window) > MAX_LIST_ITEMS,
    }
