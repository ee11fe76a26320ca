"""Bars from a folder of CSV/Parquet files, long (a ticker/symbol column) or per symbol."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stocker_core.errors import DataSourceError
from stocker_core.market.frames import canonical_column, normalize_bars
from stocker_core.market.table_source import TableSource
from stocker_core.market.validation import TICKER_PATTERN

BAR_SUFFIXES = {".csv", ".parquet", ".pq"}


def _read_table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix == ".csv":
            return pd.read_csv(path)
        return pd.read_parquet(path)
    except Exception as exc:  # malformed file: say which one
        raise DataSourceError(f"cannot read bars from {path}: {exc}") from exc


def _is_bar_table(frame: pd.DataFrame) -> bool:
    cols = {canonical_column(c) for c in frame.columns}
    return "close" in cols and "date" in cols


def load_bar_folder(folder: Path) -> dict[str, pd.DataFrame]:
    """Every symbol's normalized frame from the bar files in ``folder``.

    A file with a ``ticker``/``symbol`` column is long format; otherwise the file
    stem is the symbol (``AAPL.csv``). Files without date and close columns (e.g.
    news JSONL, task lists) are ignored. When a symbol appears in several files,
    the richer rows (with OHLC) win over close-only rows for the same date.
    """
    if not folder.is_dir():
        raise DataSourceError(f"STOCKER_FILES_DIR {folder} is not a folder")
    parts: dict[str, list[pd.DataFrame]] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in BAR_SUFFIXES:
            continue
        table = _read_table(path)
        if not _is_bar_table(table):
            continue
        table.columns = [canonical_column(c) for c in table.columns]
        if "ticker" in table.columns:
            for ticker, group in table.groupby("ticker", sort=True):
                parts.setdefault(str(ticker), []).append(group.drop(columns="ticker"))
        else:
            parts.setdefault(path.stem, []).append(table)
    frames: dict[str, pd.DataFrame] = {}
    for ticker, tables in parts.items():
        if not TICKER_PATTERN.fullmatch(ticker):
            continue
        normalized = [normalize_bars(t) for t in tables]
        # richer (more non-null OHLC) tables last so their rows win on duplicate dates
        normalized.sort(key=lambda f: f["open"].notna().sum())
        frames[ticker] = normalize_bars(pd.concat(normalized, ignore_index=True))
    if not frames:
        raise DataSourceError(f"no CSV/Parquet bar files with date and close columns in {folder}")
    return frames


class FilesSource(TableSource):
    """The ``files`` source: ``STOCKER_FILES_DIR`` holds the bars."""

    name = "files"

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        super().__init__(load_bar_folder(self.folder))
