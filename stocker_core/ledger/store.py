"""Where the ledger lives: Parquet files in the warehouse folder, DuckDB views over them.

``<home>/stocker.parts/ledger/entries/session=<decided_on>/part-<first seq>.parquet`` holds the
entries one recording wrote (a recording only ever adds a new file: an entry is never
rewritten); ``HEAD`` records the number and hash of the last entry, so deleting entries at the
end is caught too; ``scores/part.parquet`` and ``record/part.parquet`` hold the scores and the
per-policy forward record (derived, replaced by each scoring). In ``stocker.duckdb`` the views
``ledger.entries``, ``ledger.scores`` and ``ledger.record`` read them (``stocker sql``).
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from stocker_core.atomic_files import write_json_atomic
from stocker_core.config import Settings
from stocker_core.errors import StockerError
from stocker_core.ledger.entries import LedgerEntry, entries_frame, entries_from_frame
from stocker_core.warehouse.db import Warehouse

VIEWS = ("entries", "scores", "record")


class LedgerInputError(StockerError, ValueError):
    """Bad input for the ledger (unknown policy, clock outside the data, unwritable folder): exit 2."""


@dataclass(frozen=True)
class Head:
    """The last entry as the ledger last wrote it: how many there are and the last hash."""

    entries: int
    hash: str


class LedgerStore:
    """The ledger's files under ``settings.home`` and their views in the warehouse."""

    def __init__(self, settings: Settings) -> None:
        self.warehouse_path = settings.warehouse_path
        self.parts_root = settings.warehouse_path.parent / "stocker.parts"
        self.root = self.parts_root / "ledger"

    # -- layout --------------------------------------------------------------------------
    @property
    def entries_dir(self) -> Path:
        return self.root / "entries"

    @property
    def head_path(self) -> Path:
        return self.root / "HEAD"

    def table_path(self, name: str) -> Path:
        return self.root / name / "part.parquet"

    def entry_files(self) -> list[Path]:
        return sorted(self.entries_dir.glob("session=*/part-*.parquet"))

    def check_writable(self) -> None:
        """LedgerInputError (one line) unless the ledger folder can be created and written."""
        try:
            self.entries_dir.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=self.entries_dir, prefix=".probe-")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise LedgerInputError(
                f"cannot write the ledger folder {self.root}: {exc.strerror or exc}"
            ) from None

    # -- reading -------------------------------------------------------------------------
    def read_frame(self) -> pd.DataFrame:
        """Every stored entry row (as stored, unchecked), in ``seq`` order."""
        files = self.entry_files()
        if not files:
            return entries_frame([])
        frame = pq.read_table(files).to_pandas() if len(files) == 1 else _read_many(files)
        return frame.sort_values("seq", kind="stable").reset_index(drop=True)

    def read(self) -> list[LedgerEntry]:
        """Every stored entry, in ``seq`` order."""
        return entries_from_frame(self.read_frame())

    def head(self) -> Head | None:
        """What ``HEAD`` says (None before the first recording)."""
        if not self.head_path.exists():
            return None
        data = json.loads(self.head_path.read_text())
        return Head(int(data["entries"]), str(data["hash"]))

    def read_table(self, name: str) -> pd.DataFrame:
        """A derived table (``scores``, ``record``); empty when not scored yet."""
        path = self.table_path(name)
        return pd.read_parquet(path) if path.exists() else pd.DataFrame()

    # -- writing -------------------------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator[None]:
        """An exclusive lock over the ledger for one read-then-append."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def append(self, entries: Sequence[LedgerEntry]) -> Path:
        """Write ``entries`` (the continuation of the chain) as one new file, then move the head.

        The file goes to a temporary name and is renamed into place, so a reader sees all of
        them or none; an existing file is never replaced."""
        first = entries[0]
        folder = self.entries_dir / f"session={first.decided_on}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"part-{first.seq:09d}.parquet"
        if path.exists():
            raise StockerError(f"ledger file {path} exists already; entries are never rewritten")
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-", suffix=".tmp")
        os.close(fd)
        try:
            entries_frame(entries).to_parquet(tmp, index=False)
            os.link(tmp, path)  # fails if another writer got there first: never overwrite
        finally:
            Path(tmp).unlink(missing_ok=True)
        last = entries[-1]
        write_json_atomic(self.head_path, {"entries": last.seq, "hash": last.hash})
        self.refresh_views()
        return path

    def write_table(self, name: str, frame: pd.DataFrame) -> None:
        """Replace a derived table's file atomically and point its view at it."""
        path = self.table_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-", suffix=".tmp")
        os.close(fd)
        try:
            frame.to_parquet(tmp, index=False)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
        self.refresh_views()

    def refresh_views(self) -> None:
        """(Re)define ``ledger.entries|scores|record`` over the files that exist (relative paths)."""
        globs = {
            "entries": (self.entry_files(), "stocker.parts/ledger/entries/*/*.parquet"),
            "scores": ([self.table_path("scores")], "stocker.parts/ledger/scores/part.parquet"),
            "record": ([self.table_path("record")], "stocker.parts/ledger/record/part.parquet"),
        }
        with Warehouse(self.warehouse_path).connect() as con:
            con.execute("CREATE SCHEMA IF NOT EXISTS ledger")
            for name, (files, pattern) in globs.items():
                if any(f.exists() for f in files):
                    con.execute(
                        f"CREATE OR REPLACE VIEW ledger.{name} AS "
                        f"SELECT * FROM read_parquet('{pattern}', hive_partitioning = false)"
                    )


def _read_many(files: Sequence[Path]) -> pd.DataFrame:
    """Many part files in one read (a file per recorded session adds up)."""
    return ds.dataset([str(f) for f in files], format="parquet").to_table().to_pandas()
