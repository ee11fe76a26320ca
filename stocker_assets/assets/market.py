"""Market group: daily bars and indicators per ticker × month, stored in DuckDB."""

import base64
from pathlib import Path

import dagster as dg
import pandas as pd

from stocker_assets.lineage import combined_version, record_build
from stocker_assets.partitions import month_window_mapping, months_by_ticker, ticker_month_partitions
from stocker_assets.resources import StockerResource
from stocker_core.market.indicators import INDICATOR_COLUMNS, LOOKBACK_MONTHS
from stocker_core.market.pipeline import (
    CHART_LOOKBACK_MONTHS,
    MonthBuild,
    build_charts,
    build_indicators,
    build_prices,
)
from stocker_core.market.validation import partition_key

MARKET = "market"
DUCKDB_POOL = "duckdb"


def _summary(build: MonthBuild, partitions: int) -> dict[str, object]:
    return {
        "partitions": partitions,
        "partitions_written": len(build.rows),
        "rows_written": sum(build.rows.values()),
        "empty_partitions": dg.MetadataValue.json(build.empty[:50]),
        "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in build.notes) or "none"),
    }


@dg.asset(
    partitions_def=ticker_month_partitions,
    group_name=MARKET,
    code_version="1",
    pool=DUCKDB_POOL,
    backfill_policy=dg.BackfillPolicy.single_run(),
    kinds={"duckdb", "pandas"},
    description="Daily OHLCV bars (table market.prices) from the configured source.",
)
def prices(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    source, warehouse = stocker.market_source(), stocker.warehouse()
    build = MonthBuild()
    grouped = months_by_ticker(context.partition_keys)
    for i, (ticker, months) in enumerate(grouped.items(), start=1):
        context.log.info(f"[{i}/{len(grouped)}] prices {ticker}: {len(months)} month(s)")
        part = build_prices(source, warehouse, ticker, months)
        record_build(context, warehouse, part)
        build.merge(part)
    metadata = _summary(build, len(context.partition_keys))
    metadata["source"] = source.name
    if len(context.partition_keys) == 1 and build.rows:
        ticker, months = next(iter(grouped.items()))
        sample = warehouse.read_prices(ticker, months[0]).head(5)
        metadata["preview"] = dg.MetadataValue.md(sample.to_markdown(index=False))
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


@dg.asset(
    partitions_def=ticker_month_partitions,
    group_name=MARKET,
    code_version="1",
    pool=DUCKDB_POOL,
    backfill_policy=dg.BackfillPolicy.single_run(),
    deps=[dg.AssetDep(prices, partition_mapping=month_window_mapping(-LOOKBACK_MONTHS))],
    kinds={"duckdb", "talib"},
    description=(
        "RSI14, MACD 12/26/9, SMA20/50/200, Bollinger 20/2, ATR14 (table market.indicators), "
        f"computed over {LOOKBACK_MONTHS} months of lookback."
    ),
)
def indicators(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    source, warehouse = stocker.market_source(), stocker.warehouse()
    build = MonthBuild()
    grouped = months_by_ticker(context.partition_keys)
    for i, (ticker, months) in enumerate(grouped.items(), start=1):
        context.log.info(f"[{i}/{len(grouped)}] indicators {ticker}: {len(months)} month(s)")
        part = build_indicators(source, warehouse, ticker, months)
        upstream_keys = [partition_key(ticker, m) for m in months]
        versions = warehouse.latest_data_versions("prices", upstream_keys)
        upstream = {k: {f"prices@{k}": versions.get(k, "")} for k in upstream_keys}
        record_build(context, warehouse, part, upstream)
        build.merge(part)
    metadata = _summary(build, len(context.partition_keys))
    if build.rows:
        last_ticker = list(grouped)[-1]
        latest = warehouse.read_table("market.indicators", last_ticker).tail(1)
        if len(latest):
            row = latest.iloc[0]
            metadata["latest"] = dg.MetadataValue.md(
                pd.DataFrame([row[["date", *INDICATOR_COLUMNS]]]).to_markdown(index=False)
            )
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


@dg.asset(
    partitions_def=ticker_month_partitions,
    group_name=MARKET,
    code_version="1",
    pool=DUCKDB_POOL,
    backfill_policy=dg.BackfillPolicy.single_run(),
    deps=[dg.AssetDep(prices, partition_mapping=month_window_mapping(-CHART_LOOKBACK_MONTHS))],
    kinds={"duckdb", "matplotlib"},
    description=(
        "768×768 candlestick PNG per trading day (60 sessions up to that day, volume, SMA20/50) "
        "under STOCKER_HOME/charts/<TICKER>/<DATE>.png, indexed in table market.charts."
    ),
)
def charts(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    source, warehouse = stocker.market_source(), stocker.warehouse()
    build = MonthBuild()
    grouped = months_by_ticker(context.partition_keys)
    for i, (ticker, months) in enumerate(grouped.items(), start=1):
        context.log.info(f"[{i}/{len(grouped)}] charts {ticker}: {len(months)} month(s)")
        part = build_charts(source, warehouse, ticker, months, stocker.charts_dir())
        record_build(context, warehouse, part)
        build.merge(part)
    metadata = _summary(build, len(context.partition_keys))
    if build.rows:
        ticker = list(grouped)[-1]
        latest = warehouse.read_table("market.charts", ticker).tail(1)
        if len(latest):
            path = Path(latest["path"].iloc[0])
            metadata["latest_chart"] = dg.MetadataValue.path(str(path))
            thumbnail = base64.b64encode(path.read_bytes()).decode()
            metadata["preview"] = dg.MetadataValue.md(f"![{path.name}](data:image/png;base64,{thumbnail})")
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))
