"""``api/play``: play sessions on the page, by hand or with a policy. Every route on a session
is its client's alone (``PlaySessions.get``: 409 for another's)."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, Field

from stocker_core.env.server_http import client_of
from stocker_core.web.api import web_context, web_errors
from stocker_core.web.errors import BadInputError
from stocker_core.web.play import episode_payload, session_state

SESSION_ID = re.compile(r"^[0-9a-f]{32}$")

router = APIRouter()


class PlayRequest(BaseModel):
    """Start playing ``episode`` (task alias or ``TICKER|YYYY-MM-01``), by hand or with ``policy``."""

    episode: str = "task_easy"
    policy: str | None = None
    seed: int | None = Field(None, ge=0, le=2**32 - 1, description="for policies that draw at random")
    replaces: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{32}$",
        description="the session this page played before: closed first (when it is this client's)",
    )


def _session_id(text: str) -> str:
    if not SESSION_ID.fullmatch(text):
        raise BadInputError(f"invalid session id {text!r}: 32 hex digits from POST api/play")
    return text


@router.post("/play")
@web_errors
def play_start(request: PlayRequest, http: Request) -> dict[str, Any]:
    context = web_context(http)
    client = client_of(http)
    session = context.sessions.start(request.episode, request.policy, request.seed, client, request.replaces)
    return {"episode": episode_payload(session.env), "state": session_state(session)}


@router.delete("/play/{session_id}")
@web_errors
def play_close(session_id: str, http: Request) -> dict[str, Any]:
    """End a play session (the page closes its own when it leaves)."""
    context = web_context(http)
    context.sessions.close(_session_id(session_id), client_of(http))
    return {"closed": session_id}


@router.get("/play/{session_id}")
@web_errors
def play_state(session_id: str, http: Request) -> dict[str, Any]:
    context = web_context(http)
    return session_state(context.sessions.get(_session_id(session_id), client_of(http)))


@router.post("/play/{session_id}/step")
@web_errors
def play_step(
    session_id: str,
    http: Request,
    action: dict[str, Any] | None = Body(default=None),
) -> dict[str, Any]:
    context = web_context(http)
    sid, client = _session_id(session_id), client_of(http)
    record = context.sessions.step(sid, action or None, client)
    session = context.sessions.get(sid, client)
    return {"record": record, "state": {k: v for k, v in session_state(session).items() if k != "steps"}}


@router.post("/play/{session_id}/run")
@web_errors
def play_run(session_id: str, http: Request) -> dict[str, Any]:
    context = web_context(http)
    sid, client = _session_id(session_id), client_of(http)
    done = context.sessions.run(sid, client)
    return {"records": done, "state": session_state(context.sessions.get(sid, client))}


@router.post("/play/{session_id}/reset")
@web_errors
def play_reset(session_id: str, http: Request) -> dict[str, Any]:
    context = web_context(http)
    return session_state(context.sessions.reset(_session_id(session_id), client_of(http)))
