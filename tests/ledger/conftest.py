"""Fixtures of the ledger tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ledger_testing import DAYS, POLICIES, SCORED_AT, after_close, invoke, set_clock

from stocker_core.config import Settings, get_settings


@pytest.fixture
def aapl_home(files_env: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp home on the files source over the seed fixture with AAPL as its universe."""
    monkeypatch.setenv("STOCKER_DEFAULT_TICKERS", '["AAPL"]')
    get_settings(fresh=True)
    return files_env.home


_TEMPLATE: dict[str, Path] = {}


@pytest.fixture
def scored(aapl_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory) -> Settings:
    """Three recordings (entries #1 … #6: buy_and_hold and macd on AAPL) scored the session after
    the last; built once per test session and copied into each test's home."""
    if "home" not in _TEMPLATE:
        for day in DAYS:
            set_clock(monkeypatch, after_close(day))
            assert invoke("record", "--policies", POLICIES).exit_code == 0
        set_clock(monkeypatch, SCORED_AT)
        assert invoke("score").exit_code == 0
        template = tmp_path_factory.mktemp("ledger-template") / "home"
        shutil.copytree(aapl_home, template)
        _TEMPLATE["home"] = template
    else:
        shutil.copytree(_TEMPLATE["home"], aapl_home)
    settings = set_clock(monkeypatch, SCORED_AT)
    assert invoke("verify").exit_code == 0
    return settings
