"""The one way to read bars for a consumer: the warehouse when it covers the range with
bars from the configured source, else that source — one place for the whole range."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

import pandas as pd

from stocker_core.config import Settings
from stocker_core.data_sources import MarketDataSource, known_source, prefetch
from stocker_core.errors import UnknownTickerError
from stocker_core.market.source_builder import get_source
from stocker_core.warehouse.db import Warehouse


@dataclass(frozen=True)
class _Kept:
    """What a kept source is kept under: its name and its description's ``reuse_key``. The
    settings that build it ride along outside the key (settings of one key build one source)."""

    name: str
    key: Hashable
    settings: Settings = field(compare=False)


@lru_cache(maxsize=8)
def _kept_source(kept: _Kept) -> MarketDataSource:
    return get_source(kept.settings.model_copy(update={"clock": None}))


def configured_source(settings: Settings) -> MarketDataSource:
    """The configured source, built once per key of its description's ``reuse_key`` (the
    sample once, a files folder until a file changes, the synthetic market per spec; a source
    without one is built on each call). Under ``STOCKER_CLOCK`` the kept source is put behind
    the clock (``clock.ClockedSource``), so moving the clock does not build it again."""
    from stocker_core.market.clock import clocked

    described = settings.data_source
    if described.reuse_key is None:
        return get_source(settings)  # already behind the clock
    kept = _kept_source(_Kept(described.name, described.reuse_key(settings), settings))
    return clocked(kept, settings.clock)


def warehouse_covers(
    warehouse: Warehouse, settings: Settings, ticker: str, start: date | None, end: date
) -> bool:
    """Whether the warehouse alone can answer ``[start, end)`` for ``ticker``: every bar
    stored in the range came from the configured source, and every calendar month the
    source has data for (``market.symbols``: first/last date, from ``STOCKER_START_MONTH``
    on) holds stored bars. Bars stored before sources were recorded count as unknown."""
    info = warehouse.symbol_row(ticker)
    if info is None or info.get("source") != settings.source:
        return False
    first = max(
        pd.Timestamp(start or date.min),
        pd.Timestamp(info["first_date"]),
        pd.Timestamp(settings.start_month),
    )
    last = min(pd.Timestamp(end) - pd.Timedelta(days=1), pd.Timestamp(info["last_date"]))
    if first > last:
        return False
    months = warehouse.price_months(ticker, start, end)
    if any(list(sources) != [settings.source] for sources in months["sources"]):
        return False
    stored = {pd.Timestamp(m).to_period("M") for m in months["month"]}
    return all(p in stored for p in pd.period_range(first, last, freq="M"))


def prefetch_missing(
    source: MarketDataSource, warehouse: Warehouse | None, tickers: list[str], start: date, end: date
) -> object | None:
    """``data_sources.prefetch`` of ``tickers`` in ``[start, end)`` for a run of many tickers:
    a source that fetches in multi-ticker batches (yfinance) asks for them all at once, never
    for the months ``warehouse`` holds; None for one ticker or a source that cannot. Raises the
    source's DataSourceError when a batch fails for good (each ticker can then be fetched on
    its own)."""
    if len(tickers) < 2:
        return None

    def held(ticker: str) -> set[date]:
        if warehouse is None or not warehouse.path.exists():
            return set()
        return {pd.Timestamp(m).date() for m in warehouse.price_months(ticker, start, end)["month"]}

    return prefetch(source, tickers, start, end, held)


def load_bars(
    settings: Settings,
    ticker: str,
    start: date | None,
    end: date,
    warehouse: Warehouse | None = None,
) -> tuple[pd.DataFrame, str]:
    """Bars of ``ticker`` with ``start <= date < end`` and where they came from.

    One place answers the whole range, never a mix: the warehouse
    (``settings.warehouse_path`` unless given) when it covers the range with bars from
    the configured source (``warehouse_covers``), otherwise the configured source
    (which raises UnknownTickerError for a symbol it does not know, unless the warehouse
    holds bars of that symbol: then all of them come from there). Callers that need
    history and window together read them in one call. A missing warehouse file is
    never created.
    """
    if warehouse is None and settings.warehouse_path.exists():
        warehouse = Warehouse(settings.warehouse_path)
    if (
        warehouse is not None
        and warehouse.path.exists()
        and warehouse_covers(warehouse, settings, ticker, start, end)
    ):
        return warehouse.read_prices(ticker, start, end), "warehouse"
    source = configured_source(settings)
    try:
        return source.fetch(ticker, start or date(1900, 1, 1), end), source.name
    except UnknownTickerError:
        # a symbol only the warehouse knows (stored by hand, synthetic): all from there
        stored = warehouse.read_prices(ticker, start, end) if warehouse and warehouse.path.exists() else None
        if stored is not None and len(stored):
            return stored, "warehouse"
        raise


def missing_bars_hint(settings: Settings, otherwise: str) -> str:
    """Where else bars are when the configured source has none for a ticker or a window, as
    the source describes it (``DataSource.missing_bars_hint``), else ``otherwise``."""
    described = known_source(settings.source)
    return (described.missing_bars_hint if described is not None else None) or otherwise


def missing_bars_message(
    settings: Settings, ticker: str, start: date, end: date, bars: pd.DataFrame, where: str = ""
) -> str:
    """Why ``ticker`` has no bars in ``[start, end)``: what was read (``bars``: the
    symbol's bars up to ``end``, from ``where``: "warehouse" or a source's name), what
    they hold, which source would have the window."""
    where = "the warehouse" if where == "warehouse" else f"the {(where or settings.source)!r} source"
    held = ""
    if len(bars):
        first, last = bars["date"].iloc[0].date(), bars["date"].iloc[-1].date()
        held = f" ({where} has {ticker} bars from {first} to {last})"
    else:
        try:
            info = configured_source(settings).symbol_info(ticker)
            held = f" (the {settings.source!r} source has {ticker} {info.first_date} … {info.last_date})"
        except Exception:  # noqa: BLE001 - only a hint; the error itself stands
            held = ""
    hint = missing_bars_hint(settings, "pick another window")
    return (
        f"no bars for {ticker} between {start} and {end} in the warehouse or the {settings.source!r} "
        f"source{held}; {hint} — or pick another window"
    )
