"""Cost of one warehouse operation's connection: a cursor of the process's host instance with the
file attached (``stocker_core.warehouse.attached``) against a new DuckDB instance of the file per
operation (what ``Warehouse`` did before), measured in the same process on the same file.

Usage: python bench/bench_warehouse_connect.py [OPERATIONS]   (default 300)

The file is a fresh warehouse with its schema (tables and the Parquet views of every
partitioned table) and 1,000 lineage rows. Each operation opens a connection, counts the
lineage rows and closes it: ``read`` in read-only mode (hardened as ``Warehouse.read_settings``
says), ``write`` in read-write mode. The figure is CPU milliseconds per operation (one thread,
``time.process_time``), median of three passes, and the ratio of the old way to the new.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from stocker_core.warehouse import Warehouse


def per_operation(operation: Callable[[], None], count: int) -> float:
    """Median CPU milliseconds per call of ``operation`` over three passes of ``count`` calls."""
    operation()  # warm: the host instance, the file cache
    passes = []
    for _ in range(3):
        start = time.process_time()
        for _ in range(count):
            operation()
        passes.append((time.process_time() - start) / count * 1000)
    return statistics.median(passes)


def new_instance(warehouse: Warehouse, read_only: bool) -> Callable[[], None]:
    """The old way: ``duckdb.connect`` of the file (a new instance), hardened for reads, closed."""
    settings = warehouse.read_settings
    folders = ", ".join(f"'{d}'" for d in settings["allowed_directories"])  # type: ignore[union-attr]

    def operation() -> None:
        con = duckdb.connect(
            str(warehouse.path), read_only=read_only, config={"file_search_path": str(warehouse.home)}
        )
        if read_only:
            con.execute(f"SET allowed_directories = [{folders}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        con.execute("SELECT count(*) FROM meta.lineage").fetchall()
        con.close()

    return operation


def attached_cursor(warehouse: Warehouse, read_only: bool) -> Callable[[], None]:
    def operation() -> None:
        with warehouse.connect(read_only=read_only) as con:
            con.execute("SELECT count(*) FROM meta.lineage").fetchall()

    return operation


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as folder:
        warehouse = Warehouse(Path(folder) / "home" / "stocker.duckdb")
        rows = [
            {
                "asset": "prices",
                "partition": f"T{i}|2020-01-01",
                "run_id": "r",
                "code_version": "1",
                "data_version": "v",
                "upstream": {},
                "row_count": 20,
            }
            for i in range(1000)
        ]
        warehouse.record_lineage(rows)
        print(f"{count} operations a pass, median of 3; CPU ms per operation (one thread)")
        print(f"{'mode':<6} {'new instance (before)':>22} {'attached cursor':>16} {'ratio':>7}")
        for mode, read_only in (("read", True), ("write", False)):
            before = per_operation(new_instance(warehouse, read_only), count)
            after = per_operation(attached_cursor(warehouse, read_only), count)
            print(f"{mode:<6} {before:>22.2f} {after:>16.2f} {before / after:>6.1f}×")


if __name__ == "__main__":
    main()
