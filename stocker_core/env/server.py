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

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool

from stocker_core.config import Settings, get_settings
from stocker_core.env import server_about, server_mcp, server_play, server_tasks, server_ws
from stocker_core.env.api_models import ErrorAnswer
from stocker_core.env.server_about import VERSION
from stocker_core.env.server_guards import MAX_BODY_BYTES, BearerAuth, BodyLimit, ServerConfigError
from stocker_core.env.server_http import json_response
from stocker_core.env.server_service import ApiError, EnvService
from stocker_core.env.server_sessions import (
    DEFAULT_IDLE_S,
    DEFAULT_MAX_EPISODES,
    DEFAULT_MAX_SESSIONS,
    SESSION_HEADER,
)
from stocker_core.env.server_ws import WsConnections
from stocker_core.env.task_api import TaskCatalog

API_KEY_ENV = "STOCKER_API_KEY"
ROUTERS: tuple[APIRouter, ...] = (
    server_about.router,  # /health /metadata /schema
    server_play.router,  # /reset /step /state /snapshot /session /restore
    server_mcp.router,  # /mcp
    server_ws.router,  # /ws
    server_tasks.router,  # the task API
)
"""The server's routes by resource, in the order they are matched and documented."""

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
    # what the routes read (each router's module says which)
    app.state.service = service
    app.state.api_key = api_key
    app.state.max_body_bytes = max_body_bytes
    app.state.tasks = TaskCatalog(settings)
    app.state.ws = WsConnections()
    app.state.body_stats = body_stats = {"refused": 0, "refused_bytes_read": 0}
    app.add_exception_handler(ApiError, _api_error)
    for router in ROUTERS:
        app.include_router(router)
    # guards (the last added runs first): the API key, then the body limit
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, stats=body_stats)
    if api_key:
        app.add_middleware(BearerAuth, api_key=api_key)
    return app


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return json_response({"error": exc.message}, exc.status)


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
