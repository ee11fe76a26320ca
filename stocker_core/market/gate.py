"""The quality gate between the market data source and everything downstream.

- ``QualityGatedSource`` wraps the configured source: ``fetch`` refuses (DataQualityError)
  any range touching a month that fails the blocking rules of ``quality``, so no reader
  (indicators, charts, episodes, votes, training, backtests) can fall back to bad bars;
  ``inspect`` returns the bars with their verdicts for the ingest.
- ``ingest_prices`` stores only months that pass, removes stored rows of months that fail,
  and records every verdict in ``market.quality``.
- ``failed_partitions`` / ``clean_segments`` let downstream builds skip failed months and
  months whose lookback window contains one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import pandas as pd

from stocker_core.market.calendar import month_end
from stocker_core.market.corrections import Correction, apply_corrections
from stocker_core.market.frames import BarIssue
from stocker_core.market.quality import DataQualityError, month_verdicts
from stocker_core.market.sources import MarketDataSource, SymbolInfo, slice_dates
from stocker_core.market.validation import partition_key
from stocker_core.warehouse.db import Warehouse, frame_version

QUALITY_TABLE = "market.quality"


def month_start(day: date | pd.Timestamp) -> date:
    """First day of the month of ``day``."""
    return pd.Timestamp(day).date().replace(day=1)


def months_between(start: date, end: date) -> list[date]:
    """Month starts of every month overlapping ``start <= day < end``."""
    last = (pd.Timestamp(end) - pd.Timedelta(days=1)).date()
    if last < start:
        return []
    return [p.to_timestamp().date() for p in pd.period_range(start, last, freq="M")]


@dataclass
class Inspection:
    """Bars of whole months with their blocking verdicts (after corrections)."""

    frame: pd.DataFrame
    failed: dict[date, list[str]] = field(default_factory=dict)
    accepted: dict[date, list[str]] = field(default_factory=dict)
    corrections: list[str] = field(default_factory=list)

    def failed_keys(self, ticker: str) -> dict[str, list[str]]:
        return {partition_key(ticker, m): p for m, p in self.failed.items()}


class QualityGatedSource:
    """A market source whose ``fetch`` never hands out bars of a failed month."""

    def __init__(self, inner: MarketDataSource, corrections: Sequence[Correction] = ()) -> None:
        self.inner = inner
        self.name = inner.name
        self.corrections = list(corrections)
        self._static = hasattr(inner, "bar_issues")  # in-memory tables: judge each symbol once
        self._judged: dict[str, Inspection] = {}

    def symbol_info(self, ticker: str) -> SymbolInfo:
        return self.inner.symbol_info(ticker)

    def symbols(self) -> list[str]:
        return self.inner.symbols()

    def _issues(self, ticker: str, start: date, end: date) -> list[BarIssue]:
        known = getattr(self.inner, "bar_issues", None)
        issues = known(ticker) if known is not None else []
        lo, hi = pd.Timestamp(start), pd.Timestamp(end)
        return [i for i in issues if i.date is None or lo <= i.date < hi]

    def inspect(self, ticker: str, start: date, end: date) -> Inspection:
        """Whole months overlapping ``start <= day < end`` (plus the month before, for the
        first day's jump rule), corrected, with each month's blocking problems."""
        months = months_between(start, end)
        if not months:
            return Inspection(self.inner.fetch(ticker, start, end))
        lo = (pd.Timestamp(months[0]) - pd.DateOffset(months=1)).date()
        hi = month_end(months[-1])
        raw = self.inner.fetch(ticker, lo, hi)
        fixes = [c for c in self.corrections if c.ticker == ticker]
        corrected = apply_corrections(raw, self._issues(ticker, lo, hi), fixes)
        strict = month_verdicts(corrected.frame, months, corrected.issues)
        failed = month_verdicts(corrected.frame, months, corrected.issues, corrected.accepted_days)
        accepted = {m: [p for p in ps if p not in failed.get(m, [])] for m, ps in strict.items()}
        return Inspection(
            slice_dates(corrected.frame, months[0], hi),
            failed,
            {m: ps for m, ps in accepted.items() if ps},
            corrected.applied,
        )

    def _whole_history(self, ticker: str) -> Inspection:
        if ticker not in self._judged:
            info = self.inner.symbol_info(ticker)
            self._judged[ticker] = self.inspect(ticker, info.first_date, month_end(info.last_date))
        return self._judged[ticker]

    def fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        """Bars with ``start <= date < end``; DataQualityError if a month of it fails."""
        if self._static:
            inspection = self._whole_history(ticker)
            wanted = set(months_between(start, end))
            failed = {m: p for m, p in inspection.failed.items() if m in wanted}
        else:
            inspection = self.inspect(ticker, start, end)
            failed = inspection.failed
        if failed:
            raise DataQualityError(
                describe_failures({partition_key(ticker, m): p for m, p in failed.items()})
            )
        return slice_dates(inspection.frame, start, end)


def describe_failures(failed: dict[str, list[str]], limit: int = 10) -> str:
    """One readable message naming each failed partition and why."""
    lines = [f"{key}: {'; '.join(problems[:5])}" for key, problems in sorted(failed.items())[:limit]]
    more = f" (and {len(failed) - limit} more)" if len(failed) > limit else ""
    return (
        f"{len(failed)} partition(s) failed the blocking price checks{more}; their bars are not used: "
        + " | ".join(lines)
        + ". Fix the source data, or add a reasoned fix to $STOCKER_HOME/corrections.csv"
    )


@dataclass
class IngestReport:
    """What one ticker's ingest stored and refused."""

    rows: dict[str, int] = field(default_factory=dict)
    data_versions: dict[str, str] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)
    accepted: dict[str, list[str]] = field(default_factory=dict)
    corrections: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def ingest_prices(
    source: QualityGatedSource, warehouse: Warehouse, ticker: str, months: Sequence[date]
) -> IngestReport:
    """Fetch ``months`` of ``ticker`` once; store the months that pass, quarantine the rest.

    A failed month's stored rows are removed (a failed partition has no bars in the
    warehouse); a month without sessions leaves stored rows untouched.
    """
    months = sorted(months)
    inspection = source.inspect(ticker, months[0], month_end(months[-1]))
    info = source.symbol_info(ticker)
    warehouse.upsert_symbol(source.name, info)
    report = IngestReport(corrections=inspection.corrections)
    clean: list[date] = []
    parts: list[pd.DataFrame] = []
    for month in months:
        key = partition_key(ticker, month)
        part = slice_dates(inspection.frame, month, month_end(month))
        if month in inspection.failed:
            report.failed[key] = inspection.failed[month]
        elif part.empty:
            report.empty.append(key)
        else:
            clean.append(month)
            parts.append(part)
            report.rows[key] = len(part)
            report.data_versions[key] = frame_version(part)
            if month in inspection.accepted:
                report.accepted[key] = inspection.accepted[month]
    if clean:
        stored = pd.concat(parts, ignore_index=True).assign(source=source.name)
        warehouse.replace_months("market.prices", ticker, clean, stored)
    quarantined = [m for m in months if m in inspection.failed]
    if quarantined:
        warehouse.replace_months("market.prices", ticker, quarantined, pd.DataFrame(), allow_empty=True)
    checked = [m for m in months if partition_key(ticker, m) not in report.empty]
    record_verdicts(warehouse, ticker, source.name, checked, inspection)
    if report.empty:
        report.notes.append(
            f"{len(report.empty)} month(s) without sessions for {ticker} "
            f"(available {info.first_date} … {info.last_date}); stored rows kept"
        )
    if report.failed:
        report.notes.append(
            f"{len(report.failed)} month(s) of {ticker} quarantined: failed the blocking checks"
        )
    return report


