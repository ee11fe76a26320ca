"""The openai backend's structured paths against a fake OpenAI-compatible server on
127.0.0.1: json_schema structured output, first-token logprobs, plain text; and the chart
PNG sent to a vision endpoint, byte for byte."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stocker_core.config import Settings
from stocker_core.council.backends import LLMBackend, get_backend
from stocker_core.language_model.clients import OpenAIChatClient

VOTE = {"signal": 0.5, "confidence": 0.8, "rationale": "trend up"}
# first-token candidates the logprobs server answers: D (buy) most likely
TOP = [("D", math.log(0.6)), ("E", math.log(0.2)), ("C", math.log(0.1)), ("Hello", math.log(0.05))]


class Fake:
    """What the server accepts (``schema``, ``logprobs``) and what it received."""

    def __init__(self, schema: bool, logprobs: bool) -> None:
        self.schema, self.logprobs = schema, logprobs
        self.bodies: list[dict] = []


def _handler(fake: Fake):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.bodies.append(body)
            if "response_format" in body and not fake.schema:
                return self._send(400, {"error": {"message": "response_format is not supported"}})
            if body.get("logprobs") and not fake.logprobs:
                return self._send(400, {"error": {"message": "logprobs are not supported"}})
            choice: dict = {"index": 0}
            if "response_format" in body:
                choice["message"] = {"role": "assistant", "content": json.dumps(VOTE)}
            elif body.get("logprobs"):
                top = [{"token": t, "logprob": lp} for t, lp in TOP[: body["top_logprobs"]]]
                choice["message"] = {"role": "assistant", "content": "D"}
                choice["logprobs"] = {"content": [{"token": "D", "logprob": TOP[0][1], "top_logprobs": top}]}
            else:
                choice["message"] = {
                    "role": "assistant",
                    "content": 'I think {"signal": -0.3, "confidence": 0.4, "rationale": "meh"}',
                }
            self._send(200, {"choices": [choice]})

        def _send(self, code: int, payload: dict):
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture()
def serve():
    servers = []

    def start(schema: bool, logprobs: bool) -> tuple[str, Fake]:
        fake = Fake(schema, logprobs)
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1", fake

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def _client(url: str, **kw) -> OpenAIChatClient:
    return OpenAIChatClient(url, "m", timeout_s=5.0, retries=0, **kw)


def test_structured_output_when_the_server_offers_it(serve, easy_inputs):
    url, fake = serve(schema=True, logprobs=True)
    vote = LLMBackend(_client(url)).vote("news", easy_inputs.context("2023-08-15")).vote
    assert (vote.signal, vote.confidence, vote.rationale) == (0.5, 0.8, "trend up")
    assert not vote.parse_error and len(fake.bodies) == 1
    schema = fake.bodies[0]["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    assert set(schema["json_schema"]["schema"]["required"]) == {"signal", "confidence", "rationale"}


def test_logprobs_when_structured_output_is_refused(serve, easy_inputs):
    url, fake = serve(schema=False, logprobs=True)
    backend = LLMBackend(_client(url))
    ctx = easy_inputs.context("2023-08-15")
    vote = backend.vote("news", ctx).vote
    # letters D .6, E .2, C .1 renormalised over .9 ("Hello" is no answer): 0.5*.6/.9 + 1*.2/.9 + 0
    p = [0.0, 0.0, 0.1 / 0.9, 0.6 / 0.9, 0.2 / 0.9]
    assert vote.signal == pytest.approx(0.5 * p[3] + 1.0 * p[4])
    entropy = -sum(x * math.log(x) for x in p if x)
    assert vote.confidence == pytest.approx(1 - entropy / math.log(5))
    assert not vote.parse_error
    assert [("response_format" in b, bool(b.get("logprobs"))) for b in fake.bodies] == [
        (True, False),
        (False, True),
    ]
    last = fake.bodies[-1]
    assert last["max_tokens"] == 1 and last["top_logprobs"] == 10
    assert "one capital letter" in last["messages"][0]["content"]
    backend.vote("indicator", ctx)  # the refusal is remembered: one request, logprobs only
    assert len(fake.bodies) == 3 and "response_format" not in fake.bodies[-1]
    shown = backend.prompts("indicator", ctx)  # --show-prompts shows what goes out now
    assert shown["structured"] == "logprobs"
    assert shown["system"] == fake.bodies[-1]["messages"][0]["content"]


def test_plain_parsing_when_neither_is_offered(serve, easy_inputs):
    url, fake = serve(schema=False, logprobs=False)
    backend = LLMBackend(_client(url))
    vote = backend.vote("news", easy_inputs.context("2023-08-15")).vote
    assert (vote.signal, vote.confidence, vote.rationale, vote.parse_error) == (-0.3, 0.4, "meh", False)
    assert len(fake.bodies) == 3
    assert "response_format" not in fake.bodies[-1] and "logprobs" not in fake.bodies[-1]
    assert "Answer with one JSON object" in fake.bodies[-1]["messages"][0]["content"]
    backend.vote("news", easy_inputs.context("2023-08-16"))
    assert len(fake.bodies) == 4  # straight to text from now on


def test_free_mode_and_structured_off_send_plain_requests(serve, easy_inputs):
    url, fake = serve(schema=True, logprobs=True)
    for backend in (LLMBackend(_client(url), mode="free"), LLMBackend(_client(url), structured="off")):
        vote = backend.vote("news", easy_inputs.context("2023-08-15")).vote
        assert vote.signal == -0.3
    assert all("response_format" not in b and "logprobs" not in b for b in fake.bodies)
    assert len(fake.bodies) == 2


def test_vision_sends_the_exact_chart_bytes(serve, easy_inputs, tmp_path, monkeypatch):
    from PIL import Image

    url, fake = serve(schema=True, logprobs=True)
    png = tmp_path / "AAPL_2023-08-15.png"
    Image.linear_gradient("L").resize((64, 48)).save(png)
    monkeypatch.setenv("STOCKER_COUNCIL_BACKEND", "openai")
    monkeypatch.setenv("STOCKER_OPENAI_BASE_URL", url)
    monkeypatch.setenv("STOCKER_VISION", "1")
    backend = get_backend(Settings())
    assert backend.client.supports_images
    ctx = dataclasses.replace(easy_inputs.context("2023-08-15"), chart_path=png)
    backend.vote("chart_pattern", ctx)
    parts = fake.bodies[-1]["messages"][1]["content"]
    image = next(p for p in parts if p["type"] == "image_url")["image_url"]["url"]
    prefix = "data:image/png;base64,"
    assert image.startswith(prefix)
    assert base64.b64decode(image[len(prefix) :]) == png.read_bytes()
    text = next(p for p in parts if p["type"] == "text")["text"]
    assert "no chart image" not in text
    # the other roles send text only, and the vision flag is part of the chart role's cache key
    backend.vote("news", ctx)
    assert isinstance(fake.bodies[-1]["messages"][1]["content"], str)
    monkeypatch.setenv("STOCKER_VISION", "0")
    plain = get_backend(Settings())
    assert plain.prompt_version("chart_pattern") != backend.prompt_version("chart_pattern")
    assert plain.prompt_version("news") == backend.prompt_version("news")


def test_vote_show_prompts_json_lists_what_the_server_received(serve, monkeypatch, tmp_path):
    from stocker_testing import SEED_DIR
    from typer.testing import CliRunner

    from stocker_core.cli import app

    url, fake = serve(schema=True, logprobs=True)
    for key, value in {
        "STOCKER_SOURCE": "files",
        "STOCKER_FILES_DIR": str(SEED_DIR),
        "STOCKER_HOME": str(tmp_path),
        "STOCKER_COUNCIL_BACKEND": "openai",
        "STOCKER_OPENAI_BASE_URL": url,
        "STOCKER_COUNCIL_MODERATOR": "llm",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("STOCKER_TEXT_DIR", raising=False)
    args = ["council", "vote", "--task", "task_easy", "--date", "2023-08-15", "--json"]
    result = CliRunner().invoke(app, [*args, "--show-prompts"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    prompts = payload["prompts"]
    assert [p["role"] for p in prompts] == [v["role"] for v in payload["votes"]] + ["moderator"]
    received = {b["messages"][1]["content"] for b in fake.bodies}
    for sent in prompts:
        assert sent["user"] in received, sent["role"]
        assert any(b["messages"][0]["content"] == sent["system"] for b in fake.bodies)
    assert "AAPL" not in json.dumps(prompts) and "STOCK" in prompts[0]["user"]  # masked by default
    assert all(v["signal"] == 0.5 for v in payload["votes"])  # structured output
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 0 and "prompts" not in json.loads(plain.stdout)
    table = CliRunner().invoke(app, args[:-1] + ["--show-prompts"])
    assert table.exit_code == 0 and "prompt: moderator" in table.output
