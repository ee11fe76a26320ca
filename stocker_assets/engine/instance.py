"""The Dagster instance of the CLI: its home, its creation under a file lock, and the
ticker partitions registered in it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources as pkg_resources
from pathlib import Path

import dagster as dg

from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.engine.run_liveness import fail_dead_runs
from stocker_core.atomic_files import write_text_atomic
from stocker_core.config import Settings
from stocker_core.errors import StockerError

INIT_LOCK = ".stocker-init.lock"
"""Lock file in DAGSTER_HOME serialising instance creation and storage migrations."""


def dagster_home_path(settings: Settings) -> Path:
    """$DAGSTER_HOME, else STOCKER_HOME/dagster (``Settings.dagster_home``)."""
    return Path(os.environ.get("DAGSTER_HOME") or settings.dagster_home).resolve()


def ensure_dagster_home(settings: Settings) -> Path:
    """Use $DAGSTER_HOME, or STOCKER_HOME/dagster with our dagster.yaml (telemetry off).

    The config file is written atomically, so a concurrent command never reads half of it.
    """
    home = dagster_home_path(settings)
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        template = pkg_resources.files("stocker_assets") / "dagster.yaml"
        write_text_atomic(config, template.read_text())
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def dagster_instance(settings: Settings, timeout_s: float = 300) -> dg.DagsterInstance:
    """The CLI's Dagster instance, created and migrated under a file lock.

    Two processes initialising one fresh SQLite instance at once can leave two
    ``alembic_version`` rows ("more than one head present") and break the home for good;
    holding ``DAGSTER_HOME/.stocker-init.lock`` while the instance opens and each of its
    storages (runs, event log, schedules) creates its tables makes that impossible.
    """
    from filelock import FileLock, Timeout

    home = ensure_dagster_home(settings)
    try:
        with FileLock(str(home / INIT_LOCK), timeout=timeout_s):
            instance = dg.DagsterInstance.get()
            instance.get_runs(limit=1)  # run storage
            instance.get_dynamic_partitions(ticker_partitions.name)
            instance.get_latest_materialization_event(dg.AssetKey("prices"))  # event log storage
            instance.all_instigator_state()  # schedule storage
    except Timeout:
        raise DagsterHomeBusyError(
            f"another stocker command has held {home / INIT_LOCK} for {timeout_s:.0f}s while "
            "creating the Dagster instance; wait for it or remove the lock file if no command runs"
        ) from None
    fail_dead_runs(instance)  # runs whose process was killed are not left STARTED for good
    return instance


class DagsterHomeBusyError(StockerError):
    """The Dagster instance lock could not be taken in time."""


def register_tickers(instance: dg.DagsterInstance, tickers: Sequence[str]) -> list[str]:
    """Add missing tickers to the dynamic ticker partitions; returns the new ones."""
    known = set(instance.get_dynamic_partitions(ticker_partitions.name))
    new = [t for t in tickers if t not in known]
    if new:
        instance.add_dynamic_partitions(ticker_partitions.name, new)
    return new


def unregister_tickers(instance: dg.DagsterInstance, tickers: Sequence[str]) -> list[str]:
    """Delete registered tickers from the dynamic ticker partitions; returns those removed."""
    known = set(instance.get_dynamic_partitions(ticker_partitions.name))
    gone = [t for t in dict.fromkeys(tickers) if t in known]
    for ticker in gone:
        instance.delete_dynamic_partition(ticker_partitions.name, ticker)
    return gone
