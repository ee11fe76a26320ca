"""Per-ticker, per-month builds of the market tables (called by the Dagster assets)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pandas as pd

from stocker_core.data_sources import MarketDataSource
from stocker_core.market.calendar import month_end
from stocker_core.market.indicators import LOOKBACK_MONTHS, indicators_by_month
from stocker_core.market.sources import slice_dates
from stocker_core.market.validation import partition_key
from stocker_core.warehouse.db import Warehouse, frame_version


@dataclass
class MonthBuild:
    """What one build wrote, per partition key."""

    rows: dict[str, int] = field(default_factory=dict)
    data_versions: dict[str, str] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def merge(self, other: MonthBuild) -> None:
        self.rows.update(other.rows)
        self.data_versions.update(other.data_versions)
        self.empty.extend(other.empty)
        self.notes.extend(other.notes)


def _month_of(frame: pd.DataFrame, month: date) -> pd.DataFrame:
    return slice_dates(frame, month, month_end(month))


def follows_prices(warehouse: Warehouse, ticker: str):
    """``reason(YYYY-MM, stored, new)`` for a table with one row per stored bar (indicators,
    charts): a month may shrink to exactly the bars ``market.prices`` holds for it (which
    never shrink without a reason of their own); any other shrink is refused."""

    def reason(label: str, stored: int, new: int) -> str | None:
        bars = warehouse.stored_rows("market.prices", ticker, label)
        return f"follows market.prices ({bars} bars in {label})" if new == bars else None

    return reason


def _write_months(
    warehouse: Warehouse, table: str, ticker: str, months: Sequence[date], frame: pd.DataFrame
) -> MonthBuild:
    """Replace each non-empty month of ``frame``; months with no rows keep what is stored. A
    month shrinks only to the bars ``market.prices`` holds for it (``follows_prices``)."""
    build = MonthBuild()
    filled: list[date] = []
    for month in months:
        key = partition_key(ticker, month)
        part = _month_of(frame, month)
        if part.empty:
            build.empty.append(key)
            continue
        filled.append(month)
        build.rows[key] = len(part)
        build.data_versions[key] = frame_version(part)
    if filled:
        mask = pd.Series(False, index=frame.index)
        for month in filled:
            mask |= (frame["date"] >= pd.Timestamp(month)) & (frame["date"] < pd.Timestamp(month_end(month)))
        warehouse.replace_months(
            table, ticker, filled, frame.loc[mask], shrink_reason=follows_prices(warehouse, ticker)
        )
    return build


def build_prices(
    source: MarketDataSource, warehouse: Warehouse, ticker: str, months: Sequence[date]
) -> MonthBuild:
    """Fetch ``months`` of bars for ``ticker`` in one request and store them.

    A month with no sessions for the symbol (before listing, after delisting, or
    the source has none) is reported as empty and leaves stored rows untouched.
    """
    months = sorted(months)
    frame = source.fetch(ticker, months[0], month_end(months[-1]))
    info = source.symbol_info(ticker)
    warehouse.upsert_symbol(source.name, info)
    build = _write_months(warehouse, "market.prices", ticker, months, frame.assign(source=source.name))
    if build.empty:
        build.notes.append(
            f"{len(build.empty)} month(s) without sessions for {ticker} "
            f"(available {info.first_date} … {info.last_date}); stored rows kept"
        )
    return build


def lookback_start(first_month: date, lookback_months: int = LOOKBACK_MONTHS) -> date:
    """First day of a lookback of ``lookback_months`` before ``first_month``."""
    return (pd.Timestamp(first_month) - pd.DateOffset(months=lookback_months)).date()


def bars_with_lookback(
    source: MarketDataSource,
    warehouse: Warehouse,
    ticker: str,
    months: Sequence[date],
    lookback_months: int = LOOKBACK_MONTHS,
) -> tuple[pd.DataFrame, list[str]]:
    """Bars from ``lookback_months`` before the first month to the end of the last.

    Reads the warehouse; lookback months it lacks are read from the source (and
    reported), so a month's indicators or charts equal those over the full history.
    """
    months = sorted(months)
    start, end = lookback_start(months[0], lookback_months), month_end(months[-1])
    stored = warehouse.read_prices(ticker, start, end)
    notes: list[str] = []
    stored_months = set(pd.to_datetime(stored["date"]).dt.to_period("M")) if len(stored) else set()
    wanted = pd.period_range(start, months[-1], freq="M")
    missing = [p for p in wanted if p not in stored_months]
    if missing:
        fetched = source.fetch(ticker, start, end)
        fetched_months = set(fetched["date"].dt.to_period("M"))
        filled = [p for p in missing if p in fetched_months]
        if filled:
            extra = fetched[fetched["date"].dt.to_period("M").isin(filled)]
            stored = pd.concat([stored, extra], ignore_index=True).sort_values("date")
            notes.append(
                f"lookback months {filled[0]}…{filled[-1]} ({len(filled)}) read from the "
                f"{source.name} source (not in the warehouse yet)"
            )
    return stored.reset_index(drop=True), notes


def build_indicators(
    source: MarketDataSource, warehouse: Warehouse, ticker: str, months: Sequence[date]
) -> MonthBuild:
    """Compute each requested month's indicators over its own fixed lookback window (see
    ``indicators_by_month``: batch-independent values) and store them."""
    history, notes = bars_with_lookback(source, warehouse, ticker, months)
    values = indicators_by_month(history, months)
    build = _write_months(warehouse, "market.indicators", ticker, sorted(months), values)
    build.notes.extend(notes)
    return build


CHART_LOOKBACK_MONTHS = 6  # 59 earlier sessions in the window + 49 for SMA50 ≈ 5.2 months


def build_charts(
    source: MarketDataSource,
    warehouse: Warehouse,
    ticker: str,
    months: Sequence[date],
    out_dir: Path,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> MonthBuild:
    """Render every session's chart of ``months`` and index them in ``market.charts``
    (``progress(done, total)``: charts ready so far, see ``render_months``)."""
    from stocker_core.market.charts import render_months

    bars, notes = bars_with_lookback(source, warehouse, ticker, months, CHART_LOOKBACK_MONTHS)
    months = sorted(months)
    stored = warehouse.read_table("market.charts", ticker, months[0], month_end(months[-1]))
    previous = {
        d.date(): (h, sha)
        for d, h, sha in zip(
            stored.get("date", []), stored.get("input_hash", []), stored.get("sha256", []), strict=True
        )
        if isinstance(h, str) and h
    }
    rows = render_months(bars, ticker, months, out_dir, workers, previous, progress)
    redrawn = rows.attrs.get("redrawn", len(rows))
    notes.append(
        f"{redrawn} chart(s) drawn, {len(rows) - redrawn} unchanged (same inputs, intact file) reused"
    )
    rows = rows.assign(date=pd.to_datetime(rows["date"]))
    build = _write_months(warehouse, "market.charts", ticker, sorted(months), rows.drop(columns="ticker"))
    build.notes.extend(notes)
    for key in build.rows:  # a chart month's version is its files' hashes
        month_rows = rows[rows["date"].dt.strftime("%Y-%m-01") == key.split("|")[1]]
        build.data_versions[key] = frame_version(month_rows[["date", "sha256"]])
    return build
