"""Partitioned tables as Parquet files in a hive layout, so many processes can write at once.

``<root>/<schema>/<table>/ticker=<T>/month=<YYYY-MM>/part.parquet`` holds one ticker-month
of one table. A write goes to a temporary name in the same folder and is renamed over the
old file (atomic on POSIX), so a reader sees the old partition or the new one, never half;
re-writing a partition replaces it and never duplicates rows. Upserts (the vote cache) read,
merge and write under an exclusive ``flock`` on the partition's folder.

DuckDB reads the files through views over ``read_parquet(..., hive_partitioning=true)``
defined with paths relative to the warehouse folder (``file_search_path``), so the folder
can be mounted at different places on different machines.
"""

from __future__ import annotations

import fcntl
import functools
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from urllib.parse import quote, unquote

import duckdb
import pandas as pd

from stocker_core.atomic_files import write_text_atomic
from stocker_core.errors import StockerError

PART_FILE = "part.parquet"
LAYOUT_FILE = "LAYOUT"
"""Written in the parts root once the warehouse uses this layout (new, or migrated)."""
LAYOUT_VERSION = "hive-parquet-1"

_TICKER = re.compile(r"^[A-Za-z0-9^][A-Za-z0-9._^=-]{0,31}$")


class PartitionError(StockerError, ValueError):
    """A partition write was refused (bad ticker, rows outside the named months, ...)."""


class PartitionShrinkError(PartitionError):
    """A write that would replace stored partitions with fewer rows, without a reason: refused,
    nothing written. ``shrunk`` lists (table, ticker, YYYY-MM, stored rows, new rows)."""

    def __init__(self, message: str, shrunk: list[tuple[str, str, str, int, int]]) -> None:
        super().__init__(message)
        self.shrunk = shrunk


ShrinkReason = str | Callable[[str, int, int], str | None] | None
"""Why a replace may leave a partition with fewer rows than it holds: a text for every month of
the write, or ``reason(YYYY-MM, stored rows, new rows)`` giving one per month (None: no reason,
the month is refused)."""


def shrink_message(table: str, ticker: str, shrunk: Sequence[tuple[str, int, int]], folder: str = "") -> str:
    """One line naming each refused partition and its row counts, and what to do (``folder``:
    where the table's partitions of ``ticker`` are stored)."""
    months = ", ".join(f"{label} ({stored} -> {new} rows)" for label, stored, new in shrunk)
    fix = (
        "If the source really dropped those bars, add reasoned row,drop fixes to "
        "$STOCKER_HOME/corrections.csv"
        if table == "market.prices"
        else "It is built from other tables: rebuild what it reads first"
    )
    where = f"; to rebuild it smaller on purpose, delete its month folder under {folder}" if folder else ""
    return (
        f"refused to replace {table} for {ticker} with fewer rows: {months}; stored data never "
        f"shrinks without a reason, nothing was written. {fix}{where}"
    )


@dataclass(frozen=True)
class PartitionedTable:
    """A warehouse table stored per ticker-month.

    ``month_column`` names a DATE column holding the partition month (per-episode tables);
    otherwise a row belongs to the month of its ``date``. ``key`` lists the primary key.
    """

    name: str
    ddl: str
    key: tuple[str, ...]
    month_column: str | None = None

    @property
    def folder(self) -> Path:
        schema, table = self.name.split(".")
        return Path(schema) / table

    @functools.cached_property
    def columns(self) -> tuple[tuple[str, str], ...]:
        """(name, DuckDB type) of every column, in DDL order."""
        con = duckdb.connect()
        try:
            con.execute(f"CREATE SCHEMA {self.name.split('.')[0]}")
            con.execute(self.ddl)
            rows = con.execute(f"DESCRIBE {self.name}").fetchall()
        finally:
            con.close()
        return tuple((row[0], row[1]) for row in rows)

    @property
    def column_names(self) -> set[str]:
        return {c for c, _ in self.columns}

    @property
    def month_sql(self) -> str:
        """SQL for a row's partition month as ``YYYY-MM``."""
        return f"strftime(\"{self.month_column or 'date'}\", '%Y-%m')"

    @property
    def key_list(self) -> str:
        return ", ".join(f'"{c}"' for c in self.key)


