"""Reading one ledger file safely: only a regular file inside the ledger folder, never more than
a bound.

Every component below the ledger folder is opened without following a symbolic link (a link
named ``HEAD`` that points at ``/dev/zero``, a session folder linked elsewhere: refused, never
followed), the file itself without blocking (a FIFO is named, not waited on), and it is read
only when ``fstat`` says it is a regular file no larger than the bound — the bytes read are
the ones checked, so nothing can swap the file between the check and the read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

KIB = 1024
MIB = 1024 * KIB
HEAD_LIMIT = 4 * KIB
"""``HEAD`` and ``SCORED`` are a few hundred bytes of JSON."""
ENTRY_FILE_LIMIT = 256 * MIB
"""One recording's Parquet file: a row per ticker × policy (kilobytes for hundreds of tickers)."""
TABLE_LIMIT = 1024 * MIB
"""``scores/part.parquet`` or ``record/part.parquet``: a row per scored entry, at most."""

EXPORT_LIMIT = 4096 * MIB
"""A JSON Lines export: a few hundred bytes per entry."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class LedgerFileError(ValueError):
    """A ledger file that is not read: missing, a link, not a regular file, or too large."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link (the ledger writes regular files and follows no link)"
    if exc.errno == errno.ENOTDIR:
        return "a folder on its path is not a folder"
    if exc.errno == errno.ENOENT:
        return "missing"
    return exc.strerror or str(exc)


def read_inside(root: Path, relative: str, limit: int) -> bytes:
    """The bytes of ``root/relative`` when it is a regular file of at most ``limit`` bytes reached
    through no symbolic link below ``root``; LedgerFileError saying why not otherwise."""
    parts = PurePosixPath(relative).parts
    if not parts or any(p in ("", ".", "..") for p in parts):
        raise LedgerFileError(f"{relative!r} is not a path inside the ledger folder")
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise LedgerFileError(f"the ledger folder: {_why(exc)}") from None
    try:
        for name in parts[:-1]:
            inner = os.open(name, _DIR_FLAGS, dir_fd=folder)
            os.close(folder)
            folder = inner
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=folder)
    except OSError as exc:
        raise LedgerFileError(_why(exc)) from None
    finally:
        os.close(folder)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise LedgerFileError(f"{_kind(info.st_mode)}, not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > limit:
            raise LedgerFileError(f"{info.st_size:,} bytes, more than the ledger writes ({limit:,} at most)")
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise LedgerFileError(_why(exc)) from None
    if len(data) > limit:
        raise LedgerFileError(f"more than the ledger writes ({limit:,} bytes at most)")
    return data


def read_export(path: Path, limit: int = EXPORT_LIMIT) -> bytes:
    """The bytes of a JSON Lines export given by path (a file or a pipe, never a device or a
    folder, at most ``limit`` bytes); LedgerFileError saying why not, OSError when it cannot be
    opened."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        raise LedgerFileError(f"not a file ({_kind(mode)})")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise LedgerFileError(f"more than an export holds ({limit:,} bytes at most)")
    return data
