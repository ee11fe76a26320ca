"""``stocker backtest``, ``stocker splits`` and ``stocker report``."""

from __future__ import annotations

import json
from typing import Any

import typer

from stocker_core.cli_support import EXIT_FAILED, fail
from stocker_core.errors import StockerError
from stocker_core.settings.values import MAX_SEED

commands = typer.Typer()
"""What this area adds to ``stocker``: ``backtest``, ``splits`` and ``report``."""


def _episode_name(task: str | None, episode: str | None) -> str:
    if task and episode:
        fail("give --task or --episode, not both")
    return task or episode or "task_easy"


def _print_table(title: str, rows: list[dict[str, Any]], columns: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    from stocker_core.evaluation.metrics import format_metric

    table = Table(title=title)
    for column in columns:
        table.add_column(
            "policy" if column == "label" else column, justify="left" if column == "label" else "right"
        )
    for row in rows:
        table.add_row(*(str(row[c]) if c == "label" else format_metric(row[c]) for c in columns))
    Console(width=220).print(table)


@commands.command("backtest")
def backtest_command(
    task: str | None = typer.Option(None, "--task", help="task_easy | task_medium | task_hard"),
    episode: str | None = typer.Option(None, "--episode", help="partition key, e.g. GOOGL|2012-03-01"),
    policies: str | None = typer.Option(
        None, "--policies", help="comma-separated names (default: every one)"
    ),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="seed of random policies"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON row per policy"),
) -> None:
    """Play every policy (or --policies) on an episode; one row of metrics per policy."""
    from stocker_core.config import get_settings
    from stocker_core.env.episode import load_episode
    from stocker_core.env.rewards import RewardParams
    from stocker_core.evaluation.backtests import backtest, check_policy_names, ordered_policies
    from stocker_core.evaluation.council_votes import load_vote_book
    from stocker_core.evaluation.metrics import METRIC_NAMES
    from stocker_core.warehouse.db import Warehouse

    settings = get_settings()
    try:
        names = (
            check_policy_names([p.strip() for p in policies.split(",") if p.strip()])
            if policies
            else ordered_policies()
        )
        ep = load_episode(_episode_name(task, episode), settings)
        book = None
        if "council" in names and settings.warehouse_path.exists():
            book = load_vote_book(Warehouse(settings.warehouse_path), settings, ep.ticker, list(ep.dates))
        result = backtest(ep, names, RewardParams.from_settings(settings), seed, settings, book)
    except StockerError as exc:
        fail(exc)
    looks = _test_look(settings, ep, result, seed, book.version if book else None)
    rows = result.rows()
    if as_json:
        payload = {"episode": ep.summary(), "rows": rows, "failures": result.failures}
        typer.echo(json.dumps({**payload, "test_looks": looks}))
    else:
        title = f"{ep.key}: {ep.start} … {ep.end}, {ep.trading_days} trading days"
        _print_table(title, rows, ["label", *METRIC_NAMES])
        for row in rows:
            if row["notes"]:
                typer.echo(f"note: {row['notes']}")
    for name, problem in result.failures.items():
        typer.secho(f"{name} failed: {problem}", err=True, fg=typer.colors.YELLOW)
    # the default set includes trained policies that may not exist yet: a warning only;
    # a policy the user named that failed, or nothing that ran, is a failed run
    if result.failures and (policies or not result.runs):
        raise typer.Exit(EXIT_FAILED)


def _test_look(settings, ep, result, seed: int, vote_version: str | None) -> int | None:
    """Record the backtest as a look when the episode has days in its ticker's test split; say
    so on stderr. Returns the models' look count (None: not a test look, or no warehouse)."""
    import duckdb

    from stocker_core.env.rewards import RewardParams
    from stocker_core.evaluation.looks import look_settings, record_if_test
    from stocker_core.warehouse.db import Warehouse

    if not settings.warehouse_path.exists() or not result.runs:
        return None
    played = [run.policy for run in result.runs]
    config = look_settings(seed, RewardParams.from_settings(settings))
    try:
        count = record_if_test(
            Warehouse(settings.warehouse_path),
            "cli",
            "backtest",
            {ep.ticker: list(ep.dates)},
            played,
            [vote_version],
            config,
        )
    except duckdb.Error as exc:  # a busy or read-only warehouse: the backtest stands, say it is unrecorded
        typer.secho(f"warning: could not record this test look in eval.test_looks: {exc}", err=True)
        return None
    if count is not None:
        typer.secho(
            f"note: {ep.key} has days in {ep.ticker}'s test split: this is a test look, recorded in "
            f"eval.test_looks (these models have now had {count}); choose models on the valid split",
            err=True,
            fg=typer.colors.YELLOW,
        )
    return count


@commands.command("splits")
def splits_command(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Train / valid / test date ranges per ticker.

    Stored by the `splits` asset, else computed from the stored prices.
    """
    import duckdb

    from stocker_core.config import get_settings
    from stocker_core.evaluation.splits import SplitError, load_splits, splits_from_prices
    from stocker_core.warehouse.db import Warehouse

    settings = get_settings()
    if not settings.warehouse_path.exists():
        fail(f"no warehouse at {settings.warehouse_path}: run `stocker materialize` first")
    warehouse = Warehouse(settings.warehouse_path)
    stored = True
    try:
        try:
            splits = load_splits(warehouse)
        except SplitError:
            stored = False
            prices = warehouse.query("SELECT ticker, date FROM market.prices ORDER BY ticker, date")
            splits = splits_from_prices(prices)
    except StockerError as exc:
        fail(exc)
    except duckdb.Error:
        fail("no stored prices to split: run `stocker materialize` first")
    rows = splits.rows()
    if as_json:
        typer.echo(json.dumps({"stored": stored, "splits": rows}))
        return
    _print_table(
        "splits" + ("" if stored else " (computed from market.prices; not stored yet)"),
        [{**r, "label": r["ticker"]} for r in rows],
        ["label", "split", "start", "end", "trading_days", "gap_before"],
    )


@commands.command("report")
def report_command(
    name: str = typer.Option("evaluation", "--name", help="folder under $STOCKER_HOME/reports/"),
    open_it: bool = typer.Option(False, "--open", help="open the HTML report in a browser"),
) -> None:
    """Build the evaluation report from the warehouse's eval.* rows and print its path."""
    from stocker_core.config import get_settings
    from stocker_core.evaluation.report import build_report
    from stocker_core.warehouse.db import Warehouse

    settings = get_settings()
    if not settings.warehouse_path.exists():
        fail(f"no warehouse at {settings.warehouse_path}: run `stocker materialize` first")
    try:
        files = build_report(Warehouse(settings.warehouse_path), settings.home, name)
    except StockerError as exc:
        fail(exc)
    typer.echo(str(files.html))
    if open_it:
        import webbrowser

        webbrowser.open(files.html.as_uri())
