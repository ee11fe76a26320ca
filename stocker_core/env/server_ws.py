"""The OpenEnv WebSocket session protocol at ``/ws`` (what ``openenv-core`` 0.3.0's
``EnvClient`` and ``GenericEnvClient`` speak), over the same ``EnvService`` and session
store as the HTTP routes.

One connection holds one environment session. The client sends JSON text messages:
``{"type": "reset", "data": {"task_id" | "episode", "include_chart"}}``,
``{"type": "step", "data": {"side", "quantity"}}``, ``{"type": "state"}``,
``{"type": "close"}``; the server answers ``{"type": "observation", "data": {"observation",
"reward", "done", "info", "session_id"}}``, ``{"type": "state", "data": {...}}`` or
``{"type": "error", "data": {"message", "code", "status"}}`` (``status`` is the HTTP
route's status for the same refusal).

The HTTP routes' rules hold here too:

* **API key**: when the server has one, the upgrade request must carry
  ``Authorization: Bearer <key>``; without it the handshake is refused with HTTP 401 and
  the JSON error (before any session exists).
* **Connections**: at most ``max_sessions`` open at once, and ``max_per_client`` from one
  client address (the caps of the sessions they hold); one more gets a ``CAPACITY_REACHED``
  error and a close (code 1013, "try again later"). A ``reset`` that would pass either
  session cap (HTTP sessions count too) gets the same error and the connection stays open
  to try again.
* **Message size**: a message over ``max_message_bytes`` (the body limit, 1 MB) gets a
  ``MESSAGE_TOO_LARGE`` error and is ignored; uvicorn's own frame limit (16 MB) cuts
  anything larger before it is buffered.
* **Idle**: a connection silent for ``idle_s`` seconds gets a ``SESSION_ERROR`` and is
  closed; its session ends with the connection in any case.
* **Attaching**: ``/ws?session_id=<id>`` plays a session made by MCP's
  ``openenv/session/create`` (OpenEnv's ``MCPToolClient``), of the same client only; the session
  outlives the connection.
* **Bad input**: malformed JSON, an unknown type or an invalid action is answered with an
  error and the connection keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import uuid
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from stocker_core.env.server_http import client_of
from stocker_core.env.server_service import ApiError, EnvService, json_bytes
from stocker_core.env.server_sessions import SessionError

WS_PATH = "/ws"
RESET_KEYS = frozenset({"task_id", "episode", "include_chart", "episode_id", "seed"})
"""``ResetRequest``'s fields but the session id (the connection holds it): OpenEnv's ``seed`` is
accepted and changes nothing (episodes are deterministic); ``episode_id`` is echoed by state."""
MISSING_KEY = "missing or wrong API key: send the header Authorization: Bearer <STOCKER_API_KEY>"
CLOSE_TRY_LATER = 1013
CLOSE_POLICY = 1008

CODES = {
    400: "VALIDATION_ERROR",
    401: "UNAUTHORIZED",
    404: "NOT_FOUND",
    409: "EPISODE_DONE",
    413: "MESSAGE_TOO_LARGE",
    422: "VALIDATION_ERROR",
    429: "CAPACITY_REACHED",
}

__all__ = ["WS_PATH", "WsConnections", "error_message", "router"]


def error_message(status: int, message: str, code: str | None = None) -> str:
    """The protocol's error answer as JSON text."""
    code = code or CODES.get(status, "EXECUTION_ERROR")
    return json.dumps({"type": "error", "data": {"message": message, "code": code, "status": status}})


class WsConnections:
    """How many ``/ws`` connections are open, in all and per client address (the caps)."""

    def __init__(self) -> None:
        self.open = 0
        self.refused = 0
        self.per_client: dict[str | None, int] = {}

    def enter(self, client: str | None) -> None:
        self.open += 1
        self.per_client[client] = self.per_client.get(client, 0) + 1

    def leave(self, client: str | None) -> None:
        self.open -= 1
        left = self.per_client.get(client, 0) - 1
        if left > 0:
            self.per_client[client] = left
        else:
            self.per_client.pop(client, None)


