"""A fake Yahoo Finance (the third-party network service, the only thing faked) for the tests of
the yfinance source: it counts calls, fails on chosen ones and knows the tickers it is given."""

from __future__ import annotations

from datetime import date

import pandas as pd

from stocker_core.market.calendar import sessions

TODAY = date(2024, 3, 15)
DAYS = sessions(date(2022, 6, 1), date(2024, 3, 15))
"""The NYSE's sessions: the bars pass the quality gate's calendar rule."""
LATE = "T007"  # listed 2023-06-01: its months before that are honest and empty


def yahoo_frame(ticker: str, days: pd.DatetimeIndex) -> pd.DataFrame:
    """What yf.download gives one ticker: (Price, Ticker) columns, a tz-aware index."""
    level = 100.0 + sum(map(ord, ticker)) % 50 + (days - DAYS[0]).days.to_numpy() / 10  # by the day
    columns = {
        "Adj Close": level,
        "Close": level,
        "High": level + 1,
        "Low": level - 1,
        "Open": level,
        "Volume": level * 1000,
    }
    frame = pd.DataFrame(columns, index=days.tz_localize("America/New_York").rename("Date"))
    frame.columns = pd.MultiIndex.from_tuples([(c, ticker) for c in frame.columns], names=["Price", "Ticker"])
    return frame


class FakeYahoo:
    """A fake provider that counts calls, fails on chosen calls and knows ``known`` tickers."""

    def __init__(self, known: list[str]) -> None:
        self.known = set(known)
        self.calls: list[tuple[tuple[str, ...], date | None, date | None]] = []
        self.fail: dict[int, BaseException] = {}  # call number (1-based) -> error
        self.down_from: int | None = None  # every call from this one times out

    def _check(self) -> None:
        number = len(self.calls)
        if self.down_from is not None and number >= self.down_from:
            raise TimeoutError("read timed out")
        if number in self.fail:
            raise self.fail[number]

    def _days(self, ticker: str, start: date | None, end: date | None) -> pd.DatetimeIndex:
        days = DAYS[pd.Timestamp("2023-06-01") <= DAYS] if ticker == LATE else DAYS
        if start is not None:
            days = days[(days >= pd.Timestamp(start)) & (days < pd.Timestamp(end))]
        return days

    def download_many(self, tickers, start, end) -> dict[str, pd.DataFrame]:
        self.calls.append((tuple(tickers), start, end))
        self._check()
        return {t: yahoo_frame(t, self._days(t, start, end)) for t in tickers if t in self.known}

    def download(self, ticker, start, end) -> pd.DataFrame:
        self.calls.append(((ticker,), start, end))
        self._check()
        days = self._days(ticker, start, end)
        return yahoo_frame(ticker, days) if ticker in self.known and len(days) else pd.DataFrame()


class FakeTime:
    def __init__(self) -> None:
        self.now, self.slept = 0.0, []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
