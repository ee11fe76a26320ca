"""Asset checks: data quality per ticker × month partition."""

import dagster as dg
import pandas as pd

from stocker_assets.assets.market import DUCKDB_POOL, charts, indicators, prices
from stocker_assets.partitions import months_by_ticker, ticker_month_partitions
from stocker_assets.resources import StockerResource
from stocker_core.market.calendar import month_end, sessions_since
from stocker_core.market.charts import verify_chart
from stocker_core.market.quality import indicator_problems, price_problems
from stocker_core.market.validation import partition_key


def _result(problems: dict[str, list[str]], checked: int) -> dg.AssetCheckResult:
    lines = [f"- **{key}**: {'; '.join(p)}" for key, p in sorted(problems.items())]
    return dg.AssetCheckResult(
        passed=not problems,
        metadata={
            "partitions_checked": checked,
            "partitions_failing": len(problems),
            "problems": dg.MetadataValue.md("\n".join(lines[:100]) or "none"),
        },
    )


@dg.asset_check(
    asset=prices,
    partitions_def=ticker_month_partitions,
    pool=DUCKDB_POOL,
    description=(
        "high >= max(open, close), low <= min(open, close), positive prices, volume >= 0, "
        "unique dates, every NYSE session of the month present (within the symbol's history)."
    ),
)
def prices_are_valid(context: dg.AssetCheckExecutionContext, stocker: StockerResource) -> dg.AssetCheckResult:
    warehouse = stocker.warehouse()
    problems: dict[str, list[str]] = {}
    for ticker, months in months_by_ticker(context.partition_keys).items():
        symbol = warehouse.symbol_row(ticker) or {}
        first, last = symbol.get("first_date"), symbol.get("last_date")
        bars = warehouse.read_prices(ticker, months[0], month_end(months[-1]))
        for month in months:
            if first is not None and pd.Timestamp(month_end(month)) <= pd.Timestamp(first):
                continue  # before listing: nothing is expected
            part = bars[
                (bars["date"] >= pd.Timestamp(month)) & (bars["date"] < pd.Timestamp(month_end(month)))
            ]
            found = price_problems(part, month, first, last)
            if found:
                problems[partition_key(ticker, month)] = found
    return _result(problems, len(context.partition_keys))


@dg.asset_check(
    asset=indicators,
    partitions_def=ticker_month_partitions,
    pool=DUCKDB_POOL,
    description="RSI within [0, 100]; no indicator value before it has enough history.",
)
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
            part = values[
                (values["date"] >= pd.Timestamp(month)) & (values["date"] < pd.Timestamp(month_end(month)))
            ]
            if part.empty:
                continue
            counts = sessions_since(first, part["date"]) if first is not None else None
            if counts is None:
                continue  # symbol never recorded by prices: nothing to judge against
            found = indicator_problems(part.reset_index(drop=True), counts)
            if found:
                problems[partition_key(ticker, month)] = found
    return _result(problems, len(context.partition_keys))


@dg.asset_check(
    asset=charts,
    partitions_def=ticker_month_partitions,
    pool=DUCKDB_POOL,
    description="Every session of the month with a price bar has a chart: a readable 768×768 PNG.",
)
def charts_are_complete(
    context: dg.AssetCheckExecutionContext, stocker: StockerResource
) -> dg.AssetCheckResult:
    warehouse = stocker.warehouse()
    problems: dict[str, list[str]] = {}
    for ticker, months in months_by_ticker(context.partition_keys).items():
        start, end = months[0], month_end(months[-1])
        bars = warehouse.read_prices(ticker, start, end)
        index = warehouse.read_table("market.charts", ticker, start, end)
        charted = dict(zip(index["date"], index["path"], strict=True))
        for month in months:
            lo, hi = pd.Timestamp(month), pd.Timestamp(month_end(month))
            found = []
            days = bars["date"][(bars["date"] >= lo) & (bars["date"] < hi)]
            missing = [d for d in days if d not in charted]
            if missing:
                found.append(f"{len(missing)} session(s) without a chart: {missing[0]:%Y-%m-%d}…")
            bad = [p for d in days if d in charted and (p := verify_chart(charted[d]))]
            found.extend(bad[:3])
            if found:
                problems[partition_key(ticker, month)] = found
    return _result(problems, len(context.partition_keys))