class _Connection:
    """One ``/ws`` connection: its session id (created on the first reset) and its messages."""

    def __init__(self, service: EnvService, client: str | None, attached_to: str | None = None) -> None:
        self.service = service
        self.client = client
        self.session_id: str | None = attached_to
        self.attached = attached_to is not None
        """Attached to a session made by MCP's ``openenv/session/create``: that session outlives
        the connection (``openenv/session/close`` ends it)."""

    async def reset(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise ApiError(422, "reset data must be a JSON object, e.g. {'task_id': 'task_easy'}")
        unknown = sorted(set(data) - RESET_KEYS)
        if unknown:
            raise ApiError(
                422,
                f"unknown reset argument(s) {', '.join(unknown)}: use task_id or episode, include_chart, "
                "episode_id, seed",
            )
        request = self.service.parse_reset(data)
        name = self.service.episode_name(request)
        loaded = self.service.episodes.cached(name) or await run_in_threadpool(self.service.load, name)
        sid = self.session_id or uuid.uuid4().hex
        start = self.service.start
        answer = (
            await run_in_threadpool(start, loaded, request, sid, self.client)
            if request.include_chart
            else start(loaded, request, sid, self.client)
        )
        self.session_id = answer.pop("session_id")
        return {**answer, "session_id": self.session_id}

    async def step(self, data: Any) -> dict[str, Any]:
        if self.session_id is None:
            raise ApiError(400, "no episode yet: send {'type': 'reset', 'data': {'task_id': ...}} first")
        session = self.service.session(self.session_id)
        wants_chart = session.include_chart or (isinstance(data, dict) and data.get("include_chart") is True)
        if wants_chart:
            return await run_in_threadpool(self.service.step, self.session_id, data, self.client)
        return self.service.step(self.session_id, data, self.client)

    async def state(self) -> dict[str, Any]:
        if self.session_id is None:
            raise ApiError(400, "no episode yet: send {'type': 'reset', 'data': {'task_id': ...}} first")
        if self.service.session(self.session_id).include_chart:
            return await run_in_threadpool(self.service.state, self.session_id, self.client)
        return self.service.state(self.session_id, self.client)

    def close(self) -> None:
        if self.session_id is not None and not self.attached:
            with contextlib.suppress(SessionError):  # already expired or closed: nothing to free
                self.service.sessions.close(self.session_id)
        self.session_id = None

    async def answer(self, raw: str | bytes) -> tuple[str | None, bool]:
        """(the answer text, whether to go on) for one message."""
        try:
            message = json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            return error_message(400, f"malformed JSON: {exc}", "INVALID_JSON"), True
        if not isinstance(message, dict):
            return error_message(400, "a message must be a JSON object with a 'type'"), True
        kind = message.get("type")
        try:
            if kind == "reset":
                return json_text("observation", await self.reset(message.get("data") or {})), True
            if kind == "step":
                return json_text("observation", await self.step(message.get("data"))), True
            if kind == "state":
                return json_text("state", await self.state()), True
            if kind == "close":
                return None, False
        except ApiError as exc:
            return error_message(exc.status, exc.message), True
        unknown = f"unknown message type {kind!r}: use reset, step, state or close"
        return error_message(400, unknown, "UNKNOWN_TYPE"), True


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a number")


def json_text(kind: str, data: dict[str, Any]) -> str:
    """``{"type": kind, "data": data}`` as JSON text (non-finite floats as null)."""
    return json_bytes({"type": kind, "data": data}).decode()


def message_size(raw: str | bytes, limit: int) -> int:
    """The message's size in bytes (UTF-8 for text), encoding only when the character count
    cannot decide against ``limit`` (a character is 1-4 bytes)."""
    if isinstance(raw, bytes) or len(raw) > limit or 4 * len(raw) <= limit:
        return len(raw)
    return len(raw.encode())


def _authorized(websocket: WebSocket, api_key: str) -> bool:
    given = websocket.headers.get("authorization", "").encode()
    return hmac.compare_digest(given, f"Bearer {api_key}".encode())


async def _refuse_handshake(websocket: WebSocket, status: int, message: str) -> None:
    """Refuse the upgrade with an HTTP answer (``status`` + JSON error) when the server can
    send one, else by closing (the client sees HTTP 403)."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(JSONResponse({"error": message}, status_code=status))
    else:
        await websocket.close(code=CLOSE_POLICY, reason=message[:120])


def _over_cap(connections: WsConnections, service: EnvService, client: str | None) -> str | None:
    """Why one more connection from ``client`` is refused (None: it is not): connections count
    against the same caps as sessions, in all and per client."""
    store = service.sessions
    if connections.open >= store.max_sessions:
        return f"the server holds its maximum of {store.max_sessions} sessions; try again later"
    if connections.per_client.get(client, 0) >= store.max_per_client:
        return (
            f"this client holds its maximum of {store.max_per_client} sessions; close one or try again later"
        )
    return None


router = APIRouter()


@router.websocket(WS_PATH)
async def ws_session(websocket: WebSocket) -> None:
    """One connection of the protocol, over the app's ``EnvService`` (``app.state.service``),
    API key, body limit (``max_body_bytes``: the message limit) and connection counter
    (``app.state.ws``, a ``WsConnections``)."""
    app_state = websocket.app.state
    service: EnvService = app_state.service
    api_key: str = app_state.api_key
    max_message_bytes: int = app_state.max_body_bytes
    connections: WsConnections = app_state.ws
    idle = service.sessions.idle_s
    if api_key and not _authorized(websocket, api_key):
        await _refuse_handshake(websocket, 401, MISSING_KEY)
        return
    client = client_of(websocket)
    attached_to = websocket.query_params.get("session_id")
    if attached_to is not None:
        try:
            service.owned_session(attached_to, client)
        except ApiError as exc:
            await _refuse_handshake(websocket, exc.status, exc.message)
            return
    await websocket.accept()
    refusal = _over_cap(connections, service, client)
    if refusal:
        connections.refused += 1
        await websocket.send_text(error_message(429, refusal))
        await websocket.close(code=CLOSE_TRY_LATER, reason="session cap reached")
        return
    connections.enter(client)
    connection = _Connection(service, client, attached_to)
    try:
        while True:
            try:
                event = await asyncio.wait_for(websocket.receive(), timeout=idle)
            except TimeoutError:
                await websocket.send_text(
                    error_message(408, f"idle for {idle:g} s: session closed", "SESSION_ERROR")
                )
                await websocket.close(code=1000, reason="idle")
                return
            if event["type"] == "websocket.disconnect":
                return
            raw = event.get("text")
            if raw is None:
                raw = event.get("bytes") or b""
            if message_size(raw, max_message_bytes) > max_message_bytes:
                await websocket.send_text(
                    error_message(413, f"message over the {max_message_bytes:,}-byte limit: ignored")
                )
                continue
            reply, go_on = await connection.answer(raw)
            if reply is not None:
                await websocket.send_text(reply)
            if not go_on:
                await websocket.close(code=1000)
                return
    except WebSocketDisconnect:
        return
    finally:
        connections.leave(client)
        connection.close()
