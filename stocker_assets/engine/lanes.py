"""The main job's runs as a graph, executed on as many lanes as the machine has cores.

``stages.plan_stages`` orders the assets; here each stage becomes *units*: one per
unpartitioned asset (text events, splits, each model, the rolling evaluation, the report)
and one per ticker for the stage's partitioned assets. A unit waits for the units holding
what its assets read (a ticker's backtests wait for that ticker's votes and for every
model, not for the other tickers), so with two lanes the agent trains beside the
moderator, and the rolling evaluation runs beside the tickers' backtests.

Each lane is a worker process (spawned: torch and Dagster do not survive a fork) that
executes its unit's Dagster runs in process, against the same instance and warehouse as
the CLI; the CLI follows them through the runs' ``LAUNCH_TAG``. With one lane the units
run in this process, in plan order, as before. Lanes die with the CLI and a rerun waits for
the lanes of a killed one (``lane_lifetime``).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

import dagster as dg

from stocker_assets.engine.lane_lifetime import (
    kill_children,
    lane_start,
    parent_alive,
    run_lock_file,
    sigterm_as_exit,
    wait_for_leftover_lanes,
)
from stocker_assets.engine.runner import (
    LAUNCH_TAG,
    StepCallback,
    TickerRun,
    merge_runs,
    run_box,
    run_unpartitioned,
    watch_tagged_runs,
)
from stocker_assets.engine.stages import RunUnit, Stage, partition_boxes
from stocker_core.config import Settings

if TYPE_CHECKING:
    from stocker_assets.engine.up_to_date import UpToDate

MAX_DEFAULT_WORKERS = 4


def worker_count(settings: Settings) -> int:
    """``STOCKER_MAIN_WORKERS``, else one lane per core (at most 4), and one with Celery
    (whose workers already spread the steps)."""
    if settings.main_workers is not None:
        return settings.main_workers
    if settings.executor == "celery":
        return 1
    return max(1, min(MAX_DEFAULT_WORKERS, os.cpu_count() or 1))


def _names(assets: Sequence[dg.AssetsDefinition]) -> tuple[str, ...]:
    return tuple(k.to_user_string() for a in assets for k in a.keys)


def _unit_name(asset: dg.AssetsDefinition) -> str:
    """An unpartitioned asset's unit: its keys (one, unless a multi-asset)."""
    return ",".join(_names([asset]))


def plan_units(
    stages: Sequence[Stage],
    plan: Mapping[str, Sequence[date]],
    checks: Sequence[dg.AssetChecksDefinition] = (),
) -> list[RunUnit]:
    """The units of ``stages`` for the tickers' months in ``plan`` (tickers without months
    get none), in plan order: stage by stage, unpartitioned assets before the tickers."""
    holder: dict[tuple[dg.AssetKey, str | None], str] = {}  # (asset, ticker or None) -> unit
    for number, stage in enumerate(stages, 1):
        for asset in stage.unpartitioned:
            for key in asset.keys:
                holder[(key, None)] = _unit_name(asset)
        for ticker, months in plan.items():
            if months:
                for key in (k for a in stage.partitioned for k in a.keys):
                    holder[(key, ticker)] = f"{ticker}@{number}"

    def deps_of(assets: Sequence[dg.AssetsDefinition], ticker: str | None, own: str) -> frozenset[str]:
        found: set[str] = set()
        for asset in assets:
            for key in asset.keys:
                for upstream in asset.asset_deps.get(key, set()):
                    if (upstream, None) in holder:
                        found.add(holder[(upstream, None)])
                    elif ticker is not None:
                        found.update(holder[k] for k in [(upstream, ticker)] if k in holder)
                    else:  # an unpartitioned asset reads a partitioned one: every ticker's unit
                        found.update(holder[(upstream, t)] for t in plan if (upstream, t) in holder)
        return frozenset(found - {own})

    units: list[RunUnit] = []
    for number, stage in enumerate(stages, 1):
        for asset in stage.unpartitioned:
            name = _unit_name(asset)
            label = f"stage {number}: {', '.join(_names([asset]))}"
            units.append(
                RunUnit(name, label, _names([asset]), len(asset.keys), deps=deps_of([asset], None, name))
            )
        if not stage.partitioned:
            continue
        keys = {k for a in stage.partitioned for k in a.keys}
        stage_checks = [c for c in checks if {s.asset_key for s in c.check_specs} <= keys]
        for ticker, months in plan.items():
            if not months:
                continue
            name = f"{ticker}@{number}"
            months = sorted(months)
            label = f"stage {number}: {ticker} {months[0]:%Y-%m}…{months[-1]:%Y-%m} ({len(months)} months)"
            units.append(
                RunUnit(
                    name,
                    label,
                    _names(stage.partitioned),
                    len(stage.partitioned) + len(stage_checks),
                    ticker,
                    tuple(months),
                    deps_of(stage.partitioned, ticker, name),
                )
            )
    return units


