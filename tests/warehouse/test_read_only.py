"""``stocker sql`` and the web page's reads cannot write: every write path is refused and a
stored month's file stays byte for byte the same (issue 22, defect 1)."""

from __future__ import annotations

import hashlib
from datetime import date

import duckdb
import pytest
from warehouse_testing import month_bars

from stocker_core.warehouse import Warehouse
from stocker_core.warehouse.read_only import (
    ReadOnlyQueryError,
    check_read_only,
    locked_connection,
    read_only_query,
)
from stocker_core.web.reader import WarehouseReader

JAN = date(2012, 1, 1)
PART = "stocker.parts/market/prices/ticker=GOOGL/month=2012-01/part.parquet"


@pytest.fixture
def warehouse(tmp_path) -> Warehouse:
    warehouse = Warehouse(tmp_path / "stocker.duckdb")
    warehouse.replace_months("market.prices", "GOOGL", [JAN], month_bars("GOOGL", JAN))
    return warehouse


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _attacks(home) -> list[str]:
    part = home / PART
    return [
        # the attack of the issue: an empty COPY over a stored month
        f"COPY (SELECT * FROM market.prices WHERE false) TO '{part}' (FORMAT parquet)",
        f"COPY (SELECT * REPLACE (close * 100 AS close) FROM market.prices) TO '{part}' (FORMAT parquet)",
        f"EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '{part}' (FORMAT parquet)",
        f"EXPORT DATABASE '{home / 'stocker.parts' / 'dump'}'",
        f"ATTACH '{home / 'other.duckdb'}' AS other",
        "CREATE TABLE main.t AS SELECT 1 AS x",
        "CREATE OR REPLACE VIEW market.prices AS SELECT 1 AS x",
        "INSERT INTO meta.lineage SELECT * FROM meta.lineage",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "RESET enable_external_access",
        "CALL checkpoint()",
        "PRAGMA enable_profiling",
        "SELECT 1; COPY (SELECT 1 AS x) TO 'x.csv'",
    ]


def test_every_write_attempt_is_refused_and_the_month_is_unchanged(warehouse):
    home = warehouse.path.parent
    before = _digest(home / PART)
    rows = read_only_query(warehouse, "SELECT count(*) AS n, sum(close) AS s FROM market.prices")
    for attack in _attacks(home):
        with pytest.raises(ReadOnlyQueryError, match="only reads the warehouse"):
            read_only_query(warehouse, attack)
    assert _digest(home / PART) == before
    assert not (home / "other.duckdb").exists() and not (home / "stocker.parts" / "dump").exists()
    again = read_only_query(warehouse, "SELECT count(*) AS n, sum(close) AS s FROM market.prices")
    assert again.equals(rows) and int(again["n"].iloc[0]) == len(month_bars("GOOGL", JAN))


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM market.prices",
        "SHOW ALL TABLES",
        "DESCRIBE market.prices",
        "SUMMARIZE market.prices",
        "FROM market.prices LIMIT 2",
        "WITH m AS (SELECT max(close) AS c FROM market.prices) SELECT c FROM m",
    ],
)
def test_reads_of_every_shape_still_run(warehouse, sql):
    check_read_only(sql)
    assert len(read_only_query(warehouse, sql)) >= 1


def test_the_connection_itself_refuses_writes_without_the_statement_check(warehouse):
    """Layers 2 and 3 hold on their own: the read-only catalog, external access off, the
    configuration locked (statements sent straight to the connection)."""
    home = warehouse.path.parent
    with locked_connection(warehouse) as con:
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("CREATE TABLE main.t AS SELECT 1 AS x")
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET enable_external_access = true")
        with pytest.raises(duckdb.Error, match="disabled by configuration"):
            con.execute(f"COPY (SELECT 1 AS x) TO '{home / 'leak.csv'}'")
        with pytest.raises(duckdb.Error):
            con.execute("SELECT * FROM read_csv('/etc/passwd')")
        assert con.execute("SELECT count(*) FROM market.prices").fetchone()[0] > 0
    assert not (home / "leak.csv").exists()


def test_the_web_page_reads_go_through_the_same_locked_path(warehouse):
    home = warehouse.path.parent
    before = _digest(home / PART)
    reader = WarehouseReader(warehouse.path)
    assert reader.row_counts(["market.prices", "eval.backtests"]) == {
        "market.prices": len(month_bars("GOOGL", JAN)),
        "eval.backtests": 0,
    }
    with pytest.raises(ReadOnlyQueryError):
        reader.frame(f"COPY (SELECT * FROM market.prices WHERE false) TO '{home / PART}' (FORMAT parquet)")
    assert _digest(home / PART) == before


def test_a_missing_warehouse_is_an_error_not_a_new_file(tmp_path):
    with pytest.raises(ReadOnlyQueryError, match="no warehouse"):
        read_only_query(Warehouse(tmp_path / "stocker.duckdb"), "SELECT 1")
    assert not (tmp_path / "stocker.duckdb").exists()
