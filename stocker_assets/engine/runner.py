"""Runs the market assets for many partitions in a few Dagster runs (one per ticker).

Used by ``stocker materialize``: each ticker's months form one contiguous partition
range, executed as a single run (the assets' single-run backfill policy), so a
112-month history costs one run instead of 112.
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

import dagster as dg
import pandas as pd

from stocker_assets.definitions.jobs import split_by_job
from stocker_assets.definitions.partitions import month_partitions
from stocker_assets.definitions.progress import Progress, parse_progress
from stocker_assets.engine.event_batch import report_materializations
from stocker_assets.engine.run_liveness import process_tags
from stocker_core.config import Settings, get_settings
from stocker_core.data_sources import MarketDataSource

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


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
    """The outcome of one ticker's runs in a stage (or of one unpartitioned stage)."""

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
    runs: list[tuple[str, str]] = field(default_factory=list)
    """(job name, run id) of each Dagster run, in order."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Ticker -> why a step left it out (too short for a window), from ``left_out`` metadata."""
    skipped: str = ""
    """Why nothing ran (``stocker materialize`` found it up to date); empty when it ran."""
    built: tuple[str, ...] = ()
    """The tickers of a failed batch built anyway, in runs without the tickers at fault."""


@dataclass(frozen=True)
class StepEvent:
    """What the CLI hears about a step of a run: started, progress, done or failed."""

    job: str
    step: str
    status: str
    """``started``, ``progress`` (``progress`` is set), ``done`` or ``failed``."""
    progress: Progress | None = None
    partitions: int = 0
    """Partitions the step materialized (``done`` only)."""


StepCallback = Callable[[StepEvent], None]


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


_REPORTED = {
    dg.DagsterEventType.STEP_START: "started",
    dg.DagsterEventType.STEP_SUCCESS: "done",
    dg.DagsterEventType.STEP_FAILURE: "failed",
}


def _report_records(records, job: str, on_event: StepCallback, materialized: dict[str, int]) -> None:
    for record in records:
        entry = record.event_log_entry
        step = entry.step_key or ""
        event = entry.dagster_event
        if event is None:
            found = parse_progress(entry.user_message)
            if found is not None:
                on_event(StepEvent(job, step, "progress", progress=found))
        elif event.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION:
            if event.partition:  # an unpartitioned asset's one event is no partition
                materialized[step] = materialized.get(step, 0) + 1
        elif event.event_type in _REPORTED:
            status = _REPORTED[event.event_type]
            on_event(StepEvent(job, step, status, partitions=materialized.get(step, 0)))


def _watch_run(
    instance: dg.DagsterInstance, run_id: str, job: str, on_event: StepCallback, stop: threading.Event
) -> None:
    """Report the steps of run ``run_id`` (started, progress lines, done/failed with the
    partitions materialized) as they happen, until ``stop`` is set and all is read."""
    cursor = None
    materialized: dict[str, int] = {}
    while True:
        stopping = stop.wait(0.25)
        cursor = _report_new_records(instance, run_id, job, cursor, on_event, materialized)
        if stopping:
            return


def _report_new_records(
    instance: dg.DagsterInstance,
    run_id: str,
    job: str,
    cursor: str | None,
    on_event: StepCallback,
    materialized: dict[str, int],
) -> str | None:
    """Report the run's records after ``cursor``; returns the cursor after the last one."""
    while True:
        page = instance.get_records_for_run(run_id, cursor=cursor, limit=500)
        _report_records(page.records, job, on_event, materialized)
        cursor = page.cursor
        if not page.has_more:
            return cursor


