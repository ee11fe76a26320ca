"""The files gate names everything it refuses or skips (issue 34, defect 5): ambiguous or
two-digit-year dates in any spelling, a header row inside the data, an empty file, rows with an
invalid ticker — each with its file and row, never a traceback and never a silent guess."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from stocker_core.config import REFERENCE_TASKS_DIR
from stocker_core.errors import DataSourceError, UnknownTickerError
from stocker_core.market.files_source import FilesSource

SEED = REFERENCE_TASKS_DIR / "prices.csv"


def _aapl(spelling: str) -> pd.DataFrame:
    bars = pd.read_csv(SEED).query("ticker == 'AAPL'").drop(columns="ticker")
    return bars.assign(date=pd.to_datetime(bars["date"]).dt.strftime(spelling))


@pytest.mark.parametrize(
    ("spelling", "problem"),
    [
        ("%m/%d/%Y", "does not say which number is the day and which the month"),
        ("%m/%d/%y", "has a two-digit year"),
        ("%d-%b-%y", "has a two-digit year"),
        ("%b %d %y", "has a two-digit year"),
        ("%y-%b-%d", "has a two-digit year"),
        ("%d.%m.%y", "has a two-digit year"),
    ],
)
def test_a_file_of_unreadable_dates_is_refused_with_file_and_row(tmp_path, spelling, problem) -> None:
    _aapl(spelling).to_csv(tmp_path / "AAPL.csv", index=False)
    with pytest.raises(
        DataSourceError, match=rf"AAPL\.csv: AAPL: no usable rows \(row 1: date '.*' {problem}"
    ):
        FilesSource(tmp_path)


def test_four_digit_years_with_month_names_still_read(tmp_path) -> None:
    _aapl("%d-%b-%Y").to_csv(tmp_path / "AAPL.csv", index=False)
    frame = FilesSource(tmp_path).fetch(
        "AAPL", pd.Timestamp("2023-08-01").date(), pd.Timestamp("2023-09-01").date()
    )
    assert frame["date"].min() == pd.Timestamp("2023-08-01") and len(frame) == 23


def test_a_header_row_inside_the_data_is_refused_with_its_row(tmp_path) -> None:
    lines = SEED.read_text().splitlines()
    lines.insert(150, lines[0])
    (tmp_path / "prices.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataSourceError, match=r"prices\.csv: row 150 repeats the header"):
        FilesSource(tmp_path)


def test_an_empty_file_is_named_when_its_symbol_is_asked_for(tmp_path, monkeypatch) -> None:
    from stocker_assets.cli import app

    bars = pd.read_csv(SEED)
    bars.query("ticker != 'AAPL'").to_csv(tmp_path / "prices.csv", index=False)
    (tmp_path / "AAPL.csv").write_bytes(b"")
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["tickers", "add", "AAPL"])
    assert result.exit_code == 2, result.output
    assert "no symbol 'AAPL'" in result.output and "AAPL.csv: empty file (0 bytes)" in result.output
    assert "Traceback" not in result.output
    with pytest.raises(UnknownTickerError, match=r"AAPL\.csv: empty file \(0 bytes\)"):
        FilesSource(tmp_path).fetch(
            "AAPL", pd.Timestamp("2023-08-01").date(), pd.Timestamp("2023-09-01").date()
        )


def test_rows_with_invalid_tickers_are_named_with_their_rows(tmp_path) -> None:
    bars = pd.read_csv(SEED)
    bars.loc[bars.index[:3], "ticker"] = "../../etc"
    bars.loc[bars.index[3:5], "ticker"] = "A B"
    bars.to_csv(tmp_path / "prices.csv", index=False)
    problems = FilesSource(tmp_path).file_problems()["prices.csv"]
    assert "3 row(s) with the invalid ticker '../../etc' skipped (row 1, 2, 3)" in problems
    assert "2 row(s) with the invalid ticker 'A B' skipped (row 4, 5)" in problems
