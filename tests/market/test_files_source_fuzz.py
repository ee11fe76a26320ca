"""Issue 11 fuzz test: random corruptions of a good CSV through the files source and the ingest.

Never a traceback (only StockerError subclasses), and never a stored bad row: every month
holding a detectably corrupted row is quarantined (recorded as failed), and every stored
month passes the blocking rules when re-checked from the warehouse.
"""

import tempfile
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stocker_core.errors import StockerError
from stocker_core.market.calendar import sessions
from stocker_core.market.files_source import FilesSource
from stocker_core.market.gate import QualityGatedSource, failed_partitions, ingest_prices
from stocker_core.market.quality import month_verdicts
from stocker_core.warehouse import Warehouse

MONTHS = [date(2024, 1, 1), date(2024, 2, 1), date(2024, 3, 1)]
DAYS = sessions(date(2024, 1, 1), date(2024, 4, 1))
COLUMNS = ["date", "open", "high", "low", "close", "volume"]


def good_rows() -> list[list[str]]:
    """Clean bars: close drifts 100 -> ~112, high/low 1% around the body."""
    close = 100 + np.arange(len(DAYS)) * 0.2
    opens = np.r_[close[0], close[:-1]]
    rows = []
    for day, o, c in zip(DAYS, opens, close, strict=True):
        hi, lo = max(o, c) * 1.01, min(o, c) * 0.99
        rows.append([day.strftime("%Y-%m-%d"), f"{o:.4f}", f"{hi:.4f}", f"{lo:.4f}", f"{c:.4f}", "1000"])
    return rows


# (name, detectable): a detectable corruption must quarantine the month of its row
ROW_EDITS = {
    "text": True,  # a word in a number column
    "blank_close": True,
    "blank_ohl": True,
    "negative": True,
    "zero": True,
    "times_ten": True,
    "swap_high_low": True,
    "duplicate": True,
    "weekend": True,
    "delete": False,  # a missing session: listed, not blocking
}
FILE_EDITS = ["drop_column", "truncate", "garbage", "empty", "header_only"]


def _weekend(day: str) -> str:
    stamp = pd.Timestamp(day)
    return (stamp + pd.Timedelta(days=5 - stamp.day_of_week)).strftime("%Y-%m-%d")  # that week's Saturday


def corrupt_row(rows: list[list[str]], index: int, edit: str, column: int) -> str | None:
    """Apply ``edit`` to row ``index``; the corrupted day (for detectable edits) or None."""
    row = rows[index]
    day = row[0]
    if edit == "text":
        row[column] = "n/a"
    elif edit == "blank_close":
        row[4] = ""
    elif edit == "blank_ohl":
        row[1 + column % 3] = ""
    elif edit in ("negative", "zero"):
        row[column] = "-" + row[column] if edit == "negative" else "0"
        if column == 5 and edit == "zero":
            return None  # zero volume is a legal (if odd) value
    elif edit == "times_ten":
        row[4] = f"{float(row[4]) * 10:.4f}"
    elif edit == "swap_high_low":
        row[2], row[3] = row[3], row[2]
    elif edit == "duplicate":
        rows.insert(index, list(row))
    elif edit == "weekend":
        row[0] = _weekend(day)
        return row[0]
    elif edit == "delete":
        rows.pop(index)
    return day if ROW_EDITS[edit] else None


def render(rows: list[list[str]], file_edit: str | None, cut: float) -> bytes:
    header = list(COLUMNS)
    if file_edit == "drop_column":
        drop = 2  # high
        header.pop(drop)
        rows = [r[:drop] + r[drop + 1 :] for r in rows]
    text = ",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows)
    data = text.encode()
    if file_edit == "truncate":
        data = data[: int(len(data) * cut)]
    elif file_edit == "garbage":
        at = int(len(data) * cut)
        data = data[:at] + b'\x00\xff\xfe,,"\n' + data[at:]
    elif file_edit == "empty":
        data = b""
    elif file_edit == "header_only":
        data = (",".join(header) + "\n").encode()
    return data


edits = st.lists(
    st.tuples(st.integers(0, len(DAYS) - 1), st.sampled_from(sorted(ROW_EDITS)), st.integers(1, 5)),
    min_size=0,
    max_size=4,
)


