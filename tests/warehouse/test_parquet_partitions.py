"""The Parquet hive layout: one file per ticker-month, atomic replacement, views, safe names."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import date

import duckdb
import pandas as pd
import pytest
from warehouse_testing import month_bars, months

from stocker_core.council.cache import VoteCache
from stocker_core.council.models import SpecialistVote
from stocker_core.warehouse import Warehouse
from stocker_core.warehouse.partitioned import PartitionError
from stocker_core.warehouse.sql_cli import run_query

JAN, FEB = date(2024, 1, 1), date(2024, 2, 1)


@pytest.fixture
def warehouse(tmp_path) -> Warehouse:
    return Warehouse(tmp_path / "stocker.duckdb")


def test_each_ticker_month_is_one_parquet_file_in_a_hive_layout(warehouse):
    bars = pd.concat([month_bars("AAPL", JAN), month_bars("AAPL", FEB)])
    assert warehouse.replace_months("market.prices", "AAPL", [JAN, FEB], bars) == len(bars)
    root = warehouse.path.parent / "stocker.parts"
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.parquet"))
    assert files == [
        "market/prices/ticker=AAPL/month=2024-01/part.parquet",
        "market/prices/ticker=AAPL/month=2024-02/part.parquet",
    ]
    # a plain read_parquet of the layout gives the rows back, with the hive keys
    direct = duckdb.sql(
        f"SELECT ticker, month, count(*) AS n FROM read_parquet('{root}/market/prices/*/*/part.parquet', "
        "hive_partitioning = true) GROUP BY ALL ORDER BY month"
    ).fetchall()
    assert direct == [("AAPL", "2024-01", 23), ("AAPL", "2024-02", 21)]


def test_rematerializing_replaces_never_duplicates(warehouse):
    warehouse.replace_months("market.prices", "AAPL", [JAN], month_bars("AAPL", JAN, seed=1))
    second = month_bars("AAPL", JAN, seed=2)
    warehouse.replace_months("market.prices", "AAPL", [JAN], second)
    stored = warehouse.query("SELECT * FROM market.prices ORDER BY date")
    assert len(stored) == len(second) == 23
    assert stored["close"].tolist() == pytest.approx(second["close"].tolist())
    assert set(stored["source"]) == {"test-2"}
    assert warehouse.parts.leftover_temp_files() == []


def test_replacing_with_no_rows_empties_the_month_and_keeps_others(warehouse):
    bars = pd.concat([month_bars("AAPL", JAN), month_bars("AAPL", FEB)])
    warehouse.replace_months("market.prices", "AAPL", [JAN, FEB], bars)
    warehouse.replace_months(
        "market.prices", "AAPL", [JAN], pd.DataFrame(), allow_empty=True, shrink_reason="quarantined"
    )
    assert len(warehouse.read_prices("AAPL", JAN, FEB)) == 0
    assert len(warehouse.read_prices("AAPL", FEB)) == 21
    assert warehouse.query("SELECT count(*) AS n FROM market.prices")["n"].iloc[0] == 21


def test_views_keep_the_table_contract(warehouse):
    """Same names, columns in DDL order and types as the old tables; empty before any write."""
    empty = warehouse.query("SELECT * FROM market.prices")
    assert list(empty.columns) == [
        "ticker",
        "date",
        "open",
        "high",
        "low",
        "close",
        "adj_close",
        "volume",
        "source",
    ]
    assert empty.empty
    warehouse.replace_months("market.prices", "AAPL", [JAN], month_bars("AAPL", JAN))
    types = dict(warehouse.query("DESCRIBE market.prices")[["column_name", "column_type"]].values)
    assert types["date"] == "DATE" and types["close"] == "DOUBLE" and types["ticker"] == "VARCHAR"
    # per-episode tables keep their DATE month column
    row = {"month": JAN, "key": "AAPL|2024-01-01", "start_date": JAN, "trading_days": 23}
    warehouse.replace_partitions("env.episodes", "AAPL", pd.DataFrame([row]))
    episodes = warehouse.query("SELECT ticker, month, key FROM env.episodes")
    assert episodes.to_dict("records") == [
        {"ticker": "AAPL", "month": pd.Timestamp(JAN), "key": "AAPL|2024-01-01"}
    ]
    # stocker sql (external access off) still reads them
    assert len(run_query(warehouse.path, "SELECT * FROM market.prices")) == 23


@pytest.mark.parametrize(
    "ticker", ["../etc", "a/b", "x'; DROP TABLE market.prices; --", "", ".hidden", "A" * 40]
)
def test_unsafe_ticker_names_are_refused_before_writing(warehouse, ticker):
    with pytest.raises(PartitionError, match="cannot name a partition folder"):
        warehouse.replace_months("market.prices", ticker, [JAN], month_bars("X", JAN))
    assert not list((warehouse.path.parent / "stocker.parts").rglob("*.parquet"))


def test_rows_outside_the_months_or_duplicate_keys_write_nothing(warehouse):
    warehouse.replace_months("market.prices", "AAPL", [JAN], month_bars("AAPL", JAN, seed=1))
    bars = pd.concat([month_bars("AAPL", JAN, seed=3), month_bars("AAPL", FEB)])
    with pytest.raises(PartitionError, match="2024-02, outside the months replaced"):
        warehouse.replace_months("market.prices", "AAPL", [JAN], bars)
    doubled = pd.concat([month_bars("AAPL", JAN, seed=3)] * 2)
    with pytest.raises(PartitionError, match="PRIMARY KEY"):
        warehouse.replace_months("market.prices", "AAPL", [JAN], doubled)
    with pytest.raises(PartitionError, match="NOT NULL"):
        warehouse.replace_months(
            "market.prices", "AAPL", [JAN], month_bars("AAPL", JAN).drop(columns="close")
        )
    assert set(warehouse.read_table("market.prices", "AAPL")["source"]) == {"test-1"}  # untouched


def test_vote_upserts_merge_by_key(warehouse):
    cache = VoteCache(warehouse)

    def vote(role: str, signal: float) -> SpecialistVote:
        return SpecialistVote(role=role, signal=signal, confidence=0.5, rationale=f"{role} {signal}")

    day1, day2 = pd.Timestamp("2024-01-02"), pd.Timestamp("2024-02-05")
    cache.store("AAPL", "rule", "m", [(day1, vote("technical", 0.5), "v1"), (day2, vote("news", 0.1), "v1")])
    cache.store("AAPL", "rule", "m", [(day1, vote("technical", -0.5), "v1"), (day1, vote("news", 0.2), "v1")])
    stored = cache.votes_for("AAPL", [day1, day2])
    assert len(stored) == 3
    assert stored.set_index(["date", "role"]).loc[(day1, "technical"), "signal"] == -0.5
    assert warehouse.query("SELECT count(*) AS n FROM council.votes")["n"].iloc[0] == 3


LOCK_HOLDER = textwrap.dedent(
    """
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    print("holding", flush=True)
    time.sleep(30)
    """
)


def test_partition_reads_and_writes_never_wait_for_the_duckdb_file(warehouse):
    """Once a table has files, another process holding the file's write lock blocks neither."""
    for month in months("2024-01-01", 3):
        warehouse.replace_months("market.prices", "AAPL", [month], month_bars("AAPL", month))
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(warehouse.path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        other = Warehouse(warehouse.path, lock_wait=0.5)
        assert len(other.read_prices("AAPL")) == 23 + 21 + 21
        warehouse.replace_months("market.prices", "AAPL", [JAN], month_bars("AAPL", JAN, seed=9))
        assert set(other.read_table("market.prices", "AAPL", JAN, FEB)["source"]) == {"test-9"}
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("ticker", ["GC=F", "^GSPC", "BRK.B"])
def test_tickers_with_hive_special_characters_round_trip(warehouse, ticker):
    warehouse.replace_months("market.prices", ticker, [JAN], month_bars(ticker, JAN))
    assert len(warehouse.read_prices(ticker)) == 23
    assert warehouse.query("SELECT DISTINCT ticker FROM market.prices")["ticker"].tolist() == [ticker]
    counted = warehouse.query("SELECT count(*) AS n FROM market.prices WHERE ticker = ?", [ticker])
    assert counted["n"].iloc[0] == 23
    assert warehouse.parts.partitions(warehouse_table()) == [(ticker, "2024-01")]


def warehouse_table():
    from stocker_core.warehouse.schema import PARTITIONED

    return PARTITIONED["market.prices"]
