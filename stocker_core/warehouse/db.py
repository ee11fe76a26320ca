"""The warehouse: a DuckDB file (catalog, lineage, small tables) beside a folder of Parquet
partitions (the per ticker-month tables), with idempotent partition writes and lineage."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

from stocker_core.errors import EmptyDataError, StockerError
from stocker_core.warehouse.attached import hosts, quoted
from stocker_core.warehouse.connections import slots
from stocker_core.warehouse.home_paths import (
    HOME_PATH_COLUMNS,
    resolve_columns,
    resolve_path,
    store_columns,
    stored_path,
)
from stocker_core.warehouse.migrate import TableMigration, base_tables, migrate_table
from stocker_core.warehouse.partitioned import PartitionStore, ShrinkReason
from stocker_core.warehouse.schema import MIGRATIONS, PARTITIONED, SCHEMAS, TABLES

LOCK_WAIT_SECONDS = 30.0
"""How long opening the file waits for another process's write lock before giving up.
Writers hold the lock only for one short transaction, so a wait this long means the
other process is stuck or holds a connection open for a long computation."""


class WarehouseBusyError(StockerError, RuntimeError):
    """Another process held the warehouse file's lock for longer than the wait allows."""


def _is_lock_error(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


def frame_version(frame: pd.DataFrame) -> str:
    """A content hash of a frame (order-insensitive in rows is not needed: frames are sorted)."""
    return rows_version(row_hashes(frame), frame.columns)


def row_hashes(frame: pd.DataFrame) -> np.ndarray:
    """One 64-bit hash per row of ``frame`` (each from that row's values alone), so the
    version of any run of rows is ``rows_version`` of a slice: hash a table once, version
    each of its months without hashing again."""
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def rows_version(hashes: np.ndarray, columns: Sequence[object]) -> str:
    """``frame_version`` of the rows whose ``row_hashes`` are ``hashes`` (in order)."""
    digest = hashlib.sha256(np.ascontiguousarray(hashes).tobytes())
    digest.update(",".join(map(str, columns)).encode())
    return digest.hexdigest()[:16]


class Warehouse:
    """A DuckDB file ``<name>.duckdb`` and its Parquet partitions in ``<name>.parts/``.

    The per ticker-month tables (``schema.PARTITIONED``: prices, indicators, charts,
    episodes, ideal trajectories, votes) are written as one Parquet file per partition, so
    any number of processes write them at once; in the DuckDB file they are views of the
    same names. Everything else lives in the file, written in short transactions:
    connections are opened per operation and closed at once, so several processes take
    turns as its single writer (each a cursor of a host instance the file is attached to for
    the while: ``attached``, ~1.7 CPU-ms instead of ~16 for a new instance). Opening waits up
    to ``lock_wait`` seconds (default ``LOCK_WAIT_SECONDS``) for another process's lock, then
    raises WarehouseBusyError.
    A warehouse from before the Parquet layout is migrated, row for row, on first write."""

    def __init__(self, path: Path | str, lock_wait: float | None = None) -> None:
        self.path = Path(path)
        self.lock_wait = LOCK_WAIT_SECONDS if lock_wait is None else lock_wait
        self._ready = False
        self._session: duckdb.DuckDBPyConnection | None = None
        self._live_views: set[str] = set()
        self.migrations: list[TableMigration] = []
        """What the first write connection migrated (empty for a warehouse already current)."""

    @property
    def home(self) -> Path:
        """The folder the warehouse lives in (``STOCKER_HOME``): the paths it stores are
        relative to it (``home_paths``)."""
        return self.path.parent

    @property
    def parts(self) -> PartitionStore:
        """The Parquet partitions beside the file (``stocker.duckdb`` -> ``stocker.parts/``)."""
        return PartitionStore(self.path.with_suffix(".parts"))

    @contextmanager
    def _opened(self, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection of the file, closed after the block: retried briefly while another
        process holds its lock (WarehouseBusyError after ``lock_wait`` seconds, never DuckDB's
        IOException), and opened in this process's one configuration of its mode
        (``connections``): read-only connections are cursors of one hardened, locked instance
        with the file attached, write connections of another, never both at once
        (``attached``: no new DuckDB instance per connection)."""
        mode = "read" if read_only else "write"
        try:
            with slots().hold(self.path, mode, self.lock_wait):
                con = self._connect(read_only)
                try:
                    yield con
                finally:
                    with slots().configure_lock:
                        hosts().release(self.path, read_only, con)
        except TimeoutError as exc:
            raise WarehouseBusyError(
                f"the warehouse {self.path} stayed busy in this process ({exc}); retry"
            ) from None

    def _connect(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        retrying = Retrying(
            retry=retry_if_exception(_is_lock_error),
            wait=wait_random_exponential(multiplier=0.01, max=0.1),
            stop=stop_after_delay(self.lock_wait),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt, slots().configure_lock:
                    return hosts().open_cursor(self.path, read_only, self._harden)
        except duckdb.IOException as exc:
            if not _is_lock_error(exc):
                raise
            holder = re.search(r"Conflicting lock is held in (.+?) \(PID (\d+)\)", str(exc))
            by = f" ({holder.group(1)}, PID {holder.group(2)})" if holder else ""
            raise WarehouseBusyError(
                f"the warehouse {self.path} is locked by another process{by}; waited "
                f"{self.lock_wait:.0f} s. Let that command finish (or stop it), then retry."
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover - Retrying either returns or raises

    @property
    def read_settings(self) -> dict[str, object]:
        """The settings of every read-only connection: the views' relative Parquet paths resolve
        against the warehouse's folder; only the partitions folder may be read (its absolute path,
        and the views' relative spelling of it, which DuckDB checks against the current folder:
        ``read_only.check_console_folder`` guards that one); no other file, URL or extension;
        locked."""
        folder = str(self.path.parent.resolve())
        parts = self.parts.root.name
        return {
            "file_search_path": folder,
            "allowed_directories": [f"{folder}/{parts}/", f"{parts}/"],
            "enable_external_access": False,
            "lock_configuration": True,
        }

    def _harden(self, host: duckdb.DuckDBPyConnection) -> None:
        """Set ``read_settings`` on the new host instance of read connections, before the file is
        attached: the file itself (and its WAL) is the one path outside the partitions folder it
        may open."""
        wanted = self.read_settings
        folders = ", ".join(quoted(d) for d in wanted["allowed_directories"])  # type: ignore[union-attr]
        resolved = self.path.resolve()
        files = ", ".join(quoted(f) for f in (resolved, f"{resolved}.wal"))
        host.execute(f"SET allowed_directories = [{folders}]")
        host.execute(f"SET allowed_paths = [{files}]")
        host.execute("SET enable_external_access = false")
        host.execute("SET lock_configuration = true")

    @contextmanager
    def read_only_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection of the existing file (``read_settings``), closed after the block."""
        with self._opened(True) as con:
            yield con

    @contextmanager
    def session(self) -> Iterator[Warehouse]:
        """Hold one connection for a block of many small reads/writes: ``connect()`` inside
        it hands out cursors of one attachment (no attach and detach per lookup). Other
        processes wait for the whole block, so never hold a session around slow work (model
        calls, solving, rendering): compute first, then write in short blocks."""
        if self._session is not None:
            yield self
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._opened(False) as con:
            try:
                if not self._ready:
                    self._create_schema(con)
                self._session = con
                yield self
            finally:
                self._session = None

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection (retried while another process holds the write lock)."""
        if self._session is not None:
            cursor = self._session.cursor()
            try:
                yield cursor
            finally:
                cursor.close()
            return
        if read_only and not self.path.exists():
            read_only = False
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._opened(read_only) as con:
            if not read_only and not self._ready:
                self._create_schema(con)
            yield con

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection inside one transaction: committed at the end, rolled back on error."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _create_schema(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create what is missing; move a pre-Parquet warehouse's tables to part files."""
        for schema in SCHEMAS:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        for name, ddl in TABLES.items():
            if name not in PARTITIONED:
                con.execute(ddl)
        tables = base_tables(con)  # a partitioned table still a base table: written before the part files
        for name, statement in MIGRATIONS:
            if name not in PARTITIONED or name in tables:
                con.execute(statement)
        store = self.parts
        for table in PARTITIONED.values():
            if table.name in tables:
                self.migrations.append(migrate_table(con, store, table))
        if not store.is_current:
            store.mark_current()
        views = {
            f"{schema}.{view}": sql
            for schema, view, sql in con.execute(
                "SELECT schema_name, view_name, sql FROM duckdb_views()"
            ).fetchall()
        }
        for table in PARTITIONED.values():
            self._refresh_view(con, table.name, views.get(table.name, ""))
        self._relative_paths(con, tables)
        self._ready = True

    def _relative_paths(self, con: duckdb.DuckDBPyConnection, tables: set[str]) -> None:
        """Rewrite the absolute paths into this home (or into the home it was copied or moved
        from, when the file is here: ``resolve_path``) of the DuckDB tables'
        ``HOME_PATH_COLUMNS`` as home-relative ones (rows written before paths were stored
        relative). Partitioned tables keep theirs until rewritten; their reads resolve them."""
        for name, columns in HOME_PATH_COLUMNS.items():
            if name in PARTITIONED or name not in tables:
                continue
            for column in columns:
                absolute = f'SELECT DISTINCT "{column}" FROM {name} WHERE "{column}" LIKE \'/%\''
                found = con.execute(absolute).fetchall()
                for (value,) in found:
                    target = resolve_path(value, self.home)
                    relative = stored_path(target, self.home) if target is not None else value
                    if relative != value and not relative.startswith("/"):
                        con.execute(
                            f'UPDATE {name} SET "{column}" = ? WHERE "{column}" = ?', [relative, value]
                        )

    def _refresh_view(self, con: duckdb.DuckDBPyConnection, name: str, sql: str | None = None) -> None:
        """(Re)define partitioned table ``name``'s view: its files, or empty while it has none.
        ``sql``: the view's definition when already read ("" when there is none)."""
        table = PARTITIONED[name]
        if sql is None:
            schema, view = name.split(".")
            found = con.execute(
                "SELECT sql FROM duckdb_views() WHERE schema_name = ? AND view_name = ?", [schema, view]
            ).fetchone()
            sql = found[0] if found is not None else ""
        live = self.parts.has_parts(table)
        if not sql or (self.parts.glob(table) in sql) != live:
            con.execute(f"CREATE OR REPLACE VIEW {name} AS {self.parts.view_sql(table)}")
        if live:
            self._live_views.add(name)

    def _after_partition_write(self, name: str) -> None:
        """Point the view at the files once its table has some (one catalog write per table)."""
        if name not in self._live_views:
            with self.connect() as con:
                self._refresh_view(con, name)

    def ensure_schema(self) -> None:
        """Create every schema, table and view if missing (migrating an older warehouse)."""
        if self._ready or self._session is not None:
            return
        with self.connect():
            pass

    def replace_months(
        self,
        table: str,
        ticker: str,
        months: Sequence[date],
        frame: pd.DataFrame,
        allow_empty: bool = False,
        month_column: str | None = None,
        *,
        shrink_reason: ShrinkReason = None,
    ) -> int:
        """Replace ``ticker``'s rows of ``table`` in the given months with ``frame``.

        One transaction: delete those months' rows, insert by column name. Rows belong
        to a month by their ``date`` or, for per-episode tables, by ``month_column``.
        An empty frame raises EmptyDataError (stored rows are kept) unless ``allow_empty``.
        A partitioned table's month is never replaced by fewer rows than it holds unless
        ``shrink_reason`` gives the reason (a text, or ``reason(YYYY-MM, stored, new)`` per
        month): otherwise PartitionShrinkError names the partitions and row counts, and
        nothing is written (``PartitionStore.replace_months``). Paths of the home in the
        frame (``HOME_PATH_COLUMNS``) are stored relative to it.
        """
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        if len(frame) == 0 and not allow_empty:
            raise EmptyDataError(f"refusing to replace {table} for {ticker} with zero rows; stored rows kept")
        frame = store_columns(table, frame, self.home)
        if table in PARTITIONED:
            self.ensure_schema()
            written = self.parts.replace_months(
                PARTITIONED[table], ticker, months, frame, shrink_reason=shrink_reason
            )
            self._after_partition_write(table)
            return written
        rows = frame.assign(ticker=ticker)
        with self.transaction() as con:
            for month in months:
                if month_column == "month":
                    con.execute(f"DELETE FROM {table} WHERE ticker = ? AND month = ?", [ticker, month])
                else:
                    con.execute(
                        f"DELETE FROM {table} WHERE ticker = ? AND date >= ? "
                        "AND date < date_trunc('month', CAST(? AS DATE)) + INTERVAL 1 MONTH",
                        [ticker, month, month],
                    )
            if len(rows):
                con.register("incoming", rows)
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
                con.unregister("incoming")
        return len(rows)

    def stored_rows(self, table: str, ticker: str, month: date | str) -> int:
        """Rows stored in partition ``ticker``/``month`` of partitioned ``table`` (0 when none)."""
        return self.parts.stored_rows(PARTITIONED[table], ticker, month)

    def replace_partitions(
        self, table: str, ticker: str, frame: pd.DataFrame, *, shrink_reason: ShrinkReason = None
    ) -> int:
        """Replace the ticker-months of partitioned ``table`` that ``frame``'s rows fall in
        (never with fewer rows without ``shrink_reason``: see ``replace_months``)."""
        column = frame[PARTITIONED[table].month_column or "date"]
        months = sorted({pd.Timestamp(d).date().replace(day=1) for d in column})
        return self.replace_months(table, ticker, months, frame, shrink_reason=shrink_reason)

    def read_table(
        self,
        table: str,
        ticker: str,
        start: date | None = None,
        end: date | None = None,
        columns: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """Rows of ``ticker`` with ``start <= date < end`` (either bound optional), by date."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        if table in PARTITIONED:
            where, bounds = [], []
            if start is not None:
                where.append("date >= ?")
                bounds.append(start)
            if end is not None:
                where.append("date < ?")
                bounds.append(end)
            frame = self.read_partitioned(table, ticker, " AND ".join(where), bounds, columns)
            if "date" in frame.columns:
                frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
            return frame
        cols = "*" if not columns else ", ".join(f'"{c}"' for c in columns)
        sql = f"SELECT {cols} FROM {table} WHERE ticker = ?"
        params: list[object] = [ticker]
        if start is not None:
            sql += " AND date >= ?"
            params.append(start)
        if end is not None:
            sql += " AND date < ?"
            params.append(end)
        with self.connect(read_only=True) as con:
            if not self._table_exists(con, table):
                return pd.DataFrame(columns=list(columns or []))
            frame = con.execute(sql + " ORDER BY date", params).df()
        if "date" in frame.columns:
            frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
        return resolve_columns(table, frame, self.home)

    def read_partitioned(
        self,
        table: str,
        ticker: str,
        where: str = "",
        params: Sequence[object] = (),
        columns: Sequence[str] | None = None,
        order: str | None = None,
    ) -> pd.DataFrame:
        """Rows of ``ticker`` in partitioned ``table`` matching SQL condition ``where`` (with ``?``
        parameters), read from the part files without opening the DuckDB file."""
        if not self.parts.is_current:
            self.ensure_schema()  # a new warehouse, or one still to migrate
        spec = PARTITIONED[table]
        if order is None:
            order = ", ".join(f'"{c}"' for c in spec.key if c != "ticker")
        frame = self.parts.read(spec, ticker, where, params, columns, order)
        return resolve_columns(table, frame, self.home)

    def upsert_partitioned(self, table: str, ticker: str, frame: pd.DataFrame) -> int:
        """``INSERT OR REPLACE`` of ``frame``'s rows into partitioned ``table`` (by primary key)."""
        self.ensure_schema()
        frame = store_columns(table, frame, self.home)
        written = self.parts.upsert(PARTITIONED[table], ticker, frame)
        self._after_partition_write(table)
        return written

    def read_prices(self, ticker: str, start: date | None = None, end: date | None = None):
        """Normalized bars of ``ticker`` (without the ticker and source columns)."""
        frame = self.read_table("market.prices", ticker, start, end)
        return frame.drop(columns=["ticker", "source"], errors="ignore")

    def price_months(self, ticker: str, start: date | None, end: date) -> pd.DataFrame:
        """Per calendar month of ``ticker``'s stored bars with ``start <= date < end``:
        ``month`` (first day), ``rows`` and ``sources`` (the distinct sources, NULL as '')."""
        sql = """SELECT date_trunc('month', date)::DATE AS month, count(*) AS rows,
                        list(DISTINCT coalesce(source, '') ORDER BY coalesce(source, '')) AS sources
                 FROM market.prices WHERE ticker = ? AND date < ?"""
        params: list[object] = [ticker, end]
        if start is not None:
            sql += " AND date >= ?"
            params.append(start)
        with self.connect(read_only=True) as con:
            if not self._table_exists(con, "market.prices"):
                return pd.DataFrame(columns=["month", "rows", "sources"])
            return con.execute(sql + " GROUP BY 1 ORDER BY 1", params).df()

    def read_point_in_time(self, table: str, ticker: str, as_of: date) -> pd.DataFrame:
        """Every row of ``ticker`` dated on or before ``as_of`` — never a later one."""
        return self.read_table(table, ticker, None, pd.Timestamp(as_of).date() + pd.Timedelta(days=1))

    @staticmethod
    def _table_exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
        schema, name = table.split(".")
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
            [schema, name],
        ).fetchone()
        return bool(found and found[0])

    def upsert_symbol(self, source: str, info) -> None:
        """Record a symbol's first/last available date (used by the completeness check)."""
        with self.connect() as con:
            con.execute("DELETE FROM market.symbols WHERE ticker = ?", [info.ticker])
            con.execute(
                "INSERT INTO market.symbols VALUES (?, ?, ?, ?, ?, ?)",
                [info.ticker, source, info.first_date, info.last_date, info.close_only, datetime.now()],
            )

    def symbol_row(self, ticker: str) -> dict | None:
        """The market.symbols row of ``ticker`` as a dict, or None."""
        with self.connect(read_only=True) as con:
            if not self._table_exists(con, "market.symbols"):
                return None
            frame = con.execute("SELECT * FROM market.symbols WHERE ticker = ?", [ticker]).df()
        return None if frame.empty else frame.iloc[0].to_dict()

    def record_lineage(self, rows: Sequence[dict[str, object]]) -> None:
        """Append rows to ``meta.lineage`` in one transaction.

        Each row has: asset, partition, run_id, code_version, data_version,
        upstream (dict of upstream asset@partition -> data version), row_count.
        """
        if not rows:
            return
        now = datetime.now()
        values = [
            [
                r["asset"],
                r["partition"],
                r["run_id"],
                r["code_version"],
                r["data_version"],
                json.dumps(r.get("upstream") or {}, sort_keys=True),
                r["row_count"],
                now,
            ]
            for r in rows
        ]
        columns = ["asset", "partition", "run_id", "code_version", "data_version", "upstream", "row_count"]
        frame = pd.DataFrame(values, columns=[*columns, "materialized_at"])
        frame["row_count"] = frame["row_count"].astype("Int64")
        with self.connect() as con:  # one insert of a frame (DuckDB reads ``frame`` by its name)
            con.execute(
                "INSERT INTO meta.lineage SELECT asset, partition, run_id, code_version, data_version, "
                "upstream::JSON, row_count, materialized_at FROM frame"
            ).fetchall()  # executemany costs ~3 ms a row

    def latest_data_versions(self, asset: str, partitions: Sequence[str]) -> dict[str, str]:
        """Latest recorded data version of ``asset`` for each of ``partitions``."""
        if not partitions:
            return {}
        with self.connect(read_only=True) as con:
            if not self._table_exists(con, "meta.lineage"):
                return {}
            frame = con.execute(
                """SELECT partition, arg_max(data_version, materialized_at) AS v
                   FROM meta.lineage WHERE asset = ? AND partition IN (SELECT unnest(?))
                   GROUP BY partition""",
                [asset, list(partitions)],
            ).df()
        return dict(zip(frame["partition"], frame["v"], strict=True))

    def query(self, sql: str, params: Sequence[object] | None = None) -> pd.DataFrame:
        """A read-only parameterized query (for reports, tests and checks)."""
        with self.connect(read_only=True) as con:
            return con.execute(sql, list(params or [])).df()
