"""The helpers every market data source shares: cutting a date range, a symbol's history
from its frame, checking symbols against a source. The interface itself (``MarketDataSource``,
``SymbolInfo``), the description each source gives of itself and the registry are in
``stocker_core/data_sources.py``; ``source_builder.get_source`` builds the configured source,
and ``source_builder.register_sources`` registers the built-in ones (from the composition
root)."""

from __future__ import annotations

from datetime import date

import pandas as pd

from stocker_core.data_sources import MarketDataSource, SymbolInfo
from stocker_core.errors import UnknownTickerError


def slice_dates(frame: pd.DataFrame, start: date, end: date) -> pd.DataFrame:
    """Rows with ``start <= date < end``."""
    mask = (frame["date"] >= pd.Timestamp(start)) & (frame["date"] < pd.Timestamp(end))
    return frame.loc[mask].reset_index(drop=True)


def info_from_frame(ticker: str, frame: pd.DataFrame) -> SymbolInfo:
    """SymbolInfo of a full-history normalized frame."""
    from stocker_core.market.frames import is_close_only

    return SymbolInfo(
        ticker=ticker,
        first_date=frame["date"].iloc[0].date(),
        last_date=frame["date"].iloc[-1].date(),
        close_only=bool(is_close_only(frame)),
    )


def check_symbols(source: MarketDataSource, tickers: list[str]) -> list[str]:
    """``tickers`` if the source has every one; UnknownTickerError naming the others.

    Sources that cannot list their symbols (yfinance) accept any valid name here; their
    first ingest checks it.
    """
    known = source.symbols()
    unknown = [t for t in tickers if known and t not in known]
    if not unknown:
        return list(tickers)
    import difflib

    parts = []
    for ticker in unknown:
        close = difflib.get_close_matches(ticker, known, n=1, cutoff=0.6)
        parts.append(f"no symbol {ticker!r}" + (f" (did you mean {close[0]}?)" if close else ""))
    shown = ", ".join(known[:30]) + (" …" if len(known) > 30 else "")
    raise UnknownTickerError(f"the {source.name} source has {'; '.join(parts)}; it has: {shown}")
