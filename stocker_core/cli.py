"""The ``stocker`` command's core part (no Dagster). ``stocker_assets.cli`` adds the rest."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="stocker",
    help="Stocker: market data -> RL trading episodes -> council of analysts -> GRPO.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


def _register_subcommands() -> None:
    """Each area adds its own commands with a ``register(app)`` function."""
    import importlib

    for module in (
        "stocker_core.env.cli",
        "stocker_core.market.chart_cli",
        "stocker_core.council.cli",
    ):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.register(app)


_register_subcommands()
