"""The normalized daily-bar frame every source returns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stocker_core.errors import DataSourceError

PRICE_COLUMNS = ["open", "high", "low", "close", "adj_close", "volume"]
FRAME_COLUMNS = ["date", *PRICE_COLUMNS]

_ALIASES = {
    "adj close": "adj_close",
    "adjclose": "adj_close",
    "adj_close": "adj_close",
    "symbol": "ticker",
    "timestamp": "date",
    "datetime": "date",
}


def canonical_column(name: object) -> str:
    """Lower-case a column name and map common aliases (``Adj Close`` -> ``adj_close``)."""
    key = str(name).strip().lower()
    return _ALIASES.get(key, key.replace(" ", "_"))


def empty_frame() -> pd.DataFrame:
    """A zero-row normalized frame."""
    frame = pd.DataFrame({c: pd.Series(dtype="float64") for c in PRICE_COLUMNS})
    frame.insert(0, "date", pd.Series(dtype="datetime64[ns]"))
    return frame


def normalize_bars(raw: pd.DataFrame) -> pd.DataFrame:
    """Normalize daily bars: tz-naive ``date`` column, float prices, sorted, unique dates.

    Missing ``open/high/low/volume`` stay NaN (close-only data is never invented);
    missing ``adj_close`` equals ``close``. Rows without a close are dropped.
    """
    if raw is None or len(raw) == 0:
        return empty_frame()
    frame = raw.copy()
    if "date" not in [canonical_column(c) for c in frame.columns]:
        frame = frame.reset_index()
    frame.columns = [canonical_column(c) for c in frame.columns]
    if "date" not in frame.columns or "close" not in frame.columns:
        raise DataSourceError(f"bars need a date and a close column; got columns {list(frame.columns)}")
    dates = pd.to_datetime(frame["date"], errors="coerce", utc=False)
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_localize(None)  # keep the exchange's wall-clock date
    out = pd.DataFrame({"date": dates.dt.normalize().astype("datetime64[ns]")})
    for col in PRICE_COLUMNS:
        if col in frame.columns:
            out[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        else:
            out[col] = np.nan
    if out["adj_close"].isna().all():
        out["adj_close"] = out["close"]
    out = out.dropna(subset=["date", "close"])
    out = out.drop_duplicates(subset="date", keep="last").sort_values("date")
    return out.reset_index(drop=True)[FRAME_COLUMNS]


def is_close_only(frame: pd.DataFrame) -> bool:
    """True when the frame has closes but no open/high/low at all."""
    return len(frame) > 0 and frame[["open", "high", "low"]].isna().all().all()
