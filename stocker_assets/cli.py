"""The ``stocker`` console script: the core areas plus the pipeline's, built by ``build_app``."""

from stocker_assets import deploy_cli, pipeline_cli
from stocker_core.cli import CORE_AREAS, build_app

app = build_app([*CORE_AREAS, pipeline_cli.register, deploy_cli.register])

if __name__ == "__main__":
    app()
