"""Technical indicators per SPEC, computed with TA-Lib."""

from __future__ import annotations

import numpy as np
import pandas as pd
import talib

INDICATOR_COLUMNS = [
    "rsi14",
    "macd",
    "macd_signal",
    "macd_hist",
    "sma20",
    "sma50",
    "sma200",
    "bb_lower",
    "bb_mid",
    "bb_upper",
    "atr14",
]

# Sessions of history after which every indicator has a value (SMA200 is the longest);
# the recursive ones (RSI/MACD/ATR, Wilder/EMA smoothing) converge to full-history
# values within ~1e-8 after LOOKBACK_SESSIONS.
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
