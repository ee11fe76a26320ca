"""The server's OpenEnv contract in-process: council inputs in the observation (point in
time, bounded), /schema, explicit sessions (cap, idle expiry), the episode cache, MCP."""

from __future__ import annotations

import base64
import io
import threading
import time

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from stocker_core.agent.tool_catalog import TOOL_NAMES
from stocker_core.env.server import SESSION_HEADER, create_app


@pytest.fixture
def app(seed_settings):
    return create_app(seed_settings, api_key="")


@pytest.fixture
def client(app):
    with TestClient(app) as c:
        yield c


def _reset(client, **body) -> tuple[dict, dict]:
    r = client.post("/reset", json={"task_id": "task_easy", **body})
    assert r.status_code == 200, r.text
    return r.json(), {SESSION_HEADER: r.json()["session_id"]}


def _step_to(client, headers, steps: int) -> dict:
    out = None
    for _ in range(steps):
        out = client.post("/step", json={"side": "hold"}, headers=headers)
        assert out.status_code == 200, out.text
    return out.json()


def test_observation_carries_the_council_inputs_point_in_time(client):
    _, h = _reset(client)
    obs = _step_to(client, h, 10)["observation"]  # step 10 of task_easy: 2023-08-15
    assert obs["date"] == "2023-08-15" and obs["step"] == 10
    # the NYSE close of 2023-08-15 (EDT) is 20:00 UTC
    assert obs["cutoff"] == "2023-08-15T20:00:00+00:00"
    # news: 7 days before the cut-off. 08-04 (published 08-05 04:00Z) is too old, 08-15's
    # date-only headline counts from 08-16 04:00Z (after the close): only 08-08's is seen
    assert [h["headline"] for h in obs["headlines"]] == [
        "Apple unveils new accessibility features ahead of iPhone 15 launch"
    ]
    assert obs["headlines"][0]["published_at"] == "2023-08-09T04:00:00+00:00"
    assert [p["date"] for p in obs["forum_posts"]] == ["2023-08-04", "2023-08-11"]
    assert obs["forum_posts"][0]["subreddit"] == "wallstreetbets" and obs["forum_posts"][0]["score"] == 312
    peers = {p["symbol"]: p for p in obs["peers"]}
    assert {"MSFT": "peer", "GOOGL": "peer", "GC=F": "commodity"}.items() <= {
        s: p["kind"] for s, p in peers.items()
    }.items()
    assert peers["MSFT"]["dates"][-1] == "2023-08-15" and peers["MSFT"]["closes"][-1] == 321.859985
    assert all(d <= "2023-08-15" for p in obs["peers"] for d in p["dates"])
    assert obs["indicators"]["rsi14"] == pytest.approx(31.671816, abs=1e-6)
    assert obs["indicators"]["sma200"] is None  # 135 sessions of history: not defined yet
    assert all(e["published_at"] < obs["cutoff"] for e in obs["macro_events"])
    # the next day the window has moved: 08-08's headline is out, 08-15's is in
    nxt = _step_to(client, h, 1)["observation"]
    assert [h["headline"] for h in nxt["headlines"]] == ["Apple supplier TSMC expects strong A17 chip orders"]


def test_observation_equals_what_the_council_sees(client, seed_settings):
    from stocker_core.decision_context.decision import load_council_inputs
    from stocker_core.env.observation import council_fields
    from stocker_core.env.peers import context_symbols

    _, h = _reset(client)
    peers, commodity = context_symbols("AAPL", seed_settings)
    inputs = load_council_inputs(
        "AAPL", "2023-08-01", "2023-09-29", peers=peers, commodity=commodity, settings=seed_settings
    )
    for steps in (1, 7, 15):
        obs = _step_to(client, h, steps)["observation"]
        expected = council_fields(inputs.context(obs["date"]))
        assert {k: obs[k] for k in expected} == expected


def test_every_step_is_point_in_time(client):
    _, h = _reset(client)
    done = False
    while not done:
        out = client.post("/step", json={"side": "hold"}, headers=h).json()
        obs, done = out["observation"], out["done"]
        cutoff = pd.Timestamp(obs["cutoff"])
        for kind in ("headlines", "forum_posts", "macro_events"):
            assert all(pd.Timestamp(e["published_at"]) < cutoff for e in obs[kind])
        assert all(pd.Timestamp(e["published_at"]) >= cutoff - pd.Timedelta(days=7) for e in obs["headlines"])
        assert all(d <= obs["date"] for p in obs["peers"] for d in p["dates"])


