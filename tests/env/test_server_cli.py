"""``stocker serve`` refuses an open bind without a key; ``episode run --policy council``
on a failing endpoint reports its fallbacks and warns."""

from __future__ import annotations

import json

import pytest
import typer
from server_testing import free_port
from typer.testing import CliRunner

from stocker_core.cli import build_app
from stocker_core.council.models import CouncilDecision, SpecialistVote
from stocker_core.council.run_stats import CouncilTally
from stocker_core.env import commands as env_cli
from stocker_core.env.actions import Action
from stocker_core.web import commands as web_cli


@pytest.fixture
def app() -> typer.Typer:
    return build_app([env_cli.commands, web_cli.commands])


def test_serve_refuses_a_public_bind_without_a_key(app, monkeypatch):
    monkeypatch.delenv("STOCKER_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", str(free_port())])
    assert result.exit_code == 2
    assert "refusing to serve on 0.0.0.0 without an API key" in result.output
    assert "--insecure-no-auth" in result.output
    help_text = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    for option in ("--host", "--port", "--api-key", "--insecure-no-auth", "--session-idle-s"):
        assert option in help_text


def _vote(role: str, rationale: str = "", parse_error: bool = False) -> SpecialistVote:
    return SpecialistVote(role=role, signal=0.0, confidence=0.0, rationale=rationale, parse_error=parse_error)


def test_tally_counts_by_hand():
    tally = CouncilTally()
    tally.add(CouncilDecision(votes=[_vote("news"), _vote("indicator")], action=Action.hold()))
    tally.add(
        CouncilDecision(
            votes=[_vote("news", "model call failed: timeout", True), _vote("indicator", "no JSON", True)],
            action=Action.hold(),
            rationale="hold: moderator call failed (refused)",
            parse_error=True,
        )
    )
    tally.add(CouncilDecision(votes=[_vote("news", "garbled", True)], action=Action.hold()))
    assert tally.as_dict() == {
        "days": 3,
        "votes": 5,
        "parse_errors": 2,  # "no JSON", "garbled"
        "call_failures": 2,  # the news call, the moderator call
        "fallbacks": 4,
        "moderator_fallbacks": 1,
        "fallback_days": 2,
        "first_problem": "news: model call failed: timeout",
    }
    assert "on 2 of 3 days" in tally.warning()
    assert CouncilTally().warning() is None


@pytest.mark.slow
def test_council_on_a_failing_endpoint_reports_fallbacks(app, seed_settings, monkeypatch):
    monkeypatch.setenv("STOCKER_COUNCIL_BACKEND", "openai")
    monkeypatch.setenv("STOCKER_OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")  # nothing listens
    monkeypatch.setenv("STOCKER_LLM_RETRIES", "0")
    monkeypatch.setenv("STOCKER_LLM_TIMEOUT_S", "2")
    from stocker_core.config import get_settings

    get_settings(fresh=True)
    result = CliRunner().invoke(
        app, ["episode", "run", "--task", "task_easy", "--policy", "council", "--json"]
    )
    assert result.exit_code == 0, result.output
    trajectory = json.loads(result.stdout)
    council = trajectory["council"]
    # 43 days x 7 specialists, every call refused; the rule moderator still decides each day
    assert council["days"] == 43 and council["votes"] == 301
    assert council["call_failures"] == 301 and council["fallbacks"] == 301
    assert council["parse_errors"] == 0 and council["fallback_days"] == 43
    assert council["first_problem"].split(":")[1].strip() == "model call failed"
    assert "warning: the council fell back to defaults on 43 of 43 days" in result.stderr
    rule = CliRunner().invoke(
        app, ["episode", "run", "--task", "task_easy", "--policy", "buy_and_hold", "--json"]
    )
    assert "council" not in json.loads(rule.stdout) and "warning" not in rule.stderr
