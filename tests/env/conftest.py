"""Fixtures for the environment tests: the seed tasks through the ``files`` source."""

from __future__ import annotations

import pytest
from stocker_testing import SEED_DIR

from stocker_core.config import get_settings


@pytest.fixture
def seed_settings(monkeypatch, tmp_path):
    """Settings reading the seed fixture folder; STOCKER_HOME in a temp folder."""
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(SEED_DIR))
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    settings = get_settings(fresh=True)
    yield settings
    monkeypatch.undo()
    get_settings(fresh=True)
