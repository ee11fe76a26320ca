"""The text tables are set up once per warehouse file even when many threads ask at once (a
server's first concurrent requests): no DuckDB write-write conflict reaches a caller."""

from __future__ import annotations

import threading

from stocker_core.text import store
from stocker_core.warehouse.db import Warehouse


def test_concurrent_first_reads_set_the_tables_up_once_without_a_conflict(tmp_path):
    for attempt in range(5):
        warehouse = Warehouse(tmp_path / f"w{attempt}.duckdb")
        with warehouse.connect() as con:
            con.execute("SELECT 1")  # the file exists, its text tables do not
        barrier, errors = threading.Barrier(8), []
        threads = [threading.Thread(target=_first_read, args=(warehouse, barrier, errors)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert store.read_events(warehouse, "news").empty


def _first_read(warehouse: Warehouse, barrier: threading.Barrier, errors: list[Exception]) -> None:
    barrier.wait()
    try:
        store.read_events(warehouse, "forums")
    except Exception as exc:  # noqa: BLE001 - any error is the failure looked for
        errors.append(exc)
