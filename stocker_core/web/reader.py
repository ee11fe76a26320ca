"""Read-only access to the warehouse for the web pages: one short locked read-only DuckDB
connection per query (``warehouse.read_only``: only SELECTs run, external access off, the
configuration locked), never a write, and an empty answer when a file or table is missing."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stocker_core.warehouse.db import Warehouse
from stocker_core.warehouse.read_only import locked_connection, run_read_only

LOCK_WAIT_SECONDS = 5.0
"""How long a web read waits for a writer's lock before answering 'busy'."""


class WarehouseReader:
    """Queries on ``$STOCKER_HOME/stocker.duckdb`` opened read-only (the pipeline may be writing)."""

    def __init__(self, path: Path | str, lock_wait: float = LOCK_WAIT_SECONDS) -> None:
        self.path = Path(path)
        self.warehouse = Warehouse(self.path, lock_wait=lock_wait)

    @property
    def exists(self) -> bool:
        return self.path.is_file()

    def tables(self) -> set[str]:
        """``schema.table`` names present (empty when the file does not exist)."""
        if not self.exists:
            return set()
        with locked_connection(self.warehouse) as con:
            return _tables(con)

    def has(self, *tables: str) -> bool:
        """True when every one of ``tables`` exists."""
        present = self.tables()
        return all(t in present for t in tables)

    def frame(self, sql: str, params: Sequence[object] = (), needs: Sequence[str] = ()) -> pd.DataFrame:
        """The rows of a parameterized query; an empty frame when a table in ``needs`` is missing."""
        if not self.exists:
            return pd.DataFrame()
        with locked_connection(self.warehouse) as con:
            if needs and not set(needs) <= _tables(con):
                return pd.DataFrame()
            return run_read_only(con, sql, params)

    def row_counts(self, tables: Sequence[str]) -> dict[str, int]:
        """Rows in each of ``tables`` (0 for a missing one), over one connection."""
        if not self.exists:
            return {t: 0 for t in tables}
        with locked_connection(self.warehouse) as con:
            present = _tables(con)
            count = "SELECT count(*) AS n FROM {}"
            return {
                t: int(run_read_only(con, count.format(t))["n"].iloc[0]) if t in present else 0
                for t in tables
            }


def _tables(con) -> set[str]:
    rows = con.execute("SELECT table_schema, table_name FROM information_schema.tables").fetchall()
    return {f"{schema}.{name}" for schema, name in rows}


def plain(value: Any) -> Any:
    """A JSON-ready copy: dates as ISO text, NaN/inf as None, numpy scalars as Python ones."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, pd.Timestamp | datetime):
        if pd.isna(value):
            return None
        stamp = pd.Timestamp(value)
        return stamp.date().isoformat() if stamp == stamp.normalize() else stamp.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [plain(v) for v in value]
    if value is pd.NaT or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value


STAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
"""The one way the page writes a moment (the warehouse's timestamps: the builder's local time)."""


def stamp(value: Any) -> str | None:
    """A timestamp (or its ISO text) as ``YYYY-MM-DD HH:MM:SS``, midnight included; None when
    empty, the text itself when it is not a time."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    try:
        moment = pd.Timestamp(value)
    except (ValueError, TypeError):
        return str(value)
    return None if pd.isna(moment) else moment.strftime(STAMP_FORMAT)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``frame`` as JSON-ready dicts."""
    return [plain(row) for row in frame.to_dict(orient="records")]


def parse_json(text: Any) -> Any:
    """A JSON column's value parsed (None or the text itself when it is not JSON)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
