"""Moving a single-file warehouse's partitioned tables to the Parquet layout, row for row.

Each DuckDB table is written out ticker by ticker, then the files are read back and compared
with the table (row count and an order-independent content hash of every column). Only when
both agree is the table dropped and replaced by its view, in one transaction; on any
mismatch or error the table stays as it was and the error says why.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass

import duckdb

from stocker_core.errors import StockerError
from stocker_core.warehouse.partitioned import PART_FILE, PartitionedTable, PartitionStore


class MigrationError(StockerError, RuntimeError):
    """The Parquet copy of a table did not match it; the table was kept."""


@dataclass(frozen=True)
class TableMigration:
    """What moving one table did: rows and content hash before (table) and after (files)."""

    table: str
    partitions: int
    rows_before: int
    rows_after: int
    hash_before: str
    hash_after: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def content_fingerprint(
    con: duckdb.DuckDBPyConnection, table: PartitionedTable, source: str
) -> tuple[int, str]:
    """(rows, hash) of ``source``'s rows over ``table``'s columns; equal for equal multisets of rows."""
    cols = ", ".join(f'"{c}"' for c, _ in table.columns)
    rows, digest = con.execute(
        f"SELECT count(*), coalesce(sum(hash({cols})::HUGEINT), 0) FROM {source}"
    ).fetchone()
    return int(rows), f"{int(digest):x}"


def base_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """``schema.table`` of every base table (not a view) in the database: one catalog query."""
    rows = con.execute(
        "SELECT table_schema || '.' || table_name FROM information_schema.tables "
        "WHERE table_type = 'BASE TABLE'"
    ).fetchall()
    return {name for (name,) in rows}


def migrate_table(
    con: duckdb.DuckDBPyConnection, store: PartitionStore, table: PartitionedTable
) -> TableMigration:
    """Write DuckDB table ``table`` as part files, verify them, then swap the table for its view."""
    if not store.is_current:
        # files left by an interrupted earlier attempt: the table is still the truth
        shutil.rmtree(store.table_dir(table), ignore_errors=True)
    rows_before, hash_before = content_fingerprint(con, table, table.name)
    tickers = [r[0] for r in con.execute(f"SELECT DISTINCT ticker FROM {table.name} ORDER BY 1").fetchall()]
    partitions = 0
    for ticker in tickers:
        frame = con.execute(f"SELECT * FROM {table.name} WHERE ticker = ?", [ticker]).df()
        months = sorted(
            {
                r[0]
                for r in con.execute(
                    f"SELECT DISTINCT {table.month_sql} FROM {table.name} WHERE ticker = ?", [ticker]
                ).fetchall()
            }
        )
        store.replace_months(table, ticker, months, frame, shrink_reason="migration: the table is the truth")
        partitions += len(months)
    files = f"({store.select_sql(table, str(store.table_dir(table) / '*' / '*' / PART_FILE))})"
    rows_after, hash_after = (0, "0") if rows_before == 0 else content_fingerprint(con, table, files)
    if (rows_before, hash_before) != (rows_after, hash_after):
        raise MigrationError(
            f"{table.name}: the Parquet copy has {rows_after} rows (hash {hash_after}) against "
            f"{rows_before} (hash {hash_before}) in the table; the table is kept"
        )
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"DROP TABLE {table.name}")
        con.execute(f"CREATE VIEW {table.name} AS {store.view_sql(table)}")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
    return TableMigration(table.name, partitions, rows_before, rows_after, hash_before, hash_after)
