"""Where the ledger lives: Parquet files in the warehouse folder, DuckDB views over them.

``<home>/stocker.parts/ledger/entries/session=<decided_on>/part-<first seq>.parquet`` holds the
entries one recording wrote (a recording only ever adds a new file: an entry is never
rewritten); ``HEAD`` records the number and hash of the last entry, so deleting entries at the
end is caught too; ``scores/part.parquet`` and ``record/part.parquet`` hold the scores and the
per-policy forward record (derived, replaced by each scoring), and ``SCORED`` what they were
computed from (the chain up to which entry, at which instant) and each file's sha256. In
``stocker.duckdb`` the views ``ledger.entries``, ``ledger.scores`` and ``ledger.record`` read
exactly the files the ledger wrote and checked (named one by one, never a glob), and refuse to
answer once one of them changed (its sha256 is part of the view).

This module reads and writes the files as they are; ``stocker_core.ledger.reader`` is the one
reader that checks them, which every command and the web page read through.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from stocker_core.atomic_files import write_json_atomic
from stocker_core.config import Settings
from stocker_core.errors import StockerError
from stocker_core.ledger.entries import (
    ENTRY_COLUMNS,
    FLOAT_FIELDS,
    GENESIS,
    INT_FIELDS,
    LedgerEntry,
    entries_frame,
    entry_from_mapping,
    json_object,
)
from stocker_core.ledger.files import (
    ENTRY_FILE_LIMIT,
    HEAD_LIMIT,
    TABLE_LIMIT,
    LedgerFileError,
    read_inside,
)
from stocker_core.warehouse.db import Warehouse

VIEWS = ("entries", "scores", "record")
DERIVED = ("scores", "record")
SESSION_FOLDER = re.compile(r"session=(\d{4}-\d{2}-\d{2})")
ENTRY_FILE = re.compile(r"part-(\d{9})\.parquet")
TEMPORARY = re.compile(r"\.(part|HEAD|SCORED)-.*\.tmp")
"""A write in progress, or one a killed process left: never read, removed by the next writer."""
HEX64 = re.compile(r"[0-9a-f]{64}")
HEAD_FORM = '{"entries": N, "hash": "<64 hex digits>"}'


class LedgerInputError(StockerError, ValueError):
    """Bad input for the ledger (unknown policy, clock outside the data, unwritable folder): exit 2."""


class LedgerIntegrityError(StockerError, RuntimeError):
    """The stored ledger fails verification: nothing is recorded, scored or shown on top of it (exit 1)."""


@dataclass(frozen=True)
class Head:
    """The last entry as the ledger last wrote it: how many there are and the last hash."""

    entries: int
    hash: str

    def text(self) -> str:
        """``ENTRIES:HASH``, the form to publish and to pass to ``verify --head``."""
        return f"{self.entries}:{self.hash}"


def head_of(data: Any) -> Head:
    """The head of ``HEAD``'s JSON; ValueError naming what is wrong with it."""
    if not isinstance(data, dict) or set(data) != {"entries", "hash"}:
        raise ValueError(f"expected {HEAD_FORM}")
    entries, digest = data["entries"], data["hash"]
    if isinstance(entries, bool) or not isinstance(entries, int) or entries < 1:
        raise ValueError(f"entries must be a whole number from 1, got {entries!r}")
    if not isinstance(digest, str) or not HEX64.fullmatch(digest):
        raise ValueError(f"hash must be 64 lowercase hex digits, got {digest!r}")
    return Head(entries, digest)


def published_head(text: str) -> Head:
    """``ENTRIES:HASH`` (as ``stocker ledger head`` prints it) as a Head; ValueError otherwise."""
    match = re.fullmatch(r"([0-9]{1,18}):([0-9a-fA-F]{64})", text.strip())
    if match is None or int(match.group(1)) < 1:
        raise ValueError(
            f"{text!r}: use ENTRIES:HASH, e.g. 240:<64 hex digits> (`stocker ledger head` prints it)"
        )
    return Head(int(match.group(1)), match.group(2).lower())


