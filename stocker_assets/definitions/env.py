"""The env domain: episodes and their hindsight-ideal trajectories per ticker × start month
(group ``env``) and the job that builds them."""

import dagster as dg
import pandas as pd

from stocker_assets.definitions.automation import FOLLOWS_PRICES
from stocker_assets.definitions.factories import partitioned_asset
from stocker_assets.definitions.jobs import group_job
from stocker_assets.definitions.lineage import (
    attach_partition_metadata,
    bar_versions,
    combined_version,
    png_markdown,
    record_build,
    recorded_versions,
)
from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.partitions import month_window_mapping, months_by_ticker
from stocker_assets.definitions.progress import throttled_progress
from stocker_assets.definitions.resources import StockerResource
from stocker_core.config import Settings, get_settings
from stocker_core.env.catalog import episode_row, solve_episode, trajectory_rows
from stocker_core.env.episode import episode_from_bars, window_bounds
from stocker_core.env.plots import ideal_position_png
from stocker_core.errors import EmptyDataError
from stocker_core.market.bars import load_bars
from stocker_core.market.builds import MonthBuild
from stocker_core.market.validation import partition_key
from stocker_core.warehouse.db import Warehouse, frame_version

ENV = "env"
NO_BARS = "no data: no bars for this episode's window"
WINDOW = month_window_mapping(0, get_settings().episode_months - 1)


def _solve_partitions(context: dg.AssetExecutionContext, settings: Settings, warehouse: Warehouse):
    """Yield (key, solution or None without bars, upstream versions) for every partition
    of the run, reading each ticker's bars once. No connection stays open while solving:
    reads and the caller's writes are each a short transaction."""
    for ticker, months in months_by_ticker(context.partition_keys).items():
        last_end = window_bounds(months[-1], settings.episode_months)[1]
        bars, origin = load_bars(settings, ticker, None, last_end, warehouse)
        windows = {m: _window_months(m, settings.episode_months) for m in months}
        read = sorted({partition_key(ticker, m) for w in windows.values() for m in w})
        recorded = recorded_versions(warehouse, ["prices"], read) if origin == "warehouse" else {}
        for month in months:
            key = partition_key(ticker, month)
            try:
                episode = episode_from_bars(key, bars, settings, origin)
            except EmptyDataError:
                yield key, None, {}
                continue
            upstream = bar_versions(warehouse, ticker, windows[month], episode.bars, origin, recorded)
            yield key, solve_episode(episode, settings.transaction_cost), upstream


def _window_months(month, episode_months: int) -> list:
    """The calendar months of the episode that starts in ``month``."""
    start, end = window_bounds(month, episode_months)
    return [m.date() for m in pd.date_range(start, end, freq="MS", inclusive="left")]


def episode_version(row: dict[str, object]) -> str:
    """Data version of one ``env.episodes`` row."""
    return frame_version(pd.DataFrame([row]))


def _replace_by_ticker(
    warehouse: Warehouse, table: str, rows: pd.DataFrame, shrink_reason: str | None = None
) -> None:
    """One write per ticker replacing every episode month present in ``rows`` (``shrink_reason``:
    why fewer rows than stored are right, e.g. a trajectory follows its episode's days)."""
    for ticker, part in rows.groupby("ticker", sort=False):
        months = sorted(set(part["month"]))
        warehouse.replace_months(
            table,
            ticker,
            months,
            part.drop(columns="ticker"),
            month_column="month",
            shrink_reason=shrink_reason,
        )


