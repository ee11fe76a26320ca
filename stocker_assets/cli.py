"""The ``stocker`` console script: the core areas plus the pipeline's, built by ``build_app``."""

from stocker_assets import deploy_cli, learning_check, pipeline_cli
from stocker_core.cli import CORE_AREAS, build_app
from stocker_core.moderator import cli as moderator_cli


def _areas() -> list:
    """The core areas with ``check-learning`` listed just before ``train`` (where the command
    stood when the library registered it), then the pipeline's areas."""
    areas = list(CORE_AREAS)
    areas.insert(areas.index(moderator_cli.register), learning_check.register)
    return [*areas, pipeline_cli.register, deploy_cli.register]


app = build_app(_areas(), registering_themselves=pipeline_cli.REGISTERING_THEMSELVES)

if __name__ == "__main__":
    app()