@dataclass(frozen=True)
class Scored:
    """What ``SCORED`` says: the derived tables were computed from the chain up to ``head`` at
    instant ``at``, and the sha256 of each file as written."""

    head: Head
    at: pd.Timestamp
    digests: dict[str, str]

    def as_json(self) -> dict[str, Any]:
        return {
            "entries": self.head.entries,
            "hash": self.head.hash,
            "at": self.at.isoformat(),
            **{name: self.digests[name] for name in DERIVED},
        }


def scored_of(data: Any) -> Scored:
    """The provenance of ``SCORED``'s JSON; ValueError naming what is wrong with it."""
    keys = {"entries", "hash", "at", *DERIVED}
    if not isinstance(data, dict) or set(data) != keys:
        raise ValueError(f"expected the keys {', '.join(sorted(keys))}")
    entries, digest, at = data["entries"], data["hash"], data["at"]
    if isinstance(entries, bool) or not isinstance(entries, int) or entries < 0:
        raise ValueError(f"entries must be a whole number, got {entries!r}")
    if not isinstance(digest, str) or not HEX64.fullmatch(digest):
        raise ValueError(f"hash must be 64 lowercase hex digits, got {digest!r}")
    if entries == 0 and digest != GENESIS:
        raise ValueError("no entries scored, yet a hash other than the chain's start")
    for name in DERIVED:
        if not isinstance(data[name], str) or not HEX64.fullmatch(data[name]):
            raise ValueError(f"{name} must be a sha256 (64 lowercase hex digits), got {data[name]!r}")
    try:
        instant = pd.Timestamp(at) if isinstance(at, str) else None
    except ValueError:
        instant = None
    if instant is None or pd.isna(instant) or instant.tzinfo is None:
        raise ValueError(f"at must be an ISO instant with a zone, got {at!r}")
    return Scored(Head(entries, digest), instant.tz_convert("UTC"), {n: data[n] for n in DERIVED})


