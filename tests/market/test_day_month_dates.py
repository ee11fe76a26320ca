"""Dates written day/month (``15/08/2023``) or month/day are never guessed: each such row is
an error that names the file and the row, and fails every month the row could belong to; ISO
and month-name dates keep working (issue 22, defect 6)."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from stocker_core.market.files_source import FilesSource
from stocker_core.market.frames import normalize_bars_checked
from stocker_core.market.gate import QualityGatedSource
from stocker_core.market.quality import DataQualityError


def _write_bars(folder, august_style: str) -> None:
    """AAPL.csv: July and September in ISO, August (23 sessions) in ``august_style``."""
    days = pd.bdate_range("2023-07-03", "2023-09-29")
    days = days[~days.isin(pd.to_datetime(["2023-07-04", "2023-09-04"]))]  # NYSE holidays
    text = [d.strftime(august_style if d.month == 8 else "%Y-%m-%d") for d in days]
    closes = [100.0 + i * 0.1 for i in range(len(days))]
    frame = pd.DataFrame({"date": text, "open": closes, "high": closes, "low": closes, "close": closes})
    frame.to_csv(folder / "AAPL.csv", index=False)


def test_day_month_rows_among_iso_dates_fail_their_possible_months_naming_file_and_row(tmp_path):
    _write_bars(tmp_path, "%d/%m/%Y")
    source = FilesSource(tmp_path)
    stored = source.fetch("AAPL", date(2023, 7, 1), date(2023, 10, 1))
    assert not (stored["date"].dt.month == 8).any()  # nothing guessed into August ...
    assert len(stored) == 20 + 20  # ... and nothing moved into July or September
    problems = [i.problem for i in source.bar_issues("AAPL")]
    # the first August row is data row 21 (20 July sessions before it)
    assert any(p.startswith("AAPL.csv: row 21: date '01/08/2023'") for p in problems), problems[:3]
    gate = QualityGatedSource(source)
    with pytest.raises(DataQualityError) as failure:
        gate.fetch("AAPL", date(2023, 8, 1), date(2023, 9, 1))
    assert "AAPL|2023-08-01" in str(failure.value) and "never guessed" in str(failure.value)
    # 01/08/2023 could also be 8 January: that month cannot pass either
    assert {i.date for i in source.bar_issues("AAPL") if "'01/08/2023'" in i.problem} == {
        pd.Timestamp("2023-01-08"),
        pd.Timestamp("2023-08-01"),
    }


def test_month_day_rows_are_refused_the_same_way(tmp_path):
    _write_bars(tmp_path, "%m/%d/%Y")
    gate = QualityGatedSource(FilesSource(tmp_path))
    with pytest.raises(DataQualityError, match="never guessed"):
        gate.fetch("AAPL", date(2023, 8, 1), date(2023, 9, 1))


def test_iso_and_unambiguous_forms_are_read():
    raw = pd.DataFrame(
        {
            "date": ["2023-08-01", "2023/08/02", "20230803", "Aug 4, 2023", "2023-08-07T00:00:00-04:00"],
            "close": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )
    checked = normalize_bars_checked(raw)
    assert checked.issues == []
    assert list(checked.frame["date"].dt.strftime("%Y-%m-%d")) == [
        "2023-08-01",
        "2023-08-02",
        "2023-08-03",
        "2023-08-04",
        "2023-08-07",
    ]


def test_a_two_digit_year_fails_the_whole_table():
    checked = normalize_bars_checked(pd.DataFrame({"date": ["2023-08-01", "08-02-23"], "close": [1.0, 2.0]}))
    assert [(i.date, i.column) for i in checked.issues] == [(None, "date")]
    assert "row 2" in checked.issues[0].problem and len(checked.frame) == 1
