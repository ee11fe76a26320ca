"""A day option reads ``YYYY-MM-DD`` as its help says, and nothing else, in one line with
exit 2 (issue 52, probes: ``council vote --date 9999-99-99`` printed pandas' DateParseError
traceback; ``--date 2016-1-1`` and full-width digits were read as a day)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from stocker_assets.cli import app

BAD_DAYS = ["9999-99-99", "yesterday", "1e9", "2016-1-1", "２０１６-03-01", "99999-01-01"]
COMMANDS = [["council", "vote", "--task", "task_easy", "--date"], ["agent", "run", "--date"]]


@pytest.mark.parametrize("day", BAD_DAYS)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command[:2]))
def test_a_day_option_is_yyyy_mm_dd(command: list[str], day: str, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, [*command, day])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.output.strip().startswith(f"error: invalid date '{day}'"), result.output