def priority_order(units: Sequence[RunUnit]) -> list[RunUnit]:
    """``units`` by how many units wait on each (directly or not), most first, then in
    plan order: a lane that frees up takes the work that unblocks the most."""
    waiting: dict[str, set[str]] = {u.name: set() for u in units}
    for unit in units:
        for dep in unit.deps:
            waiting.setdefault(dep, set()).add(unit.name)

    @functools.cache
    def downstream(name: str) -> frozenset[str]:
        found: set[str] = set()
        for child in waiting.get(name, ()):
            found |= {child, *downstream(child)}
        return frozenset(found)

    order = {u.name: i for i, u in enumerate(units)}
    return sorted(units, key=lambda u: (-len(downstream(u.name)), order[u.name]))


UnitStarted = Callable[[RunUnit], StepCallback]
"""Called as a unit starts; returns the callback for its steps' events."""
UnitDone = Callable[[RunUnit, TickerRun], None]


@dataclass
class LaneOptions:
    """How units run: lanes, log level, and whether failed blocking checks only warn."""

    workers: int = 1
    log_level: str = "WARNING"
    allow_failed_checks: bool = False
    up_to_date: UpToDate | None = None
    """Decides what is up to date before each unit (None: every unit runs in full)."""


def run_units(
    instance: dg.DagsterInstance,
    defs: dg.Definitions,
    units: Sequence[RunUnit],
    options: LaneOptions,
    on_start: UnitStarted,
    on_done: UnitDone,
    say: Callable[[str], None] = print,
) -> list[RunUnit]:
    """Execute ``units`` as their dependencies allow, on ``options.workers`` lanes; returns
    the units not run because a unit failed (none starts after a failure). First waits (telling
    ``say``) for the lanes of an earlier run of this home whose CLI was killed."""
    from stocker_core.config import get_settings

    wait_for_leftover_lanes(get_settings().home, say)
    if options.workers <= 1 or len(units) <= 1:
        return _run_here(instance, defs, units, options, on_start, on_done)
    return _run_on_lanes(instance, units, options, on_start, on_done)


def _run_here(instance, defs, units, options, on_start, on_done) -> list[RunUnit]:
    pending, finished = list(units), set()
    order = _ticker_order(instance)
    while pending:
        group = take_ready(pending, finished, 1)
        if not group:
            break  # what is left waits on units that are not in the plan
        unit, decisions = _prepare(options, group, order, on_start, on_done, finished)
        if unit is None:
            continue
        run = execute_unit(instance, defs, unit, options, on_step=on_start(unit))
        _record(options, decisions, run)
        on_done(unit, run)
        if not run.success:
            break
        finished.update(_names_run(unit))
    return pending


MAX_BATCH_TICKERS = 100
"""The most tickers one unit runs together (a lane's share of a stage's ready tickers)."""


def _stage(unit: RunUnit) -> str:
    return unit.name.rsplit("@", 1)[-1]


