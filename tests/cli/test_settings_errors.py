"""Bad settings and bad CLI paths are one line, ``error: …``, exit 2, for every command
(issue 34, defect 4): never a pydantic traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stocker_assets.cli import app
from stocker_core.config import SettingsError, get_settings

BAD = [
    ("STOCKER_SOURCE", "nope", "STOCKER_SOURCE='nope' (expected one of: sample, files, yfinance, synthetic)"),
    ("STOCKER_SYNTH_IC", "5", "STOCKER_SYNTH_IC='5' (expected a number at least -1 and at most 1)"),
    (
        "STOCKER_SYNTH_IC",
        "nan",
        "STOCKER_SYNTH_IC='nan' (expected a finite number at least -1 and at most 1)",
    ),
    (
        "STOCKER_SYNTH_PERSISTENCE",
        "1.0",
        "STOCKER_SYNTH_PERSISTENCE='1.0' (expected a number at least 0 and below 1)",
    ),
    ("STOCKER_SYNTH_YEARS", "-1", "STOCKER_SYNTH_YEARS='-1' (expected a number above 0"),
    ("STOCKER_MAIN_WORKERS", "0", "STOCKER_MAIN_WORKERS='0' (expected a number at least 1 and at most 16)"),
    ("STOCKER_MAIN_WORKERS", "-3", "STOCKER_MAIN_WORKERS='-3' (expected a number at least 1 and at most 16)"),
    ("STOCKER_MAIN_WORKERS", "abc", "STOCKER_MAIN_WORKERS='abc' (expected a valid integer"),
    ("STOCKER_START_MONTH", "2099-01", "STOCKER_START_MONTH='2099-01' (expected a month no later than"),
    ("STOCKER_START_MONTH", "May 2014", "STOCKER_START_MONTH='May 2014' (expected a month, YYYY-MM"),
    ("STOCKER_PEERS", "not json", "STOCKER_PEERS='not json' (expected JSON"),
    # issue 43, item 2: every number of the episodes and the reward, finite and in range
    (
        "STOCKER_TRANSACTION_COST",
        "-1",
        "STOCKER_TRANSACTION_COST='-1' (expected a number at least 0 and below 1)",
    ),
    (
        "STOCKER_TRANSACTION_COST",
        "1",
        "STOCKER_TRANSACTION_COST='1' (expected a number at least 0 and below 1)",
    ),
    (
        "STOCKER_TRANSACTION_COST",
        "nan",
        "STOCKER_TRANSACTION_COST='nan' (expected a finite number at least 0 and below 1)",
    ),
    (
        "STOCKER_EPISODE_MONTHS",
        "0",
        "STOCKER_EPISODE_MONTHS='0' (expected a number at least 1 and at most 120)",
    ),
    ("STOCKER_STARTING_CASH", "nan", "STOCKER_STARTING_CASH='nan' (expected a finite number above 0"),
    ("STOCKER_STARTING_CASH", "inf", "STOCKER_STARTING_CASH='inf' (expected a finite number above 0"),
    ("STOCKER_STARTING_CASH", "-5", "STOCKER_STARTING_CASH='-5' (expected a number above 0"),
    ("STOCKER_STARTING_CASH", "0", "STOCKER_STARTING_CASH='0' (expected a number above 0"),
    ("STOCKER_W_PERF", "inf", "STOCKER_W_PERF='inf' (expected a finite number at least 0)"),
    ("STOCKER_W_INFL", "-0.1", "STOCKER_W_INFL='-0.1' (expected a number at least 0)"),
    (
        "STOCKER_INVALID_PENALTY",
        "-inf",
        "STOCKER_INVALID_PENALTY='-inf' (expected a finite number at least 0)",
    ),
    ("STOCKER_ANNUAL_INFLATION", "nan", "STOCKER_ANNUAL_INFLATION='nan' (expected a finite number above -1"),
    ("STOCKER_ANNUAL_INFLATION", "-1", "STOCKER_ANNUAL_INFLATION='-1' (expected a number above -1"),
    ("STOCKER_LOOKAHEAD_K", "-3", "STOCKER_LOOKAHEAD_K='-3' (expected a number at least 0"),
    (
        "STOCKER_LOOKAHEAD_WEIGHT",
        "nan",
        "STOCKER_LOOKAHEAD_WEIGHT='nan' (expected a finite number at least 0)",
    ),
    ("STOCKER_LLM_TIMEOUT_S", "0", "STOCKER_LLM_TIMEOUT_S='0' (expected a number above 0"),
    ("STOCKER_LLM_TIMEOUT_S", "inf", "STOCKER_LLM_TIMEOUT_S='inf' (expected a finite number above 0"),
    ("STOCKER_LLM_TEMPERATURE", "nan", "STOCKER_LLM_TEMPERATURE='nan' (expected a finite number at least 0"),
    ("STOCKER_SYNTH_SEED", "-1", "STOCKER_SYNTH_SEED='-1' (expected a number at least 0 and at most 4294"),
    (
        "STOCKER_MAX_SESSIONS_PER_CLIENT",
        "0",
        "STOCKER_MAX_SESSIONS_PER_CLIENT='0' (expected a number at least 1",
    ),
    # the month settings the CLI reads
    ("STOCKER_MAIN_FROM", "2018-13", "STOCKER_MAIN_FROM='2018-13' (expected a month, YYYY-MM"),
    ("STOCKER_MAIN_TO", "2018-00", "STOCKER_MAIN_TO='2018-00' (expected a month, YYYY-MM"),
    ("STOCKER_MAIN_TO", "9999-12", "STOCKER_MAIN_TO='9999-12' (expected a month from 1800-01 to 2200-12)"),
    ("STOCKER_START_MONTH", "0001-01", "STOCKER_START_MONTH='0001-01' (expected a month from 1800-01"),
    # issue 52: what the docs say and nothing else (ASCII digits, YYYY-MM), the variable named
    *[
        ("STOCKER_SYNTH_TICKERS", value, f"STOCKER_SYNTH_TICKERS='{value}' (expected a count from 1 to 5000")
        for value in ("-1", "../x", "٣", "３", "0", "5001", "1000000", "4,../x", "SYN1,A;DROP", "")
    ],
    *[
        (name, value, f"{name}='{value}' (expected a month, YYYY-MM (or a day, YYYY-MM-DD))")
        for name in ("STOCKER_START_MONTH", "STOCKER_MAIN_FROM", "STOCKER_MAIN_TO")
        for value in ("2016-1", "２０１６-01", "٢٠١٦-٠١", "2016-01-1", "201601", "2016-1-1")
    ],
    ("STOCKER_SYNTH_SEED", "4294967296", "STOCKER_SYNTH_SEED='4294967296' (expected a number at least 0"),
    ("STOCKER_SYNTH_START", "0", "STOCKER_SYNTH_START='0' (expected a day, YYYY-MM-DD)"),
    ("STOCKER_SYNTH_START", "9999-12-01", "STOCKER_SYNTH_START='9999-12-01' (expected a day from 1800-01-01"),
    ("STOCKER_CLOCK", "3.0", "STOCKER_CLOCK='3.0' (expected an ISO timestamp with a zone"),
    ("STOCKER_BENCHMARK", "../x", "STOCKER_BENCHMARK='../x' (expected a ticker of 1-15 upper-case"),
    ("STOCKER_BENCHMARK", "", "STOCKER_BENCHMARK='' (expected a ticker of 1-15 upper-case"),
    ("STOCKER_DEFAULT_TICKERS", '["../x"]', """STOCKER_DEFAULT_TICKERS='["../x"]' (expected a JSON list"""),
    ("STOCKER_PEERS", '{"KO": ["../x"]}', """STOCKER_PEERS='{"KO": ["../x"]}' (expected tickers of"""),
    ("STOCKER_COMMODITIES", '{"XOM": "a b"}', """STOCKER_COMMODITIES='{"XOM": "a b"}' (expected tickers"""),
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
    with pytest.raises(SettingsError, match="^" + re.escape(expected)):
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


@pytest.mark.parametrize(
    ("name", "value"), [("STOCKER_STARTING_CASH", "nan"), ("STOCKER_TRANSACTION_COST", "-1")]
)
def test_ledger_record_cannot_start_on_a_bad_setting(name, value, monkeypatch, tmp_path) -> None:
    """Issue 43, item 2: ``ledger record`` sealed a buy-and-hold entry with exposure 0 into the
    chain under ``STOCKER_STARTING_CASH=nan``; now it never starts, and writes nothing."""
    home = tmp_path / "home"
    monkeypatch.setenv("STOCKER_HOME", str(home))
    monkeypatch.setenv("STOCKER_SOURCE", "synthetic")
    monkeypatch.setenv(name, value)
    for command in (
        ["ledger", "record"],
        ["ledger", "record", "--for", "2021-03-01", "--policies", "buy_and_hold"],
    ):
        _one_line_error(CliRunner().invoke(app, command), f"{name}='{value}'")
    assert not home.exists()
    monkeypatch.delenv(name)
    get_settings(fresh=True)
