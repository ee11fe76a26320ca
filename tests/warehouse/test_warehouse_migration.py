"""A warehouse from before the Parquet layout is migrated on first write, keeping every row."""

from __future__ import annotations

import hashlib
from datetime import date, datetime

import duckdb
import pandas as pd
import pytest
from warehouse_testing import month_bars, months

from stocker_core.warehouse import Warehouse
from stocker_core.warehouse.migrate import MigrationError
from stocker_core.warehouse.schema import PARTITIONED, SCHEMAS, TABLES

# The single-file layout as it shipped before: every table a DuckDB table, and market.prices
# and market.charts without the columns added later (source, input_hash).
LEGACY_PRICES = """CREATE TABLE market.prices (ticker VARCHAR NOT NULL, date DATE NOT NULL,
    open DOUBLE, high DOUBLE, low DOUBLE, close DOUBLE NOT NULL, adj_close DOUBLE, volume DOUBLE,
    PRIMARY KEY (ticker, date))"""


def _legacy_warehouse(path) -> None:
    con = duckdb.connect(str(path))
    for schema in SCHEMAS:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    for name, ddl in TABLES.items():
        con.execute(LEGACY_PRICES if name == "market.prices" else ddl)
    bars = pd.concat(
        [
            month_bars(t, m).drop(columns="source").assign(ticker=t)
            for t in ("AAPL", "MSFT")
            for m in months("2023-01-01", 14)
        ]
    )
    con.register("bars", bars)
    con.execute("INSERT INTO market.prices BY NAME SELECT * FROM bars")
    con.execute(
        "INSERT INTO market.indicators (ticker, date, rsi14, sma20) "
        "SELECT ticker, date, close / 3, close FROM market.prices WHERE ticker = 'AAPL'"
    )
    con.execute(
        "INSERT INTO market.charts SELECT ticker, date, '/c/' || ticker || '/' || date || '.png', "
        "md5(ticker || date), 768, 768, date - 30, date, md5(date::VARCHAR) "
        "FROM market.prices WHERE ticker = 'MSFT'"
    )
    con.execute(
        "INSERT INTO env.episodes (ticker, month, key, start_date, trading_days, ideal_total) "
        "SELECT ticker, date_trunc('month', date)::DATE, ticker || '|' || date_trunc('month', date)::DATE, "
        "min(date), count(*), sum(close) FROM market.prices GROUP BY ALL"
    )
    con.execute(
        "INSERT INTO env.ideal_trajectories (ticker, month, step, date, close, ideal_long) "
        "SELECT ticker, date_trunc('month', date)::DATE, row_number() OVER (PARTITION BY ticker, "
        "date_trunc('month', date) ORDER BY date) - 1, date, close, close > 100 FROM market.prices"
    )
    con.execute(
        "INSERT INTO council.votes SELECT r.role, 'rule', 'rules-v1', 'p1', ticker, date, close / 1000, 0.5, "
        "'rationale ''quoted''', false, TIMESTAMP '2024-01-01 10:00:00' FROM market.prices, "
        "(SELECT unnest(['technical', 'news']) AS role) r WHERE ticker = 'AAPL'"
    )
    con.execute(
        "INSERT INTO meta.lineage VALUES ('prices', 'AAPL|2023-01-01', 'r1', '1', 'v', '{}', 20, ?)",
        [datetime(2024, 1, 1)],
    )
    con.close()


def _snapshot(path) -> dict[str, tuple[int, str]]:
    """Rows and a content hash of every partitioned table, read the way a user would."""
    con = duckdb.connect(str(path), read_only=True)
    con.execute(f"SET file_search_path = '{path.parent}'")
    found = {}
    for name, table in PARTITIONED.items():
        cols = [c for c, _ in table.columns if not (name == "market.prices" and c == "source")]
        frame = con.execute(f"SELECT {', '.join(cols)} FROM {name} ORDER BY ALL").df()
        digest = hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
        found[name] = (len(frame), digest.hexdigest())
    con.close()
    return found


def test_migration_keeps_every_row(tmp_path):
    path = tmp_path / "stocker.duckdb"
    _legacy_warehouse(path)
    before = _snapshot(path)
    assert before["market.prices"][0] == 2 * 304 and before["council.votes"][0] == 2 * 304

    warehouse = Warehouse(path)
    warehouse.ensure_schema()  # the first write connection migrates

    assert _snapshot(path) == before  # counts and content hashes equal, table by table
    moved = {m.table: m for m in warehouse.migrations}
    assert set(moved) == set(PARTITIONED)
    assert all(m.rows_before == m.rows_after and m.hash_before == m.hash_after for m in moved.values())
    assert moved["market.prices"].partitions == 2 * 14
    # the tables are views over part files now; small tables stay where they were
    kinds = dict(
        warehouse.query(
            "SELECT table_schema || '.' || table_name, table_type FROM information_schema.tables"
        ).values
    )
    assert all(kinds[name] == "VIEW" for name in PARTITIONED)
    assert kinds["meta.lineage"] == "BASE TABLE"
    assert warehouse.query("SELECT count(*) AS n FROM meta.lineage")["n"].iloc[0] == 1
    assert warehouse.read_prices("AAPL", date(2023, 3, 1), date(2023, 4, 1))["close"].notna().all()
    assert warehouse.query("SELECT count(*) AS n FROM market.prices WHERE source IS NULL")["n"].iloc[0] == 608
    # a second open finds nothing to move, and writing works on the migrated warehouse
    again = Warehouse(path)
    again.ensure_schema()
    assert again.migrations == []
    again.replace_months("market.prices", "AAPL", [date(2023, 1, 1)], month_bars("AAPL", date(2023, 1, 1), 7))
    assert set(again.read_table("market.prices", "AAPL", date(2023, 1, 1), date(2023, 2, 1))["source"]) == {
        "test-7"
    }


def test_a_failed_migration_keeps_the_table(tmp_path, monkeypatch):
    path = tmp_path / "stocker.duckdb"
    _legacy_warehouse(path)
    before = _snapshot(path)

    from stocker_core.warehouse import migrate

    real = migrate.content_fingerprint
    calls = []

    def corrupt_after(con, table, source):
        calls.append(source)
        rows, digest = real(con, table, source)
        return (rows - 1, digest) if source.startswith("(") else (rows, digest)

    monkeypatch.setattr(migrate, "content_fingerprint", corrupt_after)
    with pytest.raises(MigrationError, match="the table is kept"):
        Warehouse(path).ensure_schema()
    assert _snapshot(path) == before
    monkeypatch.undo()
    Warehouse(path).ensure_schema()  # the next attempt starts over and succeeds
    assert _snapshot(path) == before


def test_migrate_command_prints_the_figures(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from stocker_core.cli import build_app

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    path = tmp_path / "stocker.duckdb"
    _legacy_warehouse(path)
    app = build_app()
    status = CliRunner().invoke(app, ["warehouse", "status", "--json"])
    assert status.exit_code == 0, status.output
    assert '"layout": "single-file"' in status.output
    result = CliRunner().invoke(app, ["warehouse", "migrate"])
    assert result.exit_code == 0, result.output
    assert "market.prices" in result.output and "608 rows ->       608 rows in 28 partitions" in result.output
    status = CliRunner().invoke(app, ["warehouse", "status"])
    assert "layout: parquet" in status.output and "market.prices" in status.output
    again = CliRunner().invoke(app, ["warehouse", "migrate"])
    assert "nothing to migrate" in again.output
