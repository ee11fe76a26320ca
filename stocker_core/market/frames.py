"""The normalized daily-bar frame every source returns, and what normalizing found wrong."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from stocker_core.errors import DataSourceError

PRICE_COLUMNS = ["open", "high", "low", "close", "adj_close", "volume"]
FRAME_COLUMNS = ["date", *PRICE_COLUMNS]
OHL_COLUMNS = ["open", "high", "low"]

_ALIASES = {
    "adj close": "adj_close",
    "adjclose": "adj_close",
    "adj_close": "adj_close",
    "symbol": "ticker",
    "timestamp": "date",
    "datetime": "date",
}


@dataclass(frozen=True)
class BarIssue:
    """A problem seen in the raw rows, before normalizing could hide it.

    ``date`` is None when the problem concerns the whole table (a missing column,
    a row whose date cannot be read): then every month of the symbol fails.
    """

    date: pd.Timestamp | None
    column: str | None
    problem: str


@dataclass
class CheckedBars:
    """A normalized frame plus the raw-data issues found while normalizing it."""

    frame: pd.DataFrame
    issues: list[BarIssue] = field(default_factory=list)


def canonical_column(name: object) -> str:
    """Lower-case a column name and map common aliases (``Adj Close`` -> ``adj_close``)."""
    key = str(name).strip().lower()
    return _ALIASES.get(key, key.replace(" ", "_"))


def empty_frame() -> pd.DataFrame:
    """A zero-row normalized frame."""
    frame = pd.DataFrame({c: pd.Series(dtype="float64") for c in PRICE_COLUMNS})
    frame.insert(0, "date", pd.Series(dtype="datetime64[ns]"))
    return frame


def _day(stamp: pd.Timestamp) -> str:
    return stamp.strftime("%Y-%m-%d")


def _numeric(values: pd.Series, column: str, dates: pd.Series, issues: list[BarIssue]) -> pd.Series:
    """``values`` as float64; text that is not a number is named in ``issues``."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.astype("float64")  # numbers already: nothing to coerce or name
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    text = values.notna() & numbers.isna() & dates.notna()
    for raw, day in zip(values[text], dates[text], strict=True):
        shown = str(raw)[:20]
        issues.append(BarIssue(day, column, f"non-numeric {column} {shown!r} on {_day(day)}"))
    return numbers


def _prepare(raw: pd.DataFrame) -> pd.DataFrame:
    frame = raw.copy()
    if "date" not in [canonical_column(c) for c in frame.columns]:
        frame = frame.reset_index()
    frame.columns = [canonical_column(c) for c in frame.columns]
    frame = frame.loc[:, ~pd.Index(frame.columns).duplicated()]
    if "date" not in frame.columns or "close" not in frame.columns:
        raise DataSourceError(f"bars need a date and a close column; got columns {list(frame.columns)}")
    return frame


_ISO_DATE = r"^\s*\d{4}-\d{1,2}-\d{1,2}(?:[T ].*)?\s*$"
_YEAR_FIRST = r"^\s*\d{4}[/.]\d{1,2}[/.]\d{1,2}\s*$"
_COMPACT = r"^\s*\d{8}\s*$"
_MONTH_NAME = r"[A-Za-z]{3,}"
_DAY_MONTH_ORDER = r"^\s*\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}(?:[T ].*)?\s*$"
_FOUR_DIGITS = r"(?<!\d)\d{4}(?!\d)"


def _row_label(frame: pd.DataFrame, position: int) -> int:
    """The 1-based data row of ``position`` in the file (a long file's rows keep their labels)."""
    label = frame.index[position]
    return int(label) + 1 if isinstance(label, int | np.integer) else position + 1


