"""Market data sources behind one interface, selected by configuration: ``STOCKER_SOURCE``
names a source registered in ``config.py`` (``register_source``), ``get_source`` builds it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Protocol

import pandas as pd

from stocker_core.config import DataSource, Settings, data_source, provide_builtin_source
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
    """The registered source named by ``settings.source`` (``config.source_names()``: sample,
    files, yfinance, synthetic and any added with ``config.register_source``), behind
    the quality gate (``gate.QualityGatedSource``) with ``$STOCKER_HOME/corrections.csv`` and
    the source's own vetted corrections; under ``STOCKER_CLOCK`` it reveals only bars whose
    session closed by the clock (``clock.ClockedSource``)."""
    from stocker_core.market.clock import clocked
    from stocker_core.market.corrections import load_corrections
    from stocker_core.market.gate import QualityGatedSource

    spec = data_source(settings.source)
    if spec.factory is None:  # a reserved built-in name: provided at the end of this module
        raise InvalidNameError(f"source {spec.name!r} has no factory")
    corrections = load_corrections(settings.home / "corrections.csv")
    if spec.corrections is not None:
        corrections += list(spec.corrections())
    return QualityGatedSource(clocked(spec.factory(settings), settings.clock), corrections)


# The built-in sources' factories (their names are reserved in ``config.py``).


def sample_source(settings: Settings) -> MarketDataSource:
    """The bundled sample: GOOGL bars and S&P 500 close series (``sample_source.SampleSource``)."""
    from stocker_core.market.sample_source import SampleSource

    return SampleSource()


def files_source(settings: Settings) -> MarketDataSource:
    """CSV/Parquet bars in ``STOCKER_FILES_DIR`` (``files_source.FilesSource``)."""
    from stocker_core.market.files_source import FilesSource

    if settings.files_dir is None:
        raise InvalidNameError("STOCKER_SOURCE=files needs STOCKER_FILES_DIR, a folder of CSV/Parquet bars")
    return FilesSource(settings.files_dir)


def yfinance_source(settings: Settings) -> MarketDataSource:
    """Yahoo Finance through ``yfinance`` (``yfinance_source.YFinanceSource``)."""
    from stocker_core.market.yfinance_source import YFinanceSource

    return YFinanceSource()


def synthetic_source(settings: Settings) -> MarketDataSource:
    """The seeded synthetic market of the ``STOCKER_SYNTH_*`` settings (``synthetic.SyntheticSource``)."""
    from stocker_core.market.synthetic import SyntheticSource, SyntheticSpec

    return SyntheticSource(SyntheticSpec.from_settings(settings))


def _sample_corrections() -> list:
    from stocker_core.market.corrections import sample_source_corrections

    return sample_source_corrections()


provide_builtin_source(DataSource("sample", sample_source, corrections=_sample_corrections))
provide_builtin_source(DataSource("files", files_source))
provide_builtin_source(DataSource("yfinance", yfinance_source))
provide_builtin_source(DataSource("synthetic", synthetic_source))
