"""Holes in a bar series: runs of NYSE sessions with no bar between two stored bars."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

from stocker_core.market.calendar import sessions

MAX_MISSING_SESSIONS = 5
"""More NYSE sessions than this without a bar between two bars is a gap worth flagging."""


@dataclass(frozen=True)
class SessionGap:
    """``missing`` NYSE sessions without a bar between the bars of ``after`` and ``before``."""

    after: date
    before: date
    missing: int

    def __str__(self) -> str:
        return f"{self.missing} sessions missing between {self.after} and {self.before}"


def session_gaps(
    dates: pd.Series | pd.DatetimeIndex, max_missing: int = MAX_MISSING_SESSIONS
) -> list[SessionGap]:
    """Gaps of more than ``max_missing`` NYSE sessions between consecutive ``dates``
    (sorted, tz-naive days); dates off the calendar count as their next session."""
    days = pd.DatetimeIndex(pd.to_datetime(dates)).normalize()
    if len(days) < 2:
        return []
    calendar = sessions(days[0].date(), (days[-1] + pd.Timedelta(days=1)).date())
    position = calendar.searchsorted(days)
    missing = np.diff(position) - 1
    return [
        SessionGap(days[i].date(), days[i + 1].date(), int(missing[i]))
        for i in np.flatnonzero(missing > max_missing)
    ]
