"""The MCP endpoint (JSON-RPC 2.0 over ``POST /mcp``) as OpenEnv 0.10's ``MCPToolClient``
speaks it: ``initialize``, ``ping``, ``tools/list``, ``tools/call`` and the session methods
``openenv/session/create`` and ``openenv/session/close``.

Tools are named for what they do (OpenEnv reserves ``reset``, ``step``, ``state`` and
``close`` for its own protocol):

* ``start_episode`` — start (or restart) the session on a task or an episode key;
* ``place_order`` — trade at today's close: the step, with its reward and the reward's terms;
* ``get_quote`` — today's observation and the episode so far (nothing changes);
* the agent's research tools (``get_price_history``, ``get_indicators``, ``get_news``, ...) —
  the data of the session's ticker up to today's close, never past it (registered by the
  composition root: ``env.research_tools``).

A session comes from ``openenv/session/create`` (started on ``task_easy``, or on
``params.task_id`` / ``params.episode``), from ``start_episode`` without one, or from the HTTP
routes; a call names it as ``params.session_id`` (OpenEnv 0.10), the ``X-Session-Id`` header or
``arguments.session_id``. A session is its client's: another address gets an error.

Errors follow JSON-RPC: -32700 parse error, -32600 invalid request, -32601 unknown method,
-32602 invalid params (e.g. an unknown tool). A tool that fails (a bad order, an unknown
session) answers a result with ``isError: true`` and the message, as MCP expects.
Notifications (no ``id``) get no answer; batches are answered in order.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool

from stocker_core.env.actions import Action
from stocker_core.env.api_models import ResetRequest
from stocker_core.env.research_tools import registered_research_tools
from stocker_core.env.server_http import body_openapi, client_of, env_service, json_response
from stocker_core.env.server_service import ApiError, EnvService
from stocker_core.env.server_sessions import SESSION_HEADER

PROTOCOL_VERSION = "2025-06-18"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SESSION_CREATE, SESSION_CLOSE = "openenv/session/create", "openenv/session/close"

_START_FIELDS = ("task_id", "episode", "include_chart", "episode_id")
TRADING_TOOLS: list[dict[str, Any]] = [
    {
        "name": "start_episode",
        "description": "Start (or restart) the session on a task (task_easy|task_medium|task_hard) or an "
        "episode key (AAPL|2023-08-01); returns session_id and the first observation.",
        "inputSchema": {
            "type": "object",
            "properties": {k: ResetRequest.model_json_schema()["properties"][k] for k in _START_FIELDS},
        },
    },
    {
        "name": "place_order",
        "description": "Trade at today's close: side buy|sell|hold, quantity whole shares; returns the "
        "next observation, the reward, its terms (metadata) and done.",
        "inputSchema": {
            "type": "object",
            "properties": {**Action.model_json_schema()["properties"], "include_chart": {"type": "boolean"}},
            "required": ["side"],
        },
    },
    {
        "name": "get_quote",
        "description": "Today's observation (close, portfolio, council inputs) and the episode so far: "
        "rewards, totals, step_count. Changes nothing.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
RPC_METHODS = ("initialize", "ping", "tools/list", "tools/call", SESSION_CREATE, SESSION_CLOSE)
RPC_REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "a JSON-RPC 2.0 request (a list of them is a batch)",
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "id": {"type": ["string", "integer", "null"]},
        "method": {"type": "string", "enum": list(RPC_METHODS)},
        "params": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "arguments": {"type": "object"},
                "session_id": {"type": "string"},
            },
        },
    },
    "required": ["jsonrpc", "method"],
}
"""The body of ``POST /mcp`` in the OpenAPI document."""


def tools() -> list[dict[str, Any]]:
    """Every tool the endpoint offers: trading first, then the registered research tools."""
    research = registered_research_tools()
    return TRADING_TOOLS + (research.descriptors() if research is not None else [])


def tool_names() -> list[str]:
    return [tool["name"] for tool in tools()]


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _tool_result(payload: dict[str, Any]) -> dict[str, Any]:
    # "data" is what OpenEnv's MCPToolClient.call_tool returns; the rest is MCP's result
    return {
        "content": [{"type": "text", "text": json.dumps(payload, default=str)}],
        "structuredContent": payload,
        "data": payload,
        "isError": False,
    }


def _tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


class McpCall:
    """One JSON-RPC request's context: the service, the header's session and the client."""

    def __init__(self, service: EnvService, header_session: str | None, client: str | None) -> None:
        self.service = service
        self.header_session = header_session
        self.client = client

    async def start(self, arguments: dict[str, Any], session_id: str | None) -> dict[str, Any]:
        service = self.service
        request = service.parse_reset({**arguments, "session_id": session_id})
        loaded = await run_in_threadpool(service.load, service.episode_name(request))
        return await run_in_threadpool(service.start, loaded, request, request.session_id, self.client)

    async def research(self, name: str, arguments: dict[str, Any], session_id: str | None) -> dict[str, Any]:
        research = registered_research_tools()
        session = self.service.owned_session(session_id, self.client)
        with session.lock:
            observation = session.env.observation()
        result, valid = await run_in_threadpool(
            research.call, self.service.settings, observation.ticker, observation.date, name, arguments
        )
        if not valid:
            raise ApiError(422, str(result.get("error", "invalid tool call")))
        return result

    async def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if not isinstance(name, str) or name not in tool_names():
            raise RpcError(INVALID_PARAMS, f"unknown tool {name!r}: use one of {', '.join(tool_names())}")
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object")
        arguments = dict(arguments)
        session_id = params.get("session_id") or arguments.pop("session_id", None) or self.header_session
        arguments.pop("session_id", None)
        service = self.service
        try:
            # every tool runs off the event loop: a load or a chart rendering may take a while
            if name == "start_episode":
                return _tool_result(await self.start(arguments, session_id))
            if name == "place_order":
                return _tool_result(await run_in_threadpool(service.step, session_id, arguments, self.client))
            if name == "get_quote":
                return _tool_result(await run_in_threadpool(service.state, session_id, self.client))
            return _tool_result(await self.research(name, arguments, session_id))
        except ApiError as exc:
            return _tool_error(f"{exc.message} (HTTP {exc.status})")

    async def session_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            if method == SESSION_CREATE:
                start = {k: params[k] for k in ("task_id", "episode") if k in params}
                started = await self.start(start, None)
                return {"session_id": started["session_id"]}
            session_id = params.get("session_id")
            if not isinstance(session_id, str):
                raise RpcError(INVALID_PARAMS, "params.session_id is required")
            return self.service.close(session_id, self.client)
        except ApiError as exc:
            raise RpcError(INVALID_PARAMS, exc.message) from None

    async def answer(self, message: Any) -> dict[str, Any] | None:
        if not isinstance(message, dict):
            return error_reply(None, INVALID_REQUEST, "a JSON-RPC request must be an object")
        request_id = message.get("id")
        is_notification = "id" not in message
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            usage = 'send {"jsonrpc": "2.0", "method": ..., "id": ...}'
            return error_reply(request_id, INVALID_REQUEST, usage)
        if request_id is not None and not isinstance(request_id, str | int):
            return error_reply(None, INVALID_REQUEST, "id must be a string, a number or null")
        params = message.get("params", {})
        if not isinstance(params, dict):
            return error_reply(request_id, INVALID_PARAMS, "params must be an object")
        method = message["method"]
        try:
            if method == "initialize":
                result: Any = {
                    "protocolVersion": params.get("protocolVersion") or PROTOCOL_VERSION,
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "stocker", "version": "0.1.0"},
                }
            elif method == "ping":
                result = {}
            elif method.startswith("notifications/"):
                result = None
            elif method == "tools/list":
                result = {"tools": tools()}
            elif method == "tools/call":
                result = await self.call_tool(params)
            elif method in (SESSION_CREATE, SESSION_CLOSE):
                result = await self.session_method(method, params)
            else:
                known = ", ".join(RPC_METHODS)
                raise RpcError(METHOD_NOT_FOUND, f"unknown method {method!r}: use one of {known}")
        except RpcError as exc:
            return None if is_notification else error_reply(request_id, exc.code, exc.message)
        if is_notification:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def handle_mcp(
    service: EnvService, raw: bytes, header_session: str | None, client: str | None = None
) -> Any:
    """The JSON-RPC answer to body ``raw`` (a dict, a list for a batch, or None when
    only notifications were sent). Each session a batch starts counts against ``client``'s quota."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return error_reply(None, PARSE_ERROR, "parse error: the body is not JSON")
    call = McpCall(service, header_session, client)
    if isinstance(message, list):
        if not message:
            return error_reply(None, INVALID_REQUEST, "an empty batch")
        replies = [await call.answer(m) for m in message]
        replies = [r for r in replies if r is not None]
        return replies or None
    return await call.answer(message)


router = APIRouter()


@router.post(
    "/mcp",
    openapi_extra=body_openapi(RPC_REQUEST_SCHEMA, session_header=True),
    responses={202: {"description": "only notifications were sent: no answer"}},
)
async def mcp(request: Request) -> Response:
    """MCP over JSON-RPC 2.0 (OpenEnv 0.10's MCPToolClient): tools/list, tools/call (start_episode,
    place_order, get_quote and the research tools), openenv/session/create and close."""
    service = env_service(request)
    header = request.headers.get(SESSION_HEADER)
    reply = await handle_mcp(service, await request.body(), header, client_of(request))
    return Response(status_code=202) if reply is None else json_response(reply)
