"""The ``stocker`` command tree, built by one function from an explicit list of areas.

Each area module offers ``register(app)``; ``build_app`` calls them in order. The
areas here need no Dagster; ``stocker_assets.cli`` adds the pipeline's own area.
Exit codes (``stocker_core.cli_support``): 0 ok, 1 a check or run failed, 2 bad usage or input.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import typer

from stocker_core.agent import cli as agent_cli
from stocker_core.baselines.drl import cli as drl_cli
from stocker_core.council import cli as council_cli
from stocker_core.env import cli as env_cli
from stocker_core.evaluation import cli as evaluation_cli
from stocker_core.ledger import cli as ledger_cli
from stocker_core.market import chart_cli
from stocker_core.moderator import cli as moderator_cli
from stocker_core.warehouse import cli as warehouse_cli
from stocker_core.web import cli as web_cli

Registrar = Callable[[typer.Typer], None]

CORE_AREAS: tuple[Registrar, ...] = (
    env_cli.register,
    chart_cli.register,
    council_cli.register,
    evaluation_cli.register,
    drl_cli.register,
    moderator_cli.register,
    agent_cli.register,
    ledger_cli.register,
    web_cli.register,
    warehouse_cli.register,
)
"""Core command areas, in the order their commands are listed."""


def build_app(
    areas: Sequence[Registrar] = CORE_AREAS, registering_themselves: Collection[str] = ()
) -> typer.Typer:
    """A fresh ``stocker`` Typer app with every area in ``areas`` registered.

    ``registering_themselves``: command groups whose commands call the composition root
    themselves when they read a registry (``tickers``: only ``add`` does), so the others start
    without it; every other command finds everything registered before it runs."""
    app = typer.Typer(
        name="stocker",
        help="Stocker: market data → RL trading episodes → a council of analysts → backtests.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
        # click's plain help, not rich's tables: rich cuts a cell that does not fit with an
        # ellipsis (`--max-sessions-per-…` at 80 columns); click gives a long option its own line
        # and wraps the help between words, so every name and default reads whole
        rich_markup_mode=None,
    )

    def settings_first(ctx: typer.Context) -> None:
        _settings_first(register=ctx.invoked_subcommand not in registering_themselves)

    app.callback()(settings_first)
    for register in areas:
        register(app)
    return app


def _settings_first(register: bool = True) -> None:
    # every command reads the STOCKER_* settings first (a bad one is one line and exit 2),
    # keeps library deprecations it cannot fix out of its output, and finds every layer's
    # policies registered (the composition root; `--help` alone needs none of it)
    from stocker_core.cli_support import fail, ignore_library_warnings
    from stocker_core.config import SettingsError, get_settings

    ignore_library_warnings()
    try:
        get_settings(fresh=True)
    except SettingsError as exc:
        fail(exc)
    if register:
        from stocker_core.composition import register_all

        register_all()


app = build_app()
"""The core commands alone (no Dagster); the ``stocker`` script is ``stocker_assets.cli.app``."""
