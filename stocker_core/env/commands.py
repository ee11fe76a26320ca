"""``stocker episode info|run`` and ``stocker grade`` (``stocker serve`` is in ``stocker_core.web.commands``:
it runs the environment server together with the web page)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from stocker_core.cli_support import fail
from stocker_core.errors import StockerError
from stocker_core.settings.values import MAX_SEED

episode_app = typer.Typer(help="Inspect and play episodes.", no_args_is_help=True)

commands = typer.Typer()
"""What this area adds to ``stocker``: the ``episode`` group and ``grade``."""
commands.add_typer(episode_app, name="episode")


def _episode_name(task: str | None, episode: str | None) -> str:
    if task is not None and episode is not None:
        raise typer.BadParameter("give --task or --episode, not both")
    for flag, value in (("--task", task), ("--episode", episode)):
        if value is not None and not value.strip():
            raise typer.BadParameter(f"{flag} is empty: give a task name or a key like GOOGL|2012-03-01")
    return task or episode or "task_easy"


def _print(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    for key, value in data.items():
        if isinstance(value, list):
            value = f"[{len(value)} items]"
        typer.echo(f"{key:>20}: {value}")


def _money(value: float, start: float) -> str:
    """``10234.12 (+2.34% on 10000.00 start cash)``."""
    return f"{value:.2f} ({value / start - 1:+.2%} on {start:.2f} start cash)"


def episode_info(name: str) -> dict[str, Any]:
    """The ``episode info`` record of a task alias or partition key."""
    from stocker_core.config import get_settings
    from stocker_core.env.environment import TradingEnv
    from stocker_core.env.episode import load_episode
    from stocker_core.env.ideal import greedy_trajectory
    from stocker_core.env.rewards import RewardParams

    settings = get_settings()
    episode = load_episode(name, settings)
    env = TradingEnv(episode, RewardParams.from_settings(settings))
    greedy = greedy_trajectory(episode.closes, settings.transaction_cost, settings.starting_cash)
    return {
        **episode.summary(),
        "source": episode.source,
        "buy_and_hold_final": env.buy_and_hold_final,
        "ideal_total": env.ideal_total,
        "ideal_trades": env.ideal.trades,
        "greedy_total": greedy.total,
        "greedy_trades": greedy.trades,
    }


@episode_app.command("info")
def info_command(
    task: str | None = typer.Option(None, "--task", help="task_easy | task_medium | task_hard"),
    episode: str | None = typer.Option(None, "--episode", help="partition key, e.g. AAPL|2023-08-01"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Ticker, window, trading days, buy-and-hold and ideal totals of an episode."""
    try:
        data = episode_info(_episode_name(task, episode))
    except StockerError as exc:
        fail(exc)
    _print(data, as_json)


@episode_app.command("run")
def run_command(
    task: str | None = typer.Option(None, "--task", help="task_easy | task_medium | task_hard"),
    episode: str | None = typer.Option(None, "--episode", help="partition key, e.g. AAPL|2023-08-01"),
    policy: str = typer.Option(
        "buy_and_hold", "--policy", help="buy_and_hold | hold | random | ideal | council"
    ),
    seed: int | None = typer.Option(None, "--seed", min=0, max=MAX_SEED, help="seed of the random policy"),
    as_json: bool = typer.Option(False, "--json", help="print the trajectory as JSON"),
    out: Path | None = typer.Option(None, "--out", help="save the trajectory JSON (for `grade`)"),
) -> None:
    """Play a whole episode with a built-in policy."""
    from stocker_core.config import get_settings
    from stocker_core.env.environment import TradingEnv
    from stocker_core.env.episode import load_episode
    from stocker_core.env.policies import make_policy, run_episode
    from stocker_core.env.rewards import RewardParams

    settings = get_settings()
    try:
        ep = load_episode(_episode_name(task, episode), settings)
        env = TradingEnv(ep, RewardParams.from_settings(settings))
        player = make_policy(policy, env, seed, settings)
        trajectory = run_episode(env, player)
        tally = getattr(player, "tally", None)  # the council counts its fallbacks
    except StockerError as exc:
        fail(exc)
    trajectory["policy"] = policy
    trajectory["seed"] = seed
    if tally is not None:  # the council: how often it fell back instead of using a model's answer
        trajectory["council"] = tally.as_dict()
        if tally.warning():
            typer.secho(f"warning: {tally.warning()}", err=True, fg=typer.colors.YELLOW)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(trajectory))
    if as_json:
        typer.echo(json.dumps(trajectory))
    else:
        steps, start = len(trajectory["rewards"]), ep.starting_cash
        _print(
            {
                "episode": ep.key,
                "policy": policy,
                "steps": steps,
                "total_reward": f"{trajectory['total_reward']:.4f} reward points "
                f"(sum of {steps} step rewards, each in [-1, 1])",
                "final_value": _money(trajectory["final_value"], start),
                "buy_and_hold_final": _money(trajectory["buy_and_hold_final"], start),
                "ideal_total": f"{trajectory['ideal_total']:.4f} of start cash "
                f"(hindsight-ideal profit: {trajectory['ideal_total']:+.2%})",
                **(
                    {"council_fallbacks": trajectory["council"]["fallbacks"]}
                    if "council" in trajectory
                    else {}
                ),
                "saved": str(out) if out else None,
            },
            False,
        )


@commands.command("grade")
def grade_command(
    trajectory: Path = typer.Argument(..., help="trajectory JSON from `episode run --out`"),
    sweep: Path | None = typer.Option(None, "--sweep", help="YAML grid: setting -> list of values"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Re-grade a saved trajectory under its own settings or every combination of a grid."""
    import time

    from stocker_core.env import grader
    from stocker_core.env.rewards import RewardParams

    try:
        data = grader.load_trajectory(trajectory)
        start = time.perf_counter()
        result = grader.sweep(data, grader.load_grid(sweep)) if sweep else grader.grade_trajectory(data)
        elapsed = time.perf_counter() - start
    except StockerError as exc:
        fail(exc)
    rows = result.table()
    recorded = data.get("rewards")
    report: dict[str, Any] = {
        "steps": int(result.rewards.shape[1]),
        "combinations": len(rows),
        "seconds": elapsed,
        "results": rows,
    }
    if not sweep:
        report["rewards"] = result.rewards[0].tolist()
        if recorded and len(recorded) == result.rewards.shape[1]:
            diff = max(abs(a - b) for a, b in zip(recorded, report["rewards"], strict=True))
            report["max_abs_diff_vs_recorded"] = diff
    if as_json:
        typer.echo(json.dumps(report))
        return
    from rich.console import Console
    from rich.table import Table

    params = RewardParams.field_names()
    varied = [k for k in params if rows and len({r[k] for r in rows}) > 1]
    outcome = ["total_reward", "final_value", "invalid_steps", "max_drawdown"]
    table = Table(title=f"{len(rows)} combination(s), {report['steps']} steps, {elapsed * 1e3:.2f} ms")
    for column in [*varied, *outcome]:
        table.add_column(column, justify="right")
    best = max(rows, key=lambda r: r["total_reward"]) if rows else None
    for row in sorted(rows, key=lambda r: -r["total_reward"])[:50]:
        style = "bold green" if row is best else None
        table.add_row(*(f"{row[c]:.5g}" for c in [*varied, *outcome]), style=style)
    Console().print(table)
    if len(rows) > 50:
        typer.echo(f"(best 50 of {len(rows)} shown; --json prints all)")
    if "max_abs_diff_vs_recorded" in report:
        typer.echo(f"max |regraded - recorded| = {report['max_abs_diff_vs_recorded']:.3g}")
