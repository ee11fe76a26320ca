"""``stocker agent run|tools|train|eval``: one decision with its trace, the tool schemas,
training, and the held-out evaluation with the θ table."""

from __future__ import annotations

import contextlib
import json

import typer

from stocker_core.cli_support import EXIT_FAILED, fail
from stocker_core.errors import StockerError
from stocker_core.settings.values import MAX_SEED

agent_app = typer.Typer(help="The tool-using single agent (SPEC §2).", no_args_is_help=True)

commands = typer.Typer()
"""What this area adds to ``stocker``: the ``agent`` group."""
commands.add_typer(agent_app, name="agent")


def run_one(episode: str, day: str | None, policy: str, overrides: dict) -> object:
    """The scored trace of ``policy`` deciding on ``day`` (default: the episode's first day)."""
    from stocker_core.agent.config import agent_config
    from stocker_core.agent.data import decision_day
    from stocker_core.agent.errors import AgentError, NoForwardReturnError
    from stocker_core.agent.loop import run_decision
    from stocker_core.agent.policy import AGENT_POLICIES, agent_data, agent_writer
    from stocker_core.agent.rewards import score_trace
    from stocker_core.agent.tools import AgentTools
    from stocker_core.config import get_settings
    from stocker_core.env.episode import load_episode

    if policy not in AGENT_POLICIES:
        raise AgentError(f"unknown agent policy {policy!r}: use one of {', '.join(AGENT_POLICIES)}")
    config = agent_config(**overrides)
    settings = get_settings()
    loaded = load_episode(episode, settings)
    when = decision_day(day) if day else loaded.dates[0]
    if when not in set(loaded.dates):
        raise AgentError(
            f"{when.date()} is not a trading day of episode {loaded.key} "
            f"({loaded.start} … {loaded.end}); pick one inside it"
        )
    data = agent_data(loaded.ticker, settings)
    trace = run_decision(agent_writer(policy, settings, config), AgentTools(data, when), config, policy)
    with contextlib.suppress(NoForwardReturnError):  # the latest days cannot be scored yet
        score_trace(trace, data.forward_return(when, config.horizon), config)
    return trace


@agent_app.command("run")
def run_command(
    episode: str = typer.Option("GOOGL|2016-03-01", "--episode", help="task alias or TICKER|YYYY-MM-01"),
    day: str | None = typer.Option(None, "--date", help="decision day inside the episode (YYYY-MM-DD)"),
    policy: str = typer.Option("agent_scripted", "--policy", help="agent_scripted | agent_base | agent_rl"),
    theta: float | None = typer.Option(
        None, "--theta", min=0.0, max=0.5, help="result score band, above 0, below 0.5 (default 0.015)"
    ),
    horizon: int | None = typer.Option(
        None, "--horizon", min=1, max=60, help="forward return horizon in sessions"
    ),
    max_calls: int | None = typer.Option(None, "--max-calls", min=1, max=8, help="tool call cap"),
    as_json: bool = typer.Option(False, "--json", help="print the trace object as JSON"),
) -> None:
    """Run the agent on one day: plan, tool calls with arguments and results, reasoning,
    decision, and the result / format / tool scores."""
    from stocker_core.market.validation import validate_day

    overrides = {"theta": theta, "horizon": horizon, "max_tool_calls": max_calls}
    try:
        trace = run_one(episode, None if day is None else validate_day(day).isoformat(), policy, overrides)
    except StockerError as exc:
        fail(exc)
    typer.echo(trace.to_json() if as_json else trace.to_text())  # type: ignore[attr-defined]


@agent_app.command("tools")
def tools_command(
    as_json: bool = typer.Option(False, "--json", help="print the schemas as one JSON list"),
) -> None:
    """List the agent's tools with their JSON schemas."""
    from stocker_core.agent.tool_catalog import TOOL_FAMILIES, tool_schemas

    schemas = tool_schemas()
    if as_json:
        typer.echo(json.dumps(schemas, indent=2))
        return
    for schema in schemas:
        function = schema["function"]
        typer.echo(f"{function['name']}  [{TOOL_FAMILIES[function['name']]}]  {function['description']}")
        typer.echo(f"    {json.dumps(function['parameters'])}")


