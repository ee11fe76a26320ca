"""Trading sessions from exchange_calendars: the calendar of the configured source
(``DataSource.calendar``; XNYS, the New York Stock Exchange, for every built-in source).

Times of day are New York's (``NEW_YORK``): the decision cut-off, the clock's day and a
non-session's close are read there, as every built-in source trades there.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from datetime import date
from functools import lru_cache
from pathlib import Path

import exchange_calendars as xcals
import pandas as pd

from stocker_core.config import get_settings
from stocker_core.data_sources import source_calendar
from stocker_core.user_cache import user_cache_dir

CALENDAR_START = "1990-01-02"
NEW_YORK = "America/New_York"
"""The NYSE's time zone: sessions open and close on New York wall-clock time."""


def _cache_file(name: str) -> Path:
    """Where the built calendar ``name`` is kept between processes (``user_cache_dir``)."""
    return user_cache_dir() / f"{name.lower()}-calendar.pickle"


def calendar_name() -> str:
    """The exchange calendar of the configured source (``get_settings().source``, as it
    describes itself: ``DataSource.calendar``)."""
    return source_calendar(get_settings().source)


def trading_calendar():
    """The configured source's exchange calendar (``calendar_name``), from 1990 to a year
    past today (``exchange_calendar``)."""
    return exchange_calendar(calendar_name())


@lru_cache(maxsize=4)
def exchange_calendar(name: str):
    """The exchange calendar ``name`` (``XNYS``, ``XLON``…) from 1990 to a year past today.

    Building it takes ~0.4 s (every holiday rule over 35 years), so the built calendar is
    pickled to a per-user cache file keyed by the name, the exchange_calendars version and
    the range, and reloaded in ~15 ms by later commands; any problem with the file rebuilds.
    """
    end = (pd.Timestamp.today().normalize() + pd.DateOffset(years=1)).strftime("%Y-%m-%d")
    key = (name, xcals.__version__, CALENDAR_START, end)
    path = _cache_file(name)
    try:
        stored_key, calendar = pickle.loads(path.read_bytes())
        if stored_key == key:
            return calendar
    except Exception:  # missing, stale or unreadable cache: build it
        pass
    calendar = xcals.get_calendar(name, start=CALENDAR_START, end=end)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{name.lower()}-")
        with os.fdopen(fd, "wb") as out:
            pickle.dump((key, calendar), out)
        Path(tmp).replace(path)
    except OSError:  # a read-only home: keep the built calendar in this process only
        pass
    return calendar


REGULAR_CLOSE = pd.Timedelta(hours=16)
"""New York wall-clock close of a regular session."""


def session_close(day: pd.Timestamp) -> pd.Timestamp:
    """The UTC instant ``day``'s session closes (a tz-naive midnight); early closes included.
    A day that is not a session (weekend, holiday, outside the calendar) gets 16:00 New York."""
    return _session_close(calendar_name(), day)


@lru_cache(maxsize=8192)
def _session_close(name: str, day: pd.Timestamp) -> pd.Timestamp:
    calendar = exchange_calendar(name)
    if calendar.first_session <= day <= calendar.last_session and calendar.is_session(day):
        return pd.Timestamp(calendar.session_close(day)).tz_convert("UTC")
    return (day + REGULAR_CLOSE).tz_localize(NEW_YORK).tz_convert("UTC")


def sessions(start: date, end: date) -> pd.DatetimeIndex:
    """The trading calendar's sessions with ``start <= day < end`` as tz-naive midnight timestamps."""
    cal = trading_calendar()
    lo = max(pd.Timestamp(start), cal.first_session)
    hi = min(pd.Timestamp(end) - pd.Timedelta(days=1), cal.last_session)
    if lo > hi:
        return pd.DatetimeIndex([])
    return pd.DatetimeIndex(cal.sessions_in_range(lo, hi)).tz_localize(None)


def month_end(month: date) -> date:
    """First day of the month after ``month``."""
    return (pd.Timestamp(month) + pd.offsets.MonthBegin(1)).date()


def month_sessions(month: date) -> pd.DatetimeIndex:
    """The trading calendar's sessions in the calendar month starting at ``month``."""
    return sessions(month, month_end(month))


def sessions_since(first: date, days: pd.Series) -> pd.Series:
    """For each day, the trading calendar's sessions from ``first`` through that day (inclusive)."""
    days = pd.to_datetime(days)
    if days.empty:
        return pd.Series([], dtype="int64")
    all_sessions = sessions(first, (days.max() + pd.Timedelta(days=1)).date())
    counts = all_sessions.searchsorted(days.to_numpy(), side="right")
    return pd.Series(counts, index=days.index)