def _execute(
    instance: dg.DagsterInstance,
    defs: dg.Definitions,
    job: str,
    selection: Sequence[dg.AssetsDefinition],
    tags: dict[str, str],
    on_event: StepCallback | None,
    log_level: str,
) -> dg.ExecuteInProcessResult:
    """One run of the named ``job`` over ``selection`` (with the selected assets' checks),
    in this process, or with its steps on Celery workers when ``STOCKER_EXECUTOR=celery``."""
    settings = get_settings()
    tags = {**tags, **process_tags()}  # the run names its process: a later CLI fails it if that dies
    if settings.executor == "celery":
        return _execute_on_celery(instance, job, selection, tags, on_event, log_level, settings)
    run_id = str(uuid.uuid4())
    watch = None if on_event is None else functools.partial(_watch_run, instance, run_id, job, on_event)
    with _watching(watch):
        return defs.resolve_job_def(job).execute_in_process(
            instance=instance,
            asset_selection=[k for a in selection for k in a.keys],
            run_id=run_id,
            tags=tags,
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
        )


@contextmanager
def _watching(watch: Callable[[threading.Event], None] | None) -> Iterator[None]:
    """Run ``watch(stop)`` in a thread during the block (the run's progress reporter), then
    set ``stop`` and wait until it has read everything."""
    if watch is None:
        yield
        return
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(stop,), daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


LAUNCH_TAG = "stocker/launch"
"""Tag with a token of ours on each Celery run, so the progress watcher can find its id."""


def resource_run_config(settings: Settings) -> dict[str, object]:
    """The ``stocker`` resource's config for a run: the launching process's Settings
    (so workers with other ``STOCKER_*`` variables still build what was asked)."""
    from stocker_assets.definitions.resources import RUN_FIELDS

    values = {name: getattr(settings, name) for name in RUN_FIELDS}
    config = {k: str(v) if isinstance(v, Path | date) else v for k, v in values.items() if v is not None}
    return {"stocker": {"config": config}}


def celery_run_config(settings: Settings, log_level: str) -> dict[str, object]:
    """Run config for a job of ``stocker_assets.definitions.celery_definitions`` (whose executor takes
    broker and backend from Settings): console log level and the resource's values."""
    return {
        "loggers": {"console": {"config": {"log_level": log_level}}},
        "resources": resource_run_config(settings),
    }


def watch_tagged_runs(
    instance: dg.DagsterInstance, token: str, on_event: StepCallback, stop: threading.Event
) -> None:
    """``_watch_run`` for every run tagged ``LAUNCH_TAG=token`` (the runs one launch makes,
    one job after another, from this process or another), until ``stop`` is set and all is read.
    Polled once a second: each look costs this process ~7 ms that the lanes' runs would use."""
    cursors: dict[str, str | None] = {}
    materialized: dict[str, dict[str, int]] = {}
    while True:
        stopping = stop.wait(1.0)
        records = instance.get_run_records(dg.RunsFilter(tags={LAUNCH_TAG: token}))
        for record in sorted(records, key=lambda r: r.storage_id):
            run = record.dagster_run
            counts = materialized.setdefault(run.run_id, {})
            cursors[run.run_id] = _report_new_records(
                instance, run.run_id, run.job_name, cursors.get(run.run_id), on_event, counts
            )
        if stopping:
            return


def _execute_on_celery(
    instance: dg.DagsterInstance,
    job: str,
    selection: Sequence[dg.AssetsDefinition],
    tags: dict[str, str],
    on_event: StepCallback | None,
    log_level: str,
    settings: Settings,
):
    """One run of ``job`` whose steps execute on Celery workers (``STOCKER_EXECUTOR=celery``).

    The job comes from ``stocker_assets.definitions.celery_definitions`` as a reconstructable pointer:
    each worker loads that module and runs one step, writing its events to this instance
    (which must be one the workers reach too, i.e. Postgres storage).
    """
    from stocker_assets.definitions.celery_definitions import reconstructable_job

    token = tags.get(LAUNCH_TAG) or str(uuid.uuid4())
    watch = None if on_event is None else functools.partial(watch_tagged_runs, instance, token, on_event)
    with _watching(watch), warnings.catch_warnings():
        # dagster-celery registers its one task again for each step (harmless; Celery 5.7 warns)
        warnings.filterwarnings("ignore", message="Task name 'execute_plan' is already registered")
        with dg.execute_job(
            reconstructable_job(job),
            instance=instance,
            run_config=celery_run_config(settings, log_level),
            tags={**tags, LAUNCH_TAG: token},
            asset_selection=[k for a in selection for k in a.keys],
            raise_on_error=False,
        ) as result:
            return result


