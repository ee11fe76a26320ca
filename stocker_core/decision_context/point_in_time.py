"""Point in time: what a decision taken at a day's close may see, and nothing later.

Two rules, one home:

* **Bars and other end-of-day rows** (prices, indicators, peer closes) are dated by
  session: ``point_in_time(frame, day)`` keeps the rows dated on or before ``day``.
* **Text events** (news, forum posts, macro events) carry a publication instant
  (``published_at``, UTC). A decision for day ``D`` is taken at D's close —
  ``decision_cutoff(D)``: the NYSE close of that session from the exchange calendar
  (16:00 America/New_York, 13:00 on early-close days) — and sees only events
  published **strictly before** it (``visible_events``). An event whose source gives
  only a date counts as published at the end of that day (midnight New York, see
  ``date_only_published_at``), i.e. after that day's close: it is visible from the
  next session on. The council, the environment observation and the agent's tools
  all cut through these functions.
"""

from __future__ import annotations

from datetime import date, datetime

import numpy as np
import pandas as pd

from stocker_core.market.calendar import NEW_YORK, session_close


def point_in_time(frame: pd.DataFrame, as_of: date | pd.Timestamp, column: str = "date") -> pd.DataFrame:
    """Rows of ``frame`` whose ``column`` is on or before ``as_of`` (dates compared by day)."""
    if frame is None or len(frame) == 0:
        return frame
    cutoff = pd.Timestamp(as_of).normalize()
    values = frame[column]
    if values.dtype == "datetime64[ns]" and values.is_monotonic_increasing:
        # sorted tz-naive dates (every normalized frame): a binary search, no copies
        end = int(np.searchsorted(values.to_numpy(), np.datetime64(cutoff + pd.Timedelta(days=1)), "left"))
        return frame.iloc[:end]
    dates = pd.to_datetime(values)
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_localize(None)
    return frame.loc[dates.dt.normalize() <= cutoff]


def _session_day(day: date | datetime | pd.Timestamp | str) -> pd.Timestamp:
    stamp = pd.Timestamp(day)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert(NEW_YORK).tz_localize(None)
    return stamp.normalize()


def decision_cutoff(day: date | datetime | pd.Timestamp | str) -> pd.Timestamp:
    """The instant (UTC) a decision for ``day`` is taken: that session's NYSE close.

    Early closes are included (2023-11-24 → 18:00 UTC, i.e. 13:00 New York). A day that
    is not a session (weekend, holiday, outside the calendar) gets 16:00 New York.
    """
    return session_close(_session_day(day))


def date_only_published_at(day: date | datetime | pd.Timestamp | str) -> pd.Timestamp:
    """When an event stated only by its date ``day`` counts as published (UTC):
    the end of that day in New York — after its close, before the next session's."""
    return (_session_day(day) + pd.Timedelta(days=1)).tz_localize(NEW_YORK).tz_convert("UTC")


def published_before(frame: pd.DataFrame, cutoff: pd.Timestamp, column: str = "published_at") -> pd.DataFrame:
    """Rows of ``frame`` whose ``column`` (a UTC instant) is strictly before ``cutoff``."""
    if frame is None or len(frame) == 0:
        return frame
    instants = pd.to_datetime(frame[column], utc=True)
    return frame.loc[(instants < cutoff).to_numpy()]


def visible_events(
    frame: pd.DataFrame, as_of: date | datetime | pd.Timestamp | str, column: str = "published_at"
) -> pd.DataFrame:
    """Text events a decision at the close of ``as_of`` may see (published before it)."""
    return published_before(frame, decision_cutoff(as_of), column)
