"""What a recorded output file is checked for before a skip (issue 52): gone, not a file, a
different size, a broken Parquet frame, or other bytes at the same size; a touched copy with
the same bytes is the same file. ``meta.outputs`` stores and replaces the records."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from stocker_core.warehouse import Warehouse
from stocker_core.warehouse.outputs import (
    check_file,
    parquet_problem,
    record_outputs,
    recorded_outputs,
    snapshot,
)


def _parquet(path: Path, rows: int = 5, offset: float = 0.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"close": [offset + i for i in range(rows)]}).to_parquet(path)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    _parquet(tmp_path / "parts" / "part.parquet")
    return tmp_path


def _record(home: Path):
    found = snapshot("prices", "KO|2016-05-01", home / "parts" / "part.parquet", home)
    assert found is not None and found.path == "parts/part.parquet"
    return found


def test_an_untouched_file_is_as_recorded_without_hashing_it(home: Path) -> None:
    record = _record(home)
    assert check_file(record, home) == (None, None)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda p: p.unlink(), "is missing"),
        (lambda p: p.write_bytes(b""), "changed size"),
        (lambda p: p.write_bytes(p.read_bytes()[:-20]), "changed size"),
        (lambda p: (p.unlink(), p.mkdir()), "is no longer a regular file"),
        (lambda p: _parquet(p, rows=50, offset=7.0), "changed size"),
    ],
    ids=["deleted", "zero-byte", "truncated", "a directory", "another valid parquet"],
)
def test_damage_is_named(home: Path, damage, said: str) -> None:
    record = _record(home)
    damage(home / record.path)
    what, again = check_file(record, home)
    assert what is not None and said in what and again is None


def test_same_size_other_bytes_is_changed_and_a_touched_copy_is_the_same(home: Path) -> None:
    record = _record(home)
    path = home / record.path
    copy = home / "copy.parquet"
    shutil.copy(path, copy)  # a new modification time, the same bytes
    os.replace(copy, path)
    what, again = check_file(record, home)
    assert what is None and again is not None and again.mtime_ns != record.mtime_ns
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF  # inside the data pages: the frame still holds
    path.write_bytes(bytes(data))
    what, _ = check_file(record, home)
    assert what == "changed content (its sha256 differs from the build's)"


def test_a_broken_parquet_frame_is_found_even_with_its_size_and_time_kept(home: Path) -> None:
    record = _record(home)
    path = home / record.path
    stat = path.stat()
    path.write_bytes(b"X" * stat.st_size)  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same time
    what, _ = check_file(record, home)
    assert what is not None and "not a whole Parquet file" in what
    assert parquet_problem(home / "nothing.parquet") is not None


def test_meta_outputs_replaces_the_records_of_a_partition(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "stocker.duckdb")
    warehouse.ensure_schema()
    first = snapshot("prices", "KO|2016-05-01", _parquet(tmp_path / "a.parquet"), tmp_path)
    other = snapshot("prices", "KO|2016-06-01", _parquet(tmp_path / "b.parquet"), tmp_path)
    assert first is not None and other is not None
    record_outputs(warehouse, [("prices", "KO|2016-05-01"), ("prices", "KO|2016-06-01")], [first, other])
    assert recorded_outputs(warehouse)[("prices", "KO|2016-05-01")] == [first]
    record_outputs(warehouse, [("prices", "KO|2016-05-01")], [])  # rebuilt with no rows: no file
    assert set(recorded_outputs(warehouse)) == {("prices", "KO|2016-06-01")}


def test_a_cache_file_may_change_but_must_stay_whole(home: Path) -> None:
    """The vote cache's part files gain votes from other commands: a new valid file is
    recorded again as it is; a broken one is still named."""
    record = _record(home)
    path = _parquet(home / record.path, rows=40, offset=3.0)  # more votes: another size
    what, again = check_file(record, home, exact=False)
    assert what is None and again is not None and again.size == path.stat().st_size
    path.write_bytes(path.read_bytes()[:-30])
    what, _ = check_file(record, home, exact=False)
    assert what is not None and "not a whole Parquet file" in what
