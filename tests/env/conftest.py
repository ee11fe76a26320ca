"""Fixtures for the environment tests: the seed tasks through the ``files`` source."""

from __future__ import annotations

from pathlib import Path

import pytest

from stocker_core.config import get_settings

SEED_DIR = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "seed_tasks"
if not SEED_DIR.is_dir():
    SEED_DIR = Path("/work/shared/fixtures/seed_tasks")


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
