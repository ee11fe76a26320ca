"""How far a ticker's stored bars lag the NYSE calendar: completed sessions without a bar.

A session is *completed* once its close (early closes included) has passed. The judged
window is the month being refreshed up to ``as_of`` (never past the month's end), reaching
back to the day after the last stored bar when the data stopped before the month began,
and never before the ticker's first listed day.

*Now* depends on the source, as it describes itself (``DataSource.live``): a live source
(``yfinance``, a ``files`` folder that is kept up to date) is judged against the calendar up to
the present; a fixed data set (the offline ``sample``, the seeded ``synthetic`` market) can
have no bar after its last day, so it is judged as of that day's close (``judged_as_of``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

import pandas as pd

from stocker_core.data_sources import known_source
from stocker_core.market.calendar import month_end, session_close, trading_calendar

MAX_MISSING_FOR_WARN = 3
"""Up to this many missing completed sessions is a warning; more is an error."""


@dataclass(frozen=True)
class Freshness:
    """One ticker's verdict: the window judged, the last stored bar and the sessions missing."""

    ticker: str
    window_start: date | None
    as_of: pd.Timestamp
    last_bar: date | None
    missing: tuple[date, ...]

    @property
    def severity(self) -> str:
        """``ok`` (nothing missing), ``warn`` (1–3 sessions) or ``error`` (more than 3)."""
        return freshness_severity(len(self.missing))

    def as_dict(self) -> dict[str, object]:
        return {
            "ticker": self.ticker,
            "window_start": self.window_start.isoformat() if self.window_start else None,
            "as_of": self.as_of.isoformat(),
            "last_bar": self.last_bar.isoformat() if self.last_bar else None,
            "missing_sessions": len(self.missing),
            "missing": [d.isoformat() for d in self.missing[:20]],
            "severity": self.severity,
        }


def freshness_severity(missing: int) -> str:
    """``ok`` for 0 missing completed sessions, ``warn`` for 1–3, ``error`` above."""
    if missing <= 0:
        return "ok"
    return "warn" if missing <= MAX_MISSING_FOR_WARN else "error"


def judged_as_of(source: str | None, last_date: date | None, now: pd.Timestamp) -> pd.Timestamp:
    """The moment a ticker's freshness is judged at (UTC): ``now`` for a live source (or one
    no longer registered); for a fixed one (a registered source that is not ``live``), the close
    of the symbol's last available day, when that is earlier than ``now``."""
    now = _utc(now)
    described = known_source(source)
    if described is None or described.live or last_date is None:
        return now
    return min(now, session_close(pd.Timestamp(last_date).normalize()))


def completed_sessions(start: date, as_of: pd.Timestamp) -> list[date]:
    """NYSE sessions from ``start`` whose close is at or before ``as_of`` (tz-aware, or UTC)."""
    as_of = _utc(as_of)
    closes = trading_calendar().closes
    lo = pd.Timestamp(start)
    hi = min(pd.Timestamp(as_of.date()), closes.index[-1])
    if lo > hi:
        return []
    window = closes.loc[lo:hi]
    return [d.date() for d in window.index[window <= as_of]]


def ticker_freshness(
    ticker: str,
    bar_dates: Iterable[object],
    month: date,
    as_of: pd.Timestamp,
    first_date: date | None = None,
) -> Freshness:
    """Completed sessions of ``month`` (up to ``as_of``) with no bar in ``bar_dates``.

    ``bar_dates`` are the ticker's stored bar dates up to the month's end (earlier months
    included, so a feed that stopped before the month began is counted from where it stopped).
    """
    as_of = _utc(as_of)
    end = pd.Timestamp(month_end(month)).tz_localize("America/New_York").tz_convert("UTC")
    judged_until = min(as_of, end)
    stored = sorted({pd.Timestamp(d).date() for d in bar_dates})
    before = [d for d in stored if d < month]
    start = month
    if before:
        start = min(start, (pd.Timestamp(before[-1]) + pd.Timedelta(days=1)).date())
    if first_date is not None:
        start = max(start, pd.Timestamp(first_date).date())
    if first_date is not None and pd.Timestamp(first_date) >= judged_until.tz_localize(None):
        return Freshness(ticker, None, judged_until, stored[-1] if stored else None, ())
    have = set(stored)
    missing = tuple(d for d in completed_sessions(start, judged_until) if d not in have)
    last = max((d for d in stored if pd.Timestamp(d) <= judged_until.tz_localize(None)), default=None)
    return Freshness(ticker, start, judged_until, last, missing)


def _utc(moment: pd.Timestamp) -> pd.Timestamp:
    moment = pd.Timestamp(moment)
    return moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
