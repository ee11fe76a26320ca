"""The code location of ``stocker_assets.definitions`` with every job on the Celery executor.

``stocker materialize`` (with ``STOCKER_EXECUTOR=celery``) executes its runs from this
module's jobs, and the Celery workers load the same module by the run's code pointer, so
both sides agree on the executor's config. Point a scale-out deployment's ``workspace.yaml``
here so runs launched from the UI or by schedules also go to the workers. Needs the
``scale`` extra (dagster-celery).

The executor's broker and backend come from ``STOCKER_CELERY_BROKER``/``_BACKEND`` of the
process that loads the module (the one launching the run; a worker only runs steps).
The resource is left unset (``StockerResource()``): each process reads ``STOCKER_*`` from
its own environment, and ``stocker materialize`` passes its own values in the run config
(see ``stocker_assets.engine.runner.resource_run_config``).
"""

from __future__ import annotations

import dagster as dg
from dagster_celery import celery_executor

from stocker_assets.definitions.build import build_definitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.config import Settings


def configured_executor(settings: Settings | None = None) -> dg.ExecutorDefinition:
    """dagster-celery's executor with broker and backend from ``STOCKER_CELERY_BROKER`` /
    ``STOCKER_CELERY_BACKEND`` (runs launched from the UI or the daemon need no run config)."""
    settings = settings or Settings()
    config = {"broker": settings.celery_broker, "backend": settings.celery_backend or settings.celery_broker}
    return celery_executor.configured(config, name="celery")


defs = build_definitions({"stocker": StockerResource()}, executor=configured_executor())


def market_job() -> dg.JobDefinition:
    return defs.resolve_job_def("market_job")


def env_job() -> dg.JobDefinition:
    return defs.resolve_job_def("env_job")


def council_job() -> dg.JobDefinition:
    return defs.resolve_job_def("council_job")


def evaluation_job() -> dg.JobDefinition:
    return defs.resolve_job_def("evaluation_job")


def training_job() -> dg.JobDefinition:
    return defs.resolve_job_def("training_job")


JOBS = {f.__name__: f for f in (market_job, env_job, council_job, evaluation_job, training_job)}
"""Job name -> module-level function building it, for ``dg.reconstructable``."""


def reconstructable_job(name: str):
    """A pointer to the named Celery job that the workers can load (KeyError if unknown)."""
    return dg.reconstructable(JOBS[name])
