"""Technical indicators per SPEC, computed with TA-Lib."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

import numpy as np
import pandas as pd
import talib

PRICE_LEVEL_COLUMNS = ("sma20", "sma50", "sma200", "bb_lower", "bb_mid", "bb_upper")
"""Indicators in the price's own units (a price mask rescales them with the closes)."""
PRICE_SCALE_COLUMNS = ("macd", "macd_signal", "macd_hist", "atr14")
"""Indicators that scale with the price (differences of prices): a mask rescales them too."""
INDICATOR_COLUMNS = ["rsi14", "macd", "macd_signal", "macd_hist", *PRICE_LEVEL_COLUMNS, "atr14"]
"""Every indicator column, in the table's order."""

# Sessions of history after which every indicator has a value (SMA200 is the longest).
MIN_HISTORY = {
    "rsi14": 15,
    "macd": 34,
    "macd_signal": 34,
    "macd_hist": 34,
    "sma20": 20,
    "sma50": 50,
    "sma200": 200,
    "bb_lower": 20,
    "bb_mid": 20,
    "bb_upper": 20,
    "atr14": 15,
}
LOOKBACK_MONTHS = 12
"""Each month's indicators are computed over the bars from this many months before the
month's first day (see ``indicators_by_month``)."""


def compute_indicators(bars: pd.DataFrame) -> pd.DataFrame:
    """Indicators for every row of a normalized bar frame (oldest first).

    Values before enough history are NaN. ATR needs high/low and is NaN for
    close-only data.
    """
    close = bars["close"].to_numpy(dtype="float64")
    out = pd.DataFrame({"date": bars["date"].to_numpy()})
    if len(close) == 0:
        for col in INDICATOR_COLUMNS:
            out[col] = pd.Series(dtype="float64")
        return out
    out["rsi14"] = talib.RSI(close, timeperiod=14)
    macd, signal, hist = talib.MACD(close, fastperiod=12, slowperiod=26, signalperiod=9)
    out["macd"], out["macd_signal"], out["macd_hist"] = macd, signal, hist
    out["sma20"] = talib.SMA(close, timeperiod=20)
    out["sma50"] = talib.SMA(close, timeperiod=50)
    out["sma200"] = talib.SMA(close, timeperiod=200)
    upper, mid, lower = talib.BBANDS(close, timeperiod=20, nbdevup=2.0, nbdevdn=2.0, matype=0)
    out["bb_lower"], out["bb_mid"], out["bb_upper"] = lower, mid, upper
    high = bars["high"].to_numpy(dtype="float64")
    low = bars["low"].to_numpy(dtype="float64")
    if np.isnan(high).any() or np.isnan(low).any():
        out["atr14"] = np.nan
    else:
        out["atr14"] = talib.ATR(high, low, close, timeperiod=14)
    return out


def indicators_by_month(
    bars: pd.DataFrame, months: Iterable[date] | None = None, lookback_months: int = LOOKBACK_MONTHS
) -> pd.DataFrame:
    """Indicators of each calendar month of ``bars`` (or of ``months``), each month computed
    over its own fixed window: the bars from ``lookback_months`` before the month's first
    day through the month.

    TA-Lib's recursive indicators (RSI, MACD, ATR: EMA/Wilder smoothing) depend on where
    their input starts, so computing a batch of months as one series would make a day's
    values depend on the batch. Here they depend only on the month's window: a day gets
    identical values (bit for bit) whatever other months were computed with it, and,
    the indicators being causal, whichever day of its month the bars end on. ``bars``
    must be sorted by date.
    """
    dates = pd.to_datetime(bars["date"]).to_numpy()
    periods = pd.DatetimeIndex(dates).to_period("M")
    wanted = sorted(set(periods)) if months is None else sorted({pd.Period(m, "M") for m in months})
    parts = []
    for period in wanted:
        first = period.start_time
        lo, start, hi = np.searchsorted(
            dates,
            np.array(
                [first - pd.DateOffset(months=lookback_months), first, (period + 1).start_time],
                dtype="datetime64[ns]",
            ),
        )
        if start < hi:
            parts.append(compute_indicators(bars.iloc[lo:hi]).iloc[start - lo :])
    if not parts:
        return compute_indicators(bars.iloc[:0])
    return pd.concat(parts, ignore_index=True)


def trailing_mean(values: np.ndarray, period: int) -> np.ndarray:
    """Mean of the ``period`` values ending at each position (NaN before), each computed
    from its own window alone, so it does not depend on where ``values`` starts (TA-Lib's
    running-sum SMA differs in the last bits with the start)."""
    values = np.asarray(values, dtype=np.float64)
    out = np.full(len(values), np.nan)
    if len(values) >= period:
        windows = np.lib.stride_tricks.sliding_window_view(values, period)
        out[period - 1 :] = [float(np.add.reduce(np.ascontiguousarray(w))) / period for w in windows]
    return out
