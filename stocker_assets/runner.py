"""Runs the market assets for many partitions in a few Dagster runs (one per ticker).

Used by ``stocker materialize``: each ticker's months form one contiguous partition
range, executed as a single run (the assets' single-run backfill policy), so a
112-month history costs one run instead of 112.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from importlib import resources as pkg_resources
from pathlib import Path

import dagster as dg
import pandas as pd

from stocker_assets.partitions import month_partitions, ticker_partitions
from stocker_core.config import Settings
from stocker_core.errors import StockerError
from stocker_core.market.sources import MarketDataSource

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


INIT_LOCK = ".stocker-init.lock"
"""Lock file in DAGSTER_HOME serialising instance creation and storage migrations."""


def ensure_dagster_home(settings: Settings) -> Path:
    """Use $DAGSTER_HOME, or STOCKER_HOME/dagster with our dagster.yaml (telemetry off).

    The config file is written atomically, so a concurrent command never reads half of it.
    """
    home = Path(os.environ.get("DAGSTER_HOME") or settings.dagster_home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        template = pkg_resources.files("stocker_assets") / "dagster.yaml"
        fd, tmp = tempfile.mkstemp(dir=home, prefix=".dagster-yaml-")
        os.close(fd)
        with pkg_resources.as_file(template) as path:
            shutil.copyfile(path, tmp)
        Path(tmp).replace(config)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def dagster_instance(settings: Settings, timeout_s: float = 300) -> dg.DagsterInstance:
    """The CLI's Dagster instance, created and migrated under a file lock.

    Two processes initialising one fresh SQLite instance at once can leave two
    ``alembic_version`` rows ("more than one head present") and break the home for good;
    holding ``DAGSTER_HOME/.stocker-init.lock`` while the instance opens and each of its
    storages (runs, event log, schedules) creates its tables makes that impossible.
    """
    from filelock import FileLock, Timeout

    home = ensure_dagster_home(settings)
    try:
        with FileLock(str(home / INIT_LOCK), timeout=timeout_s):
            instance = dg.DagsterInstance.get()
            instance.get_runs(limit=1)  # run storage
            instance.get_dynamic_partitions(ticker_partitions.name)
            instance.get_latest_materialization_event(dg.AssetKey("prices"))  # event log storage
            instance.all_instigator_state()  # schedule storage
    except Timeout:
        raise DagsterHomeBusyError(
            f"another stocker command has held {home / INIT_LOCK} for {timeout_s:.0f}s while "
            "creating the Dagster instance; wait for it or remove the lock file if no command runs"
        ) from None
    return instance


class DagsterHomeBusyError(StockerError):
    """The Dagster instance lock could not be taken in time."""


def register_tickers(instance: dg.DagsterInstance, tickers: Sequence[str]) -> list[str]:
    """Add missing tickers to the dynamic ticker partitions; returns the new ones."""
    known = set(instance.get_dynamic_partitions(ticker_partitions.name))
    new = [t for t in tickers if t not in known]
    if new:
        instance.add_dynamic_partitions(ticker_partitions.name, new)
    return new


def unregister_tickers(instance: dg.DagsterInstance, tickers: Sequence[str]) -> list[str]:
    """Delete registered tickers from the dynamic ticker partitions; returns those removed."""
    known = set(instance.get_dynamic_partitions(ticker_partitions.name))
    gone = [t for t in dict.fromkeys(tickers) if t in known]
    for ticker in gone:
        instance.delete_dynamic_partition(ticker_partitions.name, ticker)
    return gone


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
    check_failures: dict[str, list[str]] = field(default_factory=dict)
    """Partition key -> problems, from the failed checks' ``failures`` metadata."""
    errors: list[str] = field(default_factory=list)
    """First line of each failed step's error (blocking-check failures excluded)."""


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


def _check_failures(result: dg.ExecuteInProcessResult) -> dict[str, list[str]]:
    failures: dict[str, list[str]] = {}
    for evaluation in result.get_asset_check_evaluations():
        entry = evaluation.metadata.get("failures")
        if not evaluation.passed and entry is not None and isinstance(entry.value, dict):
            for key, problems in entry.value.items():
                failures.setdefault(key, []).extend(problems)
    return failures


def _step_errors(result: dg.ExecuteInProcessResult) -> list[str]:
    errors = []
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data.error is not None:
            error = event.step_failure_data.error
            cause = error.cause or error
            if error.cls_name == "DagsterAssetCheckFailedError":
                continue  # reported through check_failures
            first = (cause.message or "").strip().splitlines()
            errors.append(f"{event.step_key}: {first[0] if first else cause.cls_name}")
    return errors


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
        _check_failures(result),
        _step_errors(result),
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
    allow_failed_checks: bool = False,
) -> TickerRun:
    """One in-process run over ``ticker``'s contiguous ``months``.

    ``allow_failed_checks`` tags the run so a failing blocking check only warns: downstream
    assets then run and skip the failed partitions themselves.
    """
    from stocker_assets.checks import ALLOW_FAILED_CHECKS_TAG

    months = sorted(months)
    tags = {
        RANGE_START: f"{ticker}|{months[0].isoformat()}",
        RANGE_END: f"{ticker}|{months[-1].isoformat()}",
    }
    if allow_failed_checks:
        tags[ALLOW_FAILED_CHECKS_TAG] = "true"
    started = time.perf_counter()
    result = _materialize(instance, [*assets, *checks], resources, tags, on_step, log_level)
    return TickerRun(
        ticker=ticker,
        months=len(months),
        run_id=result.run_id,
        success=result.success,
        seconds=time.perf_counter() - started,
        checks_failed=_failed_checks(result),
        check_failures=_check_failures(result),
        errors=_step_errors(result),
    )
