"""The code location: the one module that builds the ``Definitions`` when imported
(workspace.yaml, ``[tool.dagster]`` and ``[tool.dg]`` in pyproject.toml, ``stocker ui``)."""

from stocker_assets.definitions.build import build_definitions

defs = build_definitions()
