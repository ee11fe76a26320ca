"""The pipeline's commands (``tickers``, ``materialize``, ``ui``): the Dagster-driven area
(``sql``, which reads what they built, needs no Dagster: ``stocker_core.warehouse.sql_cli``)."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from stocker_core.cli_support import EXIT_FAILED, fail
from stocker_core.config import get_settings
from stocker_core.errors import StockerError, UnknownTickerError
from stocker_core.universe import add_tickers, read_universe, remove_tickers

console = Console()
tickers_app = typer.Typer(help="The ticker universe (also registered as Dagster partitions).")

commands = typer.Typer()
"""What this area adds to ``stocker``: ``materialize``, ``ui`` and the ``tickers`` group."""
commands.add_typer(tickers_app, name="tickers")

REGISTERING_THEMSELVES = ("tickers",)
"""Command groups here that call the composition root themselves where they read a registry
(``tickers add`` reads the sources): ``tickers list`` and ``remove`` start without it."""

REPO_ROOT = Path(__file__).resolve().parents[1]


def _instance():
    """The CLI's Dagster instance (created under a file lock: commands may start at once)."""
    from stocker_assets.engine.instance import dagster_instance

    try:
        return dagster_instance(get_settings(fresh=True))
    except StockerError as exc:
        fail(exc, EXIT_FAILED)


def file_problems(source) -> dict[str, str]:
    """The files source's unusable files and skipped rows (file name -> why), through the
    wrappers around it (quality gate, clock); empty for other sources."""
    while source is not None:
        if hasattr(source, "file_problems"):
            return source.file_problems()
        source = getattr(source, "inner", None)
    return {}


def _known_to_source(settings, tickers: list[str]) -> list[str]:
    """Valid names the configured source has (UnknownTickerError, with a suggestion, if not)."""
    from stocker_core.market.source_builder import get_source
    from stocker_core.market.sources import check_symbols
    from stocker_core.market.validation import validate_ticker

    names = [validate_ticker(t) for t in tickers]
    source = get_source(settings)
    try:
        checked = check_symbols(source, names)
    except UnknownTickerError as exc:
        problems = file_problems(source)
        if not problems:
            raise
        unread = "; ".join(f"{name}: {why}" for name, why in sorted(problems.items()))
        raise UnknownTickerError(f"{exc}; unreadable file(s) in {settings.files_dir}: {unread}") from None
    if not source.symbols():
        console.print(
            f"[yellow]the {source.name} source cannot list its symbols: "
            f"{', '.join(names)} will be checked on first ingest[/yellow]"
        )
    return checked


@tickers_app.command("add")
def tickers_add(
    tickers: list[str] = typer.Argument(None, help="tickers to add (e.g. AAPL MSFT)", show_default=False),
    file: Path | None = typer.Option(
        None,
        "--file",
        "-f",
        help="a list file: one ticker a line, # comments, blank lines; every line is checked before "
        "anything is written",
        dir_okay=False,
    ),
) -> None:
    """Add tickers the configured source has to the universe and register them as partitions:
    all of them in one write, or none (a bad name, file line or unknown symbol writes nothing)."""
    from stocker_assets.engine.instance import register_tickers
    from stocker_core.composition import register_all
    from stocker_core.universe import read_ticker_list

    register_all()  # the data sources: this group skips the callback's (REGISTERING_THEMSELVES)
    settings = get_settings(fresh=True)
    if not tickers and file is None:
        fail("name tickers (stocker tickers add AAPL MSFT) or a list file (--file universe.txt)")
    try:
        listed = read_ticker_list(file) if file is not None else None
        wanted = [*(tickers or []), *(listed.tickers if listed else [])]
        names = _known_to_source(settings, wanted)
        before = set(read_universe(settings))
        stored = add_tickers(settings, names)
    except StockerError as exc:
        fail(exc)
    for line in listed.duplicates if listed else []:
        console.print(f"[yellow]duplicate: {escape(line)}[/yellow]", soft_wrap=True)
    present = [name for name in dict.fromkeys(names) if name in before]
    if present:
        console.print(f"[yellow]already in the universe: {', '.join(present)}[/yellow]", soft_wrap=True)
    instance = _instance()
    new = register_tickers(instance, stored)
    added = [name for name in dict.fromkeys(names) if name not in before]
    if file is not None or len(stored) > 30:
        console.print(
            f"universe: {len(stored)} tickers, {len(added)} added ({len(new)} newly registered partition(s))"
        )
    else:
        console.print(f"universe: {', '.join(stored)} ({len(new)} newly registered partition(s))")
    flags = " ".join(f"-t {name}" for name in added[:30])  # --ticker takes one value
    if len(added) > 30:
        console.print("backfill them with: [bold]stocker materialize[/bold] (every registered ticker)")
    elif added:
        console.print(f"backfill them with: [bold]stocker materialize {flags}[/bold]", soft_wrap=True)