def test_chart_path_and_base64_on_request(client, seed_settings):
    from PIL import Image

    first, h = _reset(client)
    assert first["observation"]["chart"] == {"path": None, "png_base64": None}  # none rendered
    out = client.post("/step", json={"side": "hold", "include_chart": True}, headers=h).json()
    png = base64.b64decode(out["observation"]["chart"]["png_base64"])
    assert Image.open(io.BytesIO(png)).size == (768, 768)
    assert out["observation"]["chart"]["path"] is None
    # a chart the charts asset wrote is reported by path and sent as is
    day = out["observation"]["date"]
    stored = seed_settings.home / "charts" / "AAPL" / f"{day}.png"
    stored.parent.mkdir(parents=True)
    stored.write_bytes(png[:100] + b"stored")
    obs = client.get("/state", headers=h).json()["observation"]
    assert obs["chart"] == {"path": str(stored), "png_base64": None}
    _, h2 = _reset(client, include_chart=True)
    r = client.post("/step", json={"side": "hold"}, headers=h2).json()
    assert base64.b64decode(r["observation"]["chart"]["png_base64"]) == png[:100] + b"stored"


def test_payload_is_bounded():
    from stocker_core.decision_context.decision import build_context
    from stocker_core.env.api_models import EVENT_LIMIT, TEXT_CHARS
    from stocker_core.env.observation import council_fields
    from stocker_core.text_events.events import NewsItem, TextEvents, events_frame

    days = pd.bdate_range("2023-01-02", periods=30)
    bars = pd.DataFrame(
        {
            "date": days,
            "open": 10.0,
            "high": 11.0,
            "low": 9.0,
            "close": 10.0,
            "adj_close": 10.0,
            "volume": 1e6,
        }
    )
    news = events_frame(
        "news",
        [
            NewsItem(ticker="ABC", date=d.date(), headline=f"{i} " + "x" * 1000)
            for i, d in enumerate(pd.date_range("2023-02-01", "2023-02-10", freq="2h"))
        ],
    )
    text = TextEvents(news, TextEvents.empty().forums, TextEvents.empty().macro)
    fields = council_fields(build_context("ABC", days[-1], bars, text=text))
    assert len(fields["headlines"]) == EVENT_LIMIT
    assert all(len(h["headline"]) == TEXT_CHARS and h["headline"].endswith("…") for h in fields["headlines"])
    assert fields["headlines"][-1]["date"] == "2023-02-09"  # the latest ones, oldest first


def test_schema_documents_observation_state_and_limits(client):
    schema = client.get("/schema").json()
    assert {"action", "observation", "state", "reset"} <= set(schema)
    props = schema["observation"]["properties"]
    for name in ("chart", "indicators", "headlines", "forum_posts", "peers", "macro_events", "cutoff"):
        assert name in props
    assert schema["state"]["properties"]["observation"]
    assert schema["limits"] == {
        "price_history": 252,
        "events": 20,
        "text_chars": 300,
        "symbols": 8,
        "symbol_closes": 20,
    }
    assert "include_chart" in schema["reset"]["properties"]


def test_sessions_are_explicit(client):
    a = client.post("/reset", json={"task_id": "task_easy"}).json()["session_id"]
    b = client.post("/reset", json={"task_id": "task_easy"}).json()["session_id"]
    assert a != b
    r = client.post("/step", json={"side": "buy", "quantity": 1})
    assert r.status_code == 400 and SESSION_HEADER in r.json()["error"]
    assert client.get("/state").status_code == 400
    assert (
        client.post("/step", json={"side": "buy", "quantity": 3}, headers={SESSION_HEADER: a}).status_code
        == 200
    )
    # B's episode is untouched by A's step; the id also works as a query parameter or body field
    assert client.get(f"/state?session_id={b}").json()["observation"]["position"] == 0
    r = client.post("/step", json={"side": "buy", "quantity": 2, "session_id": b})
    assert r.status_code == 200 and r.json()["observation"]["position"] == 2
    assert client.get("/state", headers={SESSION_HEADER: a}).json()["observation"]["position"] == 3
    r = client.get("/state", headers={SESSION_HEADER: "someone-else"})
    assert r.status_code == 404 and "POST /reset" in r.json()["error"]


