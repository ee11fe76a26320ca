"""The council domain: the specialists' cached votes per ticker × month (group ``council``) and
the job that builds them with the text events they read (groups ``text`` and ``council``)."""

import dagster as dg
import pandas as pd

from stocker_assets.definitions.automation import VOTES_FOLLOW_PRICES
from stocker_assets.definitions.factories import partitioned_asset
from stocker_assets.definitions.jobs import group_job
from stocker_assets.definitions.lineage import (
    attach_partition_metadata,
    bar_versions,
    combined_version,
    record_build,
    recorded_versions,
)
from stocker_assets.definitions.market.assets import charts, indicators, prices
from stocker_assets.definitions.partitions import month_window_mapping, months_by_ticker
from stocker_assets.definitions.progress import progress_message
from stocker_assets.definitions.queues import celery_queue_tags
from stocker_assets.definitions.resources import StockerResource
from stocker_assets.definitions.text import forum_posts, macro_events, news
from stocker_core.config import Settings
from stocker_core.council.backends import get_backend
from stocker_core.council.partition import role_summary, split_by_month, ticker_votes, vote_stats
from stocker_core.market.bars import load_bars
from stocker_core.market.builds import MonthBuild
from stocker_core.market.calendar import month_end
from stocker_core.market.indicators import LOOKBACK_MONTHS
from stocker_core.market.validation import parse_partition_key, partition_key
from stocker_core.text_events.store import warehouse_text
from stocker_core.warehouse.db import Warehouse, frame_version

COUNCIL = "council"


def _progress_logger(context: dg.AssetExecutionContext, ticker: str):
    """Log computed votes at every tenth of the work (read back by `stocker materialize`)."""

    def report(done: int, total: int) -> None:
        if done == total or done % max(1, total // 10) == 0:
            context.log.info(progress_message(done, total, f"{ticker} votes computed"))

    return report


def _vote_inputs(settings: Settings, warehouse: Warehouse, keys: list[str]) -> dict[str, dict[str, str]]:
    """Upstream data versions of each votes partition: its prices, indicators and charts
    partitions (recorded lineage; a month whose prices have none gets a hash of the bars
    read) and the stored text tables the analysts read."""
    upstream = recorded_versions(warehouse, ["prices", "indicators", "charts"], keys)
    text = warehouse_text(warehouse)
    text_versions = {}
    if text is not None:
        for name, frame in (("news", text.news), ("forum_posts", text.forums), ("macro_events", text.macro)):
            if len(frame):
                text_versions[name] = frame_version(frame)
    for key in keys:
        if f"prices@{key}" not in upstream[key]:
            ticker, month = parse_partition_key(key)
            bars, origin = load_bars(settings, ticker, month, month_end(month), warehouse)
            upstream[key].update(bar_versions(warehouse, ticker, [month], bars, origin))
        upstream[key].update(text_versions)
    return upstream


@partitioned_asset(
    COUNCIL,
    "One vote per role per trading day from the configured backend (STOCKER_COUNCIL_BACKEND), "
    "cached in council.votes by (role, backend, model, prompt version, ticker, date).",
    op_tags=celery_queue_tags("llm"),
    deps=[
        dg.AssetDep(prices, partition_mapping=month_window_mapping(-LOOKBACK_MONTHS)),
        indicators,
        charts,
        news,
        forum_posts,
        macro_events,
    ],
    automation_condition=VOTES_FOLLOW_PRICES,
    kinds={"duckdb"},
)
def specialist_votes(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    settings, warehouse = stocker.settings(), stocker.warehouse()
    backend = get_backend(settings)
    build = MonthBuild()
    own: dict[str, dict[str, object]] = {}
    frames, totals = [], {"hits": 0, "misses": 0, "parse_failures": 0, "uncached": 0}
    for ticker, months in months_by_ticker(context.partition_keys).items():
        context.log.info(f"{ticker}: votes for {len(months)} month(s) with backend {backend.name}")
        run = ticker_votes(
            settings,
            warehouse,
            backend,
            ticker,
            months,
            settings.council_workers,
            progress=_progress_logger(context, ticker),
        )
        if run is None:
            build.empty.extend(partition_key(ticker, m) for m in months)
            continue
        totals["uncached"] += run.stats.get("uncached", 0)
        by_month = split_by_month(run.votes)
        for month in months:
            key = partition_key(ticker, month)
            part = by_month.get(month)
            if part is None:
                build.empty.append(key)
                continue
            stats = vote_stats(part)
            for name, value in stats.items():
                totals[name] += value
            own[key] = {
                "votes": len(part),
                "cache_hits": stats["hits"],
                "cache_misses": stats["misses"],
                "parse_failures": stats["parse_failures"],
                "by_role": dg.MetadataValue.md(role_summary(part).to_markdown(index=False, floatfmt="+.3f")),
            }
            build.rows[key] = len(part)
            build.data_versions[key] = frame_version(part[["date", "role", "signal", "confidence"]])
        frames.append(run.votes)
    record_build(context, warehouse, build, _vote_inputs(settings, warehouse, list(build.rows)))
    attach_partition_metadata(context, build, own, dict.fromkeys(build.empty, "no data: no bars this month"))
    metadata: dict[str, object] = {
        "backend": backend.name,
        "model_id": backend.model_id,
        "run_cache_hits": totals["hits"],
        "run_cache_misses": totals["misses"],
        "run_parse_failures": totals["parse_failures"],
        "run_uncached_failures": totals["uncached"],
        "months_without_bars": dg.MetadataValue.json(build.empty[:50]),
    }
    if frames:
        summary = role_summary(pd.concat(frames, ignore_index=True))
        metadata["run_votes"] = int(summary["votes"].sum())
        metadata["run_by_role"] = dg.MetadataValue.md(summary.to_markdown(index=False, floatfmt="+.3f"))
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


council_job = group_job(
    "council_job", "text events (news, forum posts, macro events) and the specialists' cached votes."
)


def definitions() -> dg.Definitions:
    """What the council domain adds to the code location."""
    return dg.Definitions(assets=[specialist_votes], jobs=[council_job])
