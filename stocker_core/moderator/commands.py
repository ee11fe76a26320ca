"""``stocker train``: the training group outside Dagster, with a progress bar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stocker_core.cli_support import EXIT_FAILED, EXIT_USAGE, fail
from stocker_core.errors import StockerError

if TYPE_CHECKING:
    from stocker_core.moderator.config import TrainingConfig
    from stocker_core.moderator.training import StageReport


commands = typer.Typer()
"""What this area adds to ``stocker``: ``train`` (``check-learning`` drives the pipeline: it is
the Dagster layer's, ``stocker_assets.learning_check``)."""


@commands.command("train")
def train_command(
    config_path: Path | None = typer.Option(None, "--config", "-c", help="YAML file of TrainingConfig"),
    print_config: bool = typer.Option(False, "--print-config", help="Print the config (YAML) and exit"),
    stages: str = typer.Option("base,sft,grpo", "--stages", help="Comma-separated: base, sft, grpo"),
    model: str | None = typer.Option(None, "--model", help="tiny | smollm2 | HF id or path"),
    as_json: bool = typer.Option(
        False, "--json", help="Print the stage reports as JSON (progress lines go to stderr)"
    ),
    budget: str = typer.Option(
        "full",
        "--budget",
        help="full (the config's budgets) or smoke (a few states and steps, one held-out episode: "
        "checks that every stage runs on a model, minutes for SmolLM2 on a CPU; learns nothing)",
    ),
) -> None:
    """Train the moderator: base model, SFT warm start, GRPO.

    Adapters go under $STOCKER_HOME/models/moderator_{base,sft,grpo}/, with a models.runs
    row per stage.
    """
    from stocker_core.moderator.config import load_config, smoke

    if budget not in ("full", "smoke"):
        fail(f"--budget {budget!r}: use full or smoke")
    try:
        config = load_config(config_path, model=model)
    except StockerError as exc:
        fail(exc)
    config = smoke(config) if budget == "smoke" else config
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
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from stocker_core.config import get_settings
    from stocker_core.language_model.runtime import EtaProgress
    from stocker_core.moderator.training import train

    settings = get_settings(fresh=True)
    if quiet:  # --json: stdout is the reports; progress lines (stage, step, ETA) on stderr
        return train(config, settings, stages, progress=EtaProgress(prefix="moderator_"))
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} steps"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if not total:  # a stage without steps: loading, caching, held-out plays
                bar.console.print(f"moderator_{stage} …")
                return
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
