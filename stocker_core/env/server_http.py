"""HTTP helpers of the environment server's routes: JSON answers, JSON bodies, the client."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request, Response

from stocker_core.env.server_service import ApiError, json_bytes

__all__ = ["client_of", "json_body", "json_response"]


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


def client_of(request: Request) -> str | None:
    """The client's address: the key of its session quota."""
    return request.client.host if request.client else None
