"""Shared fixtures (the seed-task data folder, an isolated STOCKER_HOME) and the serial xdist group;
the calling shell's STOCKER_* and DAGSTER_HOME are cleared at import (``hermetic_env``)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import bytecode_caches  # noqa: F401  (before any heavy import)
import hermetic_env  # noqa: F401  (clears the calling shell's STOCKER_* before anything reads settings)
import one_thread  # noqa: F401  (before torch is imported)
import pytest
from hypothesis import HealthCheck, settings
from stocker_testing import SEED_DIR
from xdist_groups import SERIAL_GROUP, queue_rank, serial_reason, shared_fixture_module, slow_reason

from stocker_core.composition import register_all
from stocker_core.config import Settings, get_settings

register_all()  # as the `stocker` command and the Dagster definitions do

# CI replays the same examples every run (a failure reproduces; nothing flakes on a random draw);
# `HYPOTHESIS_PROFILE=random python -m pytest` explores fresh examples, as a nightly run would.
settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("random", derandomize=False, deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects (which keeps the order)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the tests of ``xdist_groups.SLOW_TESTS`` slow. On an xdist worker under
    ``--dist loadgroup`` it also orders the collection as the work queue should run
    (``xdist_groups.queue_rank``: the serial group, modules with slow tests, shared-fixture
    modules, the rest); the scheduler below hands the work out in that order."""
    for item in items:
        if slow_reason(item.nodeid) is not None:
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput") and getattr(config.option, "loadgroup", False):
        slow_modules = {
            item.nodeid.split("::", 1)[0]
            for item in items
            if item.get_closest_marker("slow") is not None and serial_reason(item.nodeid) is None
        }
        items.sort(key=lambda item: queue_rank(item.nodeid, slow_modules))  # stable


if importlib.util.find_spec("xdist") is not None:

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
        """With ``--dist loadgroup`` (pyproject's addopts), the tests of ``SERIAL_TESTS`` form
        one work unit: one worker runs them one after another while the others run the rest;
        each module of ``SHARED_FIXTURE_MODULES`` is one work unit too, every other test its own.
        The units are handed out in the workers' collection order (the hook above puts the
        serial group first and the longest work next), not xdist's largest-unit-first.

        xdist 3.8's own ``@pytest.mark.xdist_group`` does nothing on pytest 9.2: it renames
        ``item._nodeid``, which pytest 9.2 no longer reads, so the group is read off the test's
        id here, on the controller."""
        if config.getoption("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadGroupScheduling

        config.option.loadscopereorder = False  # the collection order is the queue's order

        class SerialGroupScheduling(LoadGroupScheduling):
            def _split_scope(self, nodeid: str) -> str:
                if serial_reason(nodeid):
                    return SERIAL_GROUP
                return shared_fixture_module(nodeid) or super()._split_scope(nodeid)

        return SerialGroupScheduling(config, log)


@pytest.fixture(autouse=True)
def _charts_as_shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Charts as a user gets them (``auto``: drawn on demand for the text-only rule council),
    whatever the calling shell says; the tests of chart drawing ask for ``eager`` themselves.
    (Eager charts everywhere cost the suite a 768×768 drawing per session it materialized.)"""
    monkeypatch.setenv("STOCKER_CHARTS", "auto")


@pytest.fixture(autouse=True)
def _one_lane(monkeypatch: pytest.MonkeyPatch) -> None:
    """`stocker materialize` runs its units in the test's process unless a test asks for lanes."""
    monkeypatch.setenv("STOCKER_MAIN_WORKERS", "1")


@pytest.fixture
def seed_dir() -> Path:
    if not SEED_DIR.is_dir():
        pytest.fail(f"seed fixture missing at {SEED_DIR}: CI needs the seed fixtures folder beside the repo")
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
