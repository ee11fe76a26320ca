"""Many runless asset materializations stored in one go (the "no data" markers).

``DagsterInstance.report_runless_asset_event`` stores one event per call: on the default
SQLite instance that is four connections and two commits (two fsyncs) per event, ~70-110 ms,
so marking the ~5,000 months outside a ticker's data took minutes. ``report_materializations``
stores the same events, with the same rows in the same tables, as Dagster's own batch path
does on Postgres (``PostgresEventLogStorage.store_event_batch``: every event and its tags
inserted, the asset row updated with the latest): on Postgres by that very method, on SQLite
by the same statements in one transaction per database file. Any other storage gets the
events one by one through the public call.

Dagster is pinned exactly (pyproject), and ``tests/assets/test_event_batch.py`` holds the
SQLite path to the one-by-one path event for event, so an upgrade that changes the storage
fails a test instead of writing something different.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

import dagster as dg
from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData
from dagster._core.events.log import EventLogEntry
from dagster._core.instance.utils import RUNLESS_JOB_NAME, RUNLESS_RUN_ID
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._time import get_current_timestamp


def runless_entry(materialization: dg.AssetMaterialization, timestamp: float) -> EventLogEntry:
    """The event log entry ``report_runless_asset_event`` would store for ``materialization``."""
    event = DagsterEvent(
        event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
        event_specific_data=StepMaterializationData(materialization),
        job_name=RUNLESS_JOB_NAME,
    )
    return EventLogEntry(
        user_message="",
        level=20,  # logging.INFO, as report_dagster_event stores it
        job_name=RUNLESS_JOB_NAME,
        run_id=RUNLESS_RUN_ID,
        error_info=None,
        timestamp=timestamp,
        step_key=None,
        dagster_event=event,
    )


def _store_sqlite(storage: SqliteEventLogStorage, entries: Sequence[EventLogEntry]) -> None:
    """``SqliteEventLogStorage.store_event`` for many asset materializations of one asset: the
    same rows, each event serialized once, inserted with one statement per table in one
    transaction on the run shard and one on the index."""
    rows = [storage._event_to_row(entry) for entry in entries]
    with storage.run_connection(RUNLESS_RUN_ID) as conn:
        conn.execute(SqlEventLogStorageTable.insert(), rows)
    with storage.index_transaction() as conn:
        inserted = conn.execute(
            SqlEventLogStorageTable.insert().returning(
                SqlEventLogStorageTable.c.id, sort_by_parameter_order=True
            ),
            rows,
        )
        ids = [row[0] for row in inserted]
        storage._store_asset_event_tags(conn, entries, ids)
        storage._store_asset_event(conn, entries[-1], ids[-1])  # the asset row: the latest event


def report_materializations(
    instance: dg.DagsterInstance, materializations: Sequence[dg.AssetMaterialization]
) -> int:
    """Store ``materializations`` as runless events (like ``report_runless_asset_event`` on
    each, in order), batched per asset; returns how many were stored."""
    storage = instance.event_log_storage
    now = get_current_timestamp()
    ordered = sorted(materializations, key=lambda m: m.asset_key.to_string())
    for _, group in groupby(ordered, key=lambda m: m.asset_key.to_string()):
        entries = [runless_entry(m, now) for m in group]
        if isinstance(storage, SqliteEventLogStorage):
            _store_sqlite(storage, entries)
        elif type(storage).__name__ == "PostgresEventLogStorage":
            storage.store_event_batch(entries)
        else:
            for materialization in (
                e.get_dagster_event().step_materialization_data.materialization for e in entries
            ):
                instance.report_runless_asset_event(materialization)
    return len(materializations)
