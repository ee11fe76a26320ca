"""Bad input gets a 4xx JSON answer with a clear message; an empty home gets empty states;
the page never writes to the warehouse; the API key guards the API, not the pages."""

import hashlib

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from stocker_core.cli import build_app
from stocker_core.config import Settings
from stocker_core.web import commands as web_cli
from stocker_core.web.app import create_web_app

KEY = "SYN|2015-03-01"


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "words"),
    [
        ("post", "/web/api/play", {"episode": "ZZZ|2015-03-01"}, 404, "no symbol 'ZZZ'"),
        ("post", "/web/api/play", {"episode": "x'; DROP TABLE market.prices; --"}, 400, "unknown task"),
        ("post", "/web/api/play", {"episode": "SYN|2015-13-01"}, 400, "invalid month"),
        ("post", "/web/api/play", {"episode": KEY, "policy": "nope"}, 400, "unknown policy 'nope'"),
        ("get", "/web/api/play/0123", None, 400, "invalid session id"),
        ("get", "/web/api/play/" + "a" * 32, None, 404, "no play session"),
        ("get", "/web/api/charts/a;drop/2015-03-02", None, 400, "invalid ticker"),
        ("get", "/web/api/charts/SYN/2015-03-07", None, 404, "no chart of SYN on 2015-03-07"),
        ("get", "/web/api/charts/SYN/03-02-2015", None, 400, "invalid date"),
        (
            "get",
            "/web/api/council/day?episode=SYN|2015-03-01&date=2015-02-27",
            None,
            404,
            "not a trading day",
        ),
        (
            "get",
            "/web/api/council/day?episode=SYN|2015-03-01&date=2015-03-02&votes=x:y",
            None,
            400,
            "vote set",
        ),
        ("get", "/web/api/compare/episode?key=SYN|2015-03-01' OR 1=1", None, 400, "invalid episode key"),
        ("get", "/web/api/compare/episode?key=SYN|2016-03-01", None, 404, "no backtests"),
        ("get", "/web/api/reports/..%2Fsecret/report.html", None, 404, ""),
        ("get", "/web/api/reports/nothere/report.html", None, 404, "stocker report --name nothere"),
        ("get", "/web/api/training/a b/image", None, 400, "invalid run id"),
        ("get", "/web/api/training/nope/image", None, 404, "no training run"),
    ],
)
def test_bad_input_is_a_4xx_with_a_message(client, method, url, body, status, words):
    response = getattr(client, method)(url, **({"json": body} if body is not None else {}))
    assert response.status_code == status, response.text
    if words:
        assert words in response.json()["error"]


def test_bad_actions_and_policy_steps_without_policy(client):
    sid = client.post("/web/api/play", json={"episode": KEY}).json()["state"]["session_id"]
    bad = client.post(f"/web/api/play/{sid}/step", json={"side": "short", "quantity": 1})
    assert bad.status_code == 400 and "invalid action" in bad.json()["error"]
    negative = client.post(f"/web/api/play/{sid}/step", json={"side": "buy", "quantity": -3})
    assert negative.status_code == 400
    no_policy = client.post(f"/web/api/play/{sid}/step")
    assert no_policy.status_code == 400 and "no policy" in no_policy.json()["error"]
    assert client.post(f"/web/api/play/{sid}/run").status_code == 400


def test_council_policy_without_cached_votes_plays_votes_computed_now(client):
    """The rule backend's missing votes are computed in memory (test_web_council_on_demand.py;
    an LLM backend's get a 409 there)."""
    response = client.post("/web/api/play", json={"episode": "SYN|2015-06-01", "policy": "council"})
    assert response.status_code == 200, response.text


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_touring_every_view_leaves_the_warehouse_file_unchanged(client, tiny):
    before = _digest(tiny.settings.warehouse_path)
    for url in ["status", "choices", "corpus", "training", "compare/episodes", "compare/rolling", "reports"]:
        assert client.get(f"/web/api/{url}").status_code == 200
    client.get("/web/api/council/episode", params={"episode": KEY})
    client.get("/web/api/compare/episode", params={"key": KEY})
    sid = client.post("/web/api/play", json={"episode": KEY, "policy": "council"}).json()["state"][
        "session_id"
    ]
    client.post(f"/web/api/play/{sid}/run")
    assert _digest(tiny.settings.warehouse_path) == before


def test_an_empty_home_answers_with_empty_states_and_creates_nothing(tmp_path):
    settings = Settings(home=tmp_path / "home")
    client = TestClient(create_web_app(settings, api_key=""))
    assert (
        "no backtests yet: run `stocker materialize`"
        in client.get("/web/api/compare/episodes").json()["empty"]
    )
    assert "no rolling evaluation yet" in client.get("/web/api/compare/rolling").json()["empty"]
    assert "no training runs yet" in client.get("/web/api/training").json()["empty"]
    assert "no prices yet" in client.get("/web/api/corpus").json()["empty"]
    assert "no report yet" in client.get("/web/api/reports").json()["empty"]
    assert client.get("/web/api/status").json()["exists"] is False
    assert client.get("/web/api/choices").json()["episodes"] == []
    assert client.get("/web/episode").status_code == 200
    assert not settings.warehouse_path.exists()


def test_the_api_key_guards_the_api_but_not_the_pages(tiny):
    client = TestClient(create_web_app(tiny.settings, api_key="s3cret"))
    assert client.get("/web/compare").status_code == 200
    assert client.get("/web/static/common.js").status_code == 200
    refused = client.get("/web/api/status")
    assert refused.status_code == 401 and "API key" in refused.json()["error"]
    assert client.get("/web/api/status", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/web/api/status", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.post("/reset", json={"episode": KEY}).status_code == 401  # the server keeps its key
    authorized = client.post("/reset", json={"episode": KEY}, headers={"Authorization": "Bearer s3cret"})
    assert authorized.status_code == 200


def test_cli_refuses_a_public_address_without_a_key(monkeypatch):
    monkeypatch.delenv("STOCKER_API_KEY", raising=False)
    app = build_app([web_cli.commands])
    app.command("noop")(lambda: None)  # a second command keeps `web` a subcommand
    runner = CliRunner()
    result = runner.invoke(app, ["web", "--host", "0.0.0.0", "--no-open"])
    assert result.exit_code == 2 and "STOCKER_API_KEY" in result.output
    usage = runner.invoke(app, ["web", "--port", "0"])
    assert usage.exit_code == 2
    assert "loopback" in runner.invoke(app, ["web", "--help"]).output
