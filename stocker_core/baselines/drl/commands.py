"""``stocker drl``: train the deep-RL baselines on the train split, show the current models."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from stocker_core.cli_support import EXIT_FAILED, fail
from stocker_core.settings.values import MAX_SEED

if TYPE_CHECKING:
    from stocker_core.baselines.drl.store import DrlTrainingResult


drl_app = typer.Typer(help="Deep-RL baselines (A2C, PPO) of the evaluation.", no_args_is_help=True)

commands = typer.Typer()
"""What this area adds to ``stocker``: the ``drl`` group."""
commands.add_typer(drl_app, name="drl")


@drl_app.command("train")
def train(
    algos: str = typer.Option("a2c,ppo", "--algos", help="Comma-separated: a2c, ppo"),
    timesteps: int | None = typer.Option(
        None, "--timesteps", min=1, max=10**9, help="Per algorithm (default: DrlConfig.timesteps)"
    ),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Train on the stored train-split episodes (the drl_agents asset without Dagster's lineage)."""
    from stocker_core.baselines.drl.training import DrlConfig, train_from_warehouse
    from stocker_core.config import get_settings
    from stocker_core.errors import StockerError

    try:
        names = tuple(a.strip() for a in algos.split(",") if a.strip())
        config = DrlConfig(algos=names, seed=seed, **({"timesteps": timesteps} if timesteps else {}))
        episodes, results = train_from_warehouse(get_settings(), config)
    except StockerError as exc:
        fail(exc)
    rows = [_row(r) for r in results]
    if as_json:
        typer.echo(json.dumps({"episodes": len(episodes), "models": rows}, indent=2))
        return
    typer.echo(f"trained on {len(episodes)} train-split episodes")
    _print_table(rows)


@drl_app.command("info")
def info(as_json: bool = typer.Option(False, "--json", help="Print JSON")) -> None:
    """The current model of each algorithm under STOCKER_HOME (exit 1 if one is missing)."""
    from stocker_core.baselines.drl.store import ALGOS, MissingModelError, current_result
    from stocker_core.config import get_settings

    rows, missing = [], []
    for algo in ALGOS:
        try:
            rows.append(_row(current_result(get_settings().home, algo)))
        except MissingModelError as exc:
            missing.append(str(exc))
    if as_json:
        typer.echo(json.dumps({"models": rows, "missing": missing}, indent=2))
    else:
        _print_table(rows)
    if missing:
        fail("; ".join(missing), EXIT_FAILED)


def _row(result: DrlTrainingResult) -> dict[str, object]:
    return {
        "algo": result.algo,
        "timesteps": result.timesteps,
        "wall_seconds": result.wall_seconds,
        "episodes": len(result.episode_keys),
        "final_mean_reward": result.final_mean_reward,
        "sha256": result.sha256,
        "created_at": result.created_at,
        "path": result.model_path,
    }


def _print_table(rows: list[dict[str, object]]) -> None:
    if not rows:
        return
    from tabulate import tabulate

    shown = [{**r, "sha256": str(r["sha256"])[:12]} for r in rows]
    typer.echo(tabulate(shown, headers="keys", floatfmt=".3f"))
