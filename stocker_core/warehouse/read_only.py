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
4. **The console's folder** (``read_only_query``): DuckDB checks a relative path's spelling
   (``stocker.parts/…``, the views' own) against the allowed folders, then opens it against the
   process's current folder first. So the console's query runs with the current folder pinned
   (``pinned_folder``) to a private temporary folder whose only entry, ``stocker.parts``, leads
   to the partitions folder resolved once (its real absolute path, held open where the system
   allows): the folder the user runs from, and a ``./stocker.parts`` toggled in it during the
   query, play no part. A partitions folder that is itself a symbolic link, or a tree holding
   one (a way out of the allowed folder that DuckDB would follow), is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
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


def check_console_folder(warehouse: Warehouse) -> Path:
    """The partitions folder's real absolute path, resolved once; ReadOnlyQueryError when the
    folder is itself a symbolic link (``stocker.parts`` pointing outside the home) or its tree
    holds one (user SQL reads only files inside the warehouse)."""
    root = warehouse.parts.root
    if os.path.islink(root):
        raise ReadOnlyQueryError(
            f"the partitions folder {root} is a symbolic link (to {os.readlink(root)}): stocker sql "
            "reads only files inside the warehouse; make it a folder"
        )
    real = Path(os.path.realpath(root))
    for folder, dirs, files in os.walk(real):
        for name in dirs + files:
            if os.path.islink(os.path.join(folder, name)):
                raise ReadOnlyQueryError(
                    f"the partitions folder holds a symbolic link ({os.path.join(folder, name)}): "
                    "remove it; stocker sql reads only files inside the warehouse"
                )
    return real


_PINNED = threading.Lock()
"""One console query at a time moves the process's current folder (``pinned_folder``)."""


@contextmanager
def pinned_folder(warehouse: Warehouse) -> Iterator[Path]:
    """Run the block in a private temporary folder (mode 0700) whose one entry ``stocker.parts``
    leads to the warehouse's partitions folder, resolved once (``check_console_folder``): the
    views' relative paths, and any relative path a query names, open there and nowhere else,
    whatever the caller's current folder holds or comes to hold. The link goes through an open
    handle of the folder where the system has one (``/proc/self/fd``), so even a rename of a
    folder on the way after the check leads nowhere new. The current folder is the process's:
    the console's one query moves it for its duration (never call this from a server's
    threads; the web page's fixed reads need none of it)."""
    real = check_console_folder(warehouse)
    handle = None
    if real.is_dir() and Path("/proc/self/fd").is_dir():
        handle = os.open(real, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))
    try:
        target = f"/proc/self/fd/{handle}" if handle is not None else str(real)
        with tempfile.TemporaryDirectory(prefix="stocker-sql-") as private, _PINNED:
            os.symlink(target, os.path.join(private, warehouse.parts.root.name))
            try:
                previous: str | None = os.getcwd()
            except OSError:  # the caller's folder was deleted: nothing to return to
                previous = None
            os.chdir(private)
            try:
                yield real
            finally:
                os.chdir(previous if previous is not None else tempfile.gettempdir())
    finally:
        if handle is not None:
            os.close(handle)


def _absolute(warehouse: Warehouse) -> Warehouse:
    """``warehouse`` by its absolute path (the pinned folder is not the caller's)."""
    if warehouse.path.is_absolute():
        return warehouse
    return type(warehouse)(warehouse.path.absolute(), lock_wait=warehouse.lock_wait)


def read_only_query(warehouse: Warehouse, sql: str, params: Sequence[object] | None = None) -> pd.DataFrame:
    """One query of a user (``stocker sql``) on its own locked connection, in the pinned folder."""
    check_read_only(sql)
    warehouse = _absolute(warehouse)
    with pinned_folder(warehouse), locked_connection(warehouse) as con:
        return run_read_only(con, sql, params)


def query_plan(warehouse: Warehouse, sql: str) -> str:
    """DuckDB's plan of the read ``sql`` as text (``stocker sql --plan``), never run."""
    check_read_only(sql)
    warehouse = _absolute(warehouse)
    with pinned_folder(warehouse), locked_connection(warehouse) as con:
        check_plan(con, sql)
        rows = con.execute(f"EXPLAIN {sql}").fetchall()
    return "\n".join(str(row[-1]) for row in rows)
