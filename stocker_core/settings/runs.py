"""How `stocker materialize` runs its work: how many runs at once, and where each step
executes (this process, or Celery workers set up by `stocker deploy init`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ExecutorName = Literal["in_process", "celery"]


class RunSettings(BaseModel):
    """Work sizes and scale-out."""

    main_workers: int | None = Field(
        default=None,
        ge=1,
        le=16,
        description="Runs `stocker materialize` executes at once, each in its own process "
        "(None: one per CPU core, at most 4; 1 with the Celery executor)",
    )
    executor: ExecutorName = Field(
        default="in_process", description="in_process: this process; celery: steps on Celery workers"
    )
    celery_broker: str = Field(default="redis://127.0.0.1:6379/0", description="Celery broker URL")
    celery_backend: str | None = Field(default=None, description="Celery result backend (None: the broker)")
    celery_gpu_queue: str | None = Field(
        default=None, description="Celery queue for training steps (a GPU worker listens on it)"
    )
    celery_llm_queue: str | None = Field(
        default=None, description="Celery queue for council vote steps (workers near the LLM server)"
    )