@agent_app.command("train")
def train_command(
    rl_steps: int | None = typer.Option(
        None, "--rl-steps", min=0, max=1_000_000, help="RL updates (default 60)"
    ),
    sft_steps: int | None = typer.Option(
        None, "--sft-steps", min=0, max=1_000_000, help="warm start steps (default 150)"
    ),
    model: str | None = typer.Option(None, "--model", help="tiny | smollm2 | a Hub id or folder"),
    seed: int | None = typer.Option(None, "--seed", min=0, max=MAX_SEED),
) -> None:
    """Warm-start and RL-train the agent on the train split (what the agent_policy asset runs)."""
    from stocker_core.agent.config import agent_config
    from stocker_core.agent.training import train_agent
    from stocker_core.config import get_settings

    try:
        config = agent_config(rl_steps=rl_steps, sft_steps=sft_steps, model=model, seed=seed)
    except StockerError as exc:
        fail(exc)
    try:
        result = train_agent(config, get_settings(), progress=typer.echo)
    except StockerError as exc:
        fail(exc, EXIT_FAILED)
    typer.echo(f"trained in {result.wall_seconds:.1f}s -> {result.run_dir}")


@agent_app.command("eval")
def eval_command(
    policies: str = typer.Option("agent_scripted,agent_base,agent_rl", "--policies", help="comma-separated"),
    thetas: str = typer.Option("0.01,0.015,0.02", "--thetas", help="θ values of the sensitivity table"),
    split: str = typer.Option("valid", "--split", help="valid (model selection) or test (once, at the end)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Result score, action mix, ARR and MDD per policy and θ over a split (the θ table)."""
    from stocker_core.agent.config import agent_config
    from stocker_core.agent.evaluation import theta_table
    from stocker_core.config import get_settings

    try:
        grid = tuple(float(t) for t in thetas.split(","))
    except ValueError:
        fail(f"bad --thetas {thetas!r}: give comma-separated fractions, e.g. 0.01,0.015,0.02")
    names = [p.strip() for p in policies.split(",") if p.strip()]
    try:
        if split not in ("valid", "test"):
            fail(f"unknown split {split!r}: use valid or test")
        table = theta_table(names, get_settings(), agent_config(), grid, split)
    except StockerError as exc:
        fail(exc)
    if split == "test":
        _record_test_look(names, grid, table)
    typer.echo(table.to_json(orient="records", indent=2) if as_json else table.to_string(index=False))


def _record_test_look(names: list[str], grid: tuple[float, ...], table) -> None:
    """The θ table on the test split is a look at it (eval.test_looks, who=cli); say so."""
    import duckdb

    from stocker_core.config import get_settings
    from stocker_core.env.rewards import RewardParams
    from stocker_core.evaluation.looks import look_settings, looks_of, model_versions, record_test_look
    from stocker_core.warehouse.db import Warehouse

    settings = get_settings()
    if not settings.warehouse_path.exists():
        return
    warehouse = Warehouse(settings.warehouse_path)
    tickers = sorted({str(t) for t in table["ticker"]}) if "ticker" in table else []
    try:
        versions = model_versions(warehouse, names)
        config = {**look_settings(None, RewardParams.from_settings(settings)), "thetas": list(grid)}
        record_test_look(warehouse, "cli", "agent eval", tickers, versions, config)
        count = looks_of(warehouse, versions)
    except duckdb.Error as exc:
        typer.secho(f"warning: could not record this test look in eval.test_looks: {exc}", err=True)
        return
    typer.secho(
        f"note: this is a test look, recorded in eval.test_looks (these models have now had {count}); "
        "choose models on the valid split",
        err=True,
        fg=typer.colors.YELLOW,
    )