@tickers_app.command("list")
def tickers_list() -> None:
    """Print the registered tickers."""
    try:
        for ticker in read_universe(get_settings(fresh=True)):
            console.print(ticker)
    except StockerError as exc:
        fail(exc)


@tickers_app.command("remove")
def tickers_remove(tickers: list[str]) -> None:
    """Remove tickers from the universe file and their Dagster ticker partitions
    (stored rows are kept)."""
    from stocker_assets.engine.instance import unregister_tickers

    try:
        stored = remove_tickers(get_settings(fresh=True), tickers)
    except StockerError as exc:
        fail(exc)
    gone = unregister_tickers(_instance(), tickers)
    console.print(f"universe: {', '.join(stored) or '(empty)'} ({len(gone)} partition(s) removed)")


def _month(value: str | None, option: str = "--from/--to") -> date | None:
    """``--from``/``--to`` as the month settings read it (``YYYY-MM`` or a day, ASCII digits)."""
    from stocker_core.settings.values import parse_month_setting

    if value is None:
        return None
    try:
        return parse_month_setting(value)
    except ValueError as exc:
        raise typer.BadParameter(f"{value!r}: {exc}", param_hint=f"'{option}'") from None


def _check_range(start: str | None, end: str | None) -> None:
    """Exit 2 at once when ``--from`` is after ``--to`` (an empty range is never what was meant)."""
    first, last = _month(start, "--from"), _month(end, "--to")
    if first is not None and last is not None and first > last:
        fail(f"--from {start} is after --to {end}: the range is empty; give the earlier month first")


DEFAULT_GROUPS = "market,env,text,council,evaluation,training"
WHOLE_HISTORY_GROUPS = {"training", "evaluation"}


def _paragraphs(*paragraphs: str) -> str:
    """Help text whose paragraphs Typer shows unbroken (it keeps a docstring's newlines)."""
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


MATERIALIZE_HELP = _paragraphs(
    "The main job: the assets of the chosen groups for every month with data.",
    """Runs go stage by stage along the asset graph (text events; then per ticker its prices,
    indicators, charts, episodes and votes; then models, backtests, the rolling evaluation
    and the report), each through its named Dagster job: market_job, env_job, council_job,
    evaluation_job, training_job.""",
    """Groups: market (prices, indicators, charts), env (episodes, ideal trajectories), text
    (news, forum posts, macro events), council (specialist votes), evaluation (splits,
    backtests, DRL baselines, rolling evaluation, report), training (moderator base/SFT/GRPO,
    agent policy).""",
    """Exits 1 when a run fails or a blocking check fails (the failing partitions and why are
    printed): fix the data, add a reasoned fix to $STOCKER_HOME/corrections.csv, or pass
    --allow-failed-checks.""",
)