def _parse_text_dates(text: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(dates, refused) of text dates, never guessing the order of day and month: year-first
    forms (``2023-08-15``, ``2023/08/15``, ``20230815``, ISO with a time) and month names
    (``Aug 15, 2023``) are read; ``15/08/2023`` and ``08/15/2023`` are refused, as is anything
    with a two-digit year."""
    dates = pd.Series(pd.NaT, index=text.index, dtype="datetime64[ns]")
    iso = text.str.match(_ISO_DATE) | text.str.match(_YEAR_FIRST)
    compact = text.str.match(_COMPACT)
    named = ~iso & ~compact & text.str.contains(_MONTH_NAME) & ~text.str.match(_DAY_MONTH_ORDER)
    short_year = named & ~text.str.contains(_FOUR_DIGITS)  # "01-Jun-23", "Jun 01 23", "23-Jun-01"
    named &= ~short_year
    refused = text.str.match(_DAY_MONTH_ORDER) | short_year
    parts = [
        (
            iso,
            lambda v: pd.to_datetime(v.str.strip().str.replace(r"[/.]", "-", regex=True), format="ISO8601"),
        ),
        (compact, lambda v: pd.to_datetime(v.str.strip(), format="%Y%m%d")),
        (named, lambda v: pd.to_datetime(v, format="mixed")),
    ]
    for mask, parse in parts:
        if not mask.any():
            continue
        try:
            parsed = parse(text[mask])
        except (ValueError, TypeError, OverflowError):  # one bad value (or mixed zones): row by row
            parsed = pd.Series([_one(parse, v) for v in text[mask]], index=text[mask].index)
        parsed = pd.to_datetime(parsed, errors="coerce", utc=True) if _has_zones(parsed) else parsed
        if getattr(parsed.dt, "tz", None) is not None:
            parsed = parsed.dt.tz_localize(None)
        dates[mask] = parsed.astype("datetime64[ns]")
    return dates, refused


def _one(parse, value: str) -> pd.Timestamp:
    try:
        stamp = pd.Timestamp(parse(pd.Series([value])).iloc[0])
    except (ValueError, TypeError, OverflowError):
        return pd.NaT
    return stamp.tz_localize(None) if stamp.tzinfo is not None else stamp


def _has_zones(values: pd.Series) -> bool:
    return values.dtype == object and any(getattr(v, "tzinfo", None) is not None for v in values)


def _day_month_readings(text: str) -> list[pd.Timestamp]:
    """The days ``03/08/2023`` can mean (3 August, 8 March); none for a two-digit year."""
    numbers = re.findall(r"\d+", text)
    if len(numbers) < 3 or len(numbers[2]) != 4:
        return []
    first, second, year = int(numbers[0]), int(numbers[1]), int(numbers[2])
    readings = []
    for day, month in {(first, second), (second, first)}:
        try:
            readings.append(pd.Timestamp(year=year, month=month, day=day))
        except ValueError:
            continue
    return sorted(readings)


def _dates(frame: pd.DataFrame, issues: list[BarIssue]) -> pd.Series:
    raw = frame["date"]
    if pd.api.types.is_datetime64_any_dtype(raw) and getattr(raw.dt, "tz", None) is None:
        return raw.dt.normalize().astype("datetime64[ns]")  # dates already: nothing to read or refuse
    if pd.api.types.is_datetime64_any_dtype(raw):
        dates, refused = raw, pd.Series(False, index=raw.index)
    else:
        dates, refused = _parse_text_dates(raw.astype("string").fillna(""))
        dates[raw.isna()] = pd.NaT
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_localize(None)  # keep the exchange's wall-clock date
    refused = refused.to_numpy() & raw.notna().to_numpy()
    unreadable = dates.isna().to_numpy() & raw.notna().to_numpy() & ~refused
    for position in np.flatnonzero(refused):
        shown = str(raw.iloc[position])[:20]
        problem = (
            f"row {_row_label(frame, position)}: date {shown!r} does not say which number is the day "
            "and which the month (never guessed): write dates as YYYY-MM-DD"
            if re.match(_DAY_MONTH_ORDER, shown) and re.search(_FOUR_DIGITS, shown)
            else f"row {_row_label(frame, position)}: date {shown!r} has a two-digit year (never guessed): "
            "write dates as YYYY-MM-DD"
        )
        # the row belongs to one of the days it can be read as: each of those months fails
        candidates = _day_month_readings(shown)
        issues.extend(BarIssue(day, "date", problem) for day in candidates)
        if not candidates:
            issues.append(BarIssue(None, "date", problem))
    for position in np.flatnonzero(unreadable)[:5]:
        shown = str(raw.iloc[position])[:20]
        issues.append(BarIssue(None, "date", f"row {_row_label(frame, position)}: unreadable date {shown!r}"))
    dates = dates.where(~pd.Series(refused, index=dates.index))
    return dates.dt.normalize().astype("datetime64[ns]")


def normalize_bars_checked(raw: pd.DataFrame | None) -> CheckedBars:
    """Normalize daily bars and report what was wrong in the raw rows.

    The frame: tz-naive ``date``, float prices, sorted, one row per date (the last
    duplicate). Missing ``open/high/low/volume`` stay NaN (close-only data is never
    invented); missing ``adj_close`` equals ``close``; rows without a close are dropped.
    The issues name what those steps would otherwise hide: duplicate dates, closes
    that are NaN, text in a number column, unreadable dates, and an OHLC table
    missing one of open/high/low.
    """
    if raw is None or len(raw) == 0:
        return CheckedBars(empty_frame())
    frame = _prepare(raw)
    issues: list[BarIssue] = []
    present = [c for c in OHL_COLUMNS if c in frame.columns]
    if present and len(present) < len(OHL_COLUMNS):
        missing = [c for c in OHL_COLUMNS if c not in present]
        for column in missing:
            issues.append(BarIssue(None, column, f"missing column {column} ({', '.join(present)} present)"))
    dates = _dates(frame, issues)
    out = pd.DataFrame(
        {
            "date": dates,
            **{
                col: _numeric(frame[col], col, dates, issues)
                if col in frame.columns
                else pd.Series(np.nan, index=dates.index)
                for col in PRICE_COLUMNS
            },
        }
    )
    if out["adj_close"].isna().all():
        out["adj_close"] = out["close"]
    blank_close = out["date"].notna() & out["close"].isna() & frame["close"].isna().to_numpy()
    for day in out.loc[blank_close, "date"]:
        issues.append(BarIssue(day, "close", f"NaN close on {_day(day)}"))
    kept = out["date"].notna().to_numpy() & out["close"].notna().to_numpy()
    if not kept.all():
        out = out[kept]
    if not out["date"].is_unique:
        counts = out["date"].value_counts()
        for day, n in counts[counts > 1].sort_index().items():
            issues.append(BarIssue(day, None, f"duplicate date {_day(day)} ({n} rows)"))
        out = out.drop_duplicates(subset="date", keep="last")
    if not out["date"].is_monotonic_increasing:  # most sources send their days in order
        out = out.sort_values("date")
    return CheckedBars(out.reset_index(drop=True)[FRAME_COLUMNS], issues)


def normalize_bars(raw: pd.DataFrame | None) -> pd.DataFrame:
    """The normalized frame of ``normalize_bars_checked`` (issues not needed)."""
    return normalize_bars_checked(raw).frame


def is_close_only(frame: pd.DataFrame) -> bool:
    """True when the frame has closes but no open/high/low at all."""
    return len(frame) > 0 and frame[OHL_COLUMNS].isna().all().all()
