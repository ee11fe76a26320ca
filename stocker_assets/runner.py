"""Runs the market assets for many partitions in a few Dagster runs (one per ticker).

Used by ``stocker materialize``: each ticker's months form one contiguous partition
range, executed as a single run (the assets' single-run backfill policy), so a
112-month history costs one run instead of 112.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from importlib import resources as pkg_resources
from pathlib import Path

import dagster as dg
import pandas as pd

from stocker_assets.partitions import month_partitions, ticker_partitions
from stocker_core.config import Settings
from stocker_core.market.sources import MarketDataSource

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


def ensure_dagster_home(settings: Settings) -> Path:
    """Use $DAGSTER_HOME, or STOCKER_HOME/dagster with our dagster.yaml (telemetry off)."""
    home = Path(os.environ.get("DAGSTER_HOME") or settings.dagster_home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        template = pkg_resources.files("stocker_assets") / "dagster.yaml"
        with pkg_resources.as_file(template) as path:
            shutil.copyfile(path, config)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def register_tickers(instance: dg.DagsterInstance, tickers: Sequence[str]) -> list[str]:
    """Add missing tickers to the dynamic ticker partitions; returns the new ones."""
    known = set(instance.get_dynamic_partitions(ticker_partitions.name))
    new = [t for t in tickers if t not in known]
    if new:
        instance.add_dynamic_partitions(ticker_partitions.name, new)
    return new


def months_with_data(
    source: MarketDataSource, ticker: str, first: date | None = None, last: date | None = None
) -> list[date]:
    """Month partitions that overlap the symbol's available history (and ``first``..``last``)."""
    info = source.symbol_info(ticker)
    keys = month_partitions.get_partition_keys()
    lo = pd.Timestamp(info.first_date).to_period("M")
    hi = pd.Timestamp(info.last_date).to_period("M")
    if first is not None:
        lo = max(lo, pd.Timestamp(first).to_period("M"))
    if last is not None:
        hi = min(hi, pd.Timestamp(last).to_period("M"))
    return [date.fromisoformat(k) for k in keys if lo <= pd.Timestamp(k).to_period("M") <= hi]


@dataclass
class TickerRun:
    """The outcome of one ticker's run."""

    ticker: str
    months: int
    run_id: str
    success: bool
    seconds: float
    checks_failed: list[str]


StepCallback = Callable[[str, str], None]


def select_assets(
    defs: dg.Definitions, groups: Sequence[str]
) -> tuple[list[dg.AssetsDefinition], list[dg.AssetsDefinition], list[dg.AssetChecksDefinition]]:
    """(partitioned assets, unpartitioned assets, their checks) of the named groups."""
    known = {g for a in defs.assets for g in a.group_names_by_key.values()}
    unknown = sorted(set(groups) - known)
    if unknown:
        raise ValueError(f"unknown group(s) {', '.join(unknown)}: use {', '.join(sorted(known))}")
    chosen = [a for a in defs.assets if set(a.group_names_by_key.values()) & set(groups)]
    partitioned = [a for a in chosen if a.partitions_def is not None]
    keys = {k for a in partitioned for k in a.keys}
    checks = [c for c in defs.asset_checks or [] if {s.asset_key for s in c.check_specs} <= keys]
    return partitioned, [a for a in chosen if a.partitions_def is None], checks


def _watch_steps(instance: dg.DagsterInstance, batch: str, on_step: StepCallback, stop: threading.Event):
    """Report finished steps of the run tagged ``batch`` until ``stop`` is set."""
    seen: set[str] = set()
    while not stop.wait(0.25):
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"stocker/batch": batch}), limit=1)
        if not runs:
            continue
        for record in instance.all_logs(runs[0].run_id, of_type=dg.DagsterEventType.STEP_SUCCESS):
            step = record.step_key or ""
            if step not in seen:
                seen.add(step)
                on_step(step, "done")


def _materialize(
    instance: dg.DagsterInstance,
    selection: Sequence[dg.AssetsDefinition | dg.AssetChecksDefinition],
    resources: dict[str, object],
    tags: dict[str, str],
    on_step: StepCallback | None,
    log_level: str,
) -> dg.ExecuteInProcessResult:
    batch = uuid.uuid4().hex
    stop = threading.Event()
    watcher = None
    if on_step is not None:
        watcher = threading.Thread(target=_watch_steps, args=(instance, batch, on_step, stop), daemon=True)
        watcher.start()
    try:
        return dg.materialize(
            list(selection),
            instance=instance,
            resources=resources,
            tags={**tags, "stocker/batch": batch},
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
        )
    finally:
        stop.set()
        if watcher is not None:
            watcher.join()


def _failed_checks(result: dg.ExecuteInProcessResult) -> list[str]:
    return [
        f"{e.asset_key.to_user_string()}:{e.check_name}"
        for e in result.get_asset_check_evaluations()
        if not e.passed
    ]


def run_unpartitioned(
    instance: dg.DagsterInstance,
    assets: Sequence[dg.AssetsDefinition],
    resources: dict[str, object],
    on_step: StepCallback | None = None,
    log_level: str = "WARNING",
) -> TickerRun:
    """One run over unpartitioned assets (e.g. the text events)."""
    started = time.perf_counter()
    result = _materialize(instance, assets, resources, {}, on_step, log_level)
    return TickerRun(
        "unpartitioned",
        0,
        result.run_id,
        result.success,
        time.perf_counter() - started,
        _failed_checks(result),
    )


def run_ticker_months(
    instance: dg.DagsterInstance,
    ticker: str,
    months: Sequence[date],
    assets: Sequence[dg.AssetsDefinition],
    checks: Sequence[dg.AssetChecksDefinition],
    resources: dict[str, object],
    on_step: StepCallback | None = None,
    log_level: str = "WARNING",
) -> TickerRun:
    """One in-process run over ``ticker``'s contiguous ``months``."""
    months = sorted(months)
    tags = {
        RANGE_START: f"{ticker}|{months[0].isoformat()}",
        RANGE_END: f"{ticker}|{months[-1].isoformat()}",
    }
    started = time.perf_counter()
    result = _materialize(instance, [*assets, *checks], resources, tags, on_step, log_level)
    return TickerRun(
        ticker=ticker,
        months=len(months),
        run_id=result.run_id,
        success=result.success,
        seconds=time.perf_counter() - started,
        checks_failed=_failed_checks(result),
    )
