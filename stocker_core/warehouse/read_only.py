"""Reads of the warehouse that cannot write: the one home of ``stocker sql`` and the web page's reads.

Whether a query may run is decided by DuckDB, never from the SQL text, and before anything runs:

1. **DuckDB's parse.** ``duckdb.extract_statements`` must give exactly one statement of type
   ``SELECT`` (``SHOW``, ``DESCRIBE``, ``SUMMARIZE``, ``FROM …`` and ``VALUES`` are SELECTs to
   DuckDB). ``EXPLAIN`` is refused: ``EXPLAIN ANALYZE`` runs its statement, and only its text
   tells the two apart (``stocker sql --plan`` shows a plan instead).
2. **DuckDB's plan.** ``EXPLAIN (FORMAT json)`` of the statement — planned, not run — must hold
   no operator that writes (``WRITING_OPERATORS``: ``COPY_TO_FILE`` in a CTE, ``INSERT``,
   ``CREATE_*``, ``ATTACH`` …). This is the layer that stops ``WITH x AS (COPY … TO
   '<partition>') SELECT 1``: the partitions folder must be readable for the views, and DuckDB's
   ``allowed_directories`` lets what it reads be written as well.
3. **The connection** (``Warehouse.read_only_connection``): the catalog opened ``read_only``;
   ``enable_external_access = false`` with only the partitions folder allowed, by its absolute
   path (and the views' relative spelling of it); ``lock_configuration = true``, so no statement
   can switch any of it back.
4. **The console's folder** (``read_only_query``): a relative path resolves against the current
   folder before the warehouse's, so the console refuses to run where ``./stocker.parts`` is
   another folder than the warehouse's, and refuses a partitions tree holding a symbolic link
   (a way out of the allowed folder that DuckDB would follow).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pandas as pd

from stocker_core.errors import StockerError

if TYPE_CHECKING:
    from stocker_core.warehouse.db import Warehouse

ONLY_READS = "stocker sql only reads the warehouse"

WRITING_OPERATORS = frozenset(
    {
        "ALTER",
        "ATTACH",
        "BATCH_COPY_TO_FILE",
        "BATCH_CREATE_TABLE_AS",
        "BATCH_INSERT",
        "CHECKPOINT",
        "COPY_DATABASE",
        "COPY_FROM_FILE",
        "COPY_TO_FILE",
        "CREATE_INDEX",
        "CREATE_MACRO",
        "CREATE_SCHEMA",
        "CREATE_SECRET",
        "CREATE_SEQUENCE",
        "CREATE_TABLE",
        "CREATE_TABLE_AS",
        "CREATE_TYPE",
        "CREATE_VIEW",
        "DELETE",
        "DELETE_OPERATOR",
        "DETACH",
        "DROP",
        "EXECUTE",
        "EXPLAIN_ANALYZE",
        "EXPORT",
        "EXTENSION",
        "FIXED_BATCH_COPY_TO_FILE",
        "FORCE_CHECKPOINT",
        "INSERT",
        "LOAD",
        "MERGE_INTO",
        "PRAGMA",
        "PREPARE",
        "RESET",
        "SET",
        "SET_VARIABLE",
        "TRANSACTION",
        "UPDATE",
        "UPDATE_EXTENSIONS",
        "VACUUM",
    }
)
"""Physical operators (and table functions) of DuckDB's plan that write or change state."""


class ReadOnlyQueryError(StockerError, ValueError):
    """A query that is not a single read, or that failed to run on the read-only connection."""


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def check_read_only(sql: str) -> None:
    """Raise ReadOnlyQueryError unless DuckDB parses ``sql`` as exactly one SELECT."""
    if not sql.strip():
        raise ReadOnlyQueryError("the query is empty")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise ReadOnlyQueryError(_first_line(exc)) from None
    if len(statements) != 1:
        raise ReadOnlyQueryError(f"send one statement, not {len(statements)} ({ONLY_READS})")
    kind = statements[0].type
    if kind == duckdb.StatementType.EXPLAIN:
        raise ReadOnlyQueryError(
            f"EXPLAIN statements are refused (EXPLAIN ANALYZE runs its statement; {ONLY_READS}): "
            "`stocker sql --plan QUERY` prints the plan of a SELECT"
        )
    if kind != duckdb.StatementType.SELECT:
        name = kind.name if hasattr(kind, "name") else str(kind)
        raise ReadOnlyQueryError(
            f"{name} statements are refused ({ONLY_READS}: SELECT, SHOW, DESCRIBE or SUMMARIZE)"
        )


