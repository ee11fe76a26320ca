"""Against a live uvicorn server on 127.0.0.1: openenv 0.10's validator, the streaming
body limit, the API key, and the typed client."""

from __future__ import annotations

import select
import socket
import time

import httpx
import pytest
from server_testing import free_port, live_server

from stocker_core.env.client import EnvClientError, StockerEnvClient
from stocker_core.env.server import ServerConfigError, check_bind, create_app


@pytest.mark.slow
def test_openenv_core_validator_passes(seed_settings):
    validation = pytest.importorskip(
        "openenv.cli._validation",
        reason="pip install --no-deps openenv==0.10.0 (the README test command does)",
    )
    with live_server(create_app(seed_settings, api_key="")) as url:
        report = validation.validate_running_environment(url, timeout_s=10)
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert report["passed"], failed
    assert report["summary"]["passed_count"] == report["summary"]["total_count"] == 6
    assert report["mode"] == "simulation"


def _chunked_upload(port: int, total: int, chunk: int = 65_536) -> tuple[int, int, bytes]:
    """POST /step with a chunked body of ``total`` bytes over a raw socket, stopping when
    the server answers or hangs up; (bytes sent, seconds, the response bytes)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    piece = f"{chunk:x}\r\n".encode() + b" " * chunk + b"\r\n"
    sent, start, response = 0, time.monotonic(), b""
    try:
        while sent < total:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            sock.sendall(piece)
            sent += chunk
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.settimeout(5)
    try:
        while True:
            data = sock.recv(65_536)
            if not data:
                break
            response += data
    except (OSError, TimeoutError):
        pass
    sock.close()
    return sent, time.monotonic() - start, response


def test_body_limit_refuses_declared_and_streamed_bodies_without_reading_them(seed_settings):
    app = create_app(seed_settings, api_key="")
    with live_server(app) as url:
        port = int(url.rsplit(":", 1)[1])
        # declared: refused on Content-Length alone
        r = httpx.post(f"{url}/step", content=b"x" * 1_500_000, headers={"content-type": "application/json"})
        assert r.status_code == 413 and "1,000,000-byte limit" in r.json()["error"]
        assert app.state.body_stats["refused_bytes_read"] == 0
        # streamed (chunked, no length): 50 MB offered, reading stops just past 1 MB
        sent, seconds, response = _chunked_upload(port, 50_000_000)
        assert response.startswith(b"HTTP/1.1 413"), response[:200]
        read = app.state.body_stats["refused_bytes_read"]
        # stops within the chunk that crosses the limit (the transport may hand over a few
        # hundred KB at once under load): far from buffering the 50 MB offered
        assert 1_000_000 < read <= 4_000_000, read
        assert sent < 20_000_000, sent  # the server hung up long before 50 MB
        # the server is still fine
        assert httpx.get(f"{url}/health").json()["status"] == "healthy"


def test_api_key_guards_every_route_but_health(seed_settings):
    with live_server(create_app(seed_settings, api_key="s3cret")) as url:
        assert httpx.get(f"{url}/health").status_code == 200
        for method, path in [("GET", "/metadata"), ("GET", "/schema"), ("POST", "/reset"), ("POST", "/mcp"),
                             ("GET", "/docs"), ("GET", "/openapi.json"), ("GET", "/state")]:  # fmt: skip
            r = httpx.request(method, f"{url}{path}", json={})
            assert r.status_code == 401, (path, r.text)
            assert r.headers["www-authenticate"].startswith("Bearer")
        wrong = httpx.get(f"{url}/metadata", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "STOCKER_API_KEY" in wrong.json()["error"]
        ok = httpx.get(f"{url}/metadata", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json()["auth"] == "bearer"
        with pytest.raises(EnvClientError, match="HTTP 401"):
            StockerEnvClient(url, api_key="nope").reset("task_easy")
        with StockerEnvClient(url, api_key="s3cret") as env:
            assert env.reset("task_easy").observation.ticker == "AAPL"


def test_non_loopback_bind_needs_a_key():
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_bind(host, None)
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org"):
        with pytest.raises(ServerConfigError, match="STOCKER_API_KEY"):
            check_bind(host, None)
        check_bind(host, "key")
        check_bind(host, None, insecure_no_auth=True)


def test_typed_client_plays_snapshots_and_restores(seed_settings):
    app = create_app(seed_settings, api_key="")
    with live_server(app) as url:
        with StockerEnvClient(url) as env:
            with pytest.raises(EnvClientError, match="reset"):
                env.step({"side": "hold"})
            first = env.reset("task_easy")
            assert first.reward is None and first.observation.step == 0
            assert first.observation.total_steps == 43 and first.observation.cutoff
            result = env.step({"side": "buy", "quantity": 3})
            assert result.observation.position == 3 and -1 <= result.reward <= 1
            snap = env.snapshot()
            later = env.step({"side": "sell", "quantity": 1})
            restored = env.restore(snap)
            assert restored.observation.step == 1 and restored.observation.position == 3
            again = env.step({"side": "sell", "quantity": 1})
            assert again.reward == later.reward
            state = env.state()
            assert state.observation.position == 2 and len(state.rewards) == 2
            with pytest.raises(EnvClientError, match="HTTP 422"):
                env.step({"side": "short", "quantity": 1})
            chart = env.step({"side": "hold"}, include_chart=True).observation.chart
            assert chart is not None and chart.png_base64
            assert app.state.service.sessions.find(env.session_id) is not None
            sid = env.session_id
        assert app.state.service.sessions.find(sid) is None  # leaving the block ended the session
    with pytest.raises(EnvClientError, match="cannot reach"):
        StockerEnvClient(f"http://127.0.0.1:{free_port()}", timeout_s=2).reset("task_easy")
