"""Market assets: daily bars, indicators and charts per ticker × month, stored in DuckDB
(group ``market``; their checks are ``market.checks``)."""

from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pandas as pd

from stocker_assets.definitions.automation import FOLLOWS_PRICES
from stocker_assets.definitions.factories import partitioned_asset
from stocker_assets.definitions.lineage import (
    attach_partition_metadata,
    combined_version,
    png_markdown,
    record_build,
)
from stocker_assets.definitions.partitions import month_window_mapping, months_by_ticker
from stocker_assets.definitions.progress import throttled_progress
from stocker_assets.definitions.resources import StockerResource
from stocker_core.data_sources import MarketDataSource
from stocker_core.errors import DataSourceError
from stocker_core.market.bars import prefetch_missing
from stocker_core.market.builds import (
    CHART_LOOKBACK_MONTHS,
    MonthBuild,
    build_charts,
    build_indicators,
)
from stocker_core.market.calendar import month_end
from stocker_core.market.charts import thumbnail_png
from stocker_core.market.gate import clean_segments, failed_partitions, ingest_prices
from stocker_core.market.indicators import INDICATOR_COLUMNS, LOOKBACK_MONTHS
from stocker_core.market.validation import partition_key
from stocker_core.warehouse import Warehouse

MARKET = "market"


def _summary(build: MonthBuild, partitions: int) -> dict[str, object]:
    """Run-wide facts, named ``run_*`` (each partition's own figures are attached to it)."""
    return {
        "run_partitions": partitions,
        "run_partitions_written": len(build.rows),
        "run_rows_written": sum(build.rows.values()),
        "run_empty_partitions": dg.MetadataValue.json(build.empty[:50]),
        "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in build.notes) or "none"),
    }


def _by_month(frame: pd.DataFrame, column: str = "date") -> dict[str, pd.DataFrame]:
    """Rows of one ticker's table split by month, keyed ``YYYY-MM-01``."""
    if frame.empty:
        return {}
    months = pd.to_datetime(frame[column]).dt.strftime("%Y-%m-01")
    return {month: part for month, part in frame.groupby(months, sort=True)}


def _stored_by_partition(
    warehouse: Warehouse, table: str, grouped: dict[str, list]
) -> dict[str, pd.DataFrame]:
    """{partition key: its stored rows of ``table``}, one read per ticker of the run."""
    found: dict[str, pd.DataFrame] = {}
    for ticker, months in grouped.items():
        stored = warehouse.read_table(table, ticker, months[0], month_end(months[-1]))
        for month, part in _by_month(stored).items():
            found[f"{ticker}|{month}"] = part
    return found


def _build_each_ticker(
    context: dg.AssetExecutionContext,
    warehouse: Warehouse,
    build_months: Callable[[str, list], MonthBuild],
    upstream_asset: str | None = None,
) -> tuple[MonthBuild, dict[str, list]]:
    """Run ``build_months(ticker, months)`` per ticker of the run and record lineage
    (with the same partitions of ``upstream_asset`` as upstream data versions)."""
    build = MonthBuild()
    grouped = months_by_ticker(context.partition_keys)
    name = context.asset_key.to_user_string()
    for i, (ticker, months) in enumerate(grouped.items(), start=1):
        context.log.info(f"[{i}/{len(grouped)}] {name} {ticker}: {len(months)} month(s)")
        part = build_months(ticker, months)
        upstream = None
        if upstream_asset is not None:
            keys = [partition_key(ticker, m) for m in months]
            versions = warehouse.latest_data_versions(upstream_asset, keys)
            upstream = {k: {f"{upstream_asset}@{k}": versions.get(k, "")} for k in keys}
        record_build(context, warehouse, part, upstream)
        build.merge(part)
    return build, grouped


