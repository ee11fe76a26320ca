"""The openai backend against a small OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stocker_core.config import Settings
from stocker_core.council.backends import LLMBackend, get_backend
from stocker_core.council.models import SpecialistVote
from stocker_core.council.vote_moderators import LLMModerator
from stocker_core.decision_context.decision import PortfolioState
from stocker_core.language_model.clients import LLMError, OpenAIChatClient


class _State:
    mode = "ok"
    failures_left = 0
    calls = 0
    last_body: dict = {}


def _handler(state: type[_State]):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.calls += 1
            state.last_body = body
            if self.path != "/v1/chat/completions":
                self._send(404, "not found")
                return
            if state.mode == "slow":
                time.sleep(0.4)
            if state.mode == "flaky" and state.failures_left > 0:
                state.failures_left -= 1
                self._send(500, "boom")
                return
            system = body["messages"][0]["content"]
            if state.mode == "garbage":
                content = "I am not sure, maybe buy?? {oops"
            elif "moderator" in system:
                content = 'Sure! ```json\n{"side": "buy", "quantity": 10000, "rationale": "go"}\n```'
            else:
                content = 'Here: {"signal": 0.4, "confidence": 0.7, "rationale": "ok"} hope it helps'
            self._send(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}))

        def _send(self, code: int, text: str):
            data = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture()
def server():
    state = type("S", (_State,), {})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()
    httpd.server_close()


def _client(url: str, **kw) -> OpenAIChatClient:
    opts = {"timeout_s": 2.0, "retries": 2, "backoff_s": 0.01, "concurrency": 2}
    opts.update(kw)
    return OpenAIChatClient(url, "test-model", "sk-test", **opts)


def test_normal_answer_parsed(server, easy_inputs):
    url, state = server
    backend = LLMBackend(_client(url))
    result = backend.vote("news", easy_inputs.context("2023-08-15"))
    assert result.vote.signal == 0.4 and result.vote.confidence == 0.7
    assert result.cacheable and not result.vote.parse_error
    assert state.last_body["model"] == "test-model"


def test_text_only_chart_role_is_told_it_has_no_image(server, easy_inputs):
    url, state = server
    LLMBackend(_client(url)).vote("chart_pattern", easy_inputs.context("2023-08-15"))
    assert "no chart image" in state.last_body["messages"][1]["content"]


def test_multimodal_chart_role_sends_png(server, easy_inputs, tmp_path):
    import dataclasses

    url, state = server
    png = tmp_path / "chart.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    ctx = dataclasses.replace(easy_inputs.context("2023-08-15"), chart_path=png)
    LLMBackend(_client(url, supports_images=True)).vote("chart_pattern", ctx)
    parts = state.last_body["messages"][1]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_slow_answer_times_out_and_gives_uncached_neutral_vote(server, easy_inputs):
    url, state = server
    state.mode = "slow"
    client = _client(url, timeout_s=0.2, retries=1)
    with pytest.raises(LLMError):
        client.complete("s", "u")
    result = LLMBackend(client).vote("news", easy_inputs.context("2023-08-15"))
    assert result.vote.confidence == 0 and result.vote.parse_error and not result.cacheable


def test_500s_then_success_are_retried(server):
    url, state = server
    state.mode, state.failures_left = "flaky", 2
    reply = _client(url, retries=3).complete("analyst", "u")
    assert "signal" in reply and state.calls == 3


def test_500s_beyond_retries_raise(server):
    url, state = server
    state.mode, state.failures_left = "flaky", 10
    with pytest.raises(LLMError, match="attempts"):
        _client(url, retries=1).complete("analyst", "u")
    assert state.calls == 2


def test_garbage_reply_is_neutral_parse_error(server, easy_inputs):
    url, state = server
    state.mode = "garbage"
    result = LLMBackend(_client(url)).vote("news", easy_inputs.context("2023-08-15"))
    assert result.vote.parse_error and result.vote.signal == 0 and result.cacheable


def test_llm_moderator_clamps_quantity(server):
    url, _ = server
    moderator = LLMModerator(_client(url))
    votes = [SpecialistVote(role="news", signal=0.5, confidence=0.5)]
    action, _, parse_error = moderator.decide(votes, PortfolioState(cash=1000.0), price=100.0)
    assert not parse_error and action.side == "buy" and action.quantity == 9


def test_get_backend_from_env(monkeypatch, server):
    url, _ = server
    monkeypatch.setenv("STOCKER_COUNCIL_BACKEND", "openai")
    monkeypatch.setenv("STOCKER_OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    settings = Settings()
    assert settings.openai_api_key == "sk-env"
    backend = get_backend(settings)
    assert backend.name == "openai"
    assert get_backend(settings, "rule").name == "rule"


def test_concurrency_is_bounded(server):
    url, state = server
    state.mode = "slow"
    client = _client(url, concurrency=2, timeout_s=5)
    active, peak, lock = [0], [0], threading.Lock()
    original = client._attempt

    async def counting(*a, **k):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            return await original(*a, **k)
        finally:
            with lock:
                active[0] -= 1

    client._attempt = counting
    threads = [threading.Thread(target=client.complete, args=("s", "u")) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2
