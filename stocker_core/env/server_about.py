"""What the environment server says about itself: ``GET /health``, ``/metadata`` (tasks, reward,
limits, auth) and ``/schema`` (action, observation and state schemas)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from stocker_core.env.actions import Action
from stocker_core.env.api_models import schema_document
from stocker_core.env.rewards import RewardParams, reward_terms
from stocker_core.env.server_http import env_service
from stocker_core.env.server_sessions import SESSION_HEADER
from stocker_core.env.tasks import TASKS

VERSION = "1.0.0"
"""The server's API version (``/metadata``, the OpenAPI document)."""

router = APIRouter()


@router.get("/health")
def health(request: Request) -> dict[str, Any]:
    return {"status": "healthy", "sessions": len(env_service(request).sessions)}


@router.get("/metadata")
def metadata(request: Request) -> dict[str, Any]:
    service = env_service(request)
    settings = service.settings
    return {
        "name": "stocker",
        "description": "Trade one ticker over an episode of trading days; reward per SPEC §1.",
        "version": VERSION,
        "tasks": {t.task_id: {"episode": t.key, "regime": t.regime} for t in TASKS.values()},
        "episode_months": settings.episode_months,
        "reward_params": RewardParams.from_settings(settings).__dict__,
        "reward_rubric": {
            "reward": "clip(sum of weight x metadata.breakdown[term], -1, 1)",
            "terms": reward_terms(RewardParams.from_settings(settings)),
        },
        "session_header": SESSION_HEADER,
        "max_sessions": service.sessions.max_sessions,
        "max_sessions_per_client": service.sessions.max_per_client,
        "session_idle_s": service.sessions.idle_s,
        "max_body_bytes": request.app.state.max_body_bytes,
        "max_cached_episodes": service.episodes.max_episodes,
        "auth": "bearer" if request.app.state.api_key else "none",
    }


@router.get("/schema")
def schema() -> dict[str, Any]:
    return schema_document(Action.model_json_schema())
