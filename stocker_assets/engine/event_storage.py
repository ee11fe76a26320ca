"""Dagster's SQLite event log, with its connections kept open between events.

``SqliteEventLogStorage`` creates a SQLAlchemy engine for every event it stores and disposes
of it after: a new connection per write, so every event pays for the engine, a connect and,
on closing the last connection to a WAL database, a checkpoint. One ticker's market, env and
council runs store ~700 events, which cost ~13 s of a ~20 s unit. ``PooledSqliteEventLogStorage``
keeps one engine (and its pooled connection) per database file, for the most recently used
``MAX_OPEN_SHARDS`` files: the same tables, statements and transactions, so other processes
(the UI, the lanes of ``stocker materialize``) read and write the files as before.

``stocker_assets/dagster.yaml`` (the CLI's instance template) names it as the
``event_log_storage``; ``base_dir`` relative to ``$DAGSTER_HOME`` (``history/runs``, where
Dagster's default puts the event log).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine

MAX_OPEN_SHARDS = 32
"""Database files (the index and one per run) whose engines stay open in a process."""


def _no_fsync_per_commit(dbapi_connection: Any, _record: Any) -> None:
    """``synchronous=NORMAL``: in WAL mode a commit no longer waits for an fsync (the WAL is
    synced at checkpoints). A process that dies loses nothing committed; only a power cut
    can lose the last commits — of an event log, not of the warehouse."""
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` with an engine per database file kept open (LRU)."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engines: OrderedDict[str, Engine] = OrderedDict()  # before super(): it connects
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(  # ty: ignore[invalid-method-override]
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> PooledSqliteEventLogStorage:
        base = Path(config_value["base_dir"])
        if not base.is_absolute():
            base = Path(os.environ.get("DAGSTER_HOME", ".")) / base
        return cls(str(base), inst_data=inst_data)

    def _engine(self, shard: str) -> Engine:
        engine = self._engines.get(shard)
        if engine is not None:
            self._engines.move_to_end(shard)
            return engine
        engine = create_engine(
            self.conn_string_for_shard(shard), connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS}
        )
        event.listen(engine, "connect", _no_fsync_per_commit)
        if shard not in self._initialized_dbs:
            self._initdb(engine)
            self._initialized_dbs.add(shard)
        self._engines[shard] = engine
        while len(self._engines) > MAX_OPEN_SHARDS:
            self._engines.popitem(last=False)[1].dispose()
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock, self._engine(shard).connect() as conn, conn.begin():
            yield conn

    def _close_all(self) -> None:
        with self._db_lock:
            while self._engines:
                self._engines.popitem()[1].dispose()

    def delete_events(self, run_id: str) -> None:
        super().delete_events(run_id)
        with self._db_lock:
            engine = self._engines.pop(run_id, None)
        if engine is not None:
            engine.dispose()

    def wipe(self) -> None:
        self._close_all()  # the run files are deleted: no connection may keep them open
        super().wipe()

    def dispose(self) -> None:
        self._close_all()
        super().dispose()
