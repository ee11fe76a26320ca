"""The clock every source reads by: now, or ``STOCKER_CLOCK`` (a simulated instant for offline
replays of the forward flow).

Under a clock a source reveals only the bars whose session closed at or before it
(``ClockedSource``) and only text published strictly before it (``text_events.configured``): the
same cut a decision at a session's close makes (``decision_context.point_in_time``), moved to the
clock. Sessions come from the configured source's exchange calendar
(``calendar.trading_calendar``: XNYS for the built-in sources), early closes included.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pandas as pd

from stocker_core.data_sources import MarketDataSource, SymbolInfo, prefetch
from stocker_core.errors import StockerError, UnknownTickerError
from stocker_core.market.calendar import NEW_YORK, session_close, trading_calendar


class ClockError(StockerError, ValueError):
    """A clock the exchange calendar cannot place (before its first or past its last session)."""


def clock_now(clock: datetime | None) -> pd.Timestamp:
    """The instant in force (UTC): ``clock`` when set, else the wall clock."""
    return pd.Timestamp(clock if clock is not None else datetime.now(UTC)).tz_convert("UTC")


def _check_in_calendar(instant: pd.Timestamp) -> None:
    calendar = trading_calendar()
    day = instant.tz_convert(NEW_YORK).tz_localize(None).normalize()
    if day > calendar.last_session:
        raise ClockError(
            f"clock {instant.isoformat()} is past the exchange calendar "
            f"(its last session is {calendar.last_session.date()}): set STOCKER_CLOCK earlier"
        )
    if day < calendar.first_session:
        raise ClockError(
            f"clock {instant.isoformat()} is before the exchange calendar's first session "
            f"{calendar.first_session.date()}"
        )


def last_closed_session(instant: pd.Timestamp) -> date:
    """The latest XNYS session whose close is at or before ``instant`` (early closes included);
    ClockError outside the calendar."""
    _check_in_calendar(instant)
    calendar = trading_calendar()
    day = instant.tz_convert(NEW_YORK).tz_localize(None).normalize()
    session = calendar.date_to_session(day, direction="previous")
    while session_close(pd.Timestamp(session).tz_localize(None)) > instant:
        if session <= calendar.first_session:
            raise ClockError(f"no session closed before clock {instant.isoformat()}")
        session = calendar.previous_session(session)
    return pd.Timestamp(session).date()


def next_session(day: date) -> date:
    """The XNYS session after ``day`` (a session or not); ClockError past the calendar."""
    calendar = trading_calendar()
    stamp = pd.Timestamp(day)
    if stamp >= calendar.last_session:
        raise ClockError(
            f"the exchange calendar ends at {calendar.last_session.date()}: no session after {day}"
        )
    return pd.Timestamp(calendar.date_to_session(stamp + pd.Timedelta(days=1), direction="next")).date()


def previous_session(day: date) -> date:
    """The XNYS session before ``day`` (a session or not)."""
    calendar = trading_calendar()
    stamp = pd.Timestamp(day)
    if stamp <= calendar.first_session:
        raise ClockError(f"the exchange calendar starts at {calendar.first_session.date()}")
    return pd.Timestamp(calendar.date_to_session(stamp - pd.Timedelta(days=1), direction="previous")).date()


def is_session(day: date) -> bool:
    """Whether ``day`` is an XNYS session inside the calendar."""
    calendar = trading_calendar()
    stamp = pd.Timestamp(day)
    return bool(calendar.first_session <= stamp <= calendar.last_session and calendar.is_session(stamp))


def close_of(day: date) -> pd.Timestamp:
    """The UTC instant session ``day`` closes."""
    return session_close(pd.Timestamp(day))


class ClockedSource:
    """A market source that hands out only the bars whose session closed by ``clock``."""

    def __init__(self, inner: MarketDataSource, clock: datetime) -> None:
        self.inner = inner
        self.name = inner.name
        self.clock = clock_now(clock)
        self.last_day = last_closed_session(self.clock)
        if hasattr(inner, "bar_issues"):  # an in-memory table: the gate may judge it once
            self.bar_issues = inner.bar_issues

    def _end(self, end: date) -> date:
        return min(pd.Timestamp(end), pd.Timestamp(self.last_day) + pd.Timedelta(days=1)).date()

    def fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        """Bars with ``start <= date < end`` whose session closed by the clock."""
        return self.inner.fetch(ticker, start, max(start, self._end(end)))

    def prefetch(self, tickers: list[str], start: date, end: date, held=None) -> object | None:
        """The inner source's batch prefetch (``data_sources.prefetch``) up to the clock."""
        return prefetch(self.inner, tickers, start, max(start, self._end(end)), held)

    def symbol_info(self, ticker: str) -> SymbolInfo:
        """The inner source's history cut at the clock; UnknownTickerError when none closed by it."""
        info = self.inner.symbol_info(ticker)
        if info.first_date > self.last_day:
            raise UnknownTickerError(
                f"{ticker} has no bar before clock {self.clock.isoformat()}: "
                f"its first is {info.first_date} (set STOCKER_CLOCK later)"
            )
        return SymbolInfo(ticker, info.first_date, min(info.last_date, self.last_day), info.close_only)

    def symbols(self) -> list[str]:
        return self.inner.symbols()


def clocked(source: MarketDataSource, clock: datetime | None) -> MarketDataSource:
    """``source`` behind the clock when one is set, else ``source`` itself."""
    return ClockedSource(source, clock) if clock is not None else source


def text_before(frame: pd.DataFrame | None, clock: datetime | None, column: str = "published_at"):
    """Rows of a text-event frame published strictly before ``clock`` (all rows without one)."""
    if clock is None or frame is None or len(frame) == 0:
        return frame
    instants = pd.to_datetime(frame[column], utc=True)
    return frame.loc[(instants < clock_now(clock)).to_numpy()].reset_index(drop=True)
