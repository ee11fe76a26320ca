"""A ledger home over the seed fixture's AAPL bars (files source) and a CLI runner for its commands."""

from __future__ import annotations

import hashlib
import os
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from stocker_core.cli import build_app
from stocker_core.config import Settings, get_settings
from stocker_core.ledger import commands as ledger_cli
from stocker_core.market.calendar import NEW_YORK, session_close
from stocker_core.market.clock import next_session

FIRST_DECISION = date(2023, 6, 1)
"""A session with ~95 AAPL bars before it in the seed fixture (enough history for the rules)."""
POLICIES = "buy_and_hold,macd"
DAYS = [FIRST_DECISION, next_session(FIRST_DECISION), next_session(next_session(FIRST_DECISION))]
"""The three decision days of the ``scored`` fixture (entries #1 … #6)."""


def ledger_app() -> typer.Typer:
    return build_app([ledger_cli.commands])


def invoke(*args: str):
    """``stocker ledger <args>`` in this process; the result has exit_code, stdout and stderr."""
    return CliRunner().invoke(ledger_app(), ["ledger", *args])


def after_close(day: date, minutes: int = 60) -> str:
    """An ISO instant ``minutes`` after ``day``'s XNYS close (UTC)."""
    return (session_close(pd.Timestamp(day)) + pd.Timedelta(minutes=minutes)).isoformat()


def before_open(day: date) -> str:
    """08:00 New York on ``day``: the session has not opened."""
    return pd.Timestamp(day).replace(hour=8).tz_localize(NEW_YORK).tz_convert("UTC").isoformat()


def set_clock(monkeypatch: pytest.MonkeyPatch, instant: str) -> Settings:
    monkeypatch.setenv("STOCKER_CLOCK", instant)
    return get_settings(fresh=True)


SCORED_AT = after_close(next_session(DAYS[-1]))
"""The ``scored`` fixture's clock: the session after the last decision has closed."""


def one_line_error(result, code: int) -> str:
    """The command failed with ``code`` and one ``error:`` line, no traceback."""
    assert result.exit_code == code, (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def tree(home: Path) -> dict[str, str]:
    """Every path under ``home`` with its bytes' sha256 (folders as "dir"; links, FIFOs and other
    special files by what they are, never read)."""
    found = {}
    for path in sorted(home.rglob("*")):
        if path.is_symlink():
            found[path.relative_to(home).as_posix()] = f"link to {os.readlink(path)}"
        elif path.is_dir():
            found[path.relative_to(home).as_posix()] = "dir"
        elif path.is_file():
            found[path.relative_to(home).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[path.relative_to(home).as_posix()] = "special"
    return found
