"""The text tables are set up once per warehouse file even when many threads ask at once (a
server's first concurrent requests): no DuckDB write-write conflict reaches a caller."""

from __future__ import annotations

import threading

from stocker_core.text_events import store
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


def test_reads_never_write_and_a_legacy_table_reads_as_migrated(tmp_path):
    """A read of a home without text tables creates none (the env server's first reset wrote
    CREATE TABLE into the home before, issue 52); a table from before the publication-time
    columns reads as its migration fills it, and the file is left as it was."""
    warehouse = Warehouse(tmp_path / "stocker.duckdb")
    with warehouse.connect() as con:
        con.execute("SELECT 1")
    before = warehouse.path.read_bytes()
    assert all(store.read_events(warehouse, kind).empty for kind in ("news", "forums", "macro"))
    assert store.warehouse_text(warehouse) is None
    assert warehouse.path.read_bytes() == before
    with warehouse.connect() as con:
        con.execute("CREATE SCHEMA IF NOT EXISTS text")
        con.execute("DROP TABLE IF EXISTS text.news")
        con.execute(
            "CREATE TABLE text.news (ticker VARCHAR, date DATE, headline VARCHAR, source VARCHAR, "
            "sentiment_label VARCHAR, url VARCHAR)"
        )
        con.execute("INSERT INTO text.news VALUES ('KO', '2016-05-02', 'KO beats', 'wire', NULL, NULL)")
    legacy = warehouse.path.read_bytes()
    read = store.read_events(warehouse, "news", "KO")
    assert warehouse.path.read_bytes() == legacy
    store.ensure_text_tables(warehouse)  # what a writer does: the migration
    assert read.equals(store.read_events(warehouse, "news", "KO"))
    assert str(read["published_at"].iloc[0]) == "2016-05-03 04:00:00+00:00"  # midnight New York (EDT)
    assert not read["time_stated"].iloc[0]
