"""Text event tables in the warehouse: text.news, text.forum_posts, text.macro_events.

Each row keeps its publication instant (``published_at`` TIMESTAMPTZ, UTC) and whether
the source stated it (``time_stated``); tables created before these columns existed are
migrated on first use, their rows taking the date-only rule (published at the end of
their day, New York time).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd

from stocker_core.market.calendar import NEW_YORK
from stocker_core.text_events.events import COLUMNS, EventKind, TextEvents, empty_events
from stocker_core.warehouse.db import Warehouse

TEXT_TABLES: dict[str, str] = {
    "news": "text.news",
    "forums": "text.forum_posts",
    "macro": "text.macro_events",
}

TEXT_DDL: dict[str, str] = {
    "news": """CREATE TABLE IF NOT EXISTS text.news (
        ticker VARCHAR NOT NULL, date DATE NOT NULL, headline VARCHAR NOT NULL,
        source VARCHAR, sentiment_label VARCHAR, url VARCHAR,
        published_at TIMESTAMPTZ, time_stated BOOLEAN)""",
    "forums": """CREATE TABLE IF NOT EXISTS text.forum_posts (
        ticker VARCHAR NOT NULL, date DATE NOT NULL, subreddit VARCHAR, score BIGINT,
        post_text VARCHAR NOT NULL, published_at TIMESTAMPTZ, time_stated BOOLEAN)""",
    "macro": """CREATE TABLE IF NOT EXISTS text.macro_events (
        date DATE NOT NULL, country VARCHAR, headline VARCHAR NOT NULL,
        policy_signal VARCHAR, published_at TIMESTAMPTZ, time_stated BOOLEAN)""",
}


def _migrations(table: str) -> list[str]:
    """Add the publication-time columns to an older table and fill them for its rows."""
    return [
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS published_at TIMESTAMPTZ",
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS time_stated BOOLEAN",
        f"""UPDATE {table}
            SET published_at = (date + INTERVAL 1 DAY)::TIMESTAMP AT TIME ZONE '{NEW_YORK}',
                time_stated = FALSE
            WHERE published_at IS NULL""",
    ]


_READY: set[tuple[Path, int]] = set()  # (file, inode) whose text tables this process set up
_SETUP_LOCK = threading.Lock()


def _file_key(warehouse: Warehouse) -> tuple[Path, int] | None:
    path = warehouse.path.resolve()
    return (path, path.stat().st_ino) if path.exists() else None


def ensure_text_tables(warehouse: Warehouse) -> None:
    """Create the text schema's tables if missing and migrate older ones (once per file
    and process, so later reads need no write connection)."""
    if _file_key(warehouse) in _READY:
        return
    # one thread at a time: two first requests of a server creating the same table on two
    # connections is a DuckDB write-write conflict
    with _SETUP_LOCK:
        if _file_key(warehouse) in _READY:
            return
        with warehouse.connect() as con:
            con.execute("CREATE SCHEMA IF NOT EXISTS text")
            for kind, ddl in TEXT_DDL.items():
                con.execute(ddl)
                for migration in _migrations(TEXT_TABLES[kind]):
                    con.execute(migration)
        key = _file_key(warehouse)
        if key is not None:
            _READY.add(key)


def replace_events(warehouse: Warehouse, kind: EventKind, frame: pd.DataFrame) -> int:
    """Replace the stored rows of ``kind`` for the tickers (news/forums) or dates (macro)
    present in ``frame`` with ``frame``'s rows; one transaction, idempotent."""
    ensure_text_tables(warehouse)
    table = TEXT_TABLES[kind]
    rows = frame[COLUMNS[kind]].drop_duplicates()
    if len(rows):
        with warehouse.transaction() as con:
            con.register("incoming", rows)
            key = "date" if kind == "macro" else "ticker"
            con.execute(f"DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM incoming)")
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
            con.unregister("incoming")
    return len(rows)


_DATE_ONLY = f"(date + INTERVAL 1 DAY)::TIMESTAMP AT TIME ZONE '{NEW_YORK}'"
"""A row without a stated time is published at the end of its day, New York time (the migration's rule)."""


def _stored_columns(con, table: str) -> set[str]:
    schema, name = table.split(".")
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?",
        [schema, name],
    ).fetchall()
    return {column for (column,) in rows}


def read_events(warehouse: Warehouse, kind: EventKind, ticker: str | None = None) -> pd.DataFrame:
    """Stored events of ``kind`` (of ``ticker`` for news/forums when given), by date then
    publication time (``published_at`` as UTC). Read-only: a missing table is no events, and a
    table from before the publication-time columns reads as its migration would fill it (so a
    server's reads never write into the home)."""
    table = TEXT_TABLES[kind]
    if not warehouse.path.is_file():
        return empty_events(kind)
    with warehouse.connect(read_only=True) as con:
        stored = _stored_columns(con, table)
        if not stored:
            return empty_events(kind)
        if "published_at" in stored:
            select = (
                f"SELECT * REPLACE (coalesce(published_at, {_DATE_ONLY}) AS published_at, "
                "coalesce(time_stated, FALSE) AS time_stated) FROM " + table
            )
        else:
            select = f"SELECT *, {_DATE_ONLY} AS published_at, FALSE AS time_stated FROM {table}"
        params: list[object] = []
        if ticker is not None and kind != "macro":
            select += " WHERE ticker = ?"
            params.append(ticker)
        frame = con.execute(select + " ORDER BY date, published_at", params).df()
    if frame.empty:
        return empty_events(kind)
    frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
    frame["published_at"] = pd.to_datetime(frame["published_at"], utc=True).astype("datetime64[ns, UTC]")
    frame["time_stated"] = frame["time_stated"].fillna(False).astype(bool)
    return frame[COLUMNS[kind]].reset_index(drop=True)


def warehouse_text(warehouse: Warehouse) -> TextEvents | None:
    """Text events stored by the text assets, or None when none are stored."""
    if not warehouse.path.exists():
        return None
    events = TextEvents(*(read_events(warehouse, kind) for kind in ("news", "forums", "macro")))
    return events if any(len(f) for f in (events.news, events.forums, events.macro)) else None
