"""The HTTP server: a client plays task_easy to the end; bad requests get clear 4xx."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from stocker_core.env.server import SESSION_HEADER, create_app


@pytest.fixture
def client(seed_settings):
    with TestClient(create_app(seed_settings)) as c:
        yield c


def _play(client, headers=None) -> dict:
    r = client.post("/reset", json={"task_id": "task_easy"}, headers=headers or {})
    assert r.status_code == 200, r.text
    sid = r.json()["session_id"]
    headers = {SESSION_HEADER: sid}
    obs = r.json()["observation"]
    assert obs["step"] == 0 and obs["total_steps"] == 43 and obs["ticker"] == "AAPL"
    done, steps, last = False, 0, None
    while not done:
        action = {"side": "buy", "quantity": 5} if steps == 0 else {"side": "hold", "quantity": 0}
        last = client.post("/step", json=action, headers=headers)
        assert last.status_code == 200, last.text
        done = last.json()["done"]
        steps += 1
        assert -1.0 <= last.json()["reward"] <= 1.0
    assert steps == 43
    return {"sid": sid, "last": last.json()}


def test_client_plays_task_easy_to_the_end(client):
    out = _play(client)
    state = client.get("/state", headers={SESSION_HEADER: out["sid"]}).json()
    assert state["done"] and len(state["rewards"]) == 43
    r = client.post("/step", json={"side": "hold", "quantity": 0}, headers={SESSION_HEADER: out["sid"]})
    assert r.status_code == 409 and "reset" in r.json()["error"]


def test_health_metadata_schema_docs(client):
    assert client.get("/health").json()["status"] == "healthy"
    meta = client.get("/metadata").json()
    assert set(meta["tasks"]) == {"task_easy", "task_medium", "task_hard"}
    schema = client.get("/schema").json()
    assert schema["action"]["properties"]["side"]
    assert client.get("/docs").status_code == 200
    assert "/step" in client.get("/openapi.json").json()["paths"]


def test_bad_requests_are_clear_4xx_and_keep_the_session(client):
    r = client.post("/step", json={"side": "buy", "quantity": 1}, headers={SESSION_HEADER: "nobody"})
    assert r.status_code == 404 and "reset" in r.json()["error"]
    sid = client.post("/reset", json={"task_id": "task_medium"}).json()["session_id"]
    h = {SESSION_HEADER: sid}
    client.post("/step", json={"side": "buy", "quantity": 2}, headers=h)
    bad_bodies = [
        (b"{not json", 400),
        (b'{"side": "buy", "quantity": NaN}', 400),
        (b'{"side": "short", "quantity": 1}', 422),
        (b'{"side": "buy", "quantity": -3}', 422),
        (b'{"side": "buy", "quantity": 1e300}', 422),
        (b'{"side": "buy", "quantity": 100000000000000000000000}', 422),
        (b"[1, 2]", 422),
        (b"", 400),
    ]
    for body, status in bad_bodies:
        r = client.post("/step", content=body, headers={**h, "content-type": "application/json"})
        assert r.status_code == status, (body, r.text)
        assert r.json()["error"]
    state = client.get("/state", headers=h).json()
    assert state["observation"]["step"] == 1 and state["observation"]["position"] == 2
    r = client.post("/reset", json={"task_id": "task_nope"})
    assert r.status_code == 404 and "unknown task" in r.json()["error"]
    r = client.post("/reset", json={"episode": "AAPL|2023-13-01"})
    assert r.status_code == 400
    r = client.post("/reset", json={"episode": "AAPL|1999-01-01"})
    assert r.status_code == 404
    r = client.post("/reset", headers={SESSION_HEADER: "bad id!"}, json={})
    assert r.status_code == 400
    # the session survived every bad request
    assert client.post("/step", json={"action": {"side": "hold"}}, headers=h).status_code == 200


def test_sessions_are_independent_and_restorable(client):
    a = client.post("/reset", json={"task_id": "task_easy"}).json()["session_id"]
    b = client.post("/reset", json={"task_id": "task_hard"}).json()["session_id"]
    ha, hb = {SESSION_HEADER: a}, {SESSION_HEADER: b}
    client.post("/step", json={"side": "buy", "quantity": 3}, headers=ha)
    snap = client.get("/snapshot", headers=ha).json()
    first = client.post("/step", json={"side": "sell", "quantity": 1}, headers=ha).json()
    assert client.get("/state", headers=hb).json()["observation"]["step"] == 0
    r = client.post("/restore", json=snap, headers=ha)
    assert r.status_code == 200 and r.json()["observation"]["step"] == 1
    again = client.post("/step", json={"side": "sell", "quantity": 1}, headers=ha).json()
    assert again["reward"] == first["reward"]
    # restoring into a fresh session id works too
    r = client.post("/restore", json=snap, headers={SESSION_HEADER: "replay-1"})
    assert r.status_code == 200 and r.json()["session_id"] == "replay-1"
    assert client.post("/restore", json={"episode_key": snap["episode_key"]}, headers=ha).status_code == 422
    assert client.post("/restore", json={"nothing": 1}, headers=ha).status_code == 422


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_real_uvicorn_server(seed_settings):
    import uvicorn

    port = _free_port()
    config = uvicorn.Config(create_app(seed_settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.time() + 20
        while not server.started and time.time() < deadline:
            time.sleep(0.05)
        assert server.started
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            out = _play(http)
            assert out["last"]["observation"]["done"]
            r = http.post("/step", content=b"{oops", headers={"content-type": "application/json"})
            assert r.status_code == 400
    finally:
        server.should_exit = True
        thread.join(timeout=10)