@commands.command(help=MATERIALIZE_HELP)
def materialize(
    ticker: list[str] = typer.Option(None, "--ticker", "-t", help="Tickers (default: the universe)."),
    start: str = typer.Option(
        None,
        "--from",
        help="First month, YYYY-MM (default: STOCKER_MAIN_FROM, 2014-06 on the sample; else first data).",
    ),
    end: str = typer.Option(
        None,
        "--to",
        help="Last month, YYYY-MM (default: STOCKER_MAIN_TO, 2018-08 on the sample; else last data).",
    ),
    groups: str | None = typer.Option(
        None,
        "--groups",
        "-g",
        help=(
            f"Comma-separated asset groups to build, from: {', '.join(DEFAULT_GROUPS.split(','))} "
            "(default: all; with -t, the whole-history training and evaluation steps only when named)."
        ),
    ),
    skip: str = typer.Option(
        "",
        "--skip",
        help="Comma-separated assets of those groups to leave out, e.g. charts when nothing needs the PNGs "
        "(the rule council reads bars, not images).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help=(
            "Rebuild every partition and model even when its code, settings and inputs are "
            "unchanged since its last build (by default those are skipped, and said so)."
        ),
    ),
    allow_failed_checks: bool = typer.Option(
        False,
        "--allow-failed-checks",
        help=(
            "Build downstream assets although blocking price checks failed: failed partitions "
            "stay quarantined and are skipped (listed), and the command exits 0."
        ),
    ),
) -> None:
    """The main job: the assets of the chosen groups for every month with data
    (the full text, shown by --help, is ``MATERIALIZE_HELP``)."""
    _check_range(start, end)  # before anything slow: an inverted range is bad usage
    from stocker_assets.definitions.build import build_definitions
    from stocker_assets.definitions.resources import StockerResource
    from stocker_assets.engine.instance import register_tickers

    settings = get_settings(fresh=True)
    start, end = start or settings.main_from, end or settings.main_to  # the main job's span
    defs = build_definitions({"stocker": StockerResource()})
    job = _select(settings, defs, ticker, groups, skip, start, end)
    for name, why in job.unusable.items():
        console.print(f"[red]{name}: skipped: {why}[/red] (remove it with: stocker tickers remove {name})")
    for name, why in sorted(file_problems(job.source).items()):
        console.print(f"[yellow]{settings.files_dir}/{name}: {why}[/yellow]")
    instance = _instance()
    register_tickers(instance, [t for t in job.tickers if t not in job.unusable])
    console.print(
        f"source [bold]{settings.source}[/bold] → warehouse [bold]{settings.warehouse_path}[/bold]; "
        f"groups {job.groups}"
    )
    started = time.perf_counter()
    results, planner = _run_job(settings, defs, instance, job, force, allow_failed_checks)
    _print_results(results)
    for line in planner.disk_report():  # damaged files rebuilt, months the source dropped
        console.print(f"[yellow]{escape(line)}[/yellow]", soft_wrap=True)
    _print_failures(results, allow_failed_checks)
    console.print(
        f"warehouse: {_row_counts(settings.warehouse_path)} — total {time.perf_counter() - started:.1f}s"
    )
    _print_closing_notes(settings, results, job.held_back, job.tickers if job.held_back else [])
    if job.unusable or not all(r.success for r in results):
        raise typer.Exit(EXIT_FAILED)


@dataclass
class _Job:
    """What one ``stocker materialize`` builds: its assets and checks, tickers and months."""

    groups: str
    partitioned: list
    unpartitioned: list
    checks: list
    held_back: list
    """Whole-history steps a ticker-scoped run leaves out (``whole_history_held_back``)."""
    source: Any
    tickers: list[str]
    plan: dict[str, list]
    """Each usable ticker's months with data in the range."""
    unusable: dict[str, str]
    """Universe tickers the source cannot serve, and why."""


def _fetch_in_batches(settings, source, tickers: list[str], start: str | None, end: str | None) -> None:
    """Have a source that fetches in multi-ticker batches (yfinance) fetch every ticker's months
    of the run at once (``market.bars.prefetch_missing``), before the plan asks each ticker's
    history (one request a ticker otherwise). A failure is said and the tickers are then
    fetched one by one, as without it."""
    from stocker_core.market.bars import prefetch_missing
    from stocker_core.market.calendar import month_end
    from stocker_core.warehouse import Warehouse

    first = _month(start) or _month(settings.start_month)
    last = month_end(_month(end)) if end else date.today() + timedelta(days=1)
    try:
        report = prefetch_missing(source, Warehouse(settings.warehouse_path), tickers, first, last)
    except StockerError as exc:
        console.print(
            f"[yellow]the batched fetch failed; each ticker is fetched alone: {escape(str(exc))}[/yellow]"
        )
        return
    if report is not None and report.requests:
        console.print(f"fetched {len(tickers)} tickers in {report.batches} batch(es) from {source.name}")


def _select(
    settings, defs, ticker: list[str] | None, groups: str | None, skip: str, start: str, end: str
) -> _Job:
    """The job the options ask for (exit 2 for a bad group, asset, ticker or month)."""
    from stocker_assets.definitions.resources import StockerResource
    from stocker_assets.engine.runner import months_with_data, select_assets

    unusable: dict[str, str] = {}
    held_back: list = []
    try:
        chosen = [g.strip() for g in (groups or DEFAULT_GROUPS).split(",")]
        partitioned, unpartitioned, checks = select_assets(defs, chosen)
        partitioned, unpartitioned, checks = _without(skip, partitioned, unpartitioned, checks)
        if ticker and groups is None:  # a ticker's partitions, not a retraining of everything
            unpartitioned, held_back = whole_history_held_back(unpartitioned)
        source = StockerResource().market_source()
        if ticker:  # asked for by name: the source must have each before the universe changes
            tickers = _known_to_source(settings, [*ticker])
            _fetch_in_batches(settings, source, tickers, start, end)
            plan = {t: months_with_data(source, t, _month(start), _month(end)) for t in tickers}
            add_tickers(settings, tickers)
        else:  # from the universe: a symbol the source lacks is reported, the others still run
            tickers = read_universe(settings)
            _fetch_in_batches(settings, source, tickers, start, end)
            plan = {}
            for name in tickers:
                try:
                    plan[name] = months_with_data(source, name, _month(start), _month(end))
                except StockerError as exc:
                    unusable[name] = str(exc)
    except (StockerError, ValueError) as exc:
        fail(exc)
    return _Job(
        ",".join(chosen), partitioned, unpartitioned, checks, held_back, source, tickers, plan, unusable
    )


