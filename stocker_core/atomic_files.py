"""Replacing a file atomically: write a temporary file beside it, then rename it over."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` so that a reader sees the old file or the new one, never
    half of it (a unique temporary name in the same folder, renamed over; removed on failure).
    ``mode`` sets the file's permissions (e.g. ``0o600`` for a file holding a password)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """``write_bytes_atomic`` of ``text`` in UTF-8."""
    write_bytes_atomic(path, text.encode("utf-8"), mode)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """``write_text_atomic`` of ``data`` as indented, key-sorted JSON."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str))
