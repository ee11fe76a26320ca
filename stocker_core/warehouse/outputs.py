"""``meta.outputs``: the files a recorded build vouches for, and whether they are still there.

After a successful build, `stocker materialize` records each output file of an asset's
partition (a Parquet part file, a chart PNG, a model file) with its size, modification time
and sha256. Before it calls that partition up to date it asks the disk (``check_file``):

- a file that is gone, or is no longer a regular file, is **missing**;
- a different size is a **changed** file (no hash needed);
- the same size and modification time is taken as the same file, after a cheap structural
  look: a Parquet file must begin and end with ``PAR1`` around a footer that fits it;
- the same size with another modification time is hashed: the same sha256 is the same file
  (copied or touched: its new time is recorded), another is a **changed** file;
- a file other commands add to (a cache, ``exact=False``) must only be there and whole: a
  changed one is recorded again as it is.

An unchanged rerun therefore reads a few bytes per Parquet file and hashes nothing; only a
file whose size and time both still match but whose bytes were edited in place escapes,
unless the edit breaks its Parquet frame.

Paths are stored relative to the home (``home_paths.stored_path``), so a moved home keeps
its records.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd

from stocker_core.warehouse.db import Warehouse
from stocker_core.warehouse.home_paths import stored_path

PARQUET_MAGIC = b"PAR1"
HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class OutputFile:
    """One recorded output file of an asset's partition (``path`` relative to the home)."""

    asset: str
    partition: str
    path: str
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class OutputProblem:
    """What is wrong with one recorded output file, in words (``what``)."""

    asset: str
    partition: str
    path: str
    what: str

    def describe(self) -> str:
        where = f"{self.asset} {self.partition}" if self.partition else self.asset
        return f"{where}: {self.path} {self.what}"


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def parquet_problem(path: Path, size: int | None = None) -> str | None:
    """Why ``path`` is not a whole Parquet file (magic bytes and footer length), or None."""
    try:
        size = path.stat().st_size if size is None else size
        if size < 12:
            return f"is not a Parquet file ({size} bytes)"
        with open(path, "rb") as handle:
            head = handle.read(4)
            handle.seek(size - 8)
            tail = handle.read(8)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    if head != PARQUET_MAGIC or tail[4:] != PARQUET_MAGIC:
        return "is not a whole Parquet file (no magic bytes: truncated or overwritten)"
    footer = int.from_bytes(tail[:4], "little")
    if footer + 12 > size:
        return "is not a whole Parquet file (its footer does not fit: truncated)"
    return None


def _is_parquet(path: str) -> bool:
    return path.endswith(".parquet")


def snapshot(asset: str, partition: str, path: Path, home: Path) -> OutputFile | None:
    """The record of ``path`` as it is now (None when it is not a regular file)."""
    try:
        found = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return OutputFile(
        asset, partition, stored_path(path, home), found.st_size, found.st_mtime_ns, file_sha256(path)
    )


def check_file(record: OutputFile, home: Path, exact: bool = True) -> tuple[str | None, OutputFile | None]:
    """(what is wrong with ``record``'s file, or None; the record to store again when the file
    is the same but was touched, else None). ``exact=False`` for a file other commands add to
    (a cache): it must be there and whole, and may have changed (recorded again as it is)."""
    path = home / record.path
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return "is missing", None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})", None
    if not stat.S_ISREG(found.st_mode):
        return "is no longer a regular file", None
    problems = []
    frame = parquet_problem(path, found.st_size) if _is_parquet(record.path) else None
    if found.st_size != record.size and (exact or frame):
        problems.append(f"changed size ({record.size} -> {found.st_size} bytes)")
    if frame:
        problems.append(frame)
    if problems:
        return "; ".join(problems), None
    if found.st_mtime_ns == record.mtime_ns and found.st_size == record.size:
        return None, None
    try:
        digest = file_sha256(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})", None
    if exact and digest != record.sha256:
        return "changed content (its sha256 differs from the build's)", None
    return None, OutputFile(
        record.asset, record.partition, record.path, found.st_size, found.st_mtime_ns, digest
    )


def recorded_outputs(warehouse: Warehouse) -> dict[tuple[str, str], list[OutputFile]]:
    """{(asset, partition): its recorded output files} (read once per run)."""
    if not warehouse.path.exists():
        return {}
    with warehouse.connect(read_only=True) as con:
        if not warehouse._table_exists(con, "meta.outputs"):
            return {}
        rows = con.execute(
            "SELECT asset, partition, path, size, mtime_ns, sha256 FROM meta.outputs ORDER BY 1, 2, 3"
        ).fetchall()
    found: dict[tuple[str, str], list[OutputFile]] = {}
    for row in rows:
        found.setdefault((row[0], row[1]), []).append(OutputFile(*row))
    return found


def record_outputs(
    warehouse: Warehouse, partitions: Iterable[tuple[str, str]], files: Sequence[OutputFile]
) -> None:
    """Replace the recorded files of each (asset, partition) of ``partitions`` with ``files``
    (a partition with none left records none), in one transaction."""
    scopes = pd.DataFrame(list(dict.fromkeys(partitions)), columns=["asset", "partition"])
    if scopes.empty and not files:
        return
    frame = pd.DataFrame(
        {
            "asset": [f.asset for f in files],
            "partition": [f.partition for f in files],
            "path": [f.path for f in files],
            "size": pd.Series([f.size for f in files], dtype="int64"),
            "mtime_ns": pd.Series([f.mtime_ns for f in files], dtype="int64"),
            "sha256": [f.sha256 for f in files],
            "recorded_at": datetime.now(),
        }
    )
    with warehouse.transaction() as con:
        con.register("output_scopes", scopes)
        con.register("incoming_outputs", frame)
        try:
            con.execute(
                "DELETE FROM meta.outputs WHERE (asset, partition) IN "
                "(SELECT asset, partition FROM output_scopes)"
            )
            if len(frame):
                con.execute("INSERT OR REPLACE INTO meta.outputs BY NAME SELECT * FROM incoming_outputs")
        finally:
            con.unregister("output_scopes")
            con.unregister("incoming_outputs")


def lineage_rows(warehouse: Warehouse) -> dict[tuple[str, str], int]:
    """{(asset, partition): rows of its latest ``meta.lineage`` record}: what a home built
    before ``meta.outputs`` says each partition held."""
    if not warehouse.path.exists():
        return {}
    with warehouse.connect(read_only=True) as con:
        if not warehouse._table_exists(con, "meta.lineage"):
            return {}
        rows = con.execute(
            "SELECT asset, partition, arg_max(row_count, materialized_at) FROM meta.lineage "
            "WHERE partition IS NOT NULL GROUP BY asset, partition"
        ).fetchall()
    return {(r[0], r[1]): int(r[2] or 0) for r in rows}
