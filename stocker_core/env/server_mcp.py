"""A minimal MCP endpoint (JSON-RPC 2.0 over ``POST /mcp``): ``initialize``, ``ping``,
``tools/list`` and ``tools/call`` with the tools ``reset``, ``step``, ``state`` and
``close`` — the same operations as the HTTP routes, on the same sessions.

Errors follow JSON-RPC: -32700 parse error, -32600 invalid request, -32601 unknown
method, -32602 invalid params (e.g. an unknown tool). A tool that fails (bad action,
unknown session) answers a result with ``isError: true`` and the message, as MCP
expects. Notifications (no ``id``) get no answer; batches are answered in order.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.concurrency import run_in_threadpool

from stocker_core.env.actions import Action
from stocker_core.env.api_models import ResetRequest
from stocker_core.env.server_service import ApiError, EnvService

PROTOCOL_VERSION = "2025-06-18"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602

_SESSION_ARG = {"type": "string", "description": "the session_id that reset returned"}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "reset",
        "description": "Start a session on a task (task_easy|task_medium|task_hard) or an episode key "
        "(AAPL|2023-08-01); returns session_id and the first observation.",
        "inputSchema": ResetRequest.model_json_schema(),
    },
    {
        "name": "step",
        "description": "Trade at today's close: side buy|sell|hold, quantity whole shares; returns the "
        "next observation, the reward and done.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "session_id": _SESSION_ARG,
                **Action.model_json_schema()["properties"],
                "include_chart": {"type": "boolean"},
            },
            "required": ["session_id", "side"],
        },
    },
    {
        "name": "state",
        "description": "The current observation and the episode so far (rewards, totals).",
        "inputSchema": {
            "type": "object",
            "properties": {"session_id": _SESSION_ARG},
            "required": ["session_id"],
        },
    },
    {
        "name": "close",
        "description": "End a session and free its slot.",
        "inputSchema": {
            "type": "object",
            "properties": {"session_id": _SESSION_ARG},
            "required": ["session_id"],
        },
    },
]
TOOL_NAMES = {tool["name"] for tool in TOOLS}
RPC_REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "a JSON-RPC 2.0 request (a list of them is a batch)",
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "id": {"type": ["string", "integer", "null"]},
        "method": {"type": "string", "enum": ["initialize", "ping", "tools/list", "tools/call"]},
        "params": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": sorted(TOOL_NAMES)},
                "arguments": {"type": "object"},
            },
        },
    },
    "required": ["jsonrpc", "method"],
}
"""The body of ``POST /mcp`` in the OpenAPI document."""


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _tool_result(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": json.dumps(payload)}],
        "structuredContent": payload,
        "isError": False,
    }


def _tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


async def _call_tool(
    service: EnvService, params: dict[str, Any], header_session: str | None, client: str | None = None
) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if not isinstance(name, str) or name not in TOOL_NAMES:
        raise RpcError(INVALID_PARAMS, f"unknown tool {name!r}: use one of {', '.join(sorted(TOOL_NAMES))}")
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "arguments must be an object")
    arguments = dict(arguments)
    try:
        # every tool runs off the event loop: a load or a chart rendering may take a while
        if name == "reset":
            request = service.parse_reset(arguments)
            loaded = await run_in_threadpool(service.load, service.episode_name(request))
            started = await run_in_threadpool(service.start, loaded, request, request.session_id, client)
            return _tool_result(started)
        session_id = arguments.pop("session_id", None) or header_session
        if name == "step":
            return _tool_result(await run_in_threadpool(service.step, session_id, arguments))
        if name == "state":
            return _tool_result(await run_in_threadpool(service.state, session_id))
        return _tool_result(await run_in_threadpool(service.close, session_id))
    except ApiError as exc:
        return _tool_error(f"{exc.message} (HTTP {exc.status})")


async def _answer(
    service: EnvService, message: Any, header_session: str | None, client: str | None = None
) -> dict[str, Any] | None:
    if not isinstance(message, dict):
        return error_reply(None, INVALID_REQUEST, "a JSON-RPC request must be an object")
    request_id = message.get("id")
    is_notification = "id" not in message
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return error_reply(request_id, INVALID_REQUEST, 'send {"jsonrpc": "2.0", "method": ..., "id": ...}')
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
            result = {"tools": TOOLS}
        elif method == "tools/call":
            result = await _call_tool(service, params, header_session, client)
        else:
            raise RpcError(METHOD_NOT_FOUND, f"unknown method {method!r}")
    except RpcError as exc:
        return None if is_notification else error_reply(request_id, exc.code, exc.message)
    if is_notification:
        return None
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def handle_mcp(
    service: EnvService, raw: bytes, header_session: str | None, client: str | None = None
) -> Any:
    """The JSON-RPC answer to body ``raw`` (a dict, a list for a batch, or None when
    only notifications were sent). Each ``reset`` of a batch counts against ``client``'s quota."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return error_reply(None, PARSE_ERROR, "parse error: the body is not JSON")
    if isinstance(message, list):
        if not message:
            return error_reply(None, INVALID_REQUEST, "an empty batch")
        replies = [await _answer(service, m, header_session, client) for m in message]
        replies = [r for r in replies if r is not None]
        return replies or None
    return await _answer(service, message, header_session, client)
