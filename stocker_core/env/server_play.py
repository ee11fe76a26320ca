"""Playing an episode over HTTP, the OpenEnv routes: ``POST /reset`` (a session), ``/step``,
``GET /state``, ``/snapshot``, ``POST /restore`` and ``DELETE /session``. Every route after
``/reset`` names its session (``X-Session-Id``, ``?session_id=`` or the body's ``session_id``);
a session is its client's alone.

A route that may render a chart (``include_chart``) or load an episode runs that part in a
worker thread; the rest answers on the event loop.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool

from stocker_core.env.actions import Action
from stocker_core.env.api_models import ResetRequest, StateModel, StepResponse, step_request_schema
from stocker_core.env.server_http import (
    SESSION_OPENAPI,
    body_openapi,
    client_of,
    env_service,
    json_body,
    json_response,
)
from stocker_core.env.server_service import ApiError, check_session_id
from stocker_core.env.server_sessions import SESSION_HEADER

router = APIRouter()


def _session_id(request: Request, body: Any = None) -> str | None:
    sid = request.headers.get(SESSION_HEADER) or request.query_params.get("session_id")
    if sid is None and isinstance(body, dict) and isinstance(body.get("session_id"), str):
        sid = body["session_id"]
    return check_session_id(sid)


@router.post(
    "/reset",
    openapi_extra=body_openapi(ResetRequest.model_json_schema(), required=False, session_header=True),
    responses={200: {"model": StepResponse}},
)
async def reset(request: Request) -> Response:
    service = env_service(request)
    body = await json_body(request, required=False)
    reset_request = service.parse_reset(body)
    sid = check_session_id(request.headers.get(SESSION_HEADER)) or reset_request.session_id
    name = service.episode_name(reset_request)
    loaded = service.episodes.cached(name) or await run_in_threadpool(service.load, name)
    client = client_of(request)
    if reset_request.include_chart:
        return json_response(await run_in_threadpool(service.start, loaded, reset_request, sid, client))
    return json_response(service.start(loaded, reset_request, sid, client))


@router.post(
    "/step",
    openapi_extra=body_openapi(step_request_schema(Action.model_json_schema()), session_header=True),
    responses={200: {"model": StepResponse}},
)
async def step(request: Request) -> Response:
    service = env_service(request)
    body = await json_body(request)
    sid = _session_id(request, body)
    if isinstance(body, dict):
        body.pop("session_id", None)
    session = service.owned_session(sid, client_of(request))
    wants_chart = session.include_chart or (isinstance(body, dict) and body.get("include_chart") is True)
    if wants_chart:  # a chart may need rendering: off the event loop
        return json_response(await run_in_threadpool(service.step, sid, body, client_of(request)))
    return json_response(service.step(sid, body, client_of(request)))


@router.get("/state", openapi_extra=SESSION_OPENAPI, responses={200: {"model": StateModel}})
async def state(request: Request) -> Response:
    service = env_service(request)
    sid = _session_id(request)
    if service.owned_session(sid, client_of(request)).include_chart:
        return json_response(await run_in_threadpool(service.state, sid, client_of(request)))
    return json_response(service.state(sid, client_of(request)))


@router.get("/snapshot", openapi_extra=SESSION_OPENAPI)
def snapshot(request: Request) -> Response:
    service = env_service(request)
    return json_response(service.snapshot(_session_id(request), client_of(request)))


@router.delete("/session", openapi_extra=SESSION_OPENAPI)
def close(request: Request) -> Response:
    service = env_service(request)
    return json_response(service.close(_session_id(request), client_of(request)))


@router.post(
    "/restore",
    openapi_extra=body_openapi({"type": "object", "description": "GET /snapshot"}, session_header=True),
)
async def restore(request: Request) -> Response:
    service = env_service(request)
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("episode_key"), str):
        raise ApiError(422, "send the JSON object GET /snapshot returned")
    sid = _session_id(request)
    loaded = service.episodes.cached(body["episode_key"]) or await run_in_threadpool(
        service.load, body["episode_key"]
    )
    return json_response(await run_in_threadpool(service.restore, loaded, body, sid, client_of(request)))