def check_ticker(ticker: str) -> str:
    """``ticker`` if it may name a partition (letters, digits, ``. _ ^ = -``), else raise."""
    if not isinstance(ticker, str) or not _TICKER.match(ticker) or ".." in ticker:
        raise PartitionError(f"ticker {ticker!r} cannot name a partition folder")
    return ticker


def ticker_folder(ticker: str) -> str:
    """``ticker=<T>`` with ``T`` percent-encoded as Hive does (``GC=F`` -> ``GC%3DF``);
    DuckDB decodes it back when it reads the layout."""
    return f"ticker={quote(check_ticker(ticker), safe='._-')}"


def month_label(month: date | pd.Timestamp | str) -> str:
    """``YYYY-MM`` of a month."""
    return pd.Timestamp(month).strftime("%Y-%m")


class PartitionStore:
    """The Parquet files of the partitioned tables under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # -- layout -------------------------------------------------------------------------
    def table_dir(self, table: PartitionedTable) -> Path:
        return self.root / table.folder

    def partition_dir(self, table: PartitionedTable, ticker: str, month: date | str) -> Path:
        return self.table_dir(table) / ticker_folder(ticker) / f"month={month_label(month)}"

    def part_path(self, table: PartitionedTable, ticker: str, month: date | str) -> Path:
        return self.partition_dir(table, ticker, month) / PART_FILE

    def glob(self, table: PartitionedTable) -> str:
        """The glob of ``table``'s part files, relative to ``root``'s parent."""
        return f"{self.root.name}/{table.folder.as_posix()}/*/*/{PART_FILE}"

    def has_parts(self, table: PartitionedTable) -> bool:
        return next(self.table_dir(table).glob(f"*/*/{PART_FILE}"), None) is not None

    def partitions(self, table: PartitionedTable, ticker: str | None = None) -> list[tuple[str, str]]:
        """(ticker, YYYY-MM) of every stored partition (of ``ticker`` only, when given)."""
        found = []
        tickers = ticker_folder(ticker) if ticker is not None else "ticker=*"
        for path in self.table_dir(table).glob(f"{tickers}/month=*/{PART_FILE}"):
            name = unquote(path.parent.parent.name[len("ticker=") :])
            found.append((name, path.parent.name[len("month=") :]))
        return sorted(found)

    @property
    def is_current(self) -> bool:
        """Whether this warehouse already uses the layout (new or migrated)."""
        marker = self.root / LAYOUT_FILE
        return marker.exists() and marker.read_text().strip() == LAYOUT_VERSION

    def mark_current(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.root / LAYOUT_FILE, LAYOUT_VERSION + "\n")

    # -- writes -------------------------------------------------------------------------
    def replace_months(
        self,
        table: PartitionedTable,
        ticker: str,
        months: Sequence[date | str],
        frame: pd.DataFrame,
        *,
        shrink_reason: ShrinkReason = None,
    ) -> int:
        """Replace each of ``months`` of ``ticker`` with ``frame``'s rows of that month (none
        leaves the month empty). Refused before anything is written: rows outside ``months``
        (PartitionError), and a month whose stored partition holds more rows than ``frame``
        brings unless ``shrink_reason`` gives a reason for it (PartitionShrinkError, naming
        the table, ticker, months and row counts)."""
        labels = sorted({month_label(m) for m in months})
        with self._staged(table, ticker, frame) as con:
            found = [
                r[0] for r in con.execute(f"SELECT DISTINCT {table.month_sql} FROM {table.name}").fetchall()
            ]
            outside = sorted(set(found) - set(labels))
            if outside:
                raise PartitionError(
                    f"rows of {table.name} for {ticker} in {', '.join(outside)}, outside the months replaced"
                )
            incoming = dict(
                con.execute(f"SELECT {table.month_sql}, count(*) FROM {table.name} GROUP BY 1").fetchall()
            )
            self._check_shrink(con, table, ticker, labels, incoming, shrink_reason)
            total = con.execute(f"SELECT count(*) FROM {table.name}").fetchone()[0]
            for label in labels:
                self._copy_out(con, table, ticker, label, f"WHERE {table.month_sql} = '{label}'")
        return int(total)

    def stored_rows(self, table: PartitionedTable, ticker: str, month: date | str) -> int:
        """Rows stored in partition ``ticker``/``month`` of ``table`` (0 when it has no file)."""
        path = self.part_path(table, ticker, month)
        if not path.is_file():
            return 0
        con = _scratch().cursor()
        try:
            found = con.execute(f"SELECT count(*) FROM read_parquet('{_quote(path)}')").fetchone()
        finally:
            con.close()
        return int(found[0]) if found else 0

    def _check_shrink(
        self,
        con: duckdb.DuckDBPyConnection,
        table: PartitionedTable,
        ticker: str,
        labels: Sequence[str],
        incoming: dict[str, int],
        reason: ShrinkReason,
    ) -> None:
        """PartitionShrinkError when a month of ``labels`` would hold fewer rows than stored and
        ``reason`` gives none for it."""
        refused = []
        for label in labels:
            path = self.part_path(table, ticker, label)
            if not path.is_file():
                continue
            stored = con.execute(f"SELECT count(*) FROM read_parquet('{_quote(path)}')").fetchone()[0]
            new = int(incoming.get(label, 0))
            if new >= stored:
                continue
            why = reason(label, int(stored), new) if callable(reason) else reason
            if not why:
                refused.append((label, int(stored), new))
        if refused:
            folder = (self.root.name / table.folder / ticker_folder(ticker)).as_posix()
            raise PartitionShrinkError(
                shrink_message(table.name, ticker, refused, folder),
                [(table.name, ticker, label, stored, new) for label, stored, new in refused],
            )

    def upsert(self, table: PartitionedTable, ticker: str, frame: pd.DataFrame) -> int:
        """Insert ``frame`` into its months' partitions, replacing rows with the same key
        (``INSERT OR REPLACE``); concurrent upserts of one partition are serialised."""
        with self._staged(table, ticker, frame) as con:
            labels = [
                r[0] for r in con.execute(f"SELECT DISTINCT {table.month_sql} FROM {table.name}").fetchall()
            ]
            total = con.execute(f"SELECT count(*) FROM {table.name}").fetchone()[0]
            for label in sorted(labels):
                with self._locked(table, ticker, label):
                    con.execute(f"DELETE FROM {table.name}")
                    path = self.part_path(table, ticker, label)
                    if path.exists():
                        con.execute(
                            f"INSERT INTO {table.name} BY NAME "
                            f"SELECT * FROM read_parquet('{_quote(path)}', hive_partitioning = false)"
                        )
                    con.execute(
                        f"INSERT OR REPLACE INTO {table.name} BY NAME "
                        f"SELECT * FROM incoming_rows WHERE {table.month_sql} = '{label}'"
                    )
                    self._copy_out(con, table, ticker, label, "")
        return int(total)

    @contextmanager
    def _staged(self, table: PartitionedTable, ticker: str, frame: pd.DataFrame) -> Iterator:
        """An in-memory DuckDB holding ``frame`` in a copy of ``table`` (as an INSERT BY NAME
        would store it: missing columns NULL, types cast, NOT NULL and the primary key
        enforced) and in ``incoming_rows``."""
        check_ticker(ticker)
        incoming = frame.assign(ticker=ticker) if "ticker" in table.column_names else frame
        con = _scratch().cursor()
        try:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {table.name.split('.')[0]}")
            con.execute(f"DROP TABLE IF EXISTS {table.name}")
            con.execute(table.ddl)
            if len(incoming):
                con.register("incoming", incoming)
                try:
                    con.execute(f"INSERT INTO {table.name} BY NAME SELECT * FROM incoming")
                except (
                    duckdb.ConstraintException,
                    duckdb.ConversionException,
                    duckdb.BinderException,
                ) as exc:
                    raise PartitionError(f"{table.name} for {ticker}: {str(exc).splitlines()[0]}") from None
                finally:
                    con.unregister("incoming")
            con.execute(f"CREATE OR REPLACE TEMP TABLE incoming_rows AS SELECT * FROM {table.name}")
            yield con
        finally:
            con.close()

    def _copy_out(
        self, con: duckdb.DuckDBPyConnection, table: PartitionedTable, ticker: str, month: str, where: str
    ) -> None:
        """Write ``table``'s rows (``where``) as partition ``ticker``/``month``: a temporary
        file in the partition's folder, then renamed over the old part file."""
        folder = self.partition_dir(table, ticker, month)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{PART_FILE}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            con.execute(
                f"COPY (SELECT * FROM {table.name} {where} ORDER BY {table.key_list}) "
                f"TO '{_quote(tmp)}' (FORMAT parquet)"
            )
            os.replace(tmp, folder / PART_FILE)
        finally:
            tmp.unlink(missing_ok=True)

    @contextmanager
    def _locked(self, table: PartitionedTable, ticker: str, month: str) -> Iterator[None]:
        """An exclusive lock on the partition's folder (no lock file is left behind)."""
        folder = self.partition_dir(table, ticker, month)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # -- reads --------------------------------------------------------------------------
    def read(
        self,
        table: PartitionedTable,
        ticker: str,
        where: str = "",
        params: Sequence[object] = (),
        columns: Sequence[str] | None = None,
        order: str = "date",
    ) -> pd.DataFrame:
        """Rows of ``ticker`` (``where``: an SQL condition with ``?`` parameters), straight
        from its part files: no DuckDB file is opened, so writers never wait for this."""
        cols = "*" if not columns else ", ".join(f'"{c}"' for c in columns)
        folder = self.table_dir(table) / ticker_folder(ticker)
        if not any(folder.glob(f"*/{PART_FILE}")):
            empty = pd.DataFrame({c: pd.Series(dtype=object) for c, _ in table.columns})
            return empty[list(columns)] if columns else empty
        con = _scratch().cursor()
        try:
            source = self.select_sql(table, f"{folder}/*/{PART_FILE}")
            sql = f"SELECT {cols} FROM ({source}) AS t {('WHERE ' + where) if where else ''}"
            if order:
                sql += f" ORDER BY {order}"
            return con.execute(sql, list(params)).df()
        finally:
            con.close()

    @staticmethod
    def select_sql(table: PartitionedTable, pattern: str) -> str:
        """SELECT of ``table``'s columns, in DDL order and types, from part files matching
        ``pattern`` (the hive ``month`` key is the partition month as text: the files'
        own columns are what we read)."""
        select = ", ".join(
            "CAST(strptime(month, '%Y-%m') AS DATE) AS month"
            if c == "month"
            else f'CAST("{c}" AS {t}) AS "{c}"'
            for c, t in table.columns
        )
        return (
            f"SELECT {select} FROM read_parquet('{_quote(pattern)}', hive_partitioning = true, "
            "hive_types = {'ticker': VARCHAR, 'month': VARCHAR})"
        )

    def view_sql(self, table: PartitionedTable) -> str:
        """The body of ``table``'s view: its part files, or a typed empty SELECT while it has none."""
        if self.has_parts(table):
            return self.select_sql(table, self.glob(table))
        return "SELECT " + ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in table.columns) + " LIMIT 0"

    def leftover_temp_files(self) -> list[Path]:
        """Temporary files of interrupted writes (none after clean runs)."""
        return sorted(self.root.glob(f"**/.{PART_FILE}.*.tmp"))


_SCRATCH = threading.local()


def _scratch() -> duckdb.DuckDBPyConnection:
    """This thread's in-memory DuckDB for staging writes (opening one costs ~10 ms; a fork
    gets its own, never the parent's)."""
    con = getattr(_SCRATCH, "con", None)
    if con is None or getattr(_SCRATCH, "pid", None) != os.getpid():
        con = _SCRATCH.con = duckdb.connect()
        con.execute("SET enable_external_file_cache = false")  # files are replaced under the same name
        _SCRATCH.pid = os.getpid()
    return con


def _quote(path: Path | str) -> str:
    return str(path).replace("'", "''")