def _skipping_failed(
    warehouse: Warehouse,
    lookback_months: int,
    build_months: Callable[[str, list], MonthBuild],
    skipped: dict[str, str],
) -> Callable[[str, list], MonthBuild]:
    """``build_months`` over the runs of months whose window (the month and its lookback)
    holds no partition that failed the blocking price checks; the others land in ``skipped``."""

    def build(ticker: str, months: list) -> MonthBuild:
        failed = failed_partitions(warehouse, ticker)
        segments, blocked = clean_segments(months, list(failed), lookback_months)
        for month, blocker in blocked.items():
            skipped[partition_key(ticker, month)] = (
                "failed the blocking price checks"
                if blocker == month
                else f"lookback holds {partition_key(ticker, blocker)}, which failed the price checks"
            )
        result = MonthBuild()
        for segment in segments:
            result.merge(build_months(ticker, segment))
        return result

    return build


def _skipped_metadata(skipped: dict[str, str]) -> dict[str, object]:
    return {
        "partitions_skipped": len(skipped),
        "skipped_partitions": dg.MetadataValue.json(dict(sorted(skipped.items())[:100])),
    }


def _prefetch_run(
    context: dg.AssetExecutionContext, source: MarketDataSource, warehouse: Warehouse
) -> dict[str, object]:
    """Ask a source that fetches in multi-ticker batches (yfinance) for all the run's tickers and
    months at once, so the per-ticker ingests read its download store; months the warehouse
    holds are not asked again. A failure is logged and each ticker is fetched on its own, as
    without it. Metadata of what it did (none for a source that cannot)."""
    grouped = months_by_ticker(context.partition_keys)
    months = [m for ms in grouped.values() for m in ms]
    try:
        report = prefetch_missing(source, warehouse, list(grouped), min(months), month_end(max(months)))
    except DataSourceError as exc:
        context.log.warning(f"the batched fetch failed; each ticker is fetched on its own: {exc}")
        return {"prefetch": f"failed: {str(exc)[:300]}"}
    if report is None:
        return {}
    context.log.info(
        f"fetched {len(grouped)} tickers in {report.batches} batch(es), {report.requests} request(s); "
        f"{len(report.up_to_date)} needed none"
    )
    return {
        "prefetch_batches": report.batches,
        "prefetch_requests": report.requests,
        "prefetch_up_to_date": len(report.up_to_date),
    }


