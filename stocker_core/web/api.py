"""The web page's JSON API, what its routes share: the ``WebContext`` they read
(``web_context``), the project's errors as 4xx answers, the API key check (every route's
dependency) and the documented error answers.

The routes live by resource in ``api_*.py``; ``app.mount_web`` includes them (``API_ROUTERS``)
under ``api/``. Every answer is JSON (or a PNG / the report's HTML); bad input is a 4xx
``{"error": ...}``.
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import Request

from stocker_core.config import Settings
from stocker_core.env.api_models import ErrorAnswer
from stocker_core.errors import StockerError
from stocker_core.web.chart_memory import ChartMemory
from stocker_core.web.corpus import DagsterLink
from stocker_core.web.errors import WebError, as_web_error
from stocker_core.web.play import PlaySessions
from stocker_core.web.reader import WarehouseReader

F = TypeVar("F", bound=Callable[..., Any])
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorAnswer, "description": text}
    for status, text in {
        400: "a malformed or unknown value",
        401: "missing or wrong API key",
        404: "nothing stored under that name",
        409: "the request does not fit the current state",
        413: "the body is over the size limit",
        429: "the page, or this client, holds its maximum of play sessions",
    }.items()
}
"""Documented on every API route (the schemathesis test holds the API to it)."""


@dataclass
class WebContext:
    """What every endpoint reads: settings, the read-only warehouse, play sessions, links, the key."""

    settings: Settings
    reader: WarehouseReader
    sessions: PlaySessions
    dagster: DagsterLink
    api_key: str | None = None
    charts: ChartMemory = field(default_factory=ChartMemory)
    """Charts drawn on demand (memory only: the page never writes into the home)."""


def web_context(request: Request) -> WebContext:
    """The page's ``WebContext`` (``app.state.web``, set by ``mount_web``); routes call it, as the
    environment server's call ``env_service``."""
    return request.app.state.web


def web_errors(fn: F) -> F:
    """Turn project errors raised by an endpoint into 4xx JSON answers."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StockerError as exc:
            raise as_web_error(exc) from None

    return wrapper  # type: ignore[return-value]


def require_key(request: Request) -> None:
    """Require ``Authorization: Bearer <key>`` when the page has an API key (every API route's
    dependency)."""
    api_key = request.app.state.web.api_key
    if not api_key:
        return
    header = request.headers.get("authorization", "")
    given = header[7:].strip() if header.lower().startswith("bearer ") else ""
    if not hmac.compare_digest(given.encode(), api_key.encode()):
        raise WebError(401, "this server needs its API key: send Authorization: Bearer <key>")
