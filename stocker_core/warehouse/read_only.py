"""Reads of the warehouse that cannot write: the one home of ``stocker sql`` and the web page's reads.

Three layers, each closing what the others leave open:

1. **The statement.** Only one ``SELECT`` (``SHOW``, ``DESCRIBE``, ``SUMMARIZE``, ``FROM …``
   and ``VALUES`` parse as one) or an ``EXPLAIN [ANALYZE]`` of one is run; ``COPY``,
   ``EXPORT``, ``ATTACH``, ``CREATE``, ``INSERT``, ``INSTALL``/``LOAD``, ``SET``, ``CALL``,
   ``PRAGMA`` and several statements at once are refused before anything runs. This is the
   layer that stops ``COPY … TO`` a partition file: DuckDB's ``allowed_directories`` (which
   lets the views read the Parquet folder) also allows writing there.
2. **The catalog** is opened ``read_only``: no table, view or lineage row can change.
3. **The connection**: ``enable_external_access = false`` (no other file, URL or extension)
   and ``lock_configuration = true``, so no statement can switch either back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb
import pandas as pd

from stocker_core.errors import StockerError

if TYPE_CHECKING:
    from stocker_core.warehouse.db import Warehouse

_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALYZE\s+)?(?P<inner>.+)$", re.IGNORECASE | re.DOTALL)


class ReadOnlyQueryError(StockerError, ValueError):
    """A query that is not a single read, or that failed to run on the read-only connection."""


def check_read_only(sql: str) -> None:
    """Raise ReadOnlyQueryError unless ``sql`` is exactly one SELECT (or an EXPLAIN of one)."""
    if not sql.strip():
        raise ReadOnlyQueryError("the query is empty")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise ReadOnlyQueryError(str(exc).strip().splitlines()[0]) from None
    if len(statements) != 1:
        raise ReadOnlyQueryError(
            f"send one statement, not {len(statements)} (stocker sql only reads the warehouse)"
        )
    statement = statements[0]
    kind = statement.type
    if kind == duckdb.StatementType.EXPLAIN:
        # EXPLAIN ANALYZE runs its statement: the inner one must be a read as well
        match = _EXPLAIN.match(statement.query)
        if match is None:
            raise ReadOnlyQueryError("write EXPLAIN [ANALYZE] directly before a SELECT")
        check_read_only(match.group("inner"))
        return
    if kind != duckdb.StatementType.SELECT:
        name = kind.name if hasattr(kind, "name") else str(kind)
        raise ReadOnlyQueryError(
            f"{name} statements are refused (stocker sql only reads the warehouse: SELECT, SHOW, "
            "DESCRIBE, SUMMARIZE or EXPLAIN)"
        )


@contextmanager
def locked_connection(warehouse: Warehouse) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection of its own on the existing catalog, read-only, with external access off
    and its configuration locked (never a cursor of a write session)."""
    if not warehouse.path.is_file():
        raise ReadOnlyQueryError(f"no warehouse at {warehouse.path}: run `stocker materialize` first")
    con = warehouse.open_read_only()
    try:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        yield con
    finally:
        con.close()


def run_read_only(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] | None = None
) -> pd.DataFrame:
    """``sql`` (checked by ``check_read_only``) on a ``locked_connection``, as a DataFrame."""
    check_read_only(sql)
    try:
        return con.execute(sql, list(params or [])).df()
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        if "read-only" in first or "disabled by configuration" in first or "locked" in first:
            first += " (stocker sql only reads the warehouse)"
        raise ReadOnlyQueryError(first) from None


def read_only_query(warehouse: Warehouse, sql: str, params: Sequence[object] | None = None) -> pd.DataFrame:
    """One read-only query on its own locked connection."""
    check_read_only(sql)
    with locked_connection(warehouse) as con:
        return run_read_only(con, sql, params)