def _run_job(settings, defs, instance, job: _Job, force: bool, allow_failed_checks: bool) -> tuple[list, Any]:
    """Run ``job`` stage by stage on its lanes with a progress bar: (each run's result, the
    up-to-date planner, whose disk report the command prints)."""
    from stocker_assets.engine.lane_lifetime import wait_for_leftover_lanes
    from stocker_assets.engine.lanes import LaneOptions, plan_units, run_units, worker_count
    from stocker_assets.engine.materialize_progress import MaterializeProgress
    from stocker_assets.engine.stages import RunUnit, plan_stages
    from stocker_assets.engine.up_to_date import UpToDate
    from stocker_core.warehouse import Warehouse

    results = []
    check_names = [s.name for c in job.checks for s in c.check_specs]
    for name, months in job.plan.items():
        if not months and job.partitioned:
            console.print(f"[yellow]{name}: no months with data in range; skipped[/yellow]")
    units = plan_units(plan_stages([*job.unpartitioned, *job.partitioned]), job.plan, job.checks)
    warehouse = Warehouse(settings.warehouse_path)
    planner = UpToDate(defs, settings, job.source, warehouse, list(job.plan), force, instance)
    options = LaneOptions(worker_count(settings), allow_failed_checks=allow_failed_checks, up_to_date=planner)
    try:  # before anything runs: the lanes of a killed earlier run must be gone
        wait_for_leftover_lanes(settings.home, console.print)
    except StockerError as exc:
        fail(exc, EXIT_FAILED)
    if options.workers > 1 and len(units) > 1:
        console.print(f"{len(units)} runs on {options.workers} lanes (STOCKER_MAIN_WORKERS)")
    skipped_units: list[RunUnit] = []
    with MaterializeProgress(console, check_names) as progress:
        tasks: dict[str, object] = {}

        def on_start(unit: RunUnit):
            task, on_step = progress.track(unit.label, unit.steps)
            tasks[unit.name] = task
            return on_step

        def on_done(unit: RunUnit, run) -> None:
            if unit.members or unit.up_to_date:  # a batch of tickers: some may be up to date
                skipped_units.extend(unit.up_to_date)
            elif run.skipped:
                skipped_units.append(unit)
            results.append(run if unit.partitioned else replace(run, ticker=", ".join(unit.assets)))
            progress.finish(tasks[unit.name], unit.label, run.success, run.seconds)

        for unit in run_units(instance, defs, units, options, on_start, on_done, console.print):
            console.print(f"[yellow]{unit.label} not run: an earlier run failed[/yellow]")
        _mark_empty_months(instance, job.source, job.plan, job.partitioned, progress)
    _report_skipped(instance, skipped_units, len(units))
    return results, planner


def _print_results(results: list) -> None:
    """The ``Materialized`` table: each run's months, Dagster runs, seconds and status."""
    table = Table(title="Materialized")
    for col in ("run of", "months", "runs (job: id)", "seconds", "status"):
        table.add_column(col)
    for r in results:
        status = "ok" if r.success else "[red]FAILED[/red]"
        if r.skipped:
            status = f"up to date: skipped ({r.skipped.removeprefix('up to date: ')})"
        if r.checks_failed:
            status += f" [yellow](checks failed: {', '.join(r.checks_failed)})[/yellow]"
        runs = "\n".join(f"{job}: {run_id[:8]}" for job, run_id in r.runs) or "–"
        table.add_row(r.ticker, str(r.months or "–"), runs, f"{r.seconds:.1f}", status)
    console.print(table)


