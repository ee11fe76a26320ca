"""The environment server (``stocker serve``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ServerSettings(BaseModel):
    """How much one client may hold on the environment server."""

    max_sessions_per_client: int = Field(
        default=32,
        ge=1,
        le=100_000,
        description="Live sessions one client address may hold on the environment server (`stocker serve "
        "--max-sessions-per-client`); raise it to at least a trainer's concurrent environments (TRL's "
        "generation_batch_size) when they all run from one host",
    )