@partitioned_asset(
    ENV,
    "Episodes (table env.episodes): trading days, start cash, buy-and-hold and ideal totals.",
    deps=[dg.AssetDep(prices, partition_mapping=WINDOW)],
    automation_condition=FOLLOWS_PRICES,
    kinds={"duckdb"},
)
def episodes(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    settings, warehouse = stocker.settings(), stocker.warehouse()
    build = MonthBuild()
    rows = []
    upstream: dict[str, dict[str, str]] = {}
    for key, solution, inputs in _solve_partitions(context, settings, warehouse):
        if solution is None:
            build.empty.append(key)
            continue
        row = episode_row(solution)
        build.rows[key] = 1
        build.data_versions[key] = episode_version(row)
        upstream[key] = inputs
        rows.append(row)
    table = pd.DataFrame(rows)
    _replace_by_ticker(warehouse, "env.episodes", table)
    record_build(context, warehouse, build, upstream)
    metadata = {"run_episodes": len(rows), "without_data": dg.MetadataValue.json(build.empty[:50])}
    own = {
        row["key"]: {
            name: row[name]
            for name in ("trading_days", "buy_and_hold_final", "ideal_total", "greedy_total", "source")
        }
        for row in rows
    }
    attach_partition_metadata(context, build, own, dict.fromkeys(build.empty, NO_BARS))
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


@partitioned_asset(
    ENV,
    "Per-step exact-optimum (DP) and greedy long-only paths (table env.ideal_trajectories), "
    "with a plot of price and the ideal position.",
    deps=[episodes],
    automation_condition=FOLLOWS_PRICES,
    kinds={"duckdb", "matplotlib"},
)
def ideal_trajectories(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    settings, warehouse = stocker.settings(), stocker.warehouse()
    build = MonthBuild()
    frames: list[pd.DataFrame] = []
    upstream: dict[str, dict[str, str]] = {}
    own: dict[str, dict[str, object]] = {}
    report = throttled_progress(context, "episodes")
    total = len(context.partition_keys)
    for done, (key, solution, inputs) in enumerate(_solve_partitions(context, settings, warehouse), 1):
        if solution is not None:
            frame = trajectory_rows(solution)
            build.rows[key] = len(frame)
            build.data_versions[key] = frame_version(frame)
            # the episode it solves: the same version the episodes asset records for it
            upstream[key] = {f"episodes@{key}": episode_version(episode_row(solution)), **inputs}
            frames.append(frame.assign(ticker=solution.episode.ticker))
            # a plot costs ~0.45 s: in a long backfill only the last few months get one
            own[key] = _trajectory_metadata(solution, settings, plot=total - done < PLOTTED_MONTHS)
        else:
            build.empty.append(key)
        report(done, total)
    if frames:
        _replace_by_ticker(
            warehouse,
            "env.ideal_trajectories",
            pd.concat(frames, ignore_index=True),
            shrink_reason="one row per trading day of the episode just solved (e.g. fewer episode months)",
        )
    record_build(context, warehouse, build, upstream)
    attach_partition_metadata(context, build, own, dict.fromkeys(build.empty, NO_BARS))
    metadata = {"run_episodes": len(build.rows), "without_data": dg.MetadataValue.json(build.empty[:50])}
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


PLOTTED_MONTHS = 3
"""Months of a run whose ideal-position plot is drawn (the latest); every month keeps its totals."""


def _trajectory_metadata(solution, settings: Settings, plot: bool = True) -> dict[str, object]:
    """One episode's totals and, with ``plot``, its plot (also written under STOCKER_HOME/plots/ideal)."""
    ep = solution.episode
    totals = {
        "ideal_total": solution.ideal.total,
        "greedy_total": solution.greedy.total,
        "ideal_trades": solution.ideal.trades,
    }
    if not plot:
        return totals
    png = ideal_position_png(
        ep.dates,
        ep.closes,
        solution.ideal.long,
        f"{ep.key}: ideal position",
        greedy_long=solution.greedy.long,
    )
    path = settings.home / "plots" / "ideal" / ep.ticker / f"{ep.window_start.isoformat()}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)
    return {
        **totals,
        "plot_path": dg.MetadataValue.path(str(path)),
        "plot": png_markdown(png, "ideal position"),
    }


env_job = group_job(
    "env_job", "episodes and their hindsight-ideal trajectories for ticker × start-month partitions."
)


def definitions() -> dg.Definitions:
    """What the env domain adds to the code location."""
    return dg.Definitions(assets=[episodes, ideal_trajectories], jobs=[env_job])
