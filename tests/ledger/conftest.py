"""Fixtures of the ledger tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from stocker_core.config import Settings, get_settings


@pytest.fixture
def aapl_home(files_env: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp home on the files source over the seed fixture with AAPL as its universe."""
    monkeypatch.setenv("STOCKER_DEFAULT_TICKERS", '["AAPL"]')
    get_settings(fresh=True)
    return files_env.home
