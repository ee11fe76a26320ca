"""The quality gate between the market data source and everything downstream.

- ``QualityGatedSource`` wraps the configured source: ``fetch`` refuses (DataQualityError)
  any range touching a month that fails the blocking rules of ``quality``, so no reader
  (indicators, charts, episodes, votes, training, backtests) can fall back to bad bars;
  ``inspect`` returns the bars with their verdicts for the ingest.
- ``ingest_prices`` stores only months that pass, removes stored rows of months that fail,
  and records every verdict in ``market.quality``. Stored data never shrinks behind the
  user's back: a month that would be replaced with fewer bars than it holds is refused
  (``PartitionShrinkError``) unless a reason comes with it (the blocking checks failed, or a
  ``row,drop`` correction removes those bars), and under ``STOCKER_CLOCK`` a month stored with
  bars after the clock is kept as stored (the clock's view of it is a part of it).
- ``failed_partitions`` / ``clean_segments`` let downstream builds skip failed months and
  months whose lookback window contains one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import pandas as pd

from stocker_core.data_sources import MarketDataSource, SymbolInfo, prefetch
from stocker_core.market.calendar import month_end
from stocker_core.market.corrections import Correction, apply_corrections
from stocker_core.market.frames import BarIssue
from stocker_core.market.quality import DataQualityError, month_verdicts
from stocker_core.market.sources import slice_dates
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

    def prefetch(self, tickers: list[str], start: date, end: date, held=None) -> object | None:
        """The inner source's batch prefetch (``data_sources.prefetch``); what it stores is
        judged when ``fetch`` reads it, as always."""
        return prefetch(self.inner, tickers, start, end, held)

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
    """Per partition written, and per partition ``kept``: the version of what it holds."""
    empty: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)
    accepted: dict[str, list[str]] = field(default_factory=dict)
    corrections: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    """Partitions left as stored, with why: under ``STOCKER_CLOCK``, months whose stored bars
    reach past the clock (the source shows only the part before it). Nothing was written."""


def clock_limit(source: object) -> date | None:
    """The last session a clock-limited source reveals (``clock.ClockedSource`` anywhere in
    ``source``'s chain of wrapped sources), or None when no clock limits it."""
    from stocker_core.market.clock import ClockedSource

    seen = 0
    while source is not None and seen < 10:
        if isinstance(source, ClockedSource):
            return source.last_day
        source, seen = getattr(source, "inner", None), seen + 1
    return None


def _drop_reason(source: QualityGatedSource, ticker: str):
    """``reason(YYYY-MM, stored, new)`` for ``replace_months``: the ``row,drop`` corrections of
    that month when they account for the rows missing, else None (refused)."""
    drops: dict[str, list[Correction]] = {}
    for fix in getattr(source, "corrections", []):
        if fix.ticker == ticker and fix.column == "row" and fix.value == "drop":
            drops.setdefault(f"{fix.date:%Y-%m}", []).append(fix)

    def reason(label: str, stored: int, new: int) -> str | None:
        fixes = drops.get(label, [])
        if not fixes or stored - new > len(fixes):
            return None
        return "corrections: " + "; ".join(f.describe() for f in fixes)

    return reason


def _kept_under_clock(
    warehouse: Warehouse, ticker: str, months: Sequence[date], last_day: date
) -> dict[date, pd.DataFrame]:
    """Of ``months``, those whose stored bars reach past ``last_day`` (the clock's last
    session), with their stored bars: a clock-limited read must leave them as they are."""
    kept: dict[date, pd.DataFrame] = {}
    reaching = [m for m in months if month_end(m) > last_day + timedelta(days=1)]
    if not reaching:
        return kept
    stored = warehouse.read_prices(ticker, min(reaching), month_end(max(reaching)))
    for month in reaching:
        part = slice_dates(stored, month, month_end(month)).reset_index(drop=True)
        if len(part) and part["date"].max().date() > last_day:
            kept[month] = part
    return kept


def _keep_symbol_row(warehouse: Warehouse, source: str, info: SymbolInfo, last_day: date | None) -> bool:
    """Whether a clock-limited ingest must leave ``market.symbols`` as stored: it already
    records the same source with history past the clock's view."""
    if last_day is None:
        return False
    row = warehouse.symbol_row(info.ticker)
    if not row or row.get("source") != source or row.get("last_date") is None:
        return False
    return pd.Timestamp(row["last_date"]).date() > info.last_date


def ingest_prices(
    source: QualityGatedSource, warehouse: Warehouse, ticker: str, months: Sequence[date]
) -> IngestReport:
    """Fetch ``months`` of ``ticker`` once; store the months that pass, quarantine the rest.

    A failed month's stored rows are removed (a failed partition has no bars in the
    warehouse); a month without sessions leaves stored rows untouched. A month is never
    replaced by fewer bars than it holds unless a ``row,drop`` correction accounts for them
    (PartitionShrinkError naming the partition and the counts; nothing written). Under
    ``STOCKER_CLOCK``, a month whose stored bars reach past the clock is kept as stored, its
    verdict and ``market.symbols`` too (``report.kept``, and one note per ticker).
    """
    months = sorted(months)
    inspection = source.inspect(ticker, months[0], month_end(months[-1]))
    info = source.symbol_info(ticker)
    last_day = clock_limit(source)
    keep_symbol = _keep_symbol_row(warehouse, source.name, info, last_day)
    report = IngestReport(corrections=inspection.corrections)
    kept = _kept_under_clock(warehouse, ticker, months, last_day) if last_day else {}
    if kept:
        _report_kept(report, warehouse, ticker, kept, inspection, last_day)
    months = [m for m in months if m not in kept]
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
    quarantined = [m for m in months if m in inspection.failed]
    if clean:
        stored = pd.concat(parts, ignore_index=True).assign(source=source.name)
        warehouse.replace_months(
            "market.prices", ticker, clean, stored, shrink_reason=_drop_reason(source, ticker)
        )
    if quarantined:
        warehouse.replace_months(
            "market.prices",
            ticker,
            quarantined,
            pd.DataFrame(),
            allow_empty=True,
            shrink_reason="quarantined: the month failed the blocking price checks",
        )
    if not keep_symbol:  # after the writes: a refused one leaves the symbol's row as it was
        warehouse.upsert_symbol(source.name, info)
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


def _report_kept(
    report: IngestReport,
    warehouse: Warehouse,
    ticker: str,
    kept: dict[date, pd.DataFrame],
    inspection: Inspection,
    last_day: date,
) -> None:
    """Name the months kept as stored under the clock, with the version of what they hold
    (their latest ``prices`` lineage version, else a hash of the stored bars)."""
    keys = {month: partition_key(ticker, month) for month in kept}
    recorded = warehouse.latest_data_versions("prices", list(keys.values()))
    counts = []
    for month, part in kept.items():
        key = keys[month]
        shown = len(slice_dates(inspection.frame, month, month_end(month)))
        report.kept[key] = (
            f"kept as stored: {len(part)} bars through {part['date'].max():%Y-%m-%d}; the source "
            f"under STOCKER_CLOCK shows {shown} (through {last_day})"
        )
        report.data_versions[key] = recorded.get(key) or frame_version(part)
        counts.append(f"{key.split('|')[1][:7]} ({len(part)} stored, {shown} under the clock)")
    report.notes.append(
        f"{len(kept)} month(s) of {ticker} kept as stored, not rewritten: the source under "
        f"STOCKER_CLOCK shows bars up to {last_day} only: {', '.join(counts)}"
    )


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