def _report_skipped(instance, skipped: list, total: int) -> None:
    """Say how many runs were up to date (skipped), and show it on each asset in Dagster."""
    from stocker_assets.engine.up_to_date import observe_skipped

    if not skipped:
        return
    by_asset: dict[str, list[str]] = {}
    for unit in skipped:
        for asset in unit.assets:
            by_asset.setdefault(asset, []).extend(f"{unit.ticker}|{m}" for m in unit.months)
    observe_skipped(instance, by_asset)
    console.print(
        f"{len(skipped)} of {total} part(s) of the job up to date, skipped (code, settings and inputs "
        "unchanged since their last build; `--force` rebuilds; decisions in meta.builds)",
        soft_wrap=True,
    )


def _without(skip: str, partitioned: list, unpartitioned: list, checks: list) -> tuple[list, list, list]:
    """The selection less the assets named in ``skip`` (and their checks); ValueError for a
    name that is not in the selection."""
    names = {n.strip() for n in skip.split(",") if n.strip()}
    if not names:
        return partitioned, unpartitioned, checks
    chosen = {k.to_user_string() for a in [*partitioned, *unpartitioned] for k in a.keys}
    unknown = sorted(names - chosen)
    if unknown:
        raise ValueError(
            f"--skip {', '.join(unknown)}: not an asset of the chosen groups ({', '.join(sorted(chosen))})"
        )

    def kept(assets: list) -> list:
        return [a for a in assets if not {k.to_user_string() for k in a.keys} & names]

    dropped = {
        k.to_user_string() for a in [*partitioned, *unpartitioned] if a not in kept([a]) for k in a.keys
    }
    checks = [c for c in checks if not {s.asset_key.to_user_string() for s in c.check_specs} & dropped]
    return kept(partitioned), kept(unpartitioned), checks


def _mark_empty_months(instance, source, plan: dict[str, list], partitioned: list, progress) -> None:
    """Months outside each ticker's data get a "no data" materialization (once), so the
    UI shows them as such instead of missing; one asset at a time for every ticker, with progress."""
    from stocker_assets.definitions.progress import Progress
    from stocker_assets.engine.runner import StepEvent, mark_months_without_data

    if not partitioned or not plan:
        return
    label = f"{len(plan)} ticker(s): marking months outside their data as 'no data'"
    task, on_event = progress.track(label, 1)
    on_event(StepEvent("no_data", "no_data", "started"))
    count, began = 0, time.perf_counter()
    for index, asset in enumerate(partitioned):
        count += mark_months_without_data(instance, source, list(plan), [asset])
        step = Progress(index + 1, len(partitioned), "assets")
        on_event(StepEvent("no_data", "no_data", "progress", progress=step))
    on_event(StepEvent("no_data", "no_data", "done"))
    progress.finish(task, label, True, time.perf_counter() - began)
    if count:
        console.print(f"{count} partition(s) outside the tickers' data marked 'no data' in Dagster")


def whole_history_held_back(unpartitioned: list) -> tuple[list, list]:
    """(kept, held back): a ticker-scoped run leaves out the unpartitioned training and
    evaluation assets, which train on and evaluate every ticker's whole history."""
    held = [a for a in unpartitioned if set(a.group_names_by_key.values()) & WHOLE_HISTORY_GROUPS]
    return [a for a in unpartitioned if a not in held], held


def _print_closing_notes(settings, results: list, held_back: list, scoped: list | None = None) -> None:
    """Held-back steps, tickers left out (or, in a ticker-scoped run, that the held-back
    evaluation will leave out), the report's path and how to open the web page."""
    if held_back:
        console.print(
            f"[yellow]not run for a ticker-scoped run[/yellow]: {', '.join(_asset_names(held_back))} "
            "(whole-history training and evaluation) — they run in the full job (`stocker materialize`), "
            "with `-t … --groups training,evaluation`, or on their schedule",
            soft_wrap=True,
        )
    for name, why in sorted({k: v for r in results for k, v in r.left_out.items()}.items()):
        console.print(f"[yellow]{name} left out[/yellow]: {why}", soft_wrap=True)
    for name, why in sorted(_foreseen_left_out(settings, scoped or []).items()):
        console.print(
            f"[yellow]{name} will be left out of the rolling evaluation[/yellow]: {why}", soft_wrap=True
        )
    console.print(
        'query the warehouse: [bold]stocker sql "SELECT * FROM env.episodes LIMIT 5"[/bold]; '
        "the Dagster UI: [bold]stocker ui[/bold] (http://127.0.0.1:3000)",
        soft_wrap=True,
    )
    report = settings.home / "reports" / "evaluation" / "report.html"
    if report.exists():
        console.print(f"report: [bold]{report}[/bold] (`stocker report --open`)", soft_wrap=True)
    else:
        console.print("report: none yet (the evaluation group writes it: `stocker materialize`)")
    console.print(
        "web page: [bold]stocker web[/bold], then open http://127.0.0.1:8000/web/ "
        "(episodes, council, compare, training)",
        soft_wrap=True,
    )


