"""``stocker deploy``: set up a Dagster home for several machines (Postgres, Celery)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from stocker_core.cli_support import fail
from stocker_core.config import get_settings

console = Console()
deploy_app = typer.Typer(
    help="Scale out: a Dagster home on Postgres with Celery workers.", no_args_is_help=True
)

commands = typer.Typer()
"""What this area adds to ``stocker``: the ``deploy`` group."""
commands.add_typer(deploy_app, name="deploy")


@deploy_app.command("init")
def deploy_init(
    postgres: str = typer.Option(
        ..., "--postgres", help="Dagster storage, postgresql://user:password@host:5432/dbname."
    ),
    broker: str = typer.Option(..., "--broker", help="Celery broker, e.g. redis://host:6379/0."),
    backend: str = typer.Option(
        None, "--backend", help="Celery result backend (default: the broker for Redis, else rpc://)."
    ),
    home: Path = typer.Option(
        None, "--home", help="Dagster home to write (default: $DAGSTER_HOME, else $STOCKER_HOME/dagster)."
    ),
    max_concurrent_runs: int = typer.Option(
        4, "--max-concurrent-runs", min=1, max=1_024, help="Run queue size (the daemon)."
    ),
    gpu_queue: str = typer.Option(
        None, "--gpu-queue", help="Celery queue for training steps (start a GPU worker with -q NAME)."
    ),
    llm_queue: str = typer.Option(
        None, "--llm-queue", help="Celery queue for council vote steps (workers near the LLM server)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace existing dagster.yaml/celery.yaml/stocker.env."
    ),
) -> None:
    """Write dagster.yaml (Postgres storage, run queue), celery.yaml (workers) and stocker.env
    (STOCKER_EXECUTOR=celery) into the Dagster home, and print what to start where."""
    from stocker_assets.engine.deploy import (
        DeployConfig,
        DeployConfigError,
        start_commands,
        write_deploy_files,
    )
    from stocker_assets.engine.instance import dagster_home_path

    target = home if home is not None else dagster_home_path(get_settings(fresh=True))
    try:
        config = DeployConfig(postgres, broker, backend, max_concurrent_runs, gpu_queue, llm_queue)
        written = write_deploy_files(target, config, force=force)
    except DeployConfigError as exc:
        fail(exc)
    except OSError as exc:
        fail(f"cannot write into {target}: {exc}")
    for path in written:
        console.print(f"wrote [bold]{path}[/bold]")
    console.print(
        "\nShare between machines: this Dagster home (or the same files), STOCKER_HOME (warehouse, "
        "charts, models) on a shared folder mounted at the same path everywhere.",
        soft_wrap=True,
    )
    for where, command in start_commands(written[0].parent, config):
        console.print(f"[dim]{where}:[/dim]\n  {command}", soft_wrap=True)
