"""The one ``Definitions``: every domain's assets, checks, jobs, schedules and sensors, the
automation sensor and the resources, assembled on demand by whoever needs it (the code
location, ``stocker materialize``, a lane, the Celery definitions, a test)."""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from stocker_assets.definitions import council, env, evaluation, ledger, market, text, training
from stocker_assets.definitions.automation import automation_sensor
from stocker_assets.definitions.resources import default_resources
from stocker_core.composition import register_all

DOMAINS = (market, env, text, council, evaluation, training, ledger)
"""In this order: ``stocker materialize`` plans its runs in the order of ``Definitions.assets``."""


def build_definitions(
    resources: Mapping[str, object] | None = None, executor: dg.ExecutorDefinition | None = None
) -> dg.Definitions:
    """Every domain's definitions and the automation sensor, bound to ``resources`` (default:
    the local deployment's, filled from Settings). ``stocker materialize`` builds its own with the
    resource of the moment, so its runs go through the named jobs. ``executor`` replaces
    Dagster's default (multiprocess) for every job, e.g. the Celery executor of
    ``stocker_assets.definitions.celery_definitions``. Every extension is registered first
    (``stocker_core.composition``): the code location's runs play the policies and read the
    sources and specialists."""
    register_all()
    return dg.Definitions.merge(
        *(domain.definitions() for domain in DOMAINS),
        dg.Definitions(
            sensors=[automation_sensor],
            resources=dict(resources) if resources is not None else default_resources(),
            executor=executor,
        ),
    )
