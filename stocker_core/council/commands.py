"""``stocker council ...`` commands."""

from __future__ import annotations

import json
from datetime import date
from typing import TYPE_CHECKING

import typer

from stocker_core.cli_support import fail
from stocker_core.errors import StockerError

if TYPE_CHECKING:  # pandas is imported where used, so `stocker --help` stays fast
    import pandas as pd

    from stocker_core.council.models import CouncilDecision

council_app = typer.Typer(help="The council of seven specialists and its moderator.", no_args_is_help=True)

commands = typer.Typer()
"""What this area adds to ``stocker``: the ``council`` group."""
commands.add_typer(council_app, name="council")


def _resolve(task: str | None, episode: str | None, ticker: str | None) -> tuple[str, date]:
    """(ticker, episode start) from a task alias, an episode key or a plain ticker."""
    from stocker_core.env.tasks import resolve_episode_key
    from stocker_core.errors import InvalidNameError
    from stocker_core.market.validation import parse_partition_key, validate_ticker

    name = task or episode
    if name:
        return parse_partition_key(resolve_episode_key(name)[0])
    if ticker:
        return validate_ticker(ticker), date.min
    raise InvalidNameError("give --task (e.g. task_easy), --episode (AAPL|2023-08-01) or --ticker")


def sent_prompts(council, ctx, decision) -> list[dict]:
    """The prompts an LLM council sends on ``ctx`` (each role's, then the moderator's); the
    rule backend and the rule moderator send none. Cached votes were asked the same."""
    out = []
    if hasattr(council.backend, "prompts"):
        out += [council.backend.prompts(role, ctx) for role in council.roles]
    if hasattr(council.moderator, "prompts"):
        out.append(council.moderator.prompts(decision.votes, ctx.portfolio, ctx.price))
    return out


@council_app.command("vote")
def vote(
    day: str = typer.Option(..., "--date", help="Decision date YYYY-MM-DD"),
    task: str | None = typer.Option(None, "--task", help="Task alias, e.g. task_easy"),
    episode: str | None = typer.Option(None, "--episode", help="Episode key AAPL|2023-08-01"),
    ticker: str | None = typer.Option(None, "--ticker", help="Any ticker"),
    backend: str | None = typer.Option(None, "--backend", help="rule | openai | transformers"),
    peers: str | None = typer.Option(None, "--peers", help="Comma-separated peers"),
    commodity: str | None = typer.Option(None, "--commodity", help="e.g. GC=F"),
    cash: float | None = typer.Option(None, "--cash", min=0.0, max=1e12, help="Cash (default start cash)"),
    position: int = typer.Option(0, "--position", min=0, max=10**12, help="Shares held"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    show_prompts: bool = typer.Option(
        False, "--show-prompts", help="Also print the prompts sent (what the model saw)"
    ),
) -> None:
    """Print the seven votes and the moderator's decision for one day."""
    try:
        symbol, start = _resolve(task, episode, ticker)
        when, decision, prompts = _decide_day(
            symbol, start, day, peers, commodity, cash, position, backend, show_prompts
        )
    except StockerError as exc:
        fail(exc)
    payload = {
        "ticker": symbol,
        "date": str(when.date()),
        "votes": [
            v.model_dump(include={"role", "signal", "confidence", "rationale"}) for v in decision.votes
        ],
        "decision": {**decision.action.model_dump(), "rationale": decision.rationale},
    }
    if prompts is not None:
        payload["prompts"] = prompts
    if as_json:
        typer.echo(json.dumps(payload, indent=2))
        return
    _print_decision(symbol, when, decision, prompts)


def _decide_day(
    symbol: str,
    start: date,
    day: str,
    peers: str | None,
    commodity: str | None,
    cash: float | None,
    position: int,
    backend: str | None,
    show_prompts: bool,
) -> tuple[pd.Timestamp, CouncilDecision, list[dict] | None]:
    """(the day, the council's decision on it, the prompts it sent when ``show_prompts``) for
    ``symbol`` in an episode from ``start`` (``date.min``: none), the options as ``vote`` got them."""
    import pandas as pd

    from stocker_core.config import get_settings
    from stocker_core.council.backends import get_backend, get_moderator
    from stocker_core.council.voting import Council
    from stocker_core.decision_context.decision import PortfolioState, load_council_inputs
    from stocker_core.env.peers import context_symbols
    from stocker_core.market.validation import validate_day

    settings = get_settings(fresh=True)
    task_peers, task_commodity = context_symbols(symbol, settings)
    when = pd.Timestamp(validate_day(day))  # YYYY-MM-DD only, as --help says
    inputs = load_council_inputs(
        symbol,
        when,
        when,
        peers=tuple(p.strip() for p in peers.split(",")) if peers else task_peers,
        commodity=commodity or task_commodity,
        settings=settings,
    )
    days = inputs.trading_days(max(pd.Timestamp(start), when - pd.Timedelta(days=400)), when)
    if not days or days[-1] != when:
        raise StockerError(
            f"{symbol} has no bar on {when.date()} (not a trading day, "
            "or outside the data): pick a trading day"
        )
    step = sum(1 for d in days if d >= pd.Timestamp(start)) - 1
    portfolio = PortfolioState(
        cash=settings.starting_cash if cash is None else cash, position=position, step=max(step, 0)
    )
    council = Council(
        get_backend(settings, name=backend), get_moderator(settings, cost_rate=settings.transaction_cost)
    )
    ctx = inputs.context(when, portfolio)
    decision = council.decide(ctx)
    return when, decision, sent_prompts(council, ctx, decision) if show_prompts else None


def _print_decision(
    symbol: str, when: pd.Timestamp, decision: CouncilDecision, prompts: list[dict] | None
) -> None:
    """The votes as a table, the decision, and the prompts when asked for."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Council on {symbol} {when.date()}")
    for col in ("role", "signal", "confidence", "rationale"):
        table.add_column(col)
    for v in decision.votes:
        table.add_row(v.role, f"{v.signal:+.2f}", f"{v.confidence:.2f}", v.rationale)
    console = Console()
    console.print(table)
    action = decision.action
    console.print(f"decision: {action.side} {action.quantity} — {decision.rationale}")
    for sent in prompts or []:
        console.rule(f"prompt: {sent['role']}")
        console.print(f"[bold]system[/bold] {sent['system']}", markup=True, highlight=False)
        console.print(sent["user"], markup=False, highlight=False)
        if sent.get("image"):
            console.print(f"image: {sent['image']}", markup=False)
    if prompts == []:
        console.print("(the rule backend and the rule moderator send no prompts)")
