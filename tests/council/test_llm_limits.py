"""Total deadlines (per request, per decision day) and the reply-size cap of the OpenAI
client, against stub endpoints on 127.0.0.1 that trickle, stall or flood."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stocker_core.language_model.clients import LLMError, OpenAIChatClient, decision_day
from stocker_core.language_model.limits import DayBudgets

REPLY = json.dumps({"choices": [{"message": {"content": '{"signal": 0.5, "confidence": 0.5}'}}]}).encode()


class Stub:
    """What the stub endpoint does and what it saw."""

    mode = "ok"
    delay_s = 0.0
    calls = 0
    bytes_sent = 0


def _handler(stub: Stub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            stub.calls += 1
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client hung up
                getattr(self, f"_{stub.mode}")()

        def _ok(self):
            time.sleep(stub.delay_s)
            self._head(len(REPLY))
            self.wfile.write(REPLY)

        def _trickle(self):
            # a valid reply, one byte every 0.25 s: no single read ever waits long
            self._head(len(REPLY))
            for byte in REPLY:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                stub.bytes_sent += 1
                time.sleep(0.25)

        def _huge_declared(self):
            self._head(50_000_000)
            self._flood(50_000_000)

        def _huge_chunked(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            block = b'{"choices": [' + b" " * 65_000
            while stub.bytes_sent < 50_000_000:
                self.wfile.write(f"{len(block):x}\r\n".encode() + block + b"\r\n")
                stub.bytes_sent += len(block)

        def _flood(self, total: int):
            block = b" " * 65_536
            while stub.bytes_sent < total:
                self.wfile.write(block)
                stub.bytes_sent += len(block)

        def _head(self, length: int):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(length))
            self.end_headers()

    return Handler


@pytest.fixture()
def stub():
    state = type("S", (Stub,), {})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()
    httpd.server_close()


def _client(url: str, **kw) -> OpenAIChatClient:
    opts = {"timeout_s": 2.0, "retries": 0, "backoff_s": 0.01, "concurrency": 4}
    opts.update(kw)
    return OpenAIChatClient(url, "m", **opts)


def test_trickling_endpoint_is_cut_at_the_total_deadline(stub):
    url, state = stub
    state.mode = "trickle"  # the whole reply would take ~14 s
    client = _client(url, timeout_s=1.0, retries=3)
    start = time.monotonic()
    with pytest.raises(LLMError, match="within the 1 s deadline"):
        client.complete("s", "u")
    elapsed = time.monotonic() - start
    client.close()
    assert 0.95 <= elapsed < 3.0, elapsed  # far below the ~14 s the trickle would take
    assert state.calls == 1  # a deadline is not retried
    assert state.bytes_sent <= 6  # ~4 bytes in one second


def test_normal_reply_within_the_deadline(stub):
    url, _ = stub
    client = _client(url)
    assert json.loads(client.complete("s", "u")) == {"signal": 0.5, "confidence": 0.5}
    client.close()


def test_declared_huge_reply_is_refused_without_reading_it(stub):
    url, state = stub
    state.mode = "huge_declared"
    client = _client(url, timeout_s=10.0)
    with pytest.raises(LLMError, match="50,000,000-byte reply, over the 2,000,000-byte cap"):
        client.complete("s", "u")
    client.close()


def test_streamed_huge_reply_is_cut_off_past_the_cap(stub):
    url, state = stub
    state.mode = "huge_chunked"
    client = _client(url, timeout_s=20.0, max_reply_bytes=1_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(LLMError, match="more than 1,000,000 bytes"):
            client.complete("s", "u")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        client.close()
    assert peak < 8_000_000, peak  # a 50 MB reply was never held
    time.sleep(0.2)
    assert state.bytes_sent < 20_000_000  # the server could not push the whole 50 MB


def test_day_budget_is_shared_by_the_calls_of_one_day(stub):
    url, state = stub
    state.delay_s = 1.0  # 0.5 s of head room either side of the budget on a loaded machine
    client = _client(url, timeout_s=5.0, day_timeout_s=2.5, concurrency=1)
    outcomes = []
    start = time.monotonic()
    with decision_day("AAPL 2023-08-15"):
        for _ in range(4):
            try:
                client.complete("s", "u")
                outcomes.append("ok")
            except LLMError as exc:
                outcomes.append(str(exc))
    elapsed = time.monotonic() - start
    # 1.0 + 1.0 s answered; the third is cut at 2.5 s; the fourth finds the budget spent
    assert outcomes[:2] == ["ok", "ok"]
    assert "2.5 s budget of decision day AAPL 2023-08-15" in outcomes[2]
    assert "budget of decision day AAPL 2023-08-15 is spent" in outcomes[3]
    assert elapsed < 4.0, elapsed  # the spent budget fails at once, without waiting
    # another day has its own budget; calls outside any day have only the request deadline
    with decision_day("AAPL 2023-08-16"):
        assert client.complete("s", "u")
    assert client.complete("s", "u")
    client.close()


def test_day_budget_arithmetic():
    budgets = DayBudgets(10.0)
    assert budgets.deadline("d", now=100.0) == 110.0
    assert budgets.deadline("d", now=105.0) == 110.0  # same run: what is left
    assert budgets.deadline("d", now=115.0) == 110.0  # spent (within 10 s after the end)
    assert budgets.deadline("d", now=121.0) == 131.0  # long after: a new run of that day
    assert budgets.deadline("e", now=121.0) == 131.0
    with pytest.raises(ValueError):
        DayBudgets(0)
