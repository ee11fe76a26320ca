"""Issue 11 item 3: each file is read on its own; a bad one is named and the rest still work."""

import re
from datetime import date

import pytest

from stocker_core.errors import DataSourceError
from stocker_core.market.files_source import FilesSource

GOOD = "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10.5,11.5,10,11,120\n"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "GOOD.csv").write_text(GOOD)
    return tmp_path


@pytest.mark.parametrize(
    "name,content,reason",
    [
        ("EMPTY.csv", "", "empty file (0 bytes)"),
        ("HEAD.csv", "date,open,high,low,close,volume\n", "header only, no rows"),
        ("NOCLOSE.csv", "date,open,high,low,volume\n2024-01-02,1,2,0.5,10\n", "no close column"),
        ("BIN.csv", b"\x00\x01\x02garbage\xff\xfe", "cannot parse"),
    ],
)
def test_a_bad_file_is_named_and_does_not_block_the_others(folder, name, content, reason):
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    source = FilesSource(folder)
    assert source.fetch("GOOD", date(2024, 1, 1), date(2024, 2, 1))["close"].tolist() == [10.5, 11.0]
    problems = source.file_problems()
    assert list(problems) == [name]
    assert reason in problems[name]
    ticker = name.removesuffix(".csv")
    with pytest.raises(DataSourceError, match=rf"{ticker}.*{re.escape(name)}: {re.escape(reason)}"):
        source.fetch(ticker, date(2024, 1, 1), date(2024, 2, 1))


def test_header_only_long_file_gives_a_clear_message(tmp_path):
    (tmp_path / "prices.csv").write_text("ticker,date,open,high,low,close,volume\n")
    with pytest.raises(DataSourceError, match=r"prices.csv: header only, no rows"):
        FilesSource(tmp_path)


def test_long_file_missing_close_is_reported_not_silently_skipped(tmp_path):
    (tmp_path / "prices.csv").write_text("ticker,date,open,high,low\nAAPL,2024-01-02,1,2,0.5\n")
    (tmp_path / "GOOD.csv").write_text(GOOD)
    source = FilesSource(tmp_path)
    assert source.file_problems() == {
        "prices.csv": "no close column (columns: ticker, date, open, high, low)"
    }
    with pytest.raises(DataSourceError, match=r"no symbol 'AAPL'.*prices.csv: no close column"):
        source.fetch("AAPL", date(2024, 1, 1), date(2024, 2, 1))


def test_non_bar_files_are_still_ignored_quietly(tmp_path):
    (tmp_path / "GOOD.csv").write_text(GOOD)
    (tmp_path / "tasks.csv").write_text("name,ticker,start\neasy,AAPL,2023-08-01\n")
    (tmp_path / "news.jsonl").write_text('{"a": 1}\n')
    source = FilesSource(tmp_path)
    assert source.symbols() == ["GOOD"] and source.file_problems() == {}


def test_every_file_bad_is_one_clear_error_naming_each(tmp_path):
    (tmp_path / "A.csv").write_text("")
    (tmp_path / "B.csv").write_text("date,close\n")
    with pytest.raises(DataSourceError) as err:
        FilesSource(tmp_path)
    assert "A.csv: empty file (0 bytes)" in str(err.value) and "B.csv: header only" in str(err.value)