@partitioned_asset(
    MARKET,
    "Daily OHLCV bars (table market.prices) from the configured source. Months that break a "
    "blocking price rule are quarantined (not stored; verdicts in market.quality).",
    kinds={"duckdb", "pandas"},
)
def prices(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    source, warehouse = stocker.market_source(), stocker.warehouse()
    failed: dict[str, list[str]] = {}
    kept: dict[str, str] = {}
    corrections: list[str] = []

    def ingest(ticker: str, months: list) -> MonthBuild:
        report = ingest_prices(source, warehouse, ticker, months)
        failed.update(report.failed)
        kept.update(report.kept)
        corrections.extend(report.corrections)
        return MonthBuild(report.rows, report.data_versions, report.empty, report.notes)

    fetched = _prefetch_run(context, source, warehouse)
    build, grouped = _build_each_ticker(context, warehouse, ingest)
    metadata = _summary(build, len(context.partition_keys))
    metadata["source"] = source.name
    metadata.update(fetched)
    metadata["run_partitions_quarantined"] = len(failed)
    metadata["quarantined"] = dg.MetadataValue.json(dict(sorted(failed.items())[:100]))
    metadata["corrections_applied"] = dg.MetadataValue.md("\n".join(f"- {c}" for c in corrections) or "none")
    stored = _stored_by_partition(warehouse, "market.prices", grouped) if build.rows else {}
    own = {
        key: {
            "first_date": str(part["date"].min().date()),
            "last_date": str(part["date"].max().date()),
            "preview": dg.MetadataValue.md(
                part.drop(columns=["ticker", "source"], errors="ignore").head(5).to_markdown(index=False)
            ),
        }
        for key, part in stored.items()
        if key in build.rows
    }
    reasons = {key: "quarantined: " + "; ".join(problems[:3]) for key, problems in failed.items()}
    reasons.update({key: f"kept as stored: {why}" for key, why in kept.items()})
    attach_partition_metadata(context, build, own, reasons)
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


@partitioned_asset(
    MARKET,
    "RSI14, MACD 12/26/9, SMA20/50/200, Bollinger 20/2, ATR14 (table market.indicators), "
    f"computed over {LOOKBACK_MONTHS} months of lookback.",
    deps=[dg.AssetDep(prices, partition_mapping=month_window_mapping(-LOOKBACK_MONTHS))],
    automation_condition=FOLLOWS_PRICES,
    kinds={"duckdb", "talib"},
)
def indicators(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    source, warehouse = stocker.market_source(), stocker.warehouse()
    skipped: dict[str, str] = {}
    build, grouped = _build_each_ticker(
        context,
        warehouse,
        _skipping_failed(
            warehouse,
            LOOKBACK_MONTHS,
            lambda ticker, months: build_indicators(source, warehouse, ticker, months),
            skipped,
        ),
        upstream_asset="prices",
    )
    metadata = _summary(build, len(context.partition_keys)) | _skipped_metadata(skipped)
    stored = _stored_by_partition(warehouse, "market.indicators", grouped) if build.rows else {}
    own = {
        key: {
            "latest": dg.MetadataValue.md(part[["date", *INDICATOR_COLUMNS]].tail(1).to_markdown(index=False))
        }
        for key, part in stored.items()
        if key in build.rows
    }
    attach_partition_metadata(context, build, own, {k: f"skipped: {why}" for k, why in skipped.items()})
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


CHARTS_ON_DEMAND = (
    "on demand (STOCKER_CHARTS=auto with a text-only council, or on_demand): no chart drawn here; "
    "the environment's observation draws a day's chart when asked. STOCKER_CHARTS=eager draws them all."
)


@partitioned_asset(
    MARKET,
    "768×768 candlestick PNG per trading day (60 sessions up to that day, volume, SMA20/50) "
    "under STOCKER_HOME/charts/<TICKER>/<DATE>.png, indexed in table market.charts.",
    deps=[dg.AssetDep(prices, partition_mapping=month_window_mapping(-CHART_LOOKBACK_MONTHS))],
    automation_condition=FOLLOWS_PRICES,
    kinds={"duckdb", "matplotlib"},
)
def charts(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    settings = stocker.settings()
    if not settings.charts_eager:
        return dg.MaterializeResult(
            metadata={
                "charts": dg.MetadataValue.text(CHARTS_ON_DEMAND),
                "partitions": len(context.partition_keys),
            },
            data_version=dg.DataVersion("on_demand"),
        )
    source, warehouse = stocker.market_source(), Warehouse(settings.warehouse_path)
    skipped: dict[str, str] = {}
    report = throttled_progress(context, "charts")
    build, grouped = _build_each_ticker(
        context,
        warehouse,
        _skipping_failed(
            warehouse,
            CHART_LOOKBACK_MONTHS,
            lambda ticker, months: build_charts(
                source,
                warehouse,
                ticker,
                months,
                settings.charts_dir,
                settings.chart_workers,
                progress=report,
            ),
            skipped,
        ),
        upstream_asset="prices",
    )
    metadata = _summary(build, len(context.partition_keys)) | _skipped_metadata(skipped)
    stored = _stored_by_partition(warehouse, "market.charts", grouped) if build.rows else {}
    own = {}
    for key, part in stored.items():
        if key not in build.rows:
            continue
        path = Path(part["path"].iloc[-1])
        own[key] = {
            "charts": len(part),
            "latest_chart": dg.MetadataValue.path(str(path)),
            "preview": png_markdown(thumbnail_png(path), path.name),
        }
    attach_partition_metadata(context, build, own, {k: f"skipped: {why}" for k, why in skipped.items()})
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))
