"""Market checks: data quality per ticker × month partition of prices, indicators and charts.

``prices_are_valid`` is blocking: when a partition fails it with ERROR severity, Dagster
does not run the downstream assets of that run. The explicit override is the run tag
``stocker/allow_failed_checks=true`` (``stocker materialize --allow-failed-checks``): the
check still fails, with WARN severity, and downstream assets run for the clean months
only (failed months are quarantined and skipped, see ``stocker_core.market.gate``).
"""

import json
from datetime import date

import dagster as dg
import pandas as pd

from stocker_assets.definitions.factories import partitioned_check, problem_lines
from stocker_assets.definitions.market.assets import charts, indicators, prices
from stocker_assets.definitions.partitions import months_by_ticker
from stocker_assets.definitions.resources import StockerResource
from stocker_core.market.calendar import month_end, sessions_since
from stocker_core.market.charts import verify_chart
from stocker_core.market.freshness import judged_as_of, ticker_freshness
from stocker_core.market.gate import quality_rows
from stocker_core.market.quality import indicator_problems, missing_sessions, stored_problems_by_month
from stocker_core.market.validation import partition_key

ALLOW_FAILED_CHECKS_TAG = "stocker/allow_failed_checks"
"""Run tag: ``true`` turns a failing blocking check into a warning (downstream still skips
the failed partitions)."""


def _result(problems: dict[str, list[str]], checked: int) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not problems,
        metadata={
            "partitions_checked": checked,
            "partitions_failing": len(problems),
            "problems": dg.MetadataValue.md(problem_lines(problems)),
        },
    )


def _month_rows(frame: pd.DataFrame, month) -> pd.DataFrame:
    lo, hi = pd.Timestamp(month), pd.Timestamp(month_end(month))
    return frame[(frame["date"] >= lo) & (frame["date"] < hi)]


def _stored_verdicts(stocker: StockerResource, ticker: str, months: list) -> tuple[dict, dict, dict]:
    """(failed, accepted, missing-session notes) per partition key of ``ticker``'s ``months``."""
    warehouse = stocker.warehouse()
    symbol = warehouse.symbol_row(ticker) or {}
    first, last = symbol.get("first_date"), symbol.get("last_date")
    verdicts = quality_rows(warehouse, ticker)
    recorded = {
        pd.Timestamp(m).date(): (status, json.loads(p or "[]"), json.loads(a or "[]"))
        for m, status, p, a in zip(
            verdicts["month"], verdicts["status"], verdicts["problems"], verdicts["accepted"], strict=True
        )
    }
    lookback_start = (pd.Timestamp(months[0]) - pd.DateOffset(months=1)).date()
    bars = warehouse.read_prices(ticker, lookback_start, month_end(months[-1]))
    # stored rows are judged again (rows written outside the gate cannot pass unseen), all
    # months in one pass: a month's first day is judged against the previous month's close
    judged = stored_problems_by_month(bars)
    by_month = dict(list(bars.groupby(bars["date"].dt.to_period("M")))) if len(bars) else {}
    failed, accepted, missing = {}, {}, {}
    for month in months:
        key = partition_key(ticker, month)
        status, problems, fine = recorded.get(month, ("unchecked", [], []))
        if first is not None and pd.Timestamp(month_end(month)) <= pd.Timestamp(first):
            continue  # before listing: nothing is expected
        stored = [p for p in judged.get(month, []) if p not in fine]
        found = list(dict.fromkeys([*(problems if status == "failed" else []), *stored]))
        if found:
            failed[key] = found
        if fine:
            accepted[key] = fine
        part = by_month.get(pd.Period(month, "M"), bars.iloc[:0])
        note = missing_sessions(part, month, first, last) if status != "failed" else None
        if note:
            missing[key] = [note]
    return failed, accepted, missing


@partitioned_check(
    prices,
    "Blocking. No duplicate dates, NaN or non-numeric values, missing OHLC column, non-positive "
    "price, high < low, open/close outside [low, high], negative volume, session off the XNYS "
    "calendar, or split-like jump (close ratio > 1.8 or < 1/1.8 that adj_close does not share). "
    "Failed months are quarantined; downstream skips them. Missing sessions are listed, not "
    "blocking. Override: run tag stocker/allow_failed_checks=true (severity WARN) or "
    "$STOCKER_HOME/corrections.csv.",
    blocking=True,
)
def prices_are_valid(context: dg.AssetCheckExecutionContext, stocker: StockerResource) -> dg.AssetCheckResult:
    failed: dict[str, list[str]] = {}
    accepted: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    for ticker, months in months_by_ticker(context.partition_keys).items():
        f, a, m = _stored_verdicts(stocker, ticker, months)
        failed.update(f)
        accepted.update(a)
        missing.update(m)
    allowed = context.run.tags.get(ALLOW_FAILED_CHECKS_TAG, "").lower() == "true"
    severity = dg.AssetCheckSeverity.WARN if allowed else dg.AssetCheckSeverity.ERROR
    return dg.AssetCheckResult(
        passed=not failed,
        severity=severity,
        metadata={
            "partitions_checked": len(context.partition_keys),
            "partitions_failing": len(failed),
            "failed_partitions": dg.MetadataValue.json(sorted(failed)),
            "failures": dg.MetadataValue.json(dict(sorted(failed.items())[:100])),
            "problems": dg.MetadataValue.md(problem_lines(failed)),
            "accepted_by_corrections": dg.MetadataValue.md(problem_lines(accepted)),
            "missing_sessions": dg.MetadataValue.md(problem_lines(missing)),
            "override": "allow_failed_checks (failed partitions excluded downstream)" if allowed else "none",
        },
    )