NOT_RUN = "not run: an earlier run of this stage failed"


def _run_jobs(
    instance: dg.DagsterInstance,
    defs: dg.Definitions,
    name: str,
    months: int,
    assets: Sequence[dg.AssetsDefinition],
    tags: dict[str, str],
    on_event: StepCallback | None,
    log_level: str,
) -> TickerRun:
    """``assets`` as consecutive runs of their named jobs; a failed run stops the later ones."""
    started = time.perf_counter()
    outcome = TickerRun(name, months, "", True, 0.0, [])
    for job, part in split_by_job(assets):
        if not outcome.success:
            names = ", ".join(k.to_user_string() for a in part for k in a.keys)
            outcome.errors.append(f"{job} ({names}) {NOT_RUN}")
            continue
        result = _execute(instance, defs, job, part, tags, on_event, log_level)
        outcome.runs.append((job, result.run_id))
        outcome.run_id = result.run_id
        outcome.success = outcome.success and result.success
        outcome.checks_failed += _failed_checks(result)
        outcome.check_failures.update(_check_failures(result))
        outcome.errors += _step_errors(result)
        outcome.left_out.update(_left_out(result))
    outcome.seconds = time.perf_counter() - started
    return outcome


def merge_runs(first: TickerRun, then: TickerRun) -> TickerRun:
    """One outcome for two runs of a unit, one after the other."""
    return TickerRun(
        first.ticker,
        first.months + then.months,
        then.run_id or first.run_id,
        first.success and then.success,
        first.seconds + then.seconds,
        first.checks_failed + then.checks_failed,
        {**first.check_failures, **then.check_failures},
        first.errors + then.errors,
        first.runs + then.runs,
        {**first.left_out, **then.left_out},
        built=first.built + then.built,
    )


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


def _left_out(result: dg.ExecuteInProcessResult) -> dict[str, str]:
    """Ticker -> why, from the ``left_out`` metadata of the run's materializations."""
    found: dict[str, str] = {}
    for event in result.all_events:
        if event.is_step_materialization:
            entry = event.step_materialization_data.materialization.metadata.get("left_out")
            if entry is not None and isinstance(entry.value, dict):
                step = event.step_key or ""
                found.update({str(k): f"{step}: {v}" for k, v in entry.value.items()})
    return found


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
    defs: dg.Definitions,
    assets: Sequence[dg.AssetsDefinition],
    on_step: StepCallback | None = None,
    log_level: str = "WARNING",
    tags: dict[str, str] | None = None,
) -> TickerRun:
    """Unpartitioned assets (e.g. the text events) through their named jobs (``tags`` on each run)."""
    return _run_jobs(instance, defs, "unpartitioned", 0, assets, dict(tags or {}), on_step, log_level)


def run_box(
    instance: dg.DagsterInstance,
    defs: dg.Definitions,
    tickers: Sequence[str],
    months: Sequence[date],
    assets: Sequence[dg.AssetsDefinition],
    on_step: StepCallback | None = None,
    log_level: str = "WARNING",
    allow_failed_checks: bool = False,
    tags: dict[str, str] | None = None,
) -> TickerRun:
    """In-process runs over a rectangle: every ticker of ``tickers`` (consecutive in the
    ticker dimension's order: ``stages.partition_boxes``) × the contiguous ``months``, one
    run per named job the assets belong to (their checks run with them), in dependency order.
    The assets and checks work ticker by ticker inside a run, so a run's fixed cost (start-up,
    plan, run records) is paid once for all of them.

    ``allow_failed_checks`` tags the runs so a failing blocking check only warns: downstream
    assets then run and skip the failed partitions themselves. Without it, a partition failing
    its blocking checks fails only its own ticker: the box's other tickers run again without
    the ones the checks named (``_without_failed``) and the outcome lists them as ``built``.
    """
    from stocker_assets.definitions.market.checks import ALLOW_FAILED_CHECKS_TAG

    months = sorted(months)
    tags = {
        **(tags or {}),
        RANGE_START: f"{tickers[0]}|{months[0].isoformat()}",
        RANGE_END: f"{tickers[-1]}|{months[-1].isoformat()}",
    }
    if allow_failed_checks:
        tags[ALLOW_FAILED_CHECKS_TAG] = "true"
    name = tickers[0] if len(tickers) == 1 else f"{tickers[0]}…{tickers[-1]} ({len(tickers)} tickers)"
    run = _run_jobs(instance, defs, name, len(months) * len(tickers), assets, tags, on_step, log_level)
    return _without_failed(
        run,
        tickers,
        lambda group: run_box(
            instance, defs, group, months, assets, on_step, log_level, allow_failed_checks, tags
        ),
    )


