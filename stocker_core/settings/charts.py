"""Charts: drawn by the ``charts`` asset (eager) or only when something asks (on demand: the
environment's observation draws and keeps a day's chart)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ChartsMode = Literal["auto", "eager", "on_demand"]


class ChartsSettings(BaseModel):
    """When a day's chart is drawn, and by how many processes."""

    charts: ChartsMode = "auto"
    """``eager``: the ``charts`` asset draws every day's chart; ``on_demand``: a day's chart is
    drawn when something asks for it (the environment's observation, the web page) and kept in
    ``$STOCKER_HOME/charts/``; ``auto``: eager only for a council that sends charts to a vision
    model (``openai`` with ``STOCKER_OPENAI_MULTIMODAL``, ``transformers`` with
    ``STOCKER_HF_MULTIMODAL``)."""
    chart_workers: int | None = Field(
        default=None, ge=1, le=1_024, description="Chart processes (None: by the work's size)"
    )
