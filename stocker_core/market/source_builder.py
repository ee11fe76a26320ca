"""Builds the market data source the settings name (``get_source``: behind the quality gate
and the clock), and the built-in sources' factories, registered by ``register_sources`` (which
the composition root, ``stocker_core.composition.register_all``, calls; nothing registers at
import)."""

from __future__ import annotations

from stocker_core.config import DataSource, Settings, data_source, register_source
from stocker_core.errors import InvalidNameError
from stocker_core.market.sources import MarketDataSource


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
    corrections = load_corrections(settings.home / "corrections.csv")
    if spec.corrections is not None:
        corrections += list(spec.corrections())
    return QualityGatedSource(clocked(spec.factory(settings), settings.clock), corrections)


# The built-in sources' factories (their names are reserved in ``config.py``): each imports its
# module inside the function, so an unused source costs nothing.


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
    """Yahoo Finance through ``yfinance`` (``yfinance_source.YFinanceSource``): what it fetched is
    kept in ``$STOCKER_HOME/downloads/yfinance`` (closed months are never asked again), at most
    ``STOCKER_YFINANCE_REQUESTS_PER_MINUTE`` requests a minute, batches of
    ``STOCKER_YFINANCE_BATCH_SIZE`` tickers."""
    from stocker_core.market.download_store import DownloadStore
    from stocker_core.market.universe_fetch import BatchPolicy
    from stocker_core.market.yfinance_source import YFinanceSource

    policy = BatchPolicy(
        batch_size=settings.yfinance_batch_size, requests_per_minute=settings.yfinance_requests_per_minute
    )
    return YFinanceSource(store=DownloadStore(settings.home / "downloads" / "yfinance"), policy=policy)


def synthetic_source(settings: Settings) -> MarketDataSource:
    """The seeded synthetic market of the ``STOCKER_SYNTH_*`` settings (``synthetic.SyntheticSource``)."""
    from stocker_core.market.synthetic import SyntheticSource, SyntheticSpec

    return SyntheticSource(SyntheticSpec.from_settings(settings))


def _sample_corrections() -> list:
    from stocker_core.market.corrections import sample_source_corrections

    return sample_source_corrections()


BUILTIN: tuple[DataSource, ...] = (
    DataSource("sample", sample_source, corrections=_sample_corrections),
    DataSource("files", files_source),
    DataSource("yfinance", yfinance_source),
    DataSource("synthetic", synthetic_source),
)
"""The built-in sources, in the order of ``config.BUILTIN_SOURCES``."""


def register_sources() -> None:
    """Register the built-in sources (called by the composition root; again is a no-op)."""
    for source in BUILTIN:
        register_source(source)