def _foreseen_left_out(settings, tickers: list) -> dict[str, str]:
    """For a ticker-scoped run: which of its tickers the held-back evaluation will leave out."""
    if not tickers:
        return {}
    import pandas as pd

    from stocker_core.evaluation.steps import foreseen_left_out
    from stocker_core.warehouse.db import Warehouse

    try:
        warehouse = Warehouse(settings.warehouse_path)
        prices = pd.concat(
            [warehouse.read_table("market.prices", t, columns=["ticker", "date"]) for t in tickers],
            ignore_index=True,
        )
        return foreseen_left_out(prices, tickers)
    except Exception:  # a summary line must never fail the run it summarises
        return {}


def _asset_names(assets: list) -> list[str]:
    return [k.to_user_string() for a in assets for k in a.keys]


def _print_failures(results: list, allowed: bool) -> None:
    """Name every partition that failed a check, with why, and each failed step's error."""
    failures = {k: p for r in results for k, p in r.check_failures.items()}
    for r in results:
        for error in r.errors:
            console.print(f"[red]{r.ticker}: {error}[/red]", soft_wrap=True)
    if not failures:
        return
    verb = "excluded (--allow-failed-checks)" if allowed else "blocked"
    console.print(f"[red]{len(failures)} partition(s) failed blocking checks, {verb}:[/red]")
    for key, problems in sorted(failures.items()):
        console.print(f"  {key}: {'; '.join(problems[:5])}", soft_wrap=True)
    if not allowed:
        console.print(
            "fix the source data, add a reasoned fix to $STOCKER_HOME/corrections.csv "
            "(ticker,date,column,value,reason), or rerun with --allow-failed-checks to build "
            "the clean partitions (failed ones stay excluded)",
            soft_wrap=True,
        )


def _row_counts(path: Path) -> str:
    import duckdb

    from stocker_core.warehouse import Warehouse

    tables = ["market.prices", "market.indicators", "market.charts", "env.episodes", "council.votes"]
    found = (
        Warehouse(path)
        .query("SELECT table_schema || '.' || table_name AS t FROM information_schema.tables")["t"]
        .tolist()
    )
    counts = []
    for table in (t for t in tables if t in found):
        try:
            n = Warehouse(path).query(f"SELECT count(*) AS n FROM {table}")["n"].iloc[0]
        except duckdb.Error as exc:  # a part file damaged outside this run's plan: named, no traceback
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            counts.append(f"{table} unreadable ({first[:160]})")
            continue
        counts.append(f"{table} {int(n)}")
    return ", ".join(counts) + " rows"


UI_HELP = _paragraphs(
    "Start `dagster dev` (web UI, daemon) on this project with the CLI's Dagster instance.",
    """Ctrl-C or SIGTERM stops it and all its processes (the signal goes to its process group;
    whatever is left after 10 s is killed).""",
)


@commands.command(help=UI_HELP)
def ui(
    port: int = typer.Option(3000, "--port", "-p", min=1, max=65_535, help="Port for the web UI."),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        "-h",
        help="Address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface).",
    ),
) -> None:
    """Start `dagster dev` on this project with the CLI's Dagster instance (``UI_HELP``)."""
    from stocker_assets.engine.ui_process import SUPERSEDED_DEV, run_in_own_group

    _instance()
    home = Path(os.environ["DAGSTER_HOME"])
    workspace = REPO_ROOT / "workspace.yaml"
    target = ["-w", str(workspace)] if workspace.exists() else ["-m", "stocker_assets.definitions.location"]
    command = [sys.executable, "-m", "dagster", "dev", *target, "-h", host, "-p", str(port)]
    env = dict(os.environ)
    env["PYTHONWARNINGS"] = ",".join(filter(None, [env.get("PYTHONWARNINGS"), SUPERSEDED_DEV]))
    console.print(f"DAGSTER_HOME={home}; dagster dev on http://{host}:{port} (Ctrl-C stops it)")
    # run from DAGSTER_HOME: its dagster.yaml is the one in use, so dagster dev does not warn
    # about the repository's own dagster.yaml (the template for `dagster dev` at the root)
    raise typer.Exit(run_in_own_group(command, env, cwd=home))
