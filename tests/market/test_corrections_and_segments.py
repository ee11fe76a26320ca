"""The corrections file (explicit, reasoned overrides) and the downstream skip rule."""

from datetime import date

import pytest

from stocker_core.market.corrections import CorrectionsError, load_corrections
from stocker_core.market.files_source import FilesSource
from stocker_core.market.gate import QualityGatedSource, clean_segments

HEADER = "ticker,date,column,value,reason\n"
BARS = (
    "date,open,high,low,close,volume\n"
    "2024-01-02,10,11,9,10,100\n"
    "2024-01-03,10,11,9,10,100\n"
    "2024-01-03,10,11,9,10,100\n"  # duplicate
    "2024-01-04,10,11,9,25,100\n"  # x2.5 jump, and close above high
    "2024-01-06,10,11,9,10,100\n"  # a Saturday
)


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "bars"
    folder.mkdir()
    (folder / "XYZ.csv").write_text(BARS)
    return FilesSource(folder)


def _corrections(tmp_path, rows: str):
    path = tmp_path / "corrections.csv"
    path.write_text(HEADER + rows)
    return load_corrections(path)


def test_without_corrections_every_problem_is_named(source):
    failed = QualityGatedSource(source).inspect("XYZ", date(2024, 1, 1), date(2024, 2, 1)).failed
    assert failed == {
        date(2024, 1, 1): [
            "duplicate date 2024-01-03 (2 rows)",
            "high below open/close on 2024-01-04",
            "split-like jump x2.50 in close on 2024-01-04 (no split in adj_close)",
            "2024-01-06 is not an XNYS session",
            "split-like jump x0.40 in close on 2024-01-06 (no split in adj_close)",
        ]
    }


def test_fix_drop_and_accept_clear_the_month_and_are_listed(source, tmp_path):
    fixes = _corrections(
        tmp_path,
        "XYZ,2024-01-03,row,accept,vendor repeats the row; values identical\n"
        "XYZ,2024-01-04,close,10.5,typo: 25 for 10.5\n"
        "XYZ,2024-01-06,row,drop,weekend row from the vendor's backfill\n",
    )
    inspection = QualityGatedSource(source, fixes).inspect("XYZ", date(2024, 1, 1), date(2024, 2, 1))
    assert inspection.failed == {}
    assert inspection.accepted == {date(2024, 1, 1): ["duplicate date 2024-01-03 (2 rows)"]}
    assert inspection.frame["close"].tolist() == [10.0, 10.0, 10.5]
    assert inspection.corrections == [
        "2024-01-03 accept the row (vendor repeats the row; values identical)",
        "2024-01-04 close := 10.5 (typo: 25 for 10.5)",
        "2024-01-06 drop the row (weekend row from the vendor's backfill)",
    ]


@pytest.mark.parametrize(
    "row,message",
    [
        ("XYZ,2024-01-04,close,10.5,\n", "a reason is required"),
        ("XYZ,2024-01-04,close,ten,typo\n", "close needs a number"),
        ("XYZ,2024-01-04,colour,1,typo\n", "unknown column 'colour'"),
        ("XYZ,2024-01-04,row,ignore,typo\n", "drop or accept"),
        ("xyz,2024-01-04,close,1,typo\n", "invalid ticker"),
    ],
)
def test_malformed_corrections_name_the_line(tmp_path, row, message):
    with pytest.raises(CorrectionsError, match=rf"corrections.csv:2: .*{message}"):
        _corrections(tmp_path, row)


def test_no_corrections_file_means_no_corrections(tmp_path):
    assert load_corrections(tmp_path / "missing.csv") == []


def test_clean_segments_skip_failed_months_and_their_lookback():
    months = [date(2023, m, 1) for m in range(1, 13)]
    segments, skipped = clean_segments(months, [date(2023, 3, 1), date(2023, 10, 1)], lookback_months=2)
    # March blocks March, April, May; October blocks October, November, December
    assert segments == [[date(2023, 1, 1), date(2023, 2, 1)], [date(2023, m, 1) for m in range(6, 10)]]
    assert skipped == {
        date(2023, 3, 1): date(2023, 3, 1),
        date(2023, 4, 1): date(2023, 3, 1),
        date(2023, 5, 1): date(2023, 3, 1),
        date(2023, 10, 1): date(2023, 10, 1),
        date(2023, 11, 1): date(2023, 10, 1),
        date(2023, 12, 1): date(2023, 10, 1),
    }
