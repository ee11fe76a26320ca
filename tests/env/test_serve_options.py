"""``stocker serve --max-sessions-per-client N`` (and ``STOCKER_MAX_SESSIONS_PER_CLIENT``)
raise the per-client session cap a trainer with more than 32 environments on one host needs;
the access log is off unless ``--access-log`` (issue 43, item 3)."""

from __future__ import annotations

import pytest
import uvicorn
from typer.testing import CliRunner

from stocker_core.cli import app
from stocker_core.config import get_settings
from stocker_core.env.server import create_app


@pytest.fixture
def served(monkeypatch) -> list[tuple[object, dict]]:
    calls: list[tuple[object, dict]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append((app, kwargs)))
    return calls


def _per_client(app: object) -> int:
    server = getattr(app, "server", app)  # `stocker serve` with the page: the server beside it
    return server.state.service.sessions.max_per_client


@pytest.mark.parametrize("web", [["--web"], ["--no-web"]])
def test_the_per_client_cap_is_an_option_and_a_setting(seed_settings, served, monkeypatch, web) -> None:
    result = CliRunner().invoke(app, ["serve", *web])
    assert result.exit_code == 0, result.output
    assert _per_client(served[-1][0]) == 32
    assert served[-1][1]["access_log"] is False
    result = CliRunner().invoke(app, ["serve", *web, "--max-sessions-per-client", "64", "--access-log"])
    assert result.exit_code == 0, result.output
    assert _per_client(served[-1][0]) == 64
    assert served[-1][1]["access_log"] is True
    monkeypatch.setenv("STOCKER_MAX_SESSIONS_PER_CLIENT", "128")
    result = CliRunner().invoke(app, ["serve", *web])
    assert result.exit_code == 0, result.output
    assert _per_client(served[-1][0]) == 128
    result = CliRunner().invoke(app, ["serve", *web, "--max-sessions-per-client", "0"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_sixty_four_sessions_from_one_address_with_the_cap_raised(seed_settings, monkeypatch) -> None:
    from fastapi.testclient import TestClient

    monkeypatch.setenv("STOCKER_MAX_SESSIONS_PER_CLIENT", "64")
    server = create_app(get_settings(fresh=True), api_key="")
    with TestClient(server) as client:
        answers = [client.post("/reset", json={"task_id": "task_easy"}) for _ in range(65)]
        assert [a.status_code for a in answers[:64]] == [200] * 64
        assert answers[64].status_code == 429
        assert client.get("/metadata").json()["max_sessions_per_client"] == 64
