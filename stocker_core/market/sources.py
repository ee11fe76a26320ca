"""Market data sources behind one interface, selected by configuration."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Protocol

import pandas as pd

from stocker_core.config import Settings
from stocker_core.errors import InvalidNameError, UnknownTickerError


@dataclass(frozen=True)
class SymbolInfo:
    """What a source knows about a symbol's history."""

    ticker: str
    first_date: date
    last_date: date
    close_only: bool


class MarketDataSource(Protocol):
    """Returns normalized daily bars (see ``frames.normalize_bars``)."""

    name: str

    def fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        """Bars with ``start <= date < end``; zero rows when the symbol has none there.

        Raises UnknownTickerError for a symbol the source does not know.
        """
        ...

    def symbol_info(self, ticker: str) -> SymbolInfo:
        """First/last available date of a known symbol; UnknownTickerError otherwise."""
        ...

    def symbols(self) -> list[str]:
        """Symbols the source can list (empty when it cannot enumerate, e.g. yfinance)."""
        ...


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


def get_source(settings: Settings) -> MarketDataSource:
    """The source named by ``settings.source`` (``sample`` | ``files`` | ``yfinance`` |
    ``synthetic``), behind
    the quality gate (``gate.QualityGatedSource``) with ``$STOCKER_HOME/corrections.csv``; under
    ``STOCKER_CLOCK`` it reveals only bars whose session closed by the clock (``clock.ClockedSource``)."""
    from stocker_core.market.clock import clocked
    from stocker_core.market.corrections import load_corrections, sample_source_corrections
    from stocker_core.market.gate import QualityGatedSource

    corrections = load_corrections(settings.home / "corrections.csv")
    if settings.source == "sample":
        corrections += sample_source_corrections()
    return QualityGatedSource(clocked(_raw_source(settings), settings.clock), corrections)


def _raw_source(settings: Settings) -> MarketDataSource:
    if settings.source == "sample":
        from stocker_core.market.sample_source import SampleSource

        return SampleSource()
    if settings.source == "files":
        from stocker_core.market.files_source import FilesSource

        if settings.files_dir is None:
            raise InvalidNameError(
                "STOCKER_SOURCE=files needs STOCKER_FILES_DIR, a folder of CSV/Parquet bars"
            )
        return FilesSource(settings.files_dir)
    if settings.source == "yfinance":
        from stocker_core.market.yfinance_source import YFinanceSource

        return YFinanceSource()
    if settings.source == "synthetic":
        from stocker_core.market.synthetic import SyntheticSource, SyntheticSpec

        return SyntheticSource(SyntheticSpec.from_settings(settings))
    raise InvalidNameError(f"unknown source {settings.source!r}: use sample, files, yfinance or synthetic")
