"""Shared fixtures: the seed-task data folder and an isolated STOCKER_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from stocker_testing import SEED_DIR

from stocker_core.config import Settings, get_settings

# CI replays the same examples every run (a failure reproduces; nothing flakes on a random draw);
# `HYPOTHESIS_PROFILE=random python -m pytest` explores fresh examples, as a nightly run would.
settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("random", derandomize=False, deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _charts_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests exercise chart drawing: charts are eager unless a test says otherwise (the
    default, ``auto``, draws them on demand for a text-only council)."""
    monkeypatch.setenv("STOCKER_CHARTS", "eager")


@pytest.fixture(autouse=True)
def _one_lane(monkeypatch: pytest.MonkeyPatch) -> None:
    """`stocker materialize` runs its units in the test's process unless a test asks for lanes."""
    monkeypatch.setenv("STOCKER_MAIN_WORKERS", "1")


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