def test_session_cap_and_close(seed_settings):
    with TestClient(create_app(seed_settings, api_key="", max_sessions=2)) as client:
        a = client.post("/reset", json={}).json()["session_id"]
        client.post("/reset", json={})
        r = client.post("/reset", json={})
        assert r.status_code == 429 and "maximum of 2 sessions" in r.json()["error"]
        # restarting an existing session needs no new slot
        assert client.post("/reset", json={}, headers={SESSION_HEADER: a}).status_code == 200
        assert client.delete("/session", headers={SESSION_HEADER: a}).json() == {
            "session_id": a,
            "closed": True,
        }
        assert client.get("/state", headers={SESSION_HEADER: a}).status_code == 404
        assert client.post("/reset", json={}).status_code == 200
        assert client.get("/health").json()["sessions"] == 2


def test_idle_sessions_expire(seed_settings):
    app = create_app(seed_settings, api_key="", idle_s=60)
    now = [1000.0]
    app.state.service.sessions.clock = lambda: now[0]
    with TestClient(app) as client:
        _, ha = _reset(client)
        _, hb = _reset(client)
        now[0] += 45
        assert client.get("/state", headers=ha).status_code == 200  # A used at t=45
        now[0] += 30  # B idle 75 s, A idle 30 s
        r = client.post("/step", json={"side": "hold"}, headers=hb)
        assert r.status_code == 404 and "idle for more than 60 s" in r.json()["error"]
        assert client.post("/step", json={"side": "hold"}, headers=ha).status_code == 200
        assert client.get("/health").json()["sessions"] == 1


def test_idle_expiry_in_real_time(seed_settings):
    with TestClient(create_app(seed_settings, api_key="", idle_s=0.3)) as client:
        _, h = _reset(client)
        assert client.get("/state", headers=h).status_code == 200
        time.sleep(0.4)
        assert client.get("/state", headers=h).status_code == 404