def _without_failed(
    run: TickerRun, tickers: Sequence[str], rerun: Callable[[list[str]], TickerRun]
) -> TickerRun:
    """A failed run of several tickers whose blocking checks name the tickers at fault: the
    others ``rerun`` as the consecutive groups between those, and the outcome lists them as
    ``built``. Any other outcome is returned as it is (a failure that names no ticker, a step's
    error, fails the whole box, as one run would)."""
    at_fault = {key.split("|", 1)[0] for key in run.check_failures}
    named = [t for t in tickers if t in at_fault]
    if run.success or len(tickers) < 2 or not named or not all(e.endswith(NOT_RUN) for e in run.errors):
        return run
    groups: list[list[str]] = [[]]
    for ticker in tickers:
        if ticker in at_fault:
            groups.append([])
        else:
            groups[-1].append(ticker)
    outcome = replace(run, errors=[])
    for group in (g for g in groups if g):
        again = rerun(group)
        outcome = merge_runs(outcome, replace(again, built=tuple(group) if again.success else again.built))
    outcome.months = run.months
    outcome.errors.insert(
        0, f"{', '.join(named)} failed blocking checks; the batch's other tickers ran again without them"
    )
    return outcome


NO_DATA_TAG = "stocker/no_data"


def mark_months_without_data(
    instance: dg.DagsterInstance,
    source: MarketDataSource,
    tickers: Sequence[str],
    assets: Sequence[dg.AssetsDefinition],
) -> int:
    """Record a "no data" materialization for every month partition of each of ``tickers``
    outside the source's history of it (before its first bar, after its last), for each
    partitioned asset of ``assets`` that has none yet; returns how many were recorded.

    Dagster cannot bound one ticker's months differently from another's in a
    ticker × month grid, so without this the UI counts every month after a symbol's data
    ends (the sample's GOOGL stops in 2018-08) as missing. Each such partition instead shows
    a materialization with ``status: no data …`` and ``rows_written: 0`` (tag
    ``stocker/no_data``); a later `stocker materialize` that finds data there rebuilds it.
    The markers are stored in one batch per asset (``event_batch``): ~5,000 in about a
    second instead of ~70 ms each, and each asset's materialized partitions are read once
    for all the tickers.
    """
    every_month = month_partitions.get_partition_keys()
    outside: dict[str, tuple[str, list[str]]] = {}
    for ticker in tickers:
        info = source.symbol_info(ticker)
        with_data = {m.isoformat() for m in months_with_data(source, ticker)}
        status = (
            f"no data: the {source.name} source has {ticker} bars "
            f"from {info.first_date} to {info.last_date} only"
        )
        outside[ticker] = (status, [k for k in every_month if k not in with_data])
    markers = []
    for asset in assets:
        if asset.partitions_def is None:
            continue
        for key in asset.keys:
            done = instance.get_materialized_partitions(key)
            markers += [
                dg.AssetMaterialization(
                    asset_key=key,
                    partition=f"{ticker}|{month}",
                    metadata={"status": status, "rows_written": 0},
                    tags={NO_DATA_TAG: "true"},
                )
                for ticker, (status, months) in outside.items()
                for month in months
                if f"{ticker}|{month}" not in done
            ]
    return report_materializations(instance, markers)  # one batch per asset, not one commit each
