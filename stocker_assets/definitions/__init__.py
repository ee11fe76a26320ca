"""The one Definitions object (workspace.yaml points here).

This package holds what Dagster loads: the assets (``assets/``), checks, jobs, schedules,
sensors, automation conditions, partitions and the ``stocker`` resource. How the ``stocker``
CLI executes them is ``stocker_assets.engine``, which imports this package, never the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from stocker_assets.definitions.assets import agent, council, drl, env, evaluation, ledger, market, training
from stocker_assets.definitions.assets.ledger import LEDGER_JOBS
from stocker_assets.definitions.automation import automation_sensor
from stocker_assets.definitions.checks import (
    charts_are_complete,
    indicators_are_sane,
    prices_are_fresh,
    prices_are_valid,
)
from stocker_assets.definitions.jobs import ALL_JOBS
from stocker_assets.definitions.model_checks import UPKEEP_CHECKS
from stocker_assets.definitions.resources import default_resources
from stocker_assets.definitions.schedules import corpus_refresh, ledger_after_refresh
from stocker_assets.definitions.sensors import universe_sync
from stocker_core.composition import register_all_policies

register_all_policies()  # the code location's runs play every layer's policies

ASSETS = dg.load_assets_from_modules([market, env, council, evaluation, drl, training, agent, ledger])
CHECKS = [prices_are_valid, prices_are_fresh, indicators_are_sane, charts_are_complete, *UPKEEP_CHECKS]


def build_definitions(
    resources: Mapping[str, object] | None = None, executor: dg.ExecutorDefinition | None = None
) -> dg.Definitions:
    """Every asset, check, job, schedule and sensor (the automation sensor included), bound
    to ``resources`` (default: the local deployment's, filled from Settings). ``stocker
    materialize`` builds its own with the resource of the moment, so its runs go through the
    named jobs. ``executor`` replaces Dagster's default (multiprocess) for every job, e.g. the
    Celery executor of ``stocker_assets.definitions.celery_definitions``."""
    return dg.Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[*ALL_JOBS, *LEDGER_JOBS],
        schedules=[corpus_refresh, ledger_after_refresh],
        sensors=[universe_sync, automation_sensor],
        resources=dict(resources) if resources is not None else default_resources(),
        executor=executor,
    )


defs = build_definitions()
