"""``stocker train``: the training group outside Dagster, with a progress bar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stocker_core.cli_support import EXIT_FAILED, EXIT_USAGE, fail
from stocker_core.errors import StockerError

if TYPE_CHECKING:
    from stocker_core.training.config import TrainingConfig
    from stocker_core.training.pipeline import StageReport


def register(app: typer.Typer) -> None:
    """Add the ``train`` and ``check-learning`` commands to ``app``."""

    @app.command("check-learning")
    def check_learning_command(
        ic: float = typer.Option(
            0.3,
            "--ic",
            help="information coefficient of the planted signal (0: none; at the default 0.3 the "
            "oracle's edge is visible on the test windows, t ~ 4)",
        ),
        seed: int = typer.Option(7, "--seed", help="seed of the synthetic market"),
        tickers: int = typer.Option(8, "--tickers", min=2, max=200, help="synthetic tickers"),
        years: float = typer.Option(3.0, "--years", min=1.0, max=40.0, help="years of sessions"),
        home: Path | None = typer.Option(
            None, "--home", help="keep the warehouse here (default: a temp dir)"
        ),
        as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
        quick: bool = typer.Option(
            False, "--quick", help="token training budgets (checks the plumbing only)"
        ),
    ) -> None:
        """Does the training loop learn? Train on a synthetic market with a planted signal of
        strength --ic and judge every policy against buy-and-hold on its held-out windows.

        Prints, per policy, the mean excess return over buy-and-hold per window, its 95% CI,
        the p-value on non-overlapping windows and the share of the oracle's excess captured.
        """
        from stocker_core.training.learning_check import (
            LearningCheckConfig,
            format_table,
            run_learning_check,
        )

        if not -1.0 <= ic <= 1.0:
            fail(f"--ic {ic} is outside [-1, 1]")
        if home is not None and home.exists() and not home.is_dir():
            fail(f"--home {home} is a file, not a folder: give a new folder (the check builds its warehouse)")
        if home is not None and home.exists() and any(home.iterdir()):
            fail(f"--home {home} is not empty: give a new folder (the check builds its own warehouse)")
        config = LearningCheckConfig(ic=ic, seed=seed, tickers=tickers, years=years)
        config = config.quick() if quick else config
        say = (lambda m: typer.echo(m, err=True)) if as_json else typer.echo
        try:
            result = run_learning_check(config, home, say)
        except StockerError as exc:
            fail(exc, EXIT_FAILED)
        typer.echo(json.dumps(result, indent=2, default=str) if as_json else format_table(result))

    @app.command("train")
    def train_command(
        config_path: Path | None = typer.Option(None, "--config", "-c", help="YAML file of TrainingConfig"),
        print_config: bool = typer.Option(False, "--print-config", help="Print the config (YAML) and exit"),
        stages: str = typer.Option("base,sft,grpo", "--stages", help="Comma-separated: base, sft, grpo"),
        model: str | None = typer.Option(None, "--model", help="tiny | smollm2 | HF id or path"),
        as_json: bool = typer.Option(False, "--json", help="Print the stage reports as JSON"),
    ) -> None:
        """Train the moderator: base model, SFT warm start, GRPO.

        Adapters go under $STOCKER_HOME/models/moderator_{base,sft,grpo}/, with a models.runs
        row per stage.
        """
        from stocker_core.training.config import load_config

        try:
            config = load_config(config_path, model=model)
        except StockerError as exc:
            fail(exc)
        if print_config:
            typer.echo(config.to_yaml().rstrip())
            return
        chosen = [s.strip() for s in stages.split(",") if s.strip()]
        try:
            reports = _run(config, chosen, quiet=as_json)
        except StockerError as exc:
            fail(exc, EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILED)
        if as_json:
            typer.echo(json.dumps([r.to_json() for r in reports], indent=2, default=str))
            return
        _print_reports(reports)


def _run(config: TrainingConfig, stages: list[str], quiet: bool) -> list[StageReport]:
    """Run the stages with a rich progress bar (one bar per stage)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from stocker_core.config import get_settings
    from stocker_core.training.pipeline import train

    settings = get_settings(fresh=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} steps"),
        TimeElapsedColumn(),
        disable=quiet,
    ) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(f"moderator_{stage}", total=total)
            bar.update(tasks[stage], completed=done, total=total)

        return train(config, settings, stages, progress=progress)


def _print_reports(reports: list[StageReport]) -> None:
    """Where each stage saved what, then the last stage's held-out table."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for report in reports:
        console.print(
            f"[bold]{report.name}[/bold] {report.path} ({report.wall_seconds:.1f} s, "
            f"{report.steps} steps, sha256 {report.sha256[:12]})"
        )
    last = reports[-1] if reports else None
    if last is None or last.heldout.empty:
        return
    table = Table(title="held-out (valid split) mean episode reward")
    for column in ("policy", "episodes", "mean_reward", "mean_final_value", "trades", "unparsable"):
        table.add_column(column)
    for row in last.heldout.itertuples(index=False):
        table.add_row(
            row.policy,
            str(row.episodes),
            f"{row.mean_reward:+.3f}",
            f"{row.mean_final_value:,.0f}",
            f"{row.trades:.1f}",
            str(row.unparsable),
        )
    console.print(table)