def _corrupt(edits) -> tuple[list[list[str]], set[pd.Timestamp]]:
    rows = good_rows()
    corrupted: dict[int, pd.Timestamp] = {}  # id(row) -> corrupted day
    edited: set[int] = set()
    for index, edit, column in edits:
        row = rows[min(index, len(rows) - 1)]
        if id(row) in edited:
            continue  # one edit per row: a second one could undo the first (swap twice)
        edited.add(id(row))
        day = corrupt_row(rows, rows.index(row), edit, column)
        edited.update(id(r) for r in rows if r[0] == row[0])  # a duplicate's copy too
        if edit == "delete":
            corrupted.pop(id(row), None)  # the corrupted row is gone
        elif day is not None:
            corrupted[id(row)] = pd.Timestamp(day)
    return rows, set(corrupted.values())


def _write(folder: Path, edits, file_edit, cut) -> set[pd.Timestamp]:
    rows, corrupted = _corrupt(edits)
    folder.mkdir()
    (folder / "GOOD.csv").write_bytes(render(rows, file_edit, cut))
    (folder / "OTHER.csv").write_bytes(render(good_rows(), None, 1.0))
    return corrupted


def _assert_quarantined(corrupted: set[pd.Timestamp], kept: set[date], context) -> None:
    for day in corrupted:
        month = day.date().replace(day=1)
        if month in MONTHS:
            assert month not in kept, (day, context)


FILE_EDIT = st.one_of(st.none(), st.sampled_from(FILE_EDITS))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=edits, file_edit=FILE_EDIT, cut=st.floats(0.05, 0.95))
def test_corrupted_csv_never_tracebacks_and_bad_months_never_pass_the_gate(edits, file_edit, cut):
    with tempfile.TemporaryDirectory() as tmp:
        corrupted = _write(Path(tmp) / "bars", edits, file_edit, cut)
        try:
            source = QualityGatedSource(FilesSource(Path(tmp) / "bars"))
        except StockerError:
            return  # a clear, named error: allowed
        assert "GOOD" in source.symbols() or "GOOD.csv" in source.inner.file_problems()
        assert source.inspect("OTHER", MONTHS[0], date(2024, 4, 1)).failed == {}
        if "GOOD" not in source.symbols():
            return
        inspection = source.inspect("GOOD", MONTHS[0], date(2024, 4, 1))
        frame = inspection.frame
        with_rows = {d.date().replace(day=1) for d in frame["date"]}
        passed = {m for m in MONTHS if m not in inspection.failed and m in with_rows}
        if file_edit == "truncate" and len(frame):  # rows cut off the end are simply absent
            corrupted = {d for d in corrupted if d <= frame["date"].max()}
        _assert_quarantined(corrupted, passed, (file_edit, edits))
        clean = frame[frame["date"].dt.date.map(lambda d: d.replace(day=1) in passed)]
        assert month_verdicts(clean, sorted(passed)) == {}  # what passes, passes the rules again


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=edits, file_edit=FILE_EDIT, cut=st.floats(0.05, 0.95))
def test_corrupted_csv_never_stores_a_bad_row(edits, file_edit, cut):
    with tempfile.TemporaryDirectory() as tmp:
        corrupted = _write(Path(tmp) / "bars", edits, file_edit, cut)
        warehouse = Warehouse(Path(tmp) / "w.duckdb")
        try:
            source = QualityGatedSource(FilesSource(Path(tmp) / "bars"))
            for ticker in source.symbols():
                ingest_prices(source, warehouse, ticker, MONTHS)
        except StockerError:
            return  # a clear, named error: allowed
        stored = warehouse.read_prices("GOOD")
        failed = set(failed_partitions(warehouse, "GOOD"))
        stored_months = {d.date().replace(day=1) for d in stored["date"]}
        assert not stored_months & failed
        if file_edit == "truncate":  # rows cut off the end are simply absent
            corrupted = {d for d in corrupted if len(stored) and d <= stored["date"].max()}
        assert month_verdicts(stored, sorted(stored_months)) == {}  # stored rows re-check clean
        _assert_quarantined(corrupted, stored_months, (file_edit, edits))
        assert len(warehouse.read_prices("OTHER")) == len(DAYS)  # the good file is untouched