def test_reset_loads_each_episode_once(app):
    with TestClient(app) as client:
        results = []

        def reset() -> None:
            results.append(client.post("/reset", json={"task_id": "task_medium"}).status_code)

        threads = [threading.Thread(target=reset) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for _ in range(5):
            client.post("/reset", json={"episode": "INTC|2024-01-01"})
        client.post("/reset", json={"task_id": "task_medium"})
    assert results == [200] * 6
    # task_medium and its partition key are two names (two loads), each loaded once
    assert app.state.service.episodes.loads == 2


def test_reset_input_errors(client):
    assert client.post("/reset", json={"task_id": ""}).status_code == 422
    assert (
        client.post("/reset", json={"task_id": "task_easy", "episode": "AAPL|2023-08-01"}).status_code == 422
    )
    assert client.post("/reset", json={"bogus": 1}).status_code == 422
    assert client.post("/reset", json={"include_chart": "yes please"}).status_code == 422


def _rpc(client, method, params=None, rid=1, headers=None):
    body = {"jsonrpc": "2.0", "method": method, "id": rid}
    if params is not None:
        body["params"] = params
    r = client.post("/mcp", json=body, headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


def test_mcp_tools_play_an_episode(client):
    """Tools named for what they do (OpenEnv 0.10 reserves reset/step/state/close)."""
    init = _rpc(client, "initialize", {"protocolVersion": "2025-03-26"})
    assert init["jsonrpc"] == "2.0" and init["id"] == 1
    assert init["result"]["protocolVersion"] == "2025-03-26" and "tools" in init["result"]["capabilities"]
    tools = _rpc(client, "tools/list", rid="t")["result"]["tools"]
    names = [t["name"] for t in tools]
    assert names[:3] == ["start_episode", "place_order", "get_quote"]
    assert set(names[3:]) == set(TOOL_NAMES) and not {"reset", "step", "state", "close"} & set(names)
    assert all(t["inputSchema"]["type"] == "object" for t in tools)
    begin = {"name": "start_episode", "arguments": {"task_id": "task_hard"}}
    start = _rpc(client, "tools/call", begin)["result"]
    assert start["isError"] is False and start["data"] == start["structuredContent"]
    sid = start["structuredContent"]["session_id"]
    assert start["structuredContent"]["observation"]["ticker"] == "META"
    order = {"name": "place_order", "arguments": {"side": "buy", "quantity": 4}, "session_id": sid}
    step = _rpc(client, "tools/call", order)["result"]["structuredContent"]
    assert step["observation"]["position"] == 4 and step["metadata"]["breakdown"]["invalid_penalty"] == 0.0
    quote = _rpc(client, "tools/call", {"name": "get_quote", "arguments": {}}, headers={SESSION_HEADER: sid})
    assert quote["result"]["structuredContent"]["observation"]["step"] == 1
    assert quote["result"]["structuredContent"]["step_count"] == 1
    # the same session over plain HTTP
    assert client.get("/state", headers={SESSION_HEADER: sid}).json()["observation"]["position"] == 4
    short = {"name": "place_order", "arguments": {"session_id": sid, "side": "short"}}
    bad = _rpc(client, "tools/call", short)
    assert bad["result"]["isError"] is True and "invalid action" in bad["result"]["content"][0]["text"]
    gone = _rpc(client, "tools/call", {"name": "get_quote", "arguments": {"session_id": "nope"}})
    assert gone["result"]["isError"] is True and "HTTP 404" in gone["result"]["content"][0]["text"]


def test_mcp_sessions_and_research_tools(app, client):
    """openenv/session/create and close (OpenEnv's MCPToolClient), a research tool that reads
    the session's ticker up to today only, and a session that answers only its own client."""
    sid = _rpc(client, "openenv/session/create", {"task_id": "task_easy"})["result"]["session_id"]
    history = {"name": "get_price_history", "arguments": {"lookback_days": 5}, "session_id": sid}
    answer = _rpc(client, "tools/call", history)["result"]
    assert answer["isError"] is False, answer
    today = client.get("/state", headers={SESSION_HEADER: sid}).json()["observation"]
    assert answer["data"]["last_date"] <= today["date"]
    wrong = {"name": "get_price_history", "arguments": {"lookback_days": -3}, "session_id": sid}
    assert _rpc(client, "tools/call", wrong)["result"]["isError"] is True
    with TestClient(app, client=("127.0.0.9", 50000)) as other:
        stolen = _rpc(other, "tools/call", {"name": "get_quote", "arguments": {}, "session_id": sid})
        assert stolen["result"]["isError"] and "another client" in stolen["result"]["content"][0]["text"]
        assert _rpc(other, "openenv/session/close", {"session_id": sid})["error"]["code"] == -32602
    closed = _rpc(client, "openenv/session/close", {"session_id": sid})["result"]
    assert closed == {"session_id": sid, "closed": True}
    assert client.get("/state", headers={SESSION_HEADER: sid}).status_code == 404
    assert _rpc(client, "openenv/session/close", {})["error"]["code"] == -32602


def test_mcp_json_rpc_errors(client):
    assert _rpc(client, "resources/list")["error"]["code"] == -32601
    assert _rpc(client, "tools/call", {"name": "fly"})["error"]["code"] == -32602
    assert _rpc(client, "tools/call", [1, 2])["error"]["code"] == -32602
    r = client.post("/mcp", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error: the body is not JSON"},
    }
    for body in ({}, {"jsonrpc": "1.0", "method": "ping", "id": 3}, {"jsonrpc": "2.0", "id": 4}, [], [7]):
        r = client.post("/mcp", json=body)
        reply = r.json()[0] if isinstance(r.json(), list) else r.json()
        assert r.status_code == 200 and reply["error"]["code"] == -32600, body
    # a notification gets no answer; a batch gets one answer per request, in order
    assert (
        client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    )
    batch = client.post(
        "/mcp",
        json=[
            {"jsonrpc": "2.0", "method": "ping", "id": 1},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "nope", "id": 2},
        ],
    ).json()
    assert (
        [b["id"] for b in batch] == [1, 2]
        and batch[0]["result"] == {}
        and batch[1]["error"]["code"] == -32601
    )


def test_preloaded_episodes_are_ready_before_the_first_request(seed_settings):
    app = create_app(seed_settings, api_key="", preload=["task_hard"])
    with TestClient(app) as client:  # start-up has run
        assert app.state.service.episodes.loads == 1
        assert client.post("/reset", json={"task_id": "task_hard"}).status_code == 200
        assert app.state.service.episodes.loads == 1
