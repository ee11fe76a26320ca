"""The DuckDB file: short-lived connections, idempotent partition writes, lineage."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path

import duckdb
import pandas as pd
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

from stocker_core.errors import EmptyDataError, StockerError
from stocker_core.warehouse.schema import MIGRATIONS, SCHEMAS, TABLES

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
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    digest = hashlib.sha256(hashed.tobytes())
    digest.update(",".join(map(str, frame.columns)).encode())
    return digest.hexdigest()[:16]


class Warehouse:
    """One DuckDB file. Connections are opened per operation and closed at once,
    so several processes can take turns as the single writer. Opening waits up to
    ``lock_wait`` seconds (default ``LOCK_WAIT_SECONDS``) for another process's lock,
    then raises WarehouseBusyError."""

    def __init__(self, path: Path | str, lock_wait: float | None = None) -> None:
        self.path = Path(path)
        self.lock_wait = LOCK_WAIT_SECONDS if lock_wait is None else lock_wait
        self._ready = False
        self._session: duckdb.DuckDBPyConnection | None = None

    def _open(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Open the file, retrying briefly while another process holds its lock; after
        ``lock_wait`` seconds raise WarehouseBusyError (never DuckDB's IOException)."""
        retrying = Retrying(
            retry=retry_if_exception(_is_lock_error),
            wait=wait_random_exponential(multiplier=0.05, max=1.0),
            stop=stop_after_delay(self.lock_wait),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return duckdb.connect(str(self.path), read_only=read_only)
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

    @contextmanager
    def session(self) -> Iterator[Warehouse]:
        """Hold one connection for a block of many small reads/writes: ``connect()`` inside
        it hands out cheap cursors (~4 ms per lookup instead of ~40 ms to open and close the
        file). Other processes wait for the whole block, so never hold a session around slow
        work (model calls, solving, rendering): compute first, then write in short blocks."""
        if self._session is not None:
            yield self
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = self._open(False)
        try:
            if not self._ready:
                self._create_schema(con)
            self._session = con
            yield self
        finally:
            self._session = None
            con.close()

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
        con = self._open(read_only)
        try:
            if not read_only and not self._ready:
                self._create_schema(con)
            yield con
        finally:
            con.close()

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
        for schema in SCHEMAS:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        for ddl in TABLES.values():
            con.execute(ddl)
        for migration in MIGRATIONS:
            con.execute(migration)
        self._ready = True

    def ensure_schema(self) -> None:
        """Create every schema and table if missing."""
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
    ) -> int:
        """Replace ``ticker``'s rows of ``table`` in the given months with ``frame``.

        One transaction: delete those months' rows, insert by column name. Rows belong
        to a month by their ``date`` or, for per-episode tables, by ``month_column``.
        An empty frame raises EmptyDataError (stored rows are kept) unless ``allow_empty``.
        """
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        if len(frame) == 0 and not allow_empty:
            raise EmptyDataError(f"refusing to replace {table} for {ticker} with zero rows; stored rows kept")
        from stocker_core.market.calendar import month_end

        rows = frame.assign(ticker=ticker)
        with self.transaction() as con:
            for month in months:
                if month_column == "month":
                    con.execute(f"DELETE FROM {table} WHERE ticker = ? AND month = ?", [ticker, month])
                else:
                    con.execute(
                        f"DELETE FROM {table} WHERE ticker = ? AND date >= ? AND date < ?",
                        [ticker, month, month_end(month)],
                    )
            if len(rows):
                con.register("incoming", rows)
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
                con.unregister("incoming")
        return len(rows)

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
        return frame

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
        with self.connect() as con:
            con.executemany("INSERT INTO meta.lineage VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values)

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
