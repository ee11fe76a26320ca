"""Builds the market data source the settings name (``get_source``: behind the quality gate
and the clock), and the built-in sources: their factories and how each describes itself
(``BUILTIN``), registered by ``register_sources`` (which the composition root,
``stocker_core.composition.register_all``, calls; nothing registers at import)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from stocker_core.config import REFERENCE_TASKS_DIR, Settings
from stocker_core.data_sources import (
    DataSource,
    MarketDataSource,
    register_source,
    sample_setting_defaults,
    synthetic_setting_defaults,
)
from stocker_core.errors import InvalidNameError

if TYPE_CHECKING:
    from stocker_core.market.synthetic import SyntheticSpec


def get_source(settings: Settings) -> MarketDataSource:
    """The registered source named by ``settings.source`` (``data_sources.source_names()``:
    sample, files, yfinance, synthetic and any added with ``data_sources.register_source``), behind
    the quality gate (``gate.QualityGatedSource``) with ``$STOCKER_HOME/corrections.csv`` and
    the source's own vetted corrections; under ``STOCKER_CLOCK`` it reveals only bars whose
    session closed by the clock (``clock.ClockedSource``)."""
    from stocker_core.market.clock import clocked
    from stocker_core.market.corrections import load_corrections
    from stocker_core.market.gate import QualityGatedSource

    described = settings.data_source
    corrections = load_corrections(settings.home / "corrections.csv")
    if described.corrections is not None:
        corrections += list(described.corrections())
    return QualityGatedSource(clocked(described.factory(settings), settings.clock), corrections)


# The built-in sources' factories (their names are reserved in ``data_sources.py``): each imports
# its module inside the function, so an unused source costs nothing.


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
    from stocker_core.market.synthetic import SyntheticSource

    return SyntheticSource(synthetic_spec(settings))


def _sample_corrections() -> list:
    from stocker_core.market.corrections import sample_source_corrections

    return sample_source_corrections()


def _one_build(settings: Settings) -> Hashable:
    """The sample is the same data whatever the settings: built once."""
    return ()


def files_folder_key(settings: Settings) -> Hashable:
    """The files folder and what it holds (name, modification time, size of each file): the
    source is built again when a file changes."""
    folder = settings.files_dir
    if folder is None or not folder.is_dir():
        return (folder, ())
    files = [p for p in sorted(folder.iterdir()) if p.is_file()]
    return (folder, tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files))


def synthetic_spec(settings: Settings) -> SyntheticSpec:
    """The seeded market of the ``STOCKER_SYNTH_*`` settings (``synthetic.SyntheticSpec``)."""
    from stocker_core.market.synthetic import SyntheticSpec

    return SyntheticSpec.from_settings(settings)


BUILTIN: tuple[DataSource, ...] = (
    DataSource(
        "sample",
        sample_source,
        live=False,
        text_folder=REFERENCE_TASKS_DIR,
        reuse_key=_one_build,
        corrections=_sample_corrections,
        setting_defaults=sample_setting_defaults,
        missing_bars_hint="STOCKER_SOURCE=yfinance (online) or files (STOCKER_FILES_DIR: a folder of bars) "
        "has them",
    ),
    DataSource(
        "files",
        files_source,
        reuse_key=files_folder_key,
        missing_bars_hint="add them to STOCKER_FILES_DIR, or use STOCKER_SOURCE=yfinance (online)",
    ),
    DataSource(
        "yfinance",
        yfinance_source,
        online=True,
        fundamentals=True,
        missing_bars_hint="Yahoo Finance has none there: check the ticker and the dates",
    ),
    DataSource(
        "synthetic",
        synthetic_source,
        live=False,
        synthetic_spec=synthetic_spec,
        reuse_key=synthetic_spec,
        setting_defaults=synthetic_setting_defaults,
    ),
)
"""The built-in sources, in the order of ``data_sources.BUILTIN_SOURCES``, as each describes
itself (all on the NYSE calendar, the default): the offline sample (a fixed data set that ships
the reference tasks' text, built once), a folder of files (live: kept up to date by whoever
fills it; built again when a file changes), Yahoo Finance (online, with fundamentals; its
download store keeps what it fetched) and the seeded synthetic market (fixed, its text
generated with its bars; one build per spec); each but the synthetic market says where else
missing bars are."""


def register_sources() -> None:
    """Register the built-in sources (called by the composition root; again is a no-op)."""
    for source in BUILTIN:
        register_source(source)