@partitioned_check(indicators, "RSI within [0, 100]; no indicator value before it has enough history.")
def indicators_are_sane(
    context: dg.AssetCheckExecutionContext, stocker: StockerResource
) -> dg.AssetCheckResult:
    warehouse = stocker.warehouse()
    problems: dict[str, list[str]] = {}
    for ticker, months in months_by_ticker(context.partition_keys).items():
        values = warehouse.read_table("market.indicators", ticker, months[0], month_end(months[-1]))
        symbol = warehouse.symbol_row(ticker) or {}
        first = symbol.get("first_date")
        for month in months:
            part = _month_rows(values, month)
            if part.empty:
                continue
            counts = sessions_since(first, part["date"]) if first is not None else None
            if counts is None:
                continue  # symbol never recorded by prices: nothing to judge against
            found = indicator_problems(part.reset_index(drop=True), counts)
            if found:
                problems[partition_key(ticker, month)] = found
    return _result(problems, len(context.partition_keys))


@partitioned_check(charts, "Every session of the month with a price bar has a chart: a readable 768×768 PNG.")
def charts_are_complete(
    context: dg.AssetCheckExecutionContext, stocker: StockerResource
) -> dg.AssetCheckResult:
    if not stocker.settings().charts_eager:  # charts are drawn on demand: none to check
        return dg.AssetCheckResult(passed=True, metadata={"charts": "on demand: not drawn by the asset"})
    warehouse = stocker.warehouse()
    problems: dict[str, list[str]] = {}
    for ticker, months in months_by_ticker(context.partition_keys).items():
        start, end = months[0], month_end(months[-1])
        bars = warehouse.read_prices(ticker, start, end)
        index = warehouse.read_table("market.charts", ticker, start, end)
        charted = dict(zip(index["date"], index["path"], strict=True))
        for month in months:
            found = []
            days = _month_rows(bars, month)["date"]
            missing = [d for d in days if d not in charted]
            if missing:
                found.append(f"{len(missing)} session(s) without a chart: {missing[0]:%Y-%m-%d}…")
            bad = [p for d in days if d in charted and (p := verify_chart(charted[d]))]
            found.extend(bad[:3])
            if found:
                problems[partition_key(ticker, month)] = found
    return _result(problems, len(context.partition_keys))


def _stored_date(value: object) -> date | None:
    """A market.symbols date cell as a date (None when empty)."""
    return pd.Timestamp(value).date() if value is not None and pd.notna(value) else None


_FRESHNESS_SEVERITY = {"warn": dg.AssetCheckSeverity.WARN, "error": dg.AssetCheckSeverity.ERROR}


@partitioned_check(
    prices,
    "Freshness per ticker against the NYSE calendar: completed sessions (close passed, early "
    "closes included) of the run's latest month, up to now, with no stored bar — counted from "
    "the last stored bar when the feed stopped earlier. A fixed data set (the sample, the "
    "synthetic market) is judged as of its symbol's last day, not now. 1–3 missing: WARN; "
    "more than 3: ERROR. Runs with every prices run, so the 18:30 corpus refresh checks each "
    "ticker's current month.",
)
def prices_are_fresh(context: dg.AssetCheckExecutionContext, stocker: StockerResource) -> dg.AssetCheckResult:
    warehouse = stocker.warehouse()
    now = pd.Timestamp.now(tz="UTC")
    verdicts = []
    for ticker, months in months_by_ticker(context.partition_keys).items():
        month = months[-1]
        bars = warehouse.read_prices(ticker, None, month_end(month))
        row = warehouse.symbol_row(ticker) or {}
        first, last = (_stored_date(row.get(k)) for k in ("first_date", "last_date"))
        as_of = judged_as_of(row.get("source"), last, now)
        verdicts.append(ticker_freshness(ticker, bars["date"], month, as_of, first))
    worst = max((v.severity for v in verdicts), key=["ok", "warn", "error"].index, default="ok")
    rows = [v.as_dict() for v in verdicts]
    table = pd.DataFrame(rows, columns=["ticker", "last_bar", "as_of", "missing_sessions", "severity"])
    return dg.AssetCheckResult(
        passed=worst == "ok",
        severity=_FRESHNESS_SEVERITY.get(worst, dg.AssetCheckSeverity.WARN),
        metadata={
            "tickers_checked": len(verdicts),
            "tickers_stale": sum(v.severity != "ok" for v in verdicts),
            "max_missing_sessions": max((len(v.missing) for v in verdicts), default=0),
            "as_of": now.isoformat(timespec="seconds"),
            "per_ticker": dg.MetadataValue.md(table.to_markdown(index=False) if rows else "none"),
            "missing": dg.MetadataValue.json(
                {v.ticker: v.as_dict()["missing"] for v in verdicts if v.missing}
            ),
        },
    )