def take_ready(
    pending: list[RunUnit], finished: set[str], lanes: int, stage_sizes: Mapping[str, int] | None = None
) -> list[RunUnit]:
    """The next work for a free lane, taken out of ``pending``: the first unit whose
    dependencies are ``finished`` and, when it is a ticker's, other ready tickers of its
    stage — a ``lanes``-th of the stage's tickers (``stage_sizes``, else of those ready), at
    most ``MAX_BATCH_TICKERS`` — to run as one batch (a run's fixed cost is paid once per
    batch, not once per ticker). A share per lane, not all of them: a lane busy with
    something else takes the rest when it frees up."""
    unit = next((u for u in pending if u.deps <= finished), None)
    if unit is None:
        return []
    group = [unit]
    if unit.ticker is not None:
        stage = _stage(unit)
        ready = [u for u in pending if u.ticker is not None and _stage(u) == stage and u.deps <= finished]
        size = (stage_sizes or {}).get(stage, len(ready))
        group = ready[: max(1, min(MAX_BATCH_TICKERS, -(-size // max(1, lanes))))]
    for taken in group:
        pending.remove(taken)
    return group


def stage_sizes(units: Sequence[RunUnit]) -> dict[str, int]:
    """{stage: how many ticker units it has} (what a lane's share of a stage is cut from)."""
    sizes: dict[str, int] = {}
    for unit in units:
        if unit.ticker is not None:
            sizes[_stage(unit)] = sizes.get(_stage(unit), 0) + 1
    return sizes


def _ticker_order(instance: dg.DagsterInstance | None) -> list[str]:
    """The ticker dimension's order in Dagster (what a partition key range spans)."""
    from stocker_assets.definitions.partitions import ticker_partitions

    return [] if instance is None else list(instance.get_dynamic_partitions(ticker_partitions.name))


def batch_unit(to_run: Sequence[RunUnit], fresh: Sequence[RunUnit], order: Sequence[str]) -> RunUnit:
    """One unit for a stage's tickers ``to_run`` (their stale months) and ``fresh`` (up to date):
    its runs are the fewest rectangles of tickers × months (``partition_boxes``)."""
    position = {t: i for i, t in enumerate(order)}
    every = sorted([*to_run, *fresh], key=lambda u: position.get(u.ticker or "", len(position)))
    first = every[0]
    boxes = partition_boxes([(u.ticker or "", u.months) for u in to_run], order)
    months = sorted({m for u in to_run for m in u.months})
    tickers = [u.ticker for u in every]
    span = f" {months[0]:%Y-%m}…{months[-1]:%Y-%m}" if months else ""
    label = f"{first.label.split(':')[0]}: {len(every)} tickers {tickers[0]}…{tickers[-1]}{span}"
    label += f" ({sum(len(u.months) for u in to_run)} ticker-months, {len(boxes)} run(s))"
    if fresh:
        label += f"; {len(fresh)} up to date"
    return RunUnit(
        f"{tickers[0]}…{tickers[-1]}@{_stage(first)}",
        label,
        first.assets,
        first.steps * max(1, len(boxes)),
        None,
        tuple(months),
        frozenset(d for u in every for d in u.deps),
        members=tuple(to_run),
        boxes=boxes,
        up_to_date=tuple(fresh),
    )


def _prepare(
    options: LaneOptions,
    group: Sequence[RunUnit],
    order: Sequence[str],
    on_start: UnitStarted,
    on_done: UnitDone,
    finished: set[str],
) -> tuple[RunUnit | None, list[tuple]]:
    """Decide ``group`` (one unit, or a stage's tickers), record and report what is up to date;
    returns (the unit to run — ``group``'s one unit, or their batch — or None, the decisions)."""
    from stocker_assets.engine.up_to_date import skipped_run

    decided = [_decide(options, u) for u in group]
    fresh = [(d, u) for d, u in decided if d is not None and not d.run]
    to_run = [(d, u) for d, u in decided if d is None or d.run]
    for decision, unit in fresh:
        options.up_to_date.record(unit, decision, None)
    if len(group) == 1:
        unit = decided[0][1]
    else:
        order = order or [u.ticker for u in group]  # no instance (tests): the plan's order
        unit = batch_unit([u for _, u in to_run], [u for _, u in fresh], order)
    if not to_run:
        on_start(unit)
        on_done(unit, skipped_run(unit, fresh[0][0]))
        finished.update({unit.name, *(u.name for _, u in fresh)})
        return None, []
    return unit, to_run


def _names_run(unit: RunUnit) -> set[str]:
    """The unit names ``unit`` completes (a batch: each of its tickers' units)."""
    return {unit.name, *(u.name for u in unit.members), *(u.name for u in unit.up_to_date)}


def _decide(options: LaneOptions, unit: RunUnit):
    """(the decision, the unit narrowed to its stale months) — (None, unit) without a planner."""
    if options.up_to_date is None:
        return None, unit
    decision = options.up_to_date.decide(unit)
    if decision.run and unit.ticker is not None and decision.months != unit.months:
        months = decision.months
        span = f"{months[0]:%Y-%m}…{months[-1]:%Y-%m}"
        label = (
            f"{unit.label.split(':')[0]}: {unit.ticker} {span} "
            f"({len(months)} of {len(unit.months)} months: {decision.reason})"
        )
        unit = replace(unit, months=months, label=label)
    return decision, unit


def _record(options: LaneOptions, decisions: Sequence[tuple], run: TickerRun) -> None:
    """Each unit's decision in ``meta.builds``: a batch's tickers built despite another's
    failure count as built."""
    if options.up_to_date is not None:
        for decision, unit in decisions:
            if decision is not None:
                own = replace(run, success=True) if unit.ticker in run.built else run
                options.up_to_date.record(unit, decision, own)


def execute_unit(
    instance: dg.DagsterInstance,
    defs: dg.Definitions,
    unit: RunUnit,
    options: LaneOptions,
    on_step: StepCallback | None = None,
    tags: dict[str, str] | None = None,
) -> TickerRun:
    """The Dagster runs of one unit, in this process: a batch's boxes one after another; a
    partition failing its checks fails only its ticker (``run_box``), any other
    failure stops the rest."""
    wanted = set(unit.assets)
    assets = [a for a in defs.assets if isinstance(a, dg.AssetsDefinition) and set(_names([a])) & wanted]
    boxes = unit.boxes
    if unit.ticker is not None and not boxes:
        boxes = (((unit.ticker,), unit.months),)
    if not boxes:
        return run_unpartitioned(instance, defs, assets, on_step, options.log_level, tags=tags)
    outcome: TickerRun | None = None
    for tickers, months in boxes:
        run = run_box(
            instance,
            defs,
            tickers,
            months,
            assets,
            on_step,
            options.log_level,
            allow_failed_checks=options.allow_failed_checks,
            tags=tags,
        )
        outcome = run if outcome is None else merge_runs(outcome, run)
        if not run.success and not run.built:
            break  # a failure no check pinned on its tickers: the batch stops here
    assert outcome is not None
    ran = [t for tickers, _ in boxes for t in tickers]
    if unit.members and len(ran) > 1:
        outcome.ticker = f"{ran[0]}…{ran[-1]} ({len(ran)} tickers)"
    elif unit.members:
        outcome.ticker = ran[0]
    return outcome


@functools.cache
def _worker_definitions() -> dg.Definitions:
    from stocker_assets.definitions.build import build_definitions
    from stocker_assets.definitions.resources import StockerResource

    return build_definitions({"stocker": StockerResource()})


def warm_worker() -> None:
    """A lane's first act: load the definitions (and the libraries they import) once."""
    _worker_definitions()


def unit_in_worker(unit: RunUnit, options: LaneOptions, token: str, parent: int | None = None) -> TickerRun:
    """``execute_unit`` in a lane process: its own instance handle on the same home, runs
    tagged ``LAUNCH_TAG=token`` so the CLI can follow them; nothing starts once the CLI
    (``parent``) is gone."""
    from stocker_assets.engine.instance import dagster_instance
    from stocker_core.config import get_settings

    if parent is not None and not parent_alive(parent):
        os._exit(1)

    instance = dagster_instance(get_settings(fresh=True))
    return execute_unit(instance, _worker_definitions(), unit, options, tags={LAUNCH_TAG: token})


@dataclass
class _Launched:
    unit: RunUnit
    stop: threading.Event
    watcher: threading.Thread
    started: float


def _run_on_lanes(instance, units, options, on_start, on_done) -> list[RunUnit]:
    pending = priority_order(units)
    finished: set[str] = set()
    failed = False
    running: dict[Future, _Launched] = {}
    decisions: dict[str, list[tuple]] = {}
    order, sizes = _ticker_order(instance), stage_sizes(units)
    lane_options = replace(options, up_to_date=None)  # decided here; the lanes only run
    context = multiprocessing.get_context("spawn")
    from stocker_core.config import get_settings

    cli = os.getpid()
    with (
        run_lock_file(get_settings().home) as lock,
        sigterm_as_exit(),
        ProcessPoolExecutor(
            options.workers,
            mp_context=context,
            initializer=lane_start,
            initargs=(cli, str(lock), warm_worker),
        ) as pool,
    ):
        try:
            while pending or running:
                # fill every free lane: a unit found up to date takes no lane (and may free others)
                while not failed and len(running) < options.workers:
                    group = take_ready(pending, finished, options.workers, sizes)
                    if not group:
                        break
                    unit, decided = _prepare(options, group, order, on_start, on_done, finished)
                    if unit is None:
                        continue
                    decisions[unit.name] = decided
                    token = str(uuid.uuid4())
                    stop = threading.Event()
                    watch = threading.Thread(
                        target=watch_tagged_runs, args=(instance, token, on_start(unit), stop), daemon=True
                    )
                    watch.start()
                    future = pool.submit(unit_in_worker, unit, lane_options, token, cli)
                    running[future] = _Launched(unit, stop, watch, time.perf_counter())
                if not running:
                    break  # done, or a failure left nothing to wait for (or deps that can never be met)
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    launched = running.pop(future)
                    launched.stop.set()
                    launched.watcher.join()
                    run = _outcome(future, launched)
                    _record(options, decisions.pop(launched.unit.name, []), run)
                    on_done(launched.unit, run)
                    if run.success:
                        finished.update(_names_run(launched.unit))
                    else:
                        failed = True
        except BaseException:  # Ctrl-C, SIGTERM, an error: no lane outlives the CLI
            pool.shutdown(wait=False, cancel_futures=True)
            kill_children()
            for launched in running.values():
                launched.stop.set()
            raise
    return pending


def _outcome(future: Future, launched: _Launched) -> TickerRun:
    """The unit's TickerRun, or a failed one naming the error when its lane raised."""
    unit = launched.unit
    try:
        return future.result()
    except Exception as exc:  # the lane died or raised outside Dagster's own error handling
        seconds = time.perf_counter() - launched.started
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return TickerRun(
            unit.ticker or unit.name,
            len(unit.months),
            "",
            False,
            seconds,
            [],
            errors=[f"{unit.name}: lane failed: {type(exc).__name__}: {first}"],
        )
