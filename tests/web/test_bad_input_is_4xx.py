"""Inputs that used to crash the server with a 500 get a 4xx with a clear message (issue 22,
defect 3): out-of-range years in episode keys, non-string ids in MCP calls, a negative seed."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from stocker_core.errors import InvalidNameError
from stocker_core.market.validation import parse_partition_key
from stocker_core.web.app import create_web_app


@pytest.fixture(scope="module")
def strict(tiny) -> TestClient:
    return TestClient(create_web_app(tiny.settings, api_key=""), raise_server_exceptions=False)


@pytest.mark.parametrize("key", ["SYN|9999-12-01", "SYN|9999-01-01", "SYN|0001-01-01", "GOOGL|1000-01-01"])
def test_an_episode_key_out_of_the_supported_years_is_a_400(strict, key):
    for answer in (
        strict.post("/reset", json={"episode": key}),
        strict.post("/web/api/play", json={"episode": key}),
        strict.get("/web/api/council/episode", params={"episode": key}),
        strict.post("/restore", json={"episode_key": key}),
    ):
        assert answer.status_code == 400, answer.text
        assert "months from 1800-01 to 2200-12 are supported" in answer.json()["error"]
    with pytest.raises(InvalidNameError, match="1800-01 to 2200-12"):
        parse_partition_key(key)


def _tool(client: TestClient, name, arguments) -> dict:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    answer = client.post("/mcp", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize("session_id", [5, ["a"], {"x": 1}, 1.5, True])
def test_a_non_string_session_id_in_an_mcp_call_is_a_tool_error(strict, session_id):
    tools = (("get_quote", {}), ("place_order", {"side": "hold"}), ("get_news", {"days": 3}))
    for tool, extra in tools:
        result = _tool(strict, tool, {"session_id": session_id, **extra})["result"]
        assert result["isError"] is True and "session id must be" in result["content"][0]["text"]
    params = {"session_id": session_id}
    close = {"jsonrpc": "2.0", "id": 2, "method": "openenv/session/close", "params": params}
    assert strict.post("/mcp", json=close).json()["error"]["code"] == -32602


def test_a_tool_name_that_is_not_a_string_is_invalid_params(strict):
    reply = _tool(strict, ["x"], {})
    assert reply["error"]["code"] == -32602 and "unknown tool" in reply["error"]["message"]


@pytest.mark.parametrize("seed", [-1, 2**32, 2**70])
def test_a_seed_out_of_range_in_play_is_a_422(strict, seed):
    answer = strict.post(
        "/web/api/play", json={"episode": "SYN|2015-03-01", "policy": "random", "seed": seed}
    )
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["body", "seed"]
    ok = strict.post("/web/api/play", json={"episode": "SYN|2015-03-01", "policy": "random", "seed": 0})
    assert ok.status_code == 200


def test_an_unknown_path_answers_in_the_api_error_shape(strict):
    answer = strict.post("/web/api/play/%0Ax/step", json={"side": "hold"})
    assert answer.status_code in (400, 404) and "error" in answer.json()  # never FastAPI's {"detail"}


@pytest.mark.parametrize(
    "body",
    [
        '{"episode": "SYN|2015-03-01", "policy": "random", "seed": NaN}',
        '{"episode": "SYN|2015-03-01", "policy": "random", "seed": Infinity}',
        '{"episode": "SYN|2015-03-01", "policy": "random", "seed": -Infinity}',
        '{"episode": "SYN|2015-03-01", "policy": "random", "seed": 1e400}',
        '{"episode": NaN}',
        '{"episode": "SYN|2015-03-01", "policy": NaN}',
    ],
)
def test_nan_and_infinity_in_a_play_body_are_a_422_not_a_500(strict, body):
    """Issue 34, defect 2: the 422 handler echoed the NaN it could not encode (a 500)."""
    answer = strict.post("/web/api/play", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] and answer.json()["detail"][0]["loc"][0] == "body"
    for route in ("/reset", "/step"):  # the environment routes refuse the same bodies as malformed JSON
        answer = strict.post(route, content=body, headers={"content-type": "application/json"})
        assert answer.status_code in (400, 422), answer.text


def _post_routes(client: TestClient, settings) -> list[tuple[str, list[str]]]:
    """Every POST route of both OpenAPI documents with the top-level fields of its JSON body."""
    from fastapi import FastAPI

    from stocker_core.web.app import mount_web

    page = FastAPI()
    mount_web(page, settings, "/web", api_key="")
    routes = []
    for document in (client.get("/openapi.json").json(), page.openapi()):
        schemas = document.get("components", {}).get("schemas", {})
        for path, item in document["paths"].items():
            post = item.get("post")
            if post is None:
                continue
            schema = (
                post.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            )
            if "$ref" in schema:
                schema = schemas.get(schema["$ref"].rsplit("/", 1)[-1], {})
            concrete = path.replace("{session_id}", "0" * 32)
            routes.append((concrete, sorted(schema.get("properties", {}))))
    return routes


def test_nan_and_infinity_in_every_post_body_are_never_a_500(strict, tiny):
    """Issue 34: the class "NaN/Infinity in any body" over every POST route of both APIs."""
    routes = _post_routes(strict, tiny.settings)
    assert len(routes) >= 8
    for path, fields in routes:
        bodies = ["NaN", "[Infinity]", '{"x": -Infinity}', '{"x": 1e400}']
        bodies += [f'{{"{field}": {token}}}' for field in fields for token in ("NaN", "Infinity", "1e400")]
        for body in bodies:
            answer = strict.post(path, content=body, headers={"content-type": "application/json"})
            assert answer.status_code < 500, f"{path} {body}: {answer.status_code} {answer.text[:200]}"


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01", "1799-12-31", "2201-01-01"])
def test_a_far_day_is_a_400_not_an_overflow(strict, day):
    """Issue 43, item 3: ``GET /web/api/charts/GOOGL/9999-12-31`` answered 500 (OverflowError)."""
    for ticker in ("GOOGL", "SYN"):
        answer = strict.get(f"/web/api/charts/{ticker}/{day}")
        assert answer.status_code == 400, answer.text
        assert "days from 1800-01-01 to 2200-12-31 are supported" in answer.json()["error"]
    answer = strict.get("/web/api/council/day", params={"episode": "SYN|2015-03-01", "date": day})
    assert answer.status_code == 400, answer.text


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01", "2016-02-30", "tomorrow"])
def test_stocker_chart_on_a_far_or_bad_day_is_one_line(tmp_path, monkeypatch, day):
    from typer.testing import CliRunner

    from stocker_core.cli import app
    from stocker_core.config import get_settings

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    out = tmp_path / "out.png"
    result = CliRunner().invoke(app, ["chart", "GOOGL", day, "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output and not out.exists()
    monkeypatch.undo()
    get_settings(fresh=True)
