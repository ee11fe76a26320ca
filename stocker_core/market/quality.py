"""Data-quality rules for the market tables (the Dagster checks call these)."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd

from stocker_core.market.calendar import month_end, month_sessions
from stocker_core.market.indicators import INDICATOR_COLUMNS, MIN_HISTORY


def price_problems(
    frame: pd.DataFrame, month: date, first_date: date | None, last_date: date | None
) -> list[str]:
    """Everything wrong with one month of stored bars (empty list = healthy).

    OHLC rules skip close-only rows (NaN open/high/low). Sessions before the
    symbol's first or after its last available date are not required.
    """
    problems: list[str] = []
    ohlc = frame.dropna(subset=["open", "high", "low"])
    if (ohlc["high"] + 1e-9 < ohlc[["open", "close"]].max(axis=1)).any():
        problems.append("high below max(open, close)")
    if (ohlc["low"] - 1e-9 > ohlc[["open", "close"]].min(axis=1)).any():
        problems.append("low above min(open, close)")
    prices = frame[["open", "high", "low", "close", "adj_close"]].to_numpy(dtype="float64")
    if (prices[~np.isnan(prices)] <= 0).any():
        problems.append("non-positive price")
    if (frame["volume"].dropna() < 0).any():
        problems.append("negative volume")
    if frame["date"].duplicated().any():
        problems.append("duplicate dates")
    expected = month_sessions(month)
    lo = pd.Timestamp(first_date) if first_date else pd.Timestamp(month)
    hi = pd.Timestamp(last_date) if last_date else pd.Timestamp(month_end(month))
    expected = expected[(expected >= lo) & (expected <= hi)]
    missing = expected.difference(pd.DatetimeIndex(frame["date"]))
    if len(missing):
        shown = ", ".join(d.strftime("%Y-%m-%d") for d in missing[:5])
        problems.append(f"{len(missing)} session(s) missing: {shown}")
    return problems


def indicator_problems(frame: pd.DataFrame, sessions_before: pd.Series) -> list[str]:
    """Indicator sanity: RSI in [0, 100]; no value before enough history.

    ``sessions_before`` gives, per row, how many bars of the symbol exist up to and
    including that row's date.
    """
    problems: list[str] = []
    rsi = frame["rsi14"].dropna()
    if ((rsi < 0) | (rsi > 100)).any():
        problems.append("RSI outside [0, 100]")
    for column in INDICATOR_COLUMNS:
        early = frame[column].notna() & (sessions_before.to_numpy() < MIN_HISTORY[column])
        if early.any():
            problems.append(f"{column} has values before {MIN_HISTORY[column]} sessions of history")
    return problems
