"""Per-client session quotas (issue 34, defect 2): one client (one MCP batch of 300 resets, or
300 players of the page) cannot fill the server, the cap answers 429, and no other client's live
session is ever dropped to make room. The page's play sessions (issue 43): past its quota a client's
own least recently used one is closed instead, so a page is never locked out."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from stocker_core.env.server import create_app
from stocker_core.web import play
from stocker_core.web.app import create_web_app

KEY = "SYN|2015-03-01"


def _batch(n: int) -> str:
    call = {"name": "start_episode", "arguments": {"episode": KEY}}
    return json.dumps([{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call} for i in range(n)])


def test_an_mcp_batch_of_300_resets_counts_each_call_and_leaves_room_for_others(tiny) -> None:
    app = create_app(tiny.settings, api_key="", max_sessions=256, max_per_client=32)
    other = TestClient(app, client=("10.0.0.2", 40000))
    kept = other.post("/reset", json={"episode": KEY}).json()["session_id"]
    hostile = TestClient(app, client=("10.0.0.1", 40000))
    replies = hostile.post("/mcp", content=_batch(300), headers={"content-type": "application/json"}).json()
    results = [r["result"] for r in replies]
    started = [r for r in results if not r["isError"]]
    refused = [r for r in results if r["isError"]]
    assert len(started) == 32 and len(refused) == 268
    assert all("this client holds its maximum of 32 sessions" in r["content"][0]["text"] for r in refused)
    assert all("HTTP 429" in r["content"][0]["text"] for r in refused)
    assert app.state.service.sessions.held_by("10.0.0.1") == 32
    # the other client's session lives on, and it can still start more
    step = other.post("/step", json={"side": "hold", "quantity": 0}, headers={"X-Session-Id": kept})
    assert step.status_code == 200
    assert other.post("/reset", json={"episode": KEY}).status_code == 200
    # the hostile client over HTTP too: 429, not an eviction
    answer = hostile.post("/reset", json={"episode": KEY})
    assert answer.status_code == 429 and "this client holds its maximum" in answer.json()["error"]


def test_a_full_server_answers_429_and_keeps_every_live_session(tiny) -> None:
    app = create_app(tiny.settings, api_key="", max_sessions=3, max_per_client=2)
    ids, owners = [], []
    for host in ("10.0.0.1", "10.0.0.2"):
        client = TestClient(app, client=(host, 1))
        ids += [client.post("/reset", json={"episode": KEY}).json().get("session_id") for _ in range(2)]
        owners += [client, client]
    assert ids[:3] == [i for i in ids[:3] if i] and ids[3] is None  # the 4th hit the total cap
    third = TestClient(app, client=("10.0.0.3", 1))
    full = third.post("/reset", json={"episode": KEY})
    assert full.status_code == 429 and "maximum of 3 sessions" in full.json()["error"]
    for sid, owner in zip(ids[:3], owners, strict=False):  # each still live, for its own client
        assert owner.get("/state", headers={"X-Session-Id": sid}).status_code == 200


def test_a_client_cannot_restart_another_clients_session(tiny) -> None:
    app = create_app(tiny.settings, api_key="")
    owner = TestClient(app, client=("10.0.0.1", 1))
    sid = owner.post("/reset", json={"episode": KEY}).json()["session_id"]
    thief = TestClient(app, client=("10.0.0.2", 1))
    taken = thief.post("/reset", json={"episode": KEY, "session_id": sid})
    assert taken.status_code == 409 and "belongs to another client" in taken.json()["error"]
    snapshot = owner.get("/snapshot", headers={"X-Session-Id": sid}).json()
    restored = thief.post("/restore", json=snapshot, headers={"X-Session-Id": sid})
    assert restored.status_code == 409
    assert owner.post("/reset", json={"episode": KEY, "session_id": sid}).status_code == 200


def test_the_page_never_locks_a_client_out_and_never_drops_another_clients_player(tiny, monkeypatch) -> None:
    """Issue 43: the 17th ``POST /web/api/play`` from one address got 429 for an hour. Past its
    quota a client's own least recently used session is closed to make room (its page is told
    why); another client's live session is never dropped (issue 34): only a client holding no
    session on a page full of others' is answered 429."""
    monkeypatch.setattr(play, "MAX_SESSIONS", 6)
    monkeypatch.setattr(play, "MAX_PER_CLIENT", 4)
    app = create_web_app(tiny.settings, api_key="")
    crowd = TestClient(app, client=("10.0.0.1", 1))
    answers = [crowd.post("/web/api/play", json={"episode": KEY}) for _ in range(10)]
    assert [a.status_code for a in answers] == [200] * 10
    ids = [a.json()["state"]["session_id"] for a in answers]
    for sid in ids[:6]:  # the oldest six made room for the newest
        gone = crowd.get(f"/web/api/play/{sid}")
        assert gone.status_code == 404 and "closed to make room" in gone.json()["error"], gone.text
    touched = ids[6]
    assert crowd.get(f"/web/api/play/{touched}").status_code == 200  # now the most recently used
    other = TestClient(app, client=("10.0.0.2", 1))
    others = [other.post("/web/api/play", json={"episode": KEY}) for _ in range(3)]
    assert [a.status_code for a in others] == [200] * 3  # the page is full: its own oldest made room
    assert other.get(f"/web/api/play/{others[0].json()['state']['session_id']}").status_code == 404
    stranger = TestClient(app, client=("10.0.0.3", 1))
    refused = stranger.post("/web/api/play", json={"episode": KEY})
    assert refused.status_code == 429 and "none of them this client's" in refused.json()["error"]
    for sid in [*ids[6:], *(a.json()["state"]["session_id"] for a in others[1:])]:
        owner = crowd if sid in ids else other
        stepped = owner.post(f"/web/api/play/{sid}/step", json={"side": "hold", "quantity": 0})
        assert stepped.status_code == 200, stepped.text
    assert crowd.get(f"/web/api/play/{touched}").status_code == 200  # the oldest, used last
    again = crowd.post("/web/api/play", json={"episode": KEY})  # crowd at 4: its least recently used goes
    assert again.status_code == 200
    assert crowd.get(f"/web/api/play/{ids[7]}").status_code == 404
    assert [crowd.get(f"/web/api/play/{sid}").status_code for sid in (touched, *ids[8:])] == [200] * 3