def _reason(exc: BaseException) -> str:
    """An exception as one short line."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return text.strip().splitlines()[0][:200]


def _column_kind(column: str) -> str:
    if column in INT_FIELDS:
        return "int64"
    if column in FLOAT_FIELDS:
        return "double"
    return "string"


def _type_matches(kind: str, arrow: pa.DataType) -> bool:
    if kind == "int64":
        return arrow == pa.int64()
    if kind == "double":
        return arrow == pa.float64()
    return pa.types.is_string(arrow) or pa.types.is_large_string(arrow)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class LedgerStore:
    """The ledger's files under ``settings.home`` and their views in the warehouse."""

    def __init__(self, settings: Settings | None = None, *, warehouse_path: Path | None = None) -> None:
        path = settings.warehouse_path if settings is not None else warehouse_path
        if path is None:
            raise TypeError("LedgerStore needs settings or a warehouse_path")
        self.warehouse_path = Path(path)
        self.parts_root = self.warehouse_path.parent / "stocker.parts"
        self.root = self.parts_root / "ledger"

    # -- layout --------------------------------------------------------------------------
    @property
    def entries_dir(self) -> Path:
        return self.root / "entries"

    @property
    def head_path(self) -> Path:
        return self.root / "HEAD"

    @property
    def scored_path(self) -> Path:
        return self.root / "SCORED"

    @property
    def scoring_path(self) -> Path:
        """What a scoring in progress is about to make ``SCORED``: written before the tables are
        replaced, renamed onto ``SCORED`` after, so a scoring killed in between is recognisable."""
        return self.root / "SCORED.next"

    def table_path(self, name: str) -> Path:
        return self.root / name / "part.parquet"

    def name(self, path: Path) -> str:
        """``path`` as messages name it: relative to the ledger folder."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def entry_files(self) -> list[Path]:
        """The entry files the ledger wrote, in chain order (what ``scan`` accepts)."""
        return self.scan()[0]

    def scan(self) -> tuple[list[Path], list[str]]:
        """The entry files named as the ledger names them (in chain order), and a problem for
        everything else under ``entries/``: a file or folder the ledger never writes is not
        read by anyone (the views name their files one by one), and fails verification."""
        if not os.path.lexists(self.entries_dir):
            return [], []
        if self.entries_dir.is_symlink() or not self.entries_dir.is_dir():
            return [], ["entries is not a folder the ledger wrote (a file or a link)"]
        files: list[tuple[int, Path]] = []
        problems: list[str] = []
        try:
            folders = sorted(self.entries_dir.iterdir())
        except OSError as exc:
            return [], [f"entries: cannot be read ({_reason(exc)})"]
        for folder in folders:
            if folder.is_symlink() or not folder.is_dir() or not SESSION_FOLDER.fullmatch(folder.name):
                problems.append(
                    f"{self.name(folder)}: not written by the ledger (it keeps only "
                    "entries/session=<date>/part-<first seq>.parquet): forged or misplaced, read by no one"
                )
                continue
            try:
                inside = sorted(folder.iterdir())
            except OSError as exc:
                problems.append(f"{self.name(folder)}: cannot be read ({_reason(exc)})")
                continue
            for path in inside:
                if TEMPORARY.fullmatch(path.name) and not path.is_symlink() and path.is_file():
                    continue  # an unfinished write: never read (the next recording removes it)
                match = ENTRY_FILE.fullmatch(path.name)
                if match is None or path.is_symlink() or not path.is_file():
                    problems.append(
                        f"{self.name(path)}: not a file the ledger writes (its entry files are "
                        "part-<first seq>.parquet): forged or misplaced, read by no one"
                    )
                    continue
                files.append((int(match.group(1)), path))
        files.sort()
        return [path for _, path in files], problems

    # -- reading -------------------------------------------------------------------------
    def read_bytes(self, path: Path, limit: int) -> bytes:
        """``path``'s bytes, read only as a regular file inside the ledger folder reached through
        no link, of at most ``limit`` bytes (``files.read_inside``); LedgerFileError otherwise."""
        return read_inside(self.root, self.name(path), limit)

    def digest(self, path: Path) -> str:
        """The sha256 of a ledger file as ``read_bytes`` reads it."""
        return hashlib.sha256(self.read_bytes(path, TABLE_LIMIT)).hexdigest()

    def read_entry_file(self, path: Path) -> tuple[list[LedgerEntry], list[str], str | None]:
        """The entries of one file, every value exactly as stored, its problems (unreadable, not
        a regular file, too large, a column missing, added or of another type, a value of the
        wrong kind: NaN, null) and the sha256 of the bytes read (None when none were)."""
        where = self.name(path)
        try:
            data = self.read_bytes(path, ENTRY_FILE_LIMIT)
        except LedgerFileError as exc:
            return [], [f"{where}: not read ({exc})"], None
        digest = hashlib.sha256(data).hexdigest()
        entries, problems = self._entries_of(where, data)
        return entries, problems, digest

    def _entries_of(self, where: str, data: bytes) -> tuple[list[LedgerEntry], list[str]]:
        try:
            table = pq.read_table(pa.BufferReader(data))
        except (pa.ArrowException, OSError, ValueError) as exc:
            return [], [f"{where}: not a readable Parquet file ({_reason(exc)})"]
        names = table.column_names
        if len(set(names)) != len(names):
            return [], [f"{where}: a column appears twice"]
        missing = [c for c in ENTRY_COLUMNS if c not in names]
        if missing:
            return [], [f"{where}: column {missing[0]} is missing"]
        extra = [c for c in names if c not in ENTRY_COLUMNS]
        if extra:
            return [], [f"{where}: column {extra[0]!r} is not one the ledger writes (it would not be hashed)"]
        for column in ENTRY_COLUMNS:
            kind, actual = _column_kind(column), table.schema.field(column).type
            if not _type_matches(kind, actual):
                return [], [f"{where}: column {column} holds {actual}, the ledger writes {kind}"]
        if table.num_rows == 0:
            return [], [f"{where}: holds no entry (the ledger never writes an empty file)"]
        entries: list[LedgerEntry] = []
        problems: list[str] = []
        for number, row in enumerate(table.to_pylist(), start=1):
            try:
                entries.append(entry_from_mapping(row))
            except ValueError as exc:
                seq = row.get("seq")
                who = f"entry #{seq}" if isinstance(seq, int) else f"row {number}"
                problems.append(f"{who} ({where}): {_reason(exc)}")
        return entries, problems

    def naming_problems(self, path: Path, entries: Sequence[LedgerEntry]) -> list[str]:
        """A file whose name (its first entry) or folder (the session decided on) does not match
        the entries it holds."""
        problems: list[str] = []
        where = self.name(path)
        if entries:
            first = int(ENTRY_FILE.fullmatch(path.name).group(1))  # type: ignore[union-attr]
            session = SESSION_FOLDER.fullmatch(path.parent.name).group(1)  # type: ignore[union-attr]
            if entries[0].seq != first:
                problems.append(
                    f"{where}: holds entry #{entries[0].seq} first (the ledger names a file after its "
                    "first entry)"
                )
            strays = [e for e in entries if e.decided_on != session]
            if strays:
                problems.append(
                    f"{where}: holds {strays[0].describe()} decided on {strays[0].decided_on} (the ledger "
                    f"files an entry under the session it was decided on)"
                )
        return problems

    def read_head(self) -> tuple[Head | None, str | None]:
        """What ``HEAD`` says (None before the first recording), or why it cannot be read."""
        if not os.path.lexists(self.head_path):
            return None, None
        try:
            return head_of(json_object(self.read_bytes(self.head_path, HEAD_LIMIT).decode("utf-8"))), None
        except (OSError, ValueError, RecursionError) as exc:
            return None, f"HEAD is not what the ledger writes ({HEAD_FORM}): {_reason(exc)}"

    def read_scored(self, path: Path | None = None) -> tuple[Scored | None, str | None]:
        """What ``SCORED`` (or ``path``: ``scoring_path``) says, None when it is not there, or
        why it cannot be read."""
        path = self.scored_path if path is None else path
        if not os.path.lexists(path):
            return None, None
        try:
            return scored_of(json_object(self.read_bytes(path, HEAD_LIMIT).decode("utf-8"))), None
        except (OSError, ValueError, RecursionError) as exc:
            return None, f"{path.name} is not what `stocker ledger score` writes: {_reason(exc)}"

    def read_derived(self, name: str) -> tuple[pa.Table | None, str | None, str | None]:
        """A derived table's file as stored and the sha256 of the bytes read, or why it cannot
        be read (a link, not a regular file, too large, not Parquet)."""
        path = self.table_path(name)
        try:
            data = self.read_bytes(path, TABLE_LIMIT)
        except LedgerFileError as exc:
            return None, None, f"{self.name(path)}: not a file the ledger writes ({exc})"
        try:
            return pq.read_table(pa.BufferReader(data)), hashlib.sha256(data).hexdigest(), None
        except (pa.ArrowException, OSError, ValueError) as exc:
            return None, None, f"{self.name(path)}: not a readable Parquet file ({_reason(exc)})"

    def views_defined(self) -> bool:
        """Whether ``stocker.duckdb`` defines ``ledger.entries``: a recording moved ``HEAD`` and
        refreshed the views at least once (a first recording killed before ``HEAD`` never did)."""
        if not self.warehouse_path.is_file():
            return False
        found = Warehouse(self.warehouse_path).query(
            "SELECT count(*) AS n FROM duckdb_views() WHERE schema_name = 'ledger' AND view_name = 'entries'"
        )
        return int(found["n"].iloc[0]) > 0

    # -- writing -------------------------------------------------------------------------
    def check_writable(self) -> None:
        """LedgerInputError (one line) unless the ledger folder can be created and written.
        Creates nothing: the folders are made when a recording is accepted."""
        path = self.root
        while not os.path.lexists(path) and path != path.parent:
            path = path.parent
        problem = None
        if not path.is_dir():
            problem = f"{path} is not a folder"
        elif not os.access(path, os.W_OK | os.X_OK):
            problem = "Permission denied"
        if problem is not None:
            raise LedgerInputError(f"cannot write the ledger folder {self.root}: {problem}")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """An exclusive lock over the ledger for one read-then-write (creates the ledger folder)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root / ".lock", flags, 0o644)  # a link or a FIFO: refused, never waited on
        except OSError as exc:
            raise LedgerInputError(
                f"cannot write the ledger folder {self.root}: .lock: {_reason(exc)}"
            ) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise LedgerInputError(
                    f"cannot write the ledger folder {self.root}: .lock is not a regular file"
                )
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A shared lock for one consistent read: a recording or scoring in progress (which holds
        ``locked``) finishes first, so a reader never sees half of one. Creates nothing; without
        a lock file (nothing ever written) there is nothing to wait for."""
        try:
            fd = os.open(self.root / ".lock", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            fd = None
        try:
            if fd is not None:
                with suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            if fd is not None:
                os.close(fd)

    def remove_temporaries(self) -> None:
        """Remove what killed writers left (``.part-*.tmp`` …); only under ``locked``."""
        folders = [self.root, *(self.root / n for n in DERIVED)]
        if self.entries_dir.is_dir() and not self.entries_dir.is_symlink():
            folders += [f for f in self.entries_dir.iterdir() if SESSION_FOLDER.fullmatch(f.name)]
        for folder in folders:
            if folder.is_symlink() or not folder.is_dir():
                continue
            for path in folder.iterdir():
                if TEMPORARY.fullmatch(path.name) and path.is_file() and not path.is_symlink():
                    path.unlink(missing_ok=True)

    def write_entry_file(self, entries: Sequence[LedgerEntry]) -> Path:
        """Write ``entries`` (the continuation of the chain) as one new file; only under ``locked``.

        The file goes to a temporary name, is flushed to disk and linked into place, so a reader
        sees all of it or none, and an existing file is never replaced. ``HEAD`` is moved after
        (``set_head``): a process killed in between leaves the file after ``HEAD``, which the next
        recording finishes (``record``)."""
        first = entries[0]
        folder = self.entries_dir / f"session={first.decided_on}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerInputError(f"cannot write the ledger folder {folder}: {_reason(exc)}") from None
        path = folder / f"part-{first.seq:09d}.parquet"
        if os.path.lexists(path):
            raise StockerError(f"ledger file {path} exists already; entries are never rewritten")
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-", suffix=".tmp")
        os.close(fd)
        try:
            entries_frame(entries).to_parquet(tmp, index=False)
            _fsync(Path(tmp))
            os.link(tmp, path)  # fails if another writer got there first: never overwrite
        finally:
            Path(tmp).unlink(missing_ok=True)
        _fsync(folder)
        return path

    def set_head(self, head: Head) -> None:
        """Move ``HEAD`` (an atomic rename); only under ``locked``."""
        write_json_atomic(self.head_path, {"entries": head.entries, "hash": head.hash})

    def write_derived(
        self, scores: pd.DataFrame, record: pd.DataFrame, head: Head, at: pd.Timestamp
    ) -> Scored:
        """Replace the scores, the forward record and ``SCORED`` (what they were computed from,
        their sha256); only under ``locked``. Each file is renamed into place; a process killed
        between them leaves files that do not match ``SCORED``, which the next scoring rewrites."""
        try:
            return self._write_derived(scores, record, head, at)
        except OSError as exc:
            raise LedgerInputError(
                f"cannot write the ledger's scores under {self.root}: {_reason(exc)}"
            ) from None

    def _write_derived(
        self, scores: pd.DataFrame, record: pd.DataFrame, head: Head, at: pd.Timestamp
    ) -> Scored:
        staged: dict[str, str] = {}
        digests: dict[str, str] = {}
        try:
            for name, frame in (("scores", scores), ("record", record)):
                path = self.table_path(name)
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-", suffix=".tmp")
                os.close(fd)
                staged[name] = tmp
                frame.to_parquet(tmp, index=False)
                digests[name] = sha256_of(Path(tmp))
            scored = Scored(head, pd.Timestamp(at).tz_convert("UTC"), digests)
            write_json_atomic(self.scoring_path, scored.as_json())  # what SCORED is about to say
            for name, tmp in staged.items():
                os.replace(tmp, self.table_path(name))
        finally:
            for tmp in staged.values():
                Path(tmp).unlink(missing_ok=True)
        os.replace(self.scoring_path, self.scored_path)
        return scored

    def refresh_views(
        self, files: Sequence[Path], scored: Scored | None, digests: dict[Path, str] | None = None
    ) -> None:
        """(Re)define ``ledger.entries|scores|record`` over exactly ``files`` (the entry files
        the reader accepted) and the derived tables ``scored`` describes, by relative paths.
        Each view is guarded by the sha256 of every one of those files: once any of them
        changed, every view refuses to answer (``stocker sql``, the report) until verified and
        rewritten. ``digests``: the sha256 of each file as the reader read and checked it."""
        relative = "stocker.parts/ledger/"
        known = digests or {}
        guard = {relative + self.name(f): known.get(f) or self.digest(f) for f in files}
        derived = {}
        if scored is not None:
            derived = {name: relative + self.name(self.table_path(name)) for name in DERIVED}
            guard.update({derived[name]: scored.digests[name] for name in DERIVED})
        with Warehouse(self.warehouse_path).connect() as con:
            con.execute("CREATE SCHEMA IF NOT EXISTS ledger")
            if files:
                reads = [relative + self.name(f) for f in files]
                con.execute(f"CREATE OR REPLACE VIEW ledger.entries AS {_guarded_select(reads, guard)}")
            for name in DERIVED:
                if scored is None:
                    con.execute(f"DROP VIEW IF EXISTS ledger.{name}")
                else:
                    select = _guarded_select([derived[name]], guard)
                    con.execute(f"CREATE OR REPLACE VIEW ledger.{name} AS {select}")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _guarded_select(reads: Sequence[str], guard: dict[str, str]) -> str:
    """``SELECT *`` over exactly the files ``reads``, answering only while every file of
    ``guard`` has its sha256 (a relative path matches the absolute name DuckDB reports)."""
    listing = ", ".join(_quote(p) for p in reads)
    guarded = ", ".join(_quote(p) for p in guard)
    pairs = ", ".join(f"({_quote(p)}, {_quote(d)})" for p, d in guard.items())
    message = (
        "ledger: a file under stocker.parts/ledger changed since the ledger wrote it; "
        "`stocker ledger verify` names it"
    )
    return (
        f"SELECT * FROM read_parquet([{listing}], hive_partitioning = false) "
        f"WHERE (SELECT CASE WHEN count(*) = {len(guard)} THEN true ELSE error({_quote(message)}) END "
        f"FROM read_blob([{guarded}]) AS b JOIN (VALUES {pairs}) AS d(path, digest) "
        "ON (b.filename = d.path OR ends_with(b.filename, '/' || d.path)) AND sha256(b.content) = d.digest)"
    )


def _fsync(path: Path) -> None:
    """Flush a file's (or a folder's) content to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
