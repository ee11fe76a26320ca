"""The web API sits behind the same ASGI guards as the environment server: the key is checked
before a byte of the body is read, and a chunked body stops being read past the limit
(issue 22, defect 2). Driven at the ASGI level so the bytes pulled are counted exactly."""

from __future__ import annotations

import asyncio
import json

import pytest

from stocker_core.env.server_guards import MAX_BODY_BYTES
from stocker_core.web.app import create_web_app

CHUNK = 65_536


def _post_chunked(app, path: str, total: int, headers: dict[str, str]) -> tuple[int, int, dict]:
    """POST ``total`` bytes in chunks with no Content-Length; (status, bytes pulled, JSON answer)."""
    pulled = 0
    sent: list[dict] = []

    async def receive() -> dict:
        nonlocal pulled
        if pulled >= total:
            return {"type": "http.disconnect"}
        size = min(CHUNK, total - pulled)
        pulled += size
        return {"type": "http.request", "body": b" " * size, "more_body": pulled < total}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"transfer-encoding", b"chunked")]
        + [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], pulled, json.loads(body)


@pytest.fixture(scope="module")
def guarded(tiny):
    return create_web_app(tiny.settings, api_key="s3cret")


def test_an_unauthenticated_chunked_body_is_refused_before_a_byte_is_read(guarded):
    status, pulled, answer = _post_chunked(guarded, "/web/api/play", 300_000_000, {})
    assert status == 401 and "API key" in answer["error"]
    assert pulled == 0


def test_an_authenticated_chunked_body_stops_just_past_the_limit(guarded):
    status, pulled, answer = _post_chunked(
        guarded, "/web/api/play", 300_000_000, {"Authorization": "Bearer s3cret"}
    )
    assert status == 413 and "limit" in answer["error"]
    assert MAX_BODY_BYTES < pulled <= MAX_BODY_BYTES + CHUNK


def test_a_declared_oversize_body_is_refused_unread_without_a_key_too(tiny):
    app = create_web_app(tiny.settings, api_key="")
    status, pulled, _ = _post_chunked(app, "/web/api/play", 0, {"Content-Length": str(10 * MAX_BODY_BYTES)})
    assert status == 413 and pulled == 0


def test_the_pages_still_load_without_the_key(guarded):
    from fastapi.testclient import TestClient

    client = TestClient(guarded)
    assert client.get("/web/").status_code == 200
    assert client.get("/web/api/status").status_code == 401
    assert client.get("/web/api/status", headers={"Authorization": "Bearer s3cret"}).status_code == 200
