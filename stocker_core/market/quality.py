"""Data-quality rules for the market tables (the ingest gate and the Dagster checks call these).

Blocking rules (a month that breaks one is quarantined: never stored, never consumed):
duplicate dates, NaN or non-numeric values, a missing open/high/low column, unreadable
dates, non-positive prices, high < low, open/close outside [low, high], negative volume,
a session off the XNYS calendar, and a split-like jump: a day-over-day close ratio above
``JUMP_RATIO`` (1.8) or below 1/1.8 (a 2-for-1 split gives 0.5, a 10x typo 10) that
``adj_close`` does not share (a split the vendor adjusted for moves close, not adj_close).
Missing sessions are reported but do not block (context series have gaps by design).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np
import pandas as pd

from stocker_core.errors import StockerError
from stocker_core.market.calendar import month_end, month_sessions, sessions
from stocker_core.market.frames import OHL_COLUMNS, BarIssue

JUMP_RATIO = 1.8
"""Day-over-day close ratio above this (or below its inverse) is a split-like jump."""


class DataQualityError(StockerError, ValueError):
    """Bars that failed the blocking price checks were asked for."""


def _day(stamp: pd.Timestamp) -> str:
    return pd.Timestamp(stamp).strftime("%Y-%m-%d")


Problem = tuple[pd.Timestamp, str | None, str]
"""(date, column or None, description)."""


def _named(
    frame: pd.DataFrame, mask: pd.Series | np.ndarray, text: str, column: str | None = None
) -> list[Problem]:
    return [
        (day, column, f"{text} on {_day(day)}") for day in frame.loc[np.asarray(mask, dtype=bool), "date"]
    ]


def row_problems(frame: pd.DataFrame, previous_close: float | None = None) -> list[Problem]:
    """(date, column, problem) for every blocking rule a normalized frame breaks, by date.

    ``previous_close`` (the close before the frame's first row) lets the jump rule
    judge the first day too.
    """
    if frame.empty:
        return []
    found: list[Problem] = []
    ohl = frame[OHL_COLUMNS]
    has_ohl = ohl.notna().any(axis=1)
    for column in OHL_COLUMNS:
        found += _named(frame, has_ohl & frame[column].isna(), f"NaN {column}", column)
    if frame["volume"].notna().any():  # a table with volumes: an OHLC row without one is a hole
        found += _named(frame, has_ohl & frame["volume"].isna(), "NaN volume", "volume")
    for column in ["open", "high", "low", "close", "adj_close"]:
        found += _named(frame, frame[column] <= 0, f"non-positive {column}", column)
    found += _named(frame, frame["high"] < frame["low"], "high below low")
    body_high = frame[["open", "close"]].max(axis=1)
    body_low = frame[["open", "close"]].min(axis=1)
    found += _named(frame, frame["high"] + 1e-9 < body_high, "high below open/close")
    found += _named(frame, frame["low"] - 1e-9 > body_low, "low above open/close")
    found += _named(frame, frame["volume"] < 0, "negative volume")
    calendar = sessions(frame["date"].iloc[0].date(), (frame["date"].iloc[-1] + pd.Timedelta(days=1)).date())
    for day in frame.loc[~frame["date"].isin(calendar), "date"]:
        found.append((day, None, f"{_day(day)} is not an XNYS session"))
    found += _jumps(frame, previous_close)
    return sorted(found, key=lambda item: item[0])


def _jumps(frame: pd.DataFrame, previous_close: float | None) -> list[Problem]:
    close = frame["close"].to_numpy(dtype="float64")
    adj = frame["adj_close"].to_numpy(dtype="float64")
    prev = np.r_[previous_close if previous_close else np.nan, close[:-1]]
    prev_adj = np.r_[np.nan, adj[:-1]]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = close / prev
        adj_ratio = adj / prev_adj
    big = (ratio > JUMP_RATIO) | (ratio < 1 / JUMP_RATIO)
    adj_big = (adj_ratio > JUMP_RATIO) | (adj_ratio < 1 / JUMP_RATIO) | np.isnan(adj_ratio)
    flagged = big & adj_big & (close > 0) & (prev > 0)
    return [
        (day, "close", f"split-like jump x{r:.2f} in close on {_day(day)} (no split in adj_close)")
        for day, r in zip(frame["date"][flagged], ratio[flagged], strict=True)
    ]


def _in_month(frame: pd.DataFrame, month: date) -> pd.DataFrame:
    lo, hi = pd.Timestamp(month), pd.Timestamp(month_end(month))
    return frame[(frame["date"] >= lo) & (frame["date"] < hi)]


def month_verdicts(
    frame: pd.DataFrame,
    months: Sequence[date],
    issues: Iterable[BarIssue] = (),
    accepted_days: Iterable[pd.Timestamp] = (),
    previous_close: float | None = None,
) -> dict[date, list[str]]:
    """Blocking problems per month of ``months`` (months without problems are absent).

    ``frame`` is a normalized frame covering the months (and optionally earlier rows,
    which serve as previous closes); ``issues`` come from ``normalize_bars_checked``;
    problems dated on an ``accepted_days`` day are dropped (corrections file).
    """
    wanted = sorted(months)
    accepted = {pd.Timestamp(d) for d in accepted_days}
    verdicts: dict[date, list[str]] = {}
    issues = list(issues)
    whole_table = [i.problem for i in issues if i.date is None]
    absent = {i.column for i in issues if i.date is None and i.column}
    seen = {(i.date, i.column) for i in issues if i.date is not None and i.column}
    derived = [  # a NaN that an issue already explains (text, missing column) is not repeated
        p for p in row_problems(frame, previous_close) if p[1] not in absent and (p[0], p[1]) not in seen
    ]
    dated = [(i.date, i.column, i.problem) for i in issues if i.date is not None]
    for day, _column, problem in sorted([*dated, *derived], key=lambda x: x[0]):
        if day in accepted:
            continue
        month = day.date().replace(day=1)
        if month in wanted:
            verdicts.setdefault(month, []).append(problem)
    for month in wanted:
        if whole_table and not _in_month(frame, month).empty:
            verdicts[month] = [*whole_table, *verdicts.get(month, [])]
    return {m: list(dict.fromkeys(p)) for m, p in sorted(verdicts.items())}


def missing_sessions(
    frame: pd.DataFrame, month: date, first_date: date | None, last_date: date | None
) -> str | None:
    """A note naming the month's sessions without a bar (within the symbol's history)."""
    expected = month_sessions(month)
    lo = pd.Timestamp(first_date) if first_date else pd.Timestamp(month)
    hi = pd.Timestamp(last_date) if last_date else pd.Timestamp(month_end(month))
    expected = expected[(expected >= lo) & (expected <= hi)]
    missing = expected.difference(pd.DatetimeIndex(frame["date"]))
    if not len(missing):
        return None
    shown = ", ".join(d.strftime("%Y-%m-%d") for d in missing[:5])
    return f"{len(missing)} session(s) missing: {shown}"


def stored_problems_by_month(frame: pd.DataFrame) -> dict[date, list[str]]:
    """The blocking problems of every month of ``frame`` (normalized bars, sorted by date) in one
    pass: {month start: problems}, healthy months absent. Each row is judged against the row
    before it, so a month's first day has the previous month's close (and adjusted close)."""
    found: dict[date, list[str]] = {}
    if frame.empty:
        return found
    for day, _column, problem in row_problems(frame.reset_index(drop=True)):
        found.setdefault(day.date().replace(day=1), []).append(problem)
    duplicated = frame.loc[frame["date"].duplicated(keep=False), "date"]
    for month in sorted({d.date().replace(day=1) for d in duplicated}):
        found[month] = ["duplicate dates", *found.get(month, [])]
    return found


def indicator_problems(frame: pd.DataFrame, sessions_before: pd.Series) -> list[str]:
    """Indicator sanity: RSI in [0, 100]; no value before enough history.

    ``sessions_before`` gives, per row, how many bars of the symbol exist up to and
    including that row's date.
    """
    from stocker_core.market.indicators import INDICATOR_COLUMNS, MIN_HISTORY

    problems: list[str] = []
    rsi = frame["rsi14"].dropna()
    if ((rsi < 0) | (rsi > 100)).any():
        problems.append("RSI outside [0, 100]")
    for column in INDICATOR_COLUMNS:
        early = frame[column].notna() & (sessions_before.to_numpy() < MIN_HISTORY[column])
        if early.any():
            problems.append(f"{column} has values before {MIN_HISTORY[column]} sessions of history")
    return problems