def _operators(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        name = node.get("name")
        if isinstance(name, str):
            yield name.strip().upper()
        for child in node.get("children", ()):
            yield from _operators(child)
    elif isinstance(node, list):
        for child in node:
            yield from _operators(child)


def planned_operators(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> list[str]:
    """The physical operators of DuckDB's plan of ``sql`` (planned, never run)."""
    rows = con.execute(f"EXPLAIN (FORMAT json) {sql}", list(params)).fetchall()
    found: list[str] = []
    for row in rows:
        found.extend(_operators(json.loads(row[-1])))
    return found


def check_plan(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> None:
    """Raise ReadOnlyQueryError when DuckDB's plan of ``sql`` holds an operator that writes."""
    try:
        operators = planned_operators(con, sql, params)
    except duckdb.Error as exc:
        raise ReadOnlyQueryError(_explained(_first_line(exc))) from None
    writing = sorted({op for op in operators if op in WRITING_OPERATORS})
    if writing:
        raise ReadOnlyQueryError(f"the query's plan writes ({', '.join(writing)}): refused ({ONLY_READS})")


def _explained(first: str) -> str:
    if "read-only" in first or "disabled by configuration" in first or "locked" in first:
        return f"{first} ({ONLY_READS})"
    return first


@contextmanager
def locked_connection(warehouse: Warehouse) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection of the existing catalog: external access off but for the
    partitions folder, the configuration locked (never a cursor of a write session)."""
    if not warehouse.path.is_file():
        raise ReadOnlyQueryError(f"no warehouse at {warehouse.path}: run `stocker materialize` first")
    with warehouse.read_only_connection() as con:
        yield con


def run_read_only(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] | None = None
) -> pd.DataFrame:
    """``sql`` on a ``locked_connection`` as a DataFrame, after DuckDB's parse and plan say it
    only reads (``check_read_only``, ``check_plan``)."""
    check_read_only(sql)
    check_plan(con, sql, list(params or []))
    try:
        return con.execute(sql, list(params or [])).df()
    except duckdb.Error as exc:
        raise ReadOnlyQueryError(_explained(_first_line(exc))) from None


def check_console_folder(warehouse: Warehouse, cwd: Path | None = None) -> None:
    """Refuse to run user SQL where a relative path could leave the warehouse: a ``stocker.parts``
    in the current folder that is not the warehouse's, or a symbolic link in the partitions tree."""
    root = warehouse.parts.root
    here = (cwd or Path.cwd()) / root.name
    if here.exists() and (not root.exists() or not here.samefile(root)):
        raise ReadOnlyQueryError(
            f"{here} is not the warehouse's {root}: relative paths would read it; "
            "run stocker sql from another folder"
        )
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            if os.path.islink(os.path.join(folder, name)):
                raise ReadOnlyQueryError(
                    f"the partitions folder holds a symbolic link ({os.path.join(folder, name)}): "
                    "remove it; stocker sql reads only files inside the warehouse"
                )


def read_only_query(warehouse: Warehouse, sql: str, params: Sequence[object] | None = None) -> pd.DataFrame:
    """One query of a user (``stocker sql``) on its own locked connection."""
    check_read_only(sql)
    check_console_folder(warehouse)
    with locked_connection(warehouse) as con:
        return run_read_only(con, sql, params)


def query_plan(warehouse: Warehouse, sql: str) -> str:
    """DuckDB's plan of the read ``sql`` as text (``stocker sql --plan``), never run."""
    check_read_only(sql)
    check_console_folder(warehouse)
    with locked_connection(warehouse) as con:
        check_plan(con, sql)
        rows = con.execute(f"EXPLAIN {sql}").fetchall()
    return "\n".join(str(row[-1]) for row in rows)
