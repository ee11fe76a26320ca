"""OpenEnv's task API over Stocker's episodes (``/list_environments``, ``/stocker/splits``,
``/stocker/tasks``, ``/stocker/num_tasks``, ``/stocker/task``, ``/stocker/task_range``).

Splits:

* ``reference`` — the three reference tasks of SPEC §1 (their data ship with the package);
* ``episodes`` — every episode stored in the warehouse (``env.episodes``), oldest first per ticker;
* ``train``, ``valid``, ``test`` — the stored episodes whose every trading day lies inside that
  chronological split of its ticker (``eval.splits``; present once the evaluation has run).

A task spec names what to send to ``reset`` (``{"task_id": ...}`` or ``{"episode": key}``) plus
the episode's ticker, dates and length. Reads are read-only and short; a missing warehouse or
table gives an empty split, never an error.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from stocker_core.config import Settings
from stocker_core.env.tasks import TASKS
from stocker_core.errors import StockerError
from stocker_core.warehouse.db import Warehouse
from stocker_core.warehouse.read_only import locked_connection, run_read_only

ENV_NAME = "stocker"
REFERENCE = "reference"
STORED = "episodes"
SPLIT_TYPES = {REFERENCE: "test", STORED: "train", "train": "train", "valid": "validation", "test": "test"}
MAX_LISTED = 1000
"""``list_tasks`` answers at most this many specs (``num_tasks`` tells the true count; page with
``get_task_range``)."""

__all__ = ["ENV_NAME", "MAX_LISTED", "TaskCatalog", "UnknownSplitError"]


class UnknownSplitError(StockerError, LookupError):
    """A split name the catalog does not have."""


_EPISODES_SQL = """
    SELECT key, ticker, start_date, end_date, trading_days FROM env.episodes
    ORDER BY ticker, month"""
_SPLIT_EPISODES_SQL = """
    SELECT e.key, e.ticker, e.start_date, e.end_date, e.trading_days
    FROM env.episodes e JOIN eval.splits s
      ON s.ticker = e.ticker AND e.start_date >= s.start_date AND e.end_date <= s.end_date
    WHERE s.split = ?
    ORDER BY e.ticker, e.month"""


class TaskCatalog:
    """The task API of one server (its settings' warehouse); every method is side-effect free."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _read(self, split: str | None) -> tuple[set[str], pd.DataFrame | None]:
        """(the warehouse's tables, ``split``'s stored episodes or None), over one read-only
        connection; no tables when there is no warehouse yet."""
        warehouse = Warehouse(self.settings.warehouse_path, lock_wait=2.0)
        if not warehouse.path.is_file():
            return set(), None
        with locked_connection(warehouse) as con:
            rows = con.execute("SELECT table_schema || '.' || table_name FROM information_schema.tables")
            tables = {name for (name,) in rows.fetchall()}
            if split is None or "env.episodes" not in tables:
                return tables, None
            if split == STORED:
                return tables, run_read_only(con, _EPISODES_SQL)
            if "eval.splits" not in tables:
                return tables, None
            return tables, run_read_only(con, _SPLIT_EPISODES_SQL, [split])

    def _stored(self, split: str) -> pd.DataFrame:
        rows = self._read(split)[1]
        if rows is None:
            return pd.DataFrame(columns=["key", "ticker", "start_date", "end_date", "trading_days"])
        return rows

    def list_splits(self) -> list[dict[str, str]]:
        """``{"name", "type"}`` of each split that has tasks now (``reference`` always)."""
        names = [REFERENCE]
        tables = self._read(None)[0]
        if "env.episodes" in tables:
            names.append(STORED)
            if "eval.splits" in tables:
                names += ["train", "valid", "test"]
        return [{"name": name, "type": SPLIT_TYPES[name]} for name in names]

    def _specs(self, split: str) -> list[dict[str, Any]]:
        if split not in SPLIT_TYPES:
            raise UnknownSplitError(f"unknown split {split!r}: use one of {', '.join(SPLIT_TYPES)}")
        if split == REFERENCE:
            return [
                {
                    "id": task.task_id,
                    "split": split,
                    "index": index,
                    "reset": {"task_id": task.task_id},
                    "episode": task.key,
                    "ticker": task.ticker,
                    "month": task.month,
                    "regime": task.regime,
                }
                for index, task in enumerate(TASKS.values())
            ]
        rows = self._stored(split)
        return [
            {
                "id": row.key,
                "split": split,
                "index": index,
                "reset": {"episode": row.key},
                "episode": row.key,
                "ticker": row.ticker,
                "start_date": pd.Timestamp(row.start_date).date().isoformat(),
                "end_date": pd.Timestamp(row.end_date).date().isoformat(),
                "trading_days": int(row.trading_days),
            }
            for index, row in enumerate(rows.itertuples(index=False))
        ]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """The split's task specs, the first ``MAX_LISTED`` of them."""
        return self._specs(split)[:MAX_LISTED]

    def num_tasks(self, split: str) -> int:
        """How many tasks the split holds."""
        return len(self._specs(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        """The task at ``index`` (IndexError when out of range, negative included)."""
        specs = self._specs(split)
        if not isinstance(index, int) or not 0 <= index < len(specs):
            raise IndexError(f"task index {index!r} out of range: {split} holds {len(specs)} tasks")
        return specs[index]

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        """Specs ``start`` … ``stop - 1``, as a Python slice (at most ``MAX_LISTED``)."""
        return self._specs(split)[slice(start, stop)][:MAX_LISTED]
