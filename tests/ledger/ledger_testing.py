"""A ledger home over the seed fixture's AAPL bars (files source) and a CLI runner for its commands."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from stocker_core.config import Settings, get_settings
from stocker_core.ledger.cli import register
from stocker_core.market.calendar import NEW_YORK, session_close

FIRST_DECISION = date(2023, 6, 1)
"""A session with ~95 AAPL bars before it in the seed fixture (enough history for the rules)."""


def ledger_app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


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
