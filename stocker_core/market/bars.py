"""The one way to read bars for a consumer: the warehouse first, else the configured source."""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path

import pandas as pd

from stocker_core.config import Settings
from stocker_core.market.sources import MarketDataSource, get_source
from stocker_core.warehouse.db import Warehouse


def _folder_signature(folder: Path | None) -> tuple[tuple[str, int, int], ...]:
    if folder is None or not folder.is_dir():
        return ()
    return tuple(
        (p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.iterdir()) if p.is_file()
    )


@lru_cache(maxsize=8)
def _cached_source(name: str, folder: Path | None, signature: tuple) -> MarketDataSource:
    return get_source(Settings(source=name, files_dir=folder))


def configured_source(settings: Settings) -> MarketDataSource:
    """The configured source; file-backed ones are reused until their folder changes."""
    if settings.source == "files":
        return _cached_source("files", settings.files_dir, _folder_signature(settings.files_dir))
    if settings.source == "sample":
        return _cached_source("sample", None, ())
    return get_source(settings)


def load_bars(
    settings: Settings,
    ticker: str,
    start: date | None,
    end: date,
    warehouse: Warehouse | None = None,
) -> tuple[pd.DataFrame, str]:
    """Bars of ``ticker`` with ``start <= date < end`` and where they came from.

    The warehouse (``settings.warehouse_path`` unless given) wins when it has rows in
    the range; otherwise the configured source answers (it raises UnknownTickerError
    for a symbol it does not know). A missing warehouse file is never created.
    """
    if warehouse is None and settings.warehouse_path.exists():
        warehouse = Warehouse(settings.warehouse_path)
    if warehouse is not None and warehouse.path.exists():
        stored = warehouse.read_prices(ticker, start, end)
        if len(stored):
            return stored, "warehouse"
    source = configured_source(settings)
    return source.fetch(ticker, start or date(1900, 1, 1), end), source.name
