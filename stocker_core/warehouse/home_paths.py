"""Paths stored in a home are relative to it, so a home can be copied or moved (``cp -a``, ``mv``).

What the warehouse and the model folders record about files of the home (chart PNGs, model
folders, SB3 zips, report files, an adapter's base model) is a posix path relative to
``STOCKER_HOME`` — the warehouse's folder — written by ``stored_path`` and read back by
``resolve_path`` against the home in use. Rows and files written before this rule hold
absolute paths: ``resolve_path`` re-anchors one whose file lies under the current home (the
longest tail of its parts that exists there), so a copied or moved home finds its own files
and never those of the home it was copied from. ``HOME_PATH_COLUMNS`` names the warehouse
columns holding such paths: the warehouse stores them relative on write, resolves them on its
typed reads, and rewrites old absolute values of its DuckDB tables on connect.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

HOME_PATH_COLUMNS: dict[str, tuple[str, ...]] = {
    "market.charts": ("path",),
    "models.runs": ("path",),
    "eval.reports": ("html_path", "markdown_path"),
}
"""Warehouse columns that hold a path of a file of the home."""

RELOCATED_FILES = ("adapter_config.json", "README.md")
"""Text files a model library writes with its base model's folder in them (peft's adapter
config and model card): ``relocate_files`` makes that folder home-relative."""


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value) == ""


def _inside(path: Path, home: Path) -> Path | None:
    """``path`` relative to ``home`` when it lies inside it (lexically, or once symlinks and
    ``..`` are resolved); else None."""
    try:
        return path.relative_to(home)
    except ValueError:
        pass
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(home))
    except ValueError:
        return None


def stored_path(path: Path | str, home: Path | str) -> str:
    """What to store for ``path``: a posix path relative to ``home`` when it lies inside it
    (``models/moderator_sft``), else the path unchanged (a folder outside the home, e.g. a
    pretrained model's, is the user's to keep in place)."""
    given = Path(path)
    if not given.is_absolute():
        return given.as_posix()
    inside = _inside(given, Path(home))
    return inside.as_posix() if inside is not None else given.as_posix()


def resolve_path(stored: object, home: Path | str) -> Path | None:
    """The file a stored path names in the current ``home``: a relative path joined to it; an
    absolute one inside it as is; an absolute one from elsewhere (a home this one was copied
    or moved from) re-anchored at the longest tail of its parts that exists under ``home``,
    else kept as it is (its file may live outside any home). None for an empty value."""
    if _is_blank(stored):
        return None
    path, root = Path(str(stored)), Path(home)
    if not path.is_absolute():
        return root / path
    if _inside(path, root) is not None:
        return path
    parts = path.parts[1:]
    for start in range(len(parts)):
        candidate = root.joinpath(*parts[start:])
        if candidate.exists():
            return candidate
    return path


def store_columns(table: str, frame: pd.DataFrame, home: Path | str) -> pd.DataFrame:
    """``frame`` with its ``HOME_PATH_COLUMNS`` of ``table`` as ``stored_path`` values (a copy;
    ``frame`` itself when there is nothing to change)."""
    columns = [c for c in HOME_PATH_COLUMNS.get(table, ()) if c in frame.columns]
    if not columns or frame.empty:
        return frame
    out = frame.copy()
    for column in columns:
        out[column] = [None if _is_blank(v) else stored_path(str(v), home) for v in out[column]]
    return out


def resolve_columns(table: str, frame: pd.DataFrame, home: Path | str) -> pd.DataFrame:
    """``frame`` (read from ``table``) with its ``HOME_PATH_COLUMNS`` as absolute paths in
    ``home`` (``resolve_path``, as strings)."""
    columns = [c for c in HOME_PATH_COLUMNS.get(table, ()) if c in frame.columns]
    if not columns or frame.empty:
        return frame
    for column in columns:
        resolved = (resolve_path(v, home) for v in frame[column])
        frame[column] = [None if p is None else str(p) for p in resolved]
    return frame


def relocate_text(text: str, home: Path | str) -> str:
    """``text`` with every absolute spelling of ``home`` followed by ``/`` removed, so the
    paths into the home it holds read relative to it."""
    spellings = {str(Path(home)), os.path.realpath(home)}
    for spelling in sorted(spellings, key=len, reverse=True):
        text = text.replace(spelling.rstrip("/") + "/", "")
    return text


def relocate_files(
    folder: Path | str, home: Path | str, names: Iterable[str] = RELOCATED_FILES
) -> list[Path]:
    """Make the home's absolute paths in ``folder``'s files named ``names`` (at any depth)
    home-relative (``relocate_text``), e.g. peft's ``base_model_name_or_path``; returns the
    files changed. The weights are untouched: a loader is always given the base folder."""
    from stocker_core.atomic_files import write_text_atomic

    changed = []
    root = Path(folder)
    if not root.is_dir():
        return changed
    for name in names:
        for path in sorted(root.rglob(name)):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            fixed = relocate_text(text, home)
            if fixed != text:
                write_text_atomic(path, fixed)
                changed.append(path)
    return changed
