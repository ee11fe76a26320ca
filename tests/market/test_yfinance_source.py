"""yfinance source with the download function replaced: no network."""

from datetime import date

import pandas as pd
import pytest

from stocker_core.errors import DataSourceError, UnknownTickerError
from stocker_core.market.yfinance_source import RateLimitedError, YFinanceSource


def yf_frame(ticker: str, days: list[str]) -> pd.DataFrame:
    """What yf.download returns: (Price, Ticker) MultiIndex columns, tz-aware index."""
    index = pd.DatetimeIndex(days, tz="America/New_York", name="Date")
    n = len(days)
    data = {
        ("Adj Close", ticker): [100.0 + i for i in range(n)],
        ("Close", ticker): [101.0 + i for i in range(n)],
        ("High", ticker): [102.0 + i for i in range(n)],
        ("Low", ticker): [99.0 + i for i in range(n)],
        ("Open", ticker): [100.5 + i for i in range(n)],
        ("Volume", ticker): [1_000 * (i + 1) for i in range(n)],
    }
    frame = pd.DataFrame(data, index=index)
    frame.columns = pd.MultiIndex.from_tuples(frame.columns, names=["Price", "Ticker"])
    return frame


HISTORY = ["2023-07-31", "2023-08-01", "2023-08-02", "2023-08-03"]


def fake_download(calls: list):
    def download(ticker, start, end):
        calls.append((ticker, start, end))
        if ticker == "NOPE":
            return pd.DataFrame()
        days = [d for d in HISTORY if (start is None or d >= str(start)) and (end is None or d < str(end))]
        return yf_frame(ticker, days) if days else pd.DataFrame()

    return download


def test_yfinance_shaped_frames_are_normalized():
    calls: list = []
    source = YFinanceSource(download=fake_download(calls), attempts=2, max_wait=0.01)
    frame = source.fetch("AAPL", date(2023, 8, 1), date(2023, 9, 1))
    assert frame["date"].dt.strftime("%Y-%m-%d").tolist() == HISTORY[1:]
    assert frame.loc[0, ["open", "high", "low", "close", "adj_close", "volume"]].tolist() == [
        100.5,
        102.0,
        99.0,
        101.0,
        100.0,
        1000.0,
    ]
    assert frame["date"].dt.tz is None


def test_unknown_symbol_vs_empty_month():
    source = YFinanceSource(download=fake_download([]), attempts=2, max_wait=0.01)
    with pytest.raises(UnknownTickerError, match="NOPE"):
        source.fetch("NOPE", date(2023, 8, 1), date(2023, 9, 1))
    before_listing = source.fetch("AAPL", date(2001, 1, 1), date(2001, 2, 1))
    assert before_listing.empty
    assert source.symbol_info("AAPL").first_date == date(2023, 7, 31)


def test_transient_errors_are_retried_then_succeed():
    attempts = {"n": 0}
    inner = fake_download([])

    def flaky(ticker, start, end):
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise (ConnectionError if attempts["n"] == 1 else RateLimitedError)("try later")
        return inner(ticker, start, end)

    frame = YFinanceSource(download=flaky, attempts=4, max_wait=0.01).fetch(
        "AAPL", date(2023, 8, 1), date(2023, 9, 1)
    )
    assert attempts["n"] == 3 and len(frame) == 3


def test_persistent_failure_gives_clear_error():
    attempts = {"n": 0}

    def down(ticker, start, end):
        attempts["n"] += 1
        raise TimeoutError("read timed out")

    with pytest.raises(DataSourceError, match="after retries.*Nothing was written"):
        YFinanceSource(download=down, attempts=3, max_wait=0.01).fetch(
            "AAPL", date(2023, 8, 1), date(2023, 9, 1)
        )
    assert attempts["n"] == 3


def test_non_transient_error_is_not_retried():
    attempts = {"n": 0}

    def broken(ticker, start, end):
        attempts["n"] += 1
        raise ValueError("unexpected payload")

    with pytest.raises(DataSourceError, match="unexpected payload"):
        YFinanceSource(download=broken, attempts=5, max_wait=0.01).fetch(
            "AAPL", date(2023, 8, 1), date(2023, 9, 1)
        )
    assert attempts["n"] == 1
