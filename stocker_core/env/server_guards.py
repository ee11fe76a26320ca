"""ASGI guards in front of the environment server: an API key and a body-size limit.

``BodyLimit`` refuses a request whose ``Content-Length`` is over the limit before
reading a byte, and stops reading a chunked or streamed body as soon as it passes
the limit (it wraps ``receive``), answering 413 and closing the connection.
``BearerAuth`` requires ``Authorization: Bearer <key>`` on every path but ``/health`` (or
only under one prefix, e.g. the web page's ``/api``), before the app reads a byte of the body.
"""

from __future__ import annotations

import contextlib
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from stocker_core.errors import StockerError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY_BYTES = 1_000_000


class ServerConfigError(StockerError, ValueError):
    """The server would start in an unsafe or impossible configuration."""


OPEN_PATHS = frozenset({"/health"})


async def send_error(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] = ()) -> None:
    """Answer ``{"error": message}`` with ``status`` and close the connection."""
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyTooLarge(Exception):
    """Raised inside the app when the streamed body passes the limit."""


class BodyLimit:
    """Refuse bodies over ``max_bytes`` (413) without buffering them; ``stats`` counts
    the bytes read of refused bodies (``refused_bytes_read``) for tests and logs."""

    def __init__(
        self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES, stats: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.stats = stats if stats is not None else {}
        self.stats.update(refused=0, refused_bytes_read=0)

    def _too_large(self) -> str:
        return f"request body over the {self.max_bytes:,}-byte limit"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            self.stats["refused"] += 1
            await send_error(send, 413 if declared.isdigit() else 400, self._too_large())
            return
        read = 0
        started = over = False

        async def limited_receive() -> Message:
            nonlocal read, over
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > self.max_bytes:
                    over = True
                    raise BodyTooLarge
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if over:  # the app's answer to a body it could not read (FastAPI makes it a 400)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        with contextlib.suppress(BodyTooLarge):
            await self.app(scope, limited_receive, tracked_send)
        if over:
            self.stats["refused"] += 1
            self.stats["refused_bytes_read"] = max(self.stats["refused_bytes_read"], read)
            if not started:
                await send_error(send, 413, self._too_large())


def route_path(scope: Scope) -> str:
    """The request's path inside the app it reaches (a mount's ``root_path`` taken off)."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and (path == root or path.startswith(root + "/")):
        return path[len(root) :] or "/"
    return path


class BearerAuth:
    """Require ``Authorization: Bearer <api_key>`` on every path except ``OPEN_PATHS``; with
    ``only_under`` (e.g. ``"/api"``) only on that path and below it."""

    def __init__(self, app: ASGIApp, api_key: str, only_under: str | None = None) -> None:
        if not api_key or not api_key.strip():
            raise ValueError("BearerAuth needs a non-empty api_key")
        self.app = app
        self._expected = f"Bearer {api_key}".encode()
        self.only_under = only_under.rstrip("/") if only_under else None

    def _open(self, scope: Scope) -> bool:
        path = route_path(scope)
        if self.only_under is not None:
            return not (path == self.only_under or path.startswith(self.only_under + "/"))
        return path in OPEN_PATHS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._open(scope):
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if not hmac.compare_digest(given, self._expected):
            await send_error(
                send,
                401,
                "missing or wrong API key: send the header Authorization: Bearer <STOCKER_API_KEY>",
                [(b"www-authenticate", b'Bearer realm="stocker"')],
            )
            return
        await self.app(scope, receive, send)