def record_verdicts(
    warehouse: Warehouse, ticker: str, source: str, months: Sequence[date], inspection: Inspection
) -> None:
    """Replace ``market.quality`` rows of ``months``: failed, accepted (with reasons) or passed."""
    if not months:
        return
    now = datetime.now()
    rows = []
    for month in months:
        status = (
            "failed"
            if month in inspection.failed
            else "accepted"
            if month in inspection.accepted
            else "passed"
        )
        rows.append(
            [
                ticker,
                month,
                status,
                json.dumps(inspection.failed.get(month, [])),
                json.dumps(inspection.accepted.get(month, [])),
                source,
                now,
            ]
        )
    with warehouse.transaction() as con:
        con.executemany(
            f"DELETE FROM {QUALITY_TABLE} WHERE ticker = ? AND month = ?", [[ticker, m] for m in months]
        )
        con.executemany(f"INSERT INTO {QUALITY_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def quality_rows(warehouse: Warehouse, ticker: str) -> pd.DataFrame:
    """``market.quality`` rows of ``ticker`` (empty when nothing was checked yet)."""
    if not warehouse.path.exists():
        return pd.DataFrame(columns=["month", "status", "problems", "accepted"])
    tables = warehouse.query(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'market' "
        "AND table_name = 'quality'"
    )
    if not int(tables["n"].iloc[0]):
        return pd.DataFrame(columns=["month", "status", "problems", "accepted"])
    return warehouse.query(
        f"SELECT month, status, problems, accepted FROM {QUALITY_TABLE} WHERE ticker = ? ORDER BY month",
        [ticker],
    )


def failed_partitions(warehouse: Warehouse, ticker: str) -> dict[date, list[str]]:
    """Months of ``ticker`` whose last ingest failed the blocking checks, with the problems."""
    rows = quality_rows(warehouse, ticker)
    failed = rows[rows["status"] == "failed"]
    return {
        pd.Timestamp(m).date(): json.loads(p)
        for m, p in zip(failed["month"], failed["problems"], strict=True)
    }


def clean_segments(
    months: Sequence[date], failed: Sequence[date], lookback_months: int
) -> tuple[list[list[date]], dict[date, date]]:
    """Split ``months`` into runs of consecutive buildable months.

    A month is buildable when no failed month lies in its window (the month and the
    ``lookback_months`` before it). Returns the runs and, per skipped month, the failed
    month that blocks it.
    """
    bad = sorted(set(failed))
    segments: list[list[date]] = []
    skipped: dict[date, date] = {}
    previous: date | None = None
    for month in sorted(months):
        window_start = (pd.Timestamp(month) - pd.DateOffset(months=lookback_months)).date()
        blocker = next((b for b in bad if window_start <= b <= month), None)
        if blocker is not None:
            skipped[month] = blocker
            previous = None
            continue
        expected = (pd.Timestamp(previous) + pd.DateOffset(months=1)).date() if previous else None
        if previous is None or month != expected:
            segments.append([])
        segments[-1].append(month)
        previous = month
    return segments, skipped
