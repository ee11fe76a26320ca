"""An environment session belongs to the client address that opened it (issue 52, found by the
web's probe on the env server): from 127.0.0.4, every route that reads or changes 127.0.0.3's
session — GET /state, GET /snapshot, POST /step, DELETE /session, POST /reset with its id, POST
/restore into it, the MCP tools and a WebSocket attaching to it — is refused with 409 and leaves
it as it was. Before the fix /state, /snapshot, /step and DELETE answered 200 (and the DELETE
closed the owner's session)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from stocker_core.env.server import SESSION_HEADER, create_app

HOLD = {"side": "hold", "quantity": 0}


@pytest.fixture
def app(seed_settings):
    return create_app(seed_settings, api_key="")


def _owned(app) -> tuple[TestClient, str]:
    owner = TestClient(app, client=("127.0.0.3", 50000))
    sid = owner.post("/reset", json={"task_id": "task_easy"}).json()["session_id"]
    assert (
        owner.post("/step", json={"side": "buy", "quantity": 1}, headers={SESSION_HEADER: sid}).status_code
        == 200
    )
    return owner, sid


ROUTES = [
    ("GET", "/state", None),
    ("GET", "/snapshot", None),
    ("POST", "/step", HOLD),
    ("DELETE", "/session", None),
    ("POST", "/reset", {"task_id": "task_easy"}),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_another_client_cannot_read_or_change_a_session(app, method, path, body) -> None:
    owner, sid = _owned(app)
    before = owner.get("/state", headers={SESSION_HEADER: sid}).json()
    stranger = TestClient(app, client=("127.0.0.4", 50000))
    kwargs = {"json": body} if body is not None else {}
    answer = stranger.request(method, path, headers={SESSION_HEADER: sid}, **kwargs)
    assert answer.status_code == 409, answer.text
    assert "belongs to another client" in answer.json()["error"] and "observation" not in answer.json()
    assert owner.get("/state", headers={SESSION_HEADER: sid}).json() == before


def test_restore_mcp_and_websocket_refuse_another_clients_session(app) -> None:
    owner, sid = _owned(app)
    snapshot = owner.get("/snapshot", headers={SESSION_HEADER: sid}).json()
    before = owner.get("/state", headers={SESSION_HEADER: sid}).json()
    stranger = TestClient(app, client=("127.0.0.4", 50000))
    assert stranger.post("/restore", json=snapshot, headers={SESSION_HEADER: sid}).status_code == 409
    for tool, arguments in (
        ("get_quote", {}),
        ("place_order", HOLD),
        ("get_price_history", {"lookback_days": 3}),
    ):
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        reply = stranger.post(
            "/mcp", json={**call, "params": {"name": tool, "arguments": arguments, "session_id": sid}}
        )
        assert reply.json()["result"]["isError"] is True, tool
        assert "belongs to another client" in reply.json()["result"]["content"][0]["text"]
    close = {"jsonrpc": "2.0", "id": 2, "method": "openenv/session/close", "params": {"session_id": sid}}
    assert stranger.post("/mcp", json=close).json()["error"]["code"] == -32602
    with pytest.raises(Exception) as refused, stranger.websocket_connect(f"/ws?session_id={sid}"):
        pass
    assert "409" in repr(refused.value) or "1008" in repr(refused.value)
    assert owner.get("/state", headers={SESSION_HEADER: sid}).json() == before
