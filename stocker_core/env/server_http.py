"""HTTP helpers of the servers' routes: JSON answers, JSON bodies, the client's address."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from fastapi import Request, Response
from starlette.requests import HTTPConnection

from stocker_core.env.server_service import ApiError, EnvService, json_bytes
from stocker_core.env.server_sessions import SESSION_HEADER

__all__ = [
    "SESSION_OPENAPI",
    "body_openapi",
    "canonical",
    "client_of",
    "env_service",
    "json_body",
    "json_response",
]

SESSION_OPENAPI: dict[str, Any] = {
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
"""The ``X-Session-Id`` header in a route's OpenAPI entry (routes read it themselves)."""


def body_openapi(
    schema: dict[str, Any], required: bool = True, session_header: bool = False
) -> dict[str, Any]:
    """A route's OpenAPI extra for a JSON body of ``schema`` (routes parse their bodies
    themselves, ``json_body``), with the session header when ``session_header``."""
    extra: dict[str, Any] = {
        "requestBody": {"required": required, "content": {"application/json": {"schema": schema}}}
    }
    return {**extra, **SESSION_OPENAPI} if session_header else extra


def env_service(connection: HTTPConnection) -> EnvService:
    """The server's ``EnvService`` (``app.state.service``, set by ``create_app``). Routes call it
    rather than declare it a FastAPI dependency: resolving one added ~5% to a ``/step``'s CPU."""
    return connection.app.state.service


def json_response(data: Any, status: int = 200) -> Response:
    """``data`` as a JSON answer (non-finite floats as null)."""
    return Response(json_bytes(data), status_code=status, media_type="application/json")


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a number")


async def json_body(request: Request, required: bool = True) -> Any:
    """The request's JSON body; ApiError 400 for an empty (when ``required``) or malformed one
    (NaN and Infinity included)."""
    raw = await request.body()
    if not raw.strip():
        if required:
            raise ApiError(400, "empty body: send a JSON object")
        return {}
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, f"malformed JSON: {exc}") from None


def canonical(host: str | None) -> str | None:
    """One spelling per address: an IPv4-mapped IPv6 address (``::ffff:127.0.0.3``, what a
    dual-stack socket reports) as its IPv4 address, IPv6 compressed and lower-case; a name
    that is not an address (a test client's ``testclient``) as given."""
    if host is None:
        return None
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def client_of(connection: HTTPConnection) -> str | None:
    """The client's address, the owner of its sessions and the key of its quota: the
    connection's peer (never a header: ``X-Forwarded-For`` reaches it only through uvicorn's
    proxy middleware, for proxies the operator names, ``env.proxies``)."""
    return canonical(connection.client.host if connection.client else None)
