"""``stocker council vote`` through typer's CliRunner."""

from __future__ import annotations

import json

import pytest
from stocker_testing import SEED_DIR as FIXTURE
from typer.testing import CliRunner


@pytest.fixture()
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(FIXTURE))
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    monkeypatch.delenv("STOCKER_TEXT_DIR", raising=False)
    monkeypatch.delenv("STOCKER_COUNCIL_BACKEND", raising=False)


def test_vote_json(env):
    from stocker_core.cli import app

    result = CliRunner().invoke(
        app, ["council", "vote", "--task", "task_easy", "--date", "2023-08-15", "--backend", "rule", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [v["role"] for v in payload["votes"]] == [
        "chart_pattern",
        "seasonal_trend",
        "indicator",
        "news",
        "forum_sentiment",
        "peer_commodity",
        "geopolitics",
    ]
    for vote in payload["votes"]:
        assert set(vote) == {"role", "signal", "confidence", "rationale"}
    assert set(payload["decision"]) == {"side", "quantity", "rationale"}
    news = next(v for v in payload["votes"] if v["role"] == "news")
    assert news["confidence"] > 0  # headlines from the fixture text files were read


def test_vote_table_and_errors(env):
    from stocker_core.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["council", "vote", "--task", "task_hard", "--date", "2022-10-27"])
    assert result.exit_code == 0 and "geopolitics" in result.output
    result = runner.invoke(app, ["council", "vote", "--task", "task_easy", "--date", "2023-08-13"])
    assert result.exit_code == 2 and "trading day" in result.output
    result = runner.invoke(app, ["council", "vote", "--task", "nope", "--date", "2023-08-14"])
    assert result.exit_code == 2 and "task_easy" in result.output
