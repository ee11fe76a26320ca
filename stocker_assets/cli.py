"""The ``stocker`` console script: the core areas plus the pipeline's, built by ``build_app``."""

import typer

from stocker_assets import deploy_cli, learning_check, pipeline_cli
from stocker_core.cli import CORE_AREAS, build_app
from stocker_core.moderator import commands as moderator_cli
from stocker_core.warehouse import sql_cli


def _areas() -> list[typer.Typer]:
    """The core areas with ``check-learning`` listed just before ``train`` (where the command
    stood when the library registered it), then the pipeline's areas (``sql`` reads what the
    pipeline builds)."""
    areas = list(CORE_AREAS)
    areas.insert(areas.index(moderator_cli.commands), learning_check.commands)
    return [*areas, pipeline_cli.commands, sql_cli.commands, deploy_cli.commands]


app = build_app(_areas(), registering_themselves=pipeline_cli.REGISTERING_THEMSELVES)

if __name__ == "__main__":
    app()
