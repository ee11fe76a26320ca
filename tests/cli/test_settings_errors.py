"""Bad settings and bad CLI paths are one line, ``error: …``, exit 2, for every command
(issue 34, defect 4): never a pydantic traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from stocker_assets.cli import app
from stocker_core.config import SettingsError, get_settings

BAD = [
    ("STOCKER_SOURCE", "nope", "STOCKER_SOURCE='nope' (expected one of: sample, files, yfinance, synthetic)"),
    ("STOCKER_SYNTH_IC", "5", "STOCKER_SYNTH_IC='5' (expected a number at most 1)"),
    ("STOCKER_SYNTH_IC", "nan", "STOCKER_SYNTH_IC='nan' (expected a number at most 1)"),
    ("STOCKER_SYNTH_PERSISTENCE", "1.0", "STOCKER_SYNTH_PERSISTENCE='1.0' (expected a number below 1)"),
    ("STOCKER_SYNTH_YEARS", "-1", "STOCKER_SYNTH_YEARS='-1' (expected a number above 0"),
    ("STOCKER_MAIN_WORKERS", "0", "STOCKER_MAIN_WORKERS='0' (expected a number at least 1)"),
    ("STOCKER_MAIN_WORKERS", "-3", "STOCKER_MAIN_WORKERS='-3' (expected a number at least 1)"),
    ("STOCKER_MAIN_WORKERS", "abc", "STOCKER_MAIN_WORKERS='abc' (expected a valid integer"),
    ("STOCKER_START_MONTH", "2099-01", "STOCKER_START_MONTH='2099-01' (expected a month no later than"),
    ("STOCKER_START_MONTH", "May 2014", "STOCKER_START_MONTH='May 2014' (expected a month, YYYY-MM"),
    ("STOCKER_PEERS", "not json", "STOCKER_PEERS='not json' (expected JSON"),
]
COMMANDS = [["tickers", "list"], ["materialize"], ["sql", "SELECT 1"], ["serve"], ["web"], ["check-learning"]]


def _one_line_error(result, expected: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {expected}"), result.output
    assert "Traceback" not in result.output and "pydantic" not in result.output


@pytest.mark.parametrize(("name", "value", "expected"), BAD)
def test_a_bad_setting_is_one_line_and_exit_2(name, value, expected, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match="^" + expected.replace("(", r"\(").replace(")", r"\)")):
        get_settings(fresh=True)
    for command in COMMANDS:
        _one_line_error(CliRunner().invoke(app, command), expected)
    monkeypatch.delenv(name)
    get_settings(fresh=True)


def test_a_month_setting_is_read_as_its_first_day(monkeypatch) -> None:
    monkeypatch.setenv("STOCKER_START_MONTH", "2014-06")
    assert get_settings(fresh=True).start_month == "2014-06-01"
    monkeypatch.setenv("STOCKER_START_MONTH", "2014-06-17")
    assert get_settings(fresh=True).start_month == "2014-06-01"


def test_check_learning_home_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    result = CliRunner().invoke(app, ["check-learning", "--home", str(a_file), "--quick"])
    _one_line_error(result, f"--home {a_file} is a file, not a folder")
    assert a_file.read_text() == "x"
