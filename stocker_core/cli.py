"""The ``stocker`` command tree, built by one function from an explicit list of areas.

Each area's command module defines its commands at module level and collects them in
``commands``, a ``typer.Typer`` holding its plain commands (``stocker backtest``) and its groups
(``stocker ledger …``); ``build_app`` attaches every area's ``commands`` in order. The areas here
need no Dagster; ``stocker_assets.cli`` adds the pipeline's own areas.
Exit codes (``stocker_core.cli_support``): 0 ok, 1 a check or run failed, 2 bad usage or input.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import typer

from stocker_core.agent import commands as agent_cli
from stocker_core.baselines.drl import commands as drl_cli
from stocker_core.council import commands as council_cli
from stocker_core.env import commands as env_cli
from stocker_core.evaluation import commands as evaluation_cli
from stocker_core.ledger import commands as ledger_cli
from stocker_core.market import chart_cli
from stocker_core.moderator import commands as moderator_cli
from stocker_core.warehouse import commands as warehouse_cli
from stocker_core.web import commands as web_cli

CORE_AREAS: tuple[typer.Typer, ...] = (
    env_cli.commands,
    chart_cli.commands,
    council_cli.commands,
    evaluation_cli.commands,
    drl_cli.commands,
    moderator_cli.commands,
    agent_cli.commands,
    ledger_cli.commands,
    web_cli.commands,
    warehouse_cli.commands,
)
"""Each core area's ``commands``, in the order they are listed."""


def build_app(
    areas: Sequence[typer.Typer] = CORE_AREAS, registering_themselves: Collection[str] = ()
) -> typer.Typer:
    """A fresh ``stocker`` Typer app with the commands and groups of every area in ``areas``.

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
    for area in areas:
        # the area's commands and groups become the app's own (``add_typer(area)`` would nest
        # each area as a nameless group): Typer lists an app's plain commands before its groups,
        # so `stocker --help` lists every area's plain commands, then every group
        app.registered_commands.extend(area.registered_commands)
        app.registered_groups.extend(area.registered_groups)
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
