"""NYSE trading sessions from exchange_calendars."""

from __future__ import annotations

from datetime import date
from functools import lru_cache

import exchange_calendars as xcals
import pandas as pd

CALENDAR_START = "1990-01-02"


@lru_cache(maxsize=1)
def nyse():
    """The XNYS calendar from 1990 to a year past today."""
    end = (pd.Timestamp.today().normalize() + pd.DateOffset(years=1)).strftime("%Y-%m-%d")
    return xcals.get_calendar("XNYS", start=CALENDAR_START, end=end)


def sessions(start: date, end: date) -> pd.DatetimeIndex:
    """NYSE sessions with ``start <= day < end`` as tz-naive midnight timestamps."""
    cal = nyse()
    lo = max(pd.Timestamp(start), cal.first_session)
    hi = min(pd.Timestamp(end) - pd.Timedelta(days=1), cal.last_session)
    if lo > hi:
        return pd.DatetimeIndex([])
    return pd.DatetimeIndex(cal.sessions_in_range(lo, hi)).tz_localize(None)


def month_end(month: date) -> date:
    """First day of the month after ``month``."""
    return (pd.Timestamp(month) + pd.offsets.MonthBegin(1)).date()


def month_sessions(month: date) -> pd.DatetimeIndex:
    """NYSE sessions in the calendar month starting at ``month``."""
    return sessions(month, month_end(month))


def sessions_since(first: date, days: pd.Series) -> pd.Series:
    """For each day, the NYSE sessions from ``first`` through that day (inclusive)."""
    days = pd.to_datetime(days)
    if days.empty:
        return pd.Series([], dtype="int64")
    all_sessions = sessions(first, (days.max() + pd.Timedelta(days=1)).date())
    counts = all_sessions.searchsorted(days.to_numpy(), side="right")
    return pd.Series(counts, index=days.index)
