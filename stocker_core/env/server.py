"""The environment as an OpenEnv HTTP service (SPEC §1 "Environment server").

Routes: ``POST /reset /step /restore /mcp``, ``GET /state /snapshot /health
/metadata /schema``, the task API, ``DELETE /session``, OpenAPI docs at ``/docs``; the OpenEnv
WebSocket session protocol at ``/ws`` (``server_ws``: same sessions, key and limits).

* **Sessions are explicit.** ``/reset`` answers with a ``session_id``; every later call
  sends it as the ``X-Session-Id`` header (or ``?session_id=``). A missing id is a 400,
  an unknown or expired one a 404. At most ``max_sessions`` live at once (429 past
  that); a session unused for ``idle_s`` seconds expires.
* **Observation**: the environment's plus the council inputs of the day, point in time
  (``stocker_core.env.observation``); bounded, documented in ``/schema``.
* **Limits**: bodies over 1 MB get 413 without being read (``server_guards``); the cache
  of loaded episodes keeps the ``max_episodes`` (default 64, ~80 MB) most recently used.
* **Auth**: loopback by default. On any other address an API key is required
  (``STOCKER_API_KEY`` / ``--api-key``, sent as ``Authorization: Bearer <key>``) unless
  explicitly waived; a key, once set, guards every route but ``/health``.
* **OpenEnv 0.10**: state carries ``episode_id`` (reset's) and ``step_count``; answers carry the
  reward's terms as ``metadata`` (and as ``info``, openenv-core 0.3's name).
* **MCP**: ``POST /mcp`` speaks JSON-RPC 2.0 as OpenEnv's ``MCPToolClient`` expects
  (``server_mcp``): sessions by ``openenv/session/create``, tools named for what they do.
* **Task API**: ``/list_environments`` and ``/stocker/{splits,tasks,num_tasks,task,task_range}``
  over the reference tasks and the warehouse's episodes (``server_tasks``).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool

from stocker_core.config import Settings, get_settings
from stocker_core.env.actions import Action
from stocker_core.env.api_models import (
    ErrorAnswer,
    ResetRequest,
    StateModel,
    StepResponse,
    schema_document,
    step_request_schema,
)
from stocker_core.env.rewards import RewardParams, reward_terms
from stocker_core.env.server_guards import MAX_BODY_BYTES, BearerAuth, BodyLimit, ServerConfigError
from stocker_core.env.server_http import client_of, json_body, json_response
from stocker_core.env.server_mcp import RPC_REQUEST_SCHEMA, handle_mcp
from stocker_core.env.server_service import ApiError, EnvService, check_session_id
from stocker_core.env.server_sessions import (
    DEFAULT_IDLE_S,
    DEFAULT_MAX_EPISODES,
    DEFAULT_MAX_SESSIONS,
    SESSION_HEADER,
)
from stocker_core.env.server_tasks import mount_task_api
from stocker_core.env.server_ws import mount_ws
from stocker_core.env.task_api import TaskCatalog
from stocker_core.env.tasks import TASKS

API_KEY_ENV = "STOCKER_API_KEY"
VERSION = "1.0.0"

__all__ = [
    "API_KEY_ENV",
    "MAX_BODY_BYTES",
    "SESSION_HEADER",
    "ApiError",
    "ServerConfigError",
    "check_bind",
    "checked_api_key",
    "create_app",
    "serve",
]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_api_key(api_key: str | None) -> str:
    """The API key to require (``""``: none); ServerConfigError for a key of only whitespace
    (it would look set but guard nothing a client can send) or one padded with whitespace
    (clients strip header values, so it could never match)."""
    if not api_key:
        return ""
    if not api_key.strip():
        raise ServerConfigError(
            f"the API key is blank (only whitespace): set {API_KEY_ENV} / --api-key to a real secret, "
            "or unset it to serve loopback without one"
        )
    if api_key != api_key.strip():
        raise ServerConfigError(
            "the API key starts or ends with whitespace, which no client sends: remove the whitespace"
        )
    return api_key


def check_bind(host: str, api_key: str | None, insecure_no_auth: bool = False) -> None:
    """Refuse a blank API key anywhere, and a non-loopback address without an API key unless
    told to."""
    api_key = checked_api_key(api_key)
    if is_loopback(host) or api_key or insecure_no_auth:
        return
    raise ServerConfigError(
        f"refusing to serve on {host} without an API key: set {API_KEY_ENV} (or --api-key); "
        "clients then send 'Authorization: Bearer <key>'. To serve without one anyway, pass "
        "--insecure-no-auth"
    )


def _session_id(request: Request, body: Any = None) -> str | None:
    sid = request.headers.get(SESSION_HEADER) or request.query_params.get("session_id")
    if sid is None and isinstance(body, dict) and isinstance(body.get("session_id"), str):
        sid = body["session_id"]
    return check_session_id(sid)


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorAnswer, "description": text}
    for status, text in {
        400: "malformed input (bad JSON, an invalid name or session id)",
        401: "missing or wrong API key",
        404: "no such episode or session",
        409: "the episode is over",
        413: "the body is over the size limit",
        422: "a well-formed body that is not a valid request",
        429: "the server, or this client, holds its maximum of sessions",
        503: "the data source is unreachable",
    }.items()
}
"""Documented on every route (the OpenAPI document; the schemathesis test holds the server to it)."""


def _body_openapi(
    schema: dict[str, Any], required: bool = True, session_header: bool = False
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "requestBody": {"required": required, "content": {"application/json": {"schema": schema}}}
    }
    return {**extra, **_SESSION_OPENAPI} if session_header else extra


_SESSION_OPENAPI: dict[str, Any] = {
    "parameters": [
        {
            "name": SESSION_HEADER,
            "in": "header",
            "required": False,
            "description": "the session_id that POST /reset returned",
            "schema": {"type": "string"},
        }
    ]
}


def create_app(
    settings: Settings | None = None,
    *,
    api_key: str | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_s: float = DEFAULT_IDLE_S,
    max_body_bytes: int = MAX_BODY_BYTES,
    preload: Sequence[str] = (),
    max_episodes: int = DEFAULT_MAX_EPISODES,
    max_per_client: int | None = None,
) -> FastAPI:
    """The ASGI app; each app keeps its own sessions and episode cache.

    ``api_key`` defaults to ``$STOCKER_API_KEY`` (``""`` turns auth off); episodes named in
    ``preload`` are loaded at start-up, before the first request (no cold first reset);
    ``max_per_client`` (the sessions one client address may hold) defaults to the settings'
    ``max_sessions_per_client`` (``STOCKER_MAX_SESSIONS_PER_CLIENT``, 32).
    """
    settings = settings or get_settings()
    api_key = checked_api_key(os.environ.get(API_KEY_ENV) if api_key is None else api_key)
    if max_per_client is None:
        max_per_client = settings.max_sessions_per_client
    if max_per_client < 1:
        raise ServerConfigError(f"max_per_client={max_per_client}: a client must be able to hold a session")
    service = EnvService(settings, max_sessions, idle_s, max_episodes, max_per_client)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        for name in preload:
            await run_in_threadpool(service.load, name)
        yield

    app = FastAPI(
        lifespan=lifespan,
        title="Stocker trading environment",
        description="OpenEnv single-agent trading environment (SPEC §1). Send the session_id of "
        f"POST /reset as the {SESSION_HEADER} header"
        + ("; every route but /health needs 'Authorization: Bearer <key>'" if api_key else ""),
        version=VERSION,
        responses=ERROR_RESPONSES,
    )
    app.state.service = service
    app.state.body_stats = body_stats = {"refused": 0, "refused_bytes_read": 0}

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return json_response({"error": exc.message}, exc.status)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "healthy", "sessions": len(service.sessions)}

    @app.get("/metadata")
    def metadata() -> dict[str, Any]:
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
            "max_body_bytes": max_body_bytes,
            "max_cached_episodes": service.episodes.max_episodes,
            "auth": "bearer" if api_key else "none",
        }

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        return schema_document(Action.model_json_schema())

    @app.post(
        "/reset",
        openapi_extra=_body_openapi(ResetRequest.model_json_schema(), required=False, session_header=True),
        responses={200: {"model": StepResponse}},
    )
    async def reset(request: Request) -> Response:
        body = await json_body(request, required=False)
        reset_request = service.parse_reset(body)
        sid = check_session_id(request.headers.get(SESSION_HEADER)) or reset_request.session_id
        name = service.episode_name(reset_request)
        loaded = service.episodes.cached(name) or await run_in_threadpool(service.load, name)
        client = client_of(request)
        if reset_request.include_chart:
            return json_response(await run_in_threadpool(service.start, loaded, reset_request, sid, client))
        return json_response(service.start(loaded, reset_request, sid, client))

    @app.post(
        "/step",
        openapi_extra=_body_openapi(step_request_schema(Action.model_json_schema()), session_header=True),
        responses={200: {"model": StepResponse}},
    )
    async def step(request: Request) -> Response:
        body = await json_body(request)
        sid = _session_id(request, body)
        if isinstance(body, dict):
            body.pop("session_id", None)
        session = service.owned_session(sid, client_of(request))
        wants_chart = session.include_chart or (isinstance(body, dict) and body.get("include_chart") is True)
        if wants_chart:  # a chart may need rendering: off the event loop
            return json_response(await run_in_threadpool(service.step, sid, body, client_of(request)))
        return json_response(service.step(sid, body, client_of(request)))

    @app.get("/state", openapi_extra=_SESSION_OPENAPI, responses={200: {"model": StateModel}})
    async def state(request: Request) -> Response:
        sid = _session_id(request)
        if service.owned_session(sid, client_of(request)).include_chart:
            return json_response(await run_in_threadpool(service.state, sid, client_of(request)))
        return json_response(service.state(sid, client_of(request)))

    @app.get("/snapshot", openapi_extra=_SESSION_OPENAPI)
    def snapshot(request: Request) -> Response:
        return json_response(service.snapshot(_session_id(request), client_of(request)))

    @app.delete("/session", openapi_extra=_SESSION_OPENAPI)
    def close(request: Request) -> Response:
        return json_response(service.close(_session_id(request), client_of(request)))

    @app.post(
        "/restore",
        openapi_extra=_body_openapi({"type": "object", "description": "GET /snapshot"}, session_header=True),
    )
    async def restore(request: Request) -> Response:
        body = await json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("episode_key"), str):
            raise ApiError(422, "send the JSON object GET /snapshot returned")
        sid = _session_id(request)
        loaded = service.episodes.cached(body["episode_key"]) or await run_in_threadpool(
            service.load, body["episode_key"]
        )
        return json_response(await run_in_threadpool(service.restore, loaded, body, sid, client_of(request)))

    @app.post(
        "/mcp",
        openapi_extra=_body_openapi(RPC_REQUEST_SCHEMA, session_header=True),
        responses={202: {"description": "only notifications were sent: no answer"}},
    )
    async def mcp(request: Request) -> Response:
        """MCP over JSON-RPC 2.0 (OpenEnv 0.10's MCPToolClient): tools/list, tools/call (start_episode,
        place_order, get_quote and the research tools), openenv/session/create and close."""
        header = request.headers.get(SESSION_HEADER)
        reply = await handle_mcp(service, await request.body(), header, client_of(request))
        return Response(status_code=202) if reply is None else json_response(reply)

    mount_ws(app, service, api_key, max_body_bytes)
    mount_task_api(app, TaskCatalog(settings))
    # guards (the last added runs first): the API key, then the body limit
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, stats=body_stats)
    if api_key:
        app.add_middleware(BearerAuth, api_key=api_key)
    return app


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    settings: Settings | None = None,
    *,
    api_key: str | None = None,
    insecure_no_auth: bool = False,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_s: float = DEFAULT_IDLE_S,
    preload: Sequence[str] = (),
    max_per_client: int | None = None,
    access_log: bool = False,
    forwarded_allow_ips: str | None = None,
) -> None:
    """Run the server with uvicorn (blocking); ServerConfigError for an unsafe bind. The
    access log (a line per request, a measurable share of the server's CPU) is off unless
    ``access_log``; ``X-Forwarded-For`` is believed only from ``forwarded_allow_ips``."""
    from stocker_core.env.proxies import trusted_proxies, uvicorn_run

    api_key = checked_api_key(os.environ.get(API_KEY_ENV) if api_key is None else api_key)
    check_bind(host, api_key, insecure_no_auth)
    trusted_proxies(forwarded_allow_ips)  # a bad entry is refused before the app is built
    app = create_app(
        settings,
        api_key=api_key,
        max_sessions=max_sessions,
        idle_s=idle_s,
        preload=preload,
        max_per_client=max_per_client,
    )
    uvicorn_run(app, host, port, forwarded_allow_ips, log_level="info", access_log=access_log)
