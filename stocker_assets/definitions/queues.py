"""Celery queues for steps that need special machines (``dagster-celery/queue`` op tag).

With the Celery executor, dagster-celery sends each step to the queue named by its op tag
``dagster-celery/queue`` (default queue: ``dagster``); a worker started with ``-q NAME``
takes that queue's steps. Training steps go to ``STOCKER_CELERY_GPU_QUEUE`` and council
vote steps to ``STOCKER_CELERY_LLM_QUEUE`` when those are set **where runs are launched**
(the ``stocker`` CLI, the daemon): unset, the assets carry no tag and every step goes to the
default queue. In-process runs ignore the tag.
"""

from __future__ import annotations

from typing import Literal

from stocker_core.config import Settings

QUEUE_TAG = "dagster-celery/queue"
"""dagster-celery's op tag naming a step's Celery queue (``dagster_celery.tags``)."""


def celery_queue_tags(kind: Literal["gpu", "llm"]) -> dict[str, str]:
    """``{QUEUE_TAG: queue}`` for the configured queue of ``kind``, else ``{}``."""
    settings = Settings()
    queue = settings.celery_gpu_queue if kind == "gpu" else settings.celery_llm_queue
    return {QUEUE_TAG: queue} if queue else {}
