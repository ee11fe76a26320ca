from datetime import date

import numpy as np
import pandas as pd
import talib

from stocker_core.market.builds import lookback_start
from stocker_core.market.files_source import FilesSource
from stocker_core.market.indicators import INDICATOR_COLUMNS, MIN_HISTORY, compute_indicators


def test_values_match_talib_and_warmup_is_nan(seed_dir):
    bars = FilesSource(seed_dir).fetch("AAPL", date(2000, 1, 1), date(2030, 1, 1))
    values = compute_indicators(bars)
    close = bars["close"].to_numpy()
    np.testing.assert_allclose(values["rsi14"], talib.RSI(close, 14), equal_nan=True)
    np.testing.assert_allclose(values["macd_hist"], talib.MACD(close, 12, 26, 9)[2], equal_nan=True)
    np.testing.assert_allclose(
        values["atr14"], talib.ATR(bars["high"].to_numpy(), bars["low"].to_numpy(), close, 14), equal_nan=True
    )
    for column in INDICATOR_COLUMNS:
        first_value = values[column].first_valid_index()
        assert first_value is None or first_value + 1 >= MIN_HISTORY[column], column
    assert values["sma200"].isna().all()  # the fixture holds < 200 AAPL sessions
    assert values["rsi14"].dropna().between(0, 100).all()


def test_lookback_window_reproduces_full_history():
    """A month computed from its 12-month lookback equals the full-history computation."""
    rng = np.random.default_rng(7)
    days = pd.bdate_range("2015-01-01", "2019-12-31")
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.015, len(days))))
    bars = pd.DataFrame(
        {
            "date": days,
            "open": close,
            "high": close * 1.01,
            "low": close * 0.99,
            "close": close,
            "adj_close": close,
            "volume": 1e6,
        }
    )
    full = compute_indicators(bars).set_index("date")
    month = date(2019, 6, 1)
    window = bars[(bars["date"] >= pd.Timestamp(lookback_start(month))) & (bars["date"] < "2019-07-01")]
    part = compute_indicators(window.reset_index(drop=True)).set_index("date").loc["2019-06"]
    np.testing.assert_allclose(
        part[INDICATOR_COLUMNS], full.loc["2019-06", INDICATOR_COLUMNS], rtol=1e-6, atol=1e-6
    )


def test_close_only_has_no_atr():
    bars = pd.DataFrame(
        {
            "date": pd.bdate_range("2020-01-01", periods=40),
            "open": np.nan,
            "high": np.nan,
            "low": np.nan,
            "close": np.linspace(10, 20, 40),
            "adj_close": np.nan,
            "volume": np.nan,
        }
    )
    values = compute_indicators(bars)
    assert values["atr14"].isna().all() and values["sma20"].notna().sum() == 21
