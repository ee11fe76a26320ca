"""Shared fixtures: the seed-task data folder and an isolated STOCKER_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest
from stocker_testing import SEED_DIR

from stocker_core.config import Settings, get_settings


@pytest.fixture
def seed_dir() -> Path:
    if not SEED_DIR.is_dir():
        pytest.fail(f"seed fixture missing at {SEED_DIR}: CI needs ../shared beside the repo")
    return SEED_DIR


@pytest.fixture
def files_env(tmp_path: Path, seed_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """STOCKER_* variables for the ``files`` source over the seed fixture, in a temp home."""
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(seed_dir))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    return get_settings(fresh=True)
