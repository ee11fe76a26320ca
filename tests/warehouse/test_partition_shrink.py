"""Stored data never shrinks behind the user's back: a write that would replace a stored partition
with fewer rows is refused, naming the partition and the row counts, and nothing is written —
unless the caller gives the reason (a correction dropping those bars, a quarantine)."""

from __future__ import annotations

import hashlib
from datetime import date

import pandas as pd
import pytest
from warehouse_testing import month_bars

from stocker_core.market.corrections import load_corrections
from stocker_core.market.files_source import FilesSource
from stocker_core.market.gate import QualityGatedSource, ingest_prices
from stocker_core.warehouse.db import Warehouse
from stocker_core.warehouse.partitioned import PartitionShrinkError

JAN, FEB = date(2024, 1, 1), date(2024, 2, 1)


@pytest.fixture
def warehouse(tmp_path) -> Warehouse:
    return Warehouse(tmp_path / "stocker.duckdb")


def _digests(warehouse: Warehouse) -> dict[str, str]:
    return {
        p.relative_to(warehouse.parts.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(warehouse.parts.root.rglob("*.parquet"))
    }


def test_fewer_rows_are_refused_with_the_partition_and_counts_and_nothing_is_written(warehouse):
    jan, feb = month_bars("AAPL", JAN), month_bars("AAPL", FEB)
    warehouse.replace_months("market.prices", "AAPL", [JAN, FEB], pd.concat([jan, feb]))
    before = _digests(warehouse)
    grown = month_bars("AAPL", FEB, seed=1)  # February rewritten with as many rows: allowed alone
    with pytest.raises(PartitionShrinkError) as refused:
        warehouse.replace_months("market.prices", "AAPL", [JAN, FEB], pd.concat([jan.head(3), grown]))
    message = str(refused.value)
    assert "market.prices" in message and "AAPL" in message and f"2024-01 ({len(jan)} -> 3 rows)" in message
    assert "2024-02" not in message and len(message.splitlines()) == 1
    assert refused.value.shrunk == [("market.prices", "AAPL", "2024-01", len(jan), 3)]
    assert _digests(warehouse) == before  # not even the month that did not shrink
    assert warehouse.stored_rows("market.prices", "AAPL", JAN) == len(jan)


def test_a_reason_lets_a_month_shrink_and_a_callable_decides_per_month(warehouse):
    jan, feb = month_bars("AAPL", JAN), month_bars("AAPL", FEB)
    warehouse.replace_months("market.prices", "AAPL", [JAN, FEB], pd.concat([jan, feb]))
    asked = []

    def only_january(label: str, stored: int, new: int) -> str | None:
        asked.append((label, stored, new))
        return "a test correction" if label == "2024-01" else None

    with pytest.raises(PartitionShrinkError, match=r"2024-02 \(\d+ -> 2 rows\)"):
        warehouse.replace_months("market.prices", "AAPL", [JAN, FEB], pd.concat([jan.head(5), feb.head(2)]),
                                 shrink_reason=only_january)  # fmt: skip
    assert [a[0] for a in asked] == ["2024-01", "2024-02"]
    warehouse.replace_months("market.prices", "AAPL", [JAN], jan.head(5), shrink_reason=only_january)
    assert warehouse.stored_rows("market.prices", "AAPL", JAN) == 5
    # growing back, or an unchanged count, needs no reason
    warehouse.replace_months("market.prices", "AAPL", [JAN], jan)
    warehouse.replace_months("market.prices", "AAPL", [JAN], month_bars("AAPL", JAN, seed=2))
    assert warehouse.stored_rows("market.prices", "AAPL", JAN) == len(jan)


BARS = "date,open,high,low,close,volume\n" + "".join(
    f"2024-01-{day:02d},10,11,9,10,100\n" for day in (2, 3, 4, 5, 8, 9)
)


def test_the_price_ingest_shrinks_only_for_a_correction_that_drops_those_bars(tmp_path, warehouse):
    folder = tmp_path / "bars"
    folder.mkdir()
    (folder / "XYZ.csv").write_text(BARS)
    ingest_prices(QualityGatedSource(FilesSource(folder)), warehouse, "XYZ", [JAN])
    assert warehouse.stored_rows("market.prices", "XYZ", JAN) == 6

    (folder / "XYZ.csv").write_text(BARS.replace("2024-01-09,10,11,9,10,100\n", ""))  # the vendor lost a day
    with pytest.raises(PartitionShrinkError, match=r"market.prices for XYZ .*2024-01 \(6 -> 5 rows\)"):
        ingest_prices(QualityGatedSource(FilesSource(folder)), warehouse, "XYZ", [JAN])
    assert warehouse.stored_rows("market.prices", "XYZ", JAN) == 6
    assert str(warehouse.symbol_row("XYZ")["last_date"])[:10] == "2024-01-09"  # nothing written

    (folder / "XYZ.csv").write_text(BARS)
    fixes = tmp_path / "corrections.csv"
    fixes.write_text(
        "ticker,date,column,value,reason\n"
        "XYZ,2024-01-08,row,drop,a session the vendor invented\n"
        "XYZ,2024-01-09,row,drop,a session the vendor invented\n"
    )
    report = ingest_prices(
        QualityGatedSource(FilesSource(folder), load_corrections(fixes)), warehouse, "XYZ", [JAN]
    )
    assert report.rows == {"XYZ|2024-01-01": 4}
    assert warehouse.stored_rows("market.prices", "XYZ", JAN) == 4
