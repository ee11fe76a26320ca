"""The one point-in-time filter: rows dated on or before the decision date, never after."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd


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
