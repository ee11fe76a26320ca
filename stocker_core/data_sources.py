"""Market data sources: the interface every source implements (``MarketDataSource``,
``SymbolInfo``), the description each gives of itself (``DataSource``: what it serves, whether
it is online or a fixed data set, its exchange calendar, how a built one is kept, the settings
it sets the default of, where else to look when it has no bars) and the registry
``STOCKER_SOURCE`` names one from.

It sits on the lowest floor, beside ``config``: ``Settings`` accept a registered name and take
the source's defaults. The built-in sources' names are reserved here with the settings they
default (``BUILTIN_SOURCES``), so settings read before the composition root runs (the
``stocker`` command checks them first; Dagster's partitions read them at import) already
default as they will; their factories are in ``market/source_builder.py`` and the composition
root (``stocker_core.composition.register_all``) registers them. Nothing registers at import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from stocker_core.errors import InvalidNameError

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class SymbolInfo:
    """What a source knows about a symbol's history."""

    ticker: str
    first_date: date
    last_date: date
    close_only: bool


class MarketDataSource(Protocol):
    """Returns normalized daily bars (see ``market.frames.normalize_bars``)."""

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


def prefetch(
    source: MarketDataSource,
    tickers: list[str],
    start: date,
    end: date,
    held: Callable[[str], set[date]] | None = None,
) -> Any | None:
    """Have ``source`` fetch the bars of ``tickers`` in ``[start, end)`` ahead, in
    multi-ticker batches, when it can (an online source with a download store, such as
    yfinance: ``prefetch(tickers, start, end, held)``; wrappers pass it on); ``held``: the
    months of a ticker stored elsewhere (the warehouse), never asked again once closed. Its
    report, or None for a source that reads each ticker as cheaply on its own."""
    batch = getattr(source, "prefetch", None)
    return batch(tickers, start, end, held) if callable(batch) else None


DEFAULT_CALENDAR = "XNYS"
"""The exchange calendar (an ``exchange_calendars`` name) of a source that names none, and of
every built-in source: the New York Stock Exchange."""

SettingDefaults = Callable[[Any], dict[str, Any]]
"""``defaults(settings) -> {field: value}``: the settings a source sets the default of."""


@dataclass(frozen=True)
class DataSource:
    """A market data source ``STOCKER_SOURCE`` can name, as it describes itself.

    Register one with ``register_source(DataSource(name, factory, ...))``;
    ``market.source_builder.get_source`` builds the configured one and puts it behind the
    quality gate (and the clock). Every other field has a default that fits a plain source of
    bars: offline, live, on the NYSE calendar, built on each call, no text of its own, no
    settings defaults.
    """

    name: str
    factory: Callable[[Any], MarketDataSource]
    """Builds the source from the ``Settings``."""
    online: bool = False
    """It fetches over the network (rate limits, retries)."""
    live: bool = True
    """New bars arrive as sessions close. False for a fixed data set, which has no bar after its
    last day: its freshness is judged as of that day (``market.freshness``)."""
    fundamentals: bool = False
    """It serves company fundamentals (the agent's research tool fetches them online)."""
    calendar: str = DEFAULT_CALENDAR
    """The exchange calendar its bars' sessions follow (an ``exchange_calendars`` name, e.g.
    ``XNYS``, ``XLON``): ``market.calendar.trading_calendar`` builds the configured source's."""
    text_folder: Path | None = None
    """Text events shipped with it (``news.jsonl``, ``forums.jsonl``, ``macro.jsonl``), read when
    neither ``STOCKER_TEXT_DIR`` nor ``STOCKER_FILES_DIR`` is set (``Settings.text_folder``)."""
    synthetic_spec: Callable[[Any], Hashable] | None = None
    """The seeded market its bars are generated from (``market.synthetic.SyntheticSpec``, made
    from the settings): its text is generated from the same spec (``text_events.configured``)."""
    reuse_key: Callable[[Any], Hashable] | None = None
    """How a built source is kept between calls (``market.bars.configured_source``): settings
    with the same key share one built source. None: it is built on each call (a costly source
    then keeps what it fetched itself, as yfinance's download store does)."""
    corrections: Callable[[], list] | None = None
    """Vetted corrections (``market.corrections.Correction``) the quality gate applies on
    top of ``$STOCKER_HOME/corrections.csv``."""
    setting_defaults: SettingDefaults | None = None
    """The settings it sets the default of, from the others (a field set explicitly keeps its
    value), applied when ``Settings`` are read with it registered (a built-in source's are
    reserved in ``BUILTIN_SOURCES``, so they apply before it is registered too)."""
    missing_bars_hint: str | None = None
    """What to tell a user it has no bars for (a ticker, a window): where else such bars are,
    e.g. another source or a folder to fill (None: pick another ticker or window)."""

    @property
    def serves(self) -> frozenset[str]:
        """What it can serve: ``bars``; ``text`` when it ships or generates its own;
        ``fundamentals``."""
        text = self.text_folder is not None or self.synthetic_spec is not None
        return frozenset(
            {"bars"} | ({"text"} if text else set()) | ({"fundamentals"} if self.fundamentals else set())
        )


SAMPLE_UNIVERSE = ("GOOGL", "JPM", "JNJ", "XOM", "PG", "KO", "WMT", "HD", "PFE", "CVX", "UNH")
"""The sample source's default universe: GOOGL (OHLCV) and 10 S&P 500 close-only series of
different sectors (AAPL and MSFT are left for the README's ``stocker tickers add`` example)."""
SAMPLE_SPAN = ("2014-06", "2018-08")
"""The sample's main-job months: ~1,070 trading days a ticker, so each test split (20 % after
the 30-day gaps, ~200 days) holds 3 non-overlapping 63-day windows: 33 over the 11 tickers."""
SYNTHETIC_INDEX = "^SYN"
"""The synthetic market's equal-weight index: the council's benchmark peer on that source."""


def sample_setting_defaults(settings: Any) -> dict[str, Any]:
    """The sample source's main job: GOOGL and 10 S&P 500 close series over 2014-06 … 2018-08
    (GOOGL's last sample month)."""
    return {"default_tickers": list(SAMPLE_UNIVERSE), "main_from": SAMPLE_SPAN[0], "main_to": SAMPLE_SPAN[1]}


def synthetic_setting_defaults(settings: Any) -> dict[str, Any]:
    """On the synthetic market the universe is its tickers, the council's benchmark its index
    and the first month partition its first month."""
    return {
        "default_tickers": settings.synthetic_tickers,
        "benchmark": SYNTHETIC_INDEX,
        "start_month": settings.synth_start.replace(day=1).isoformat(),
    }


BUILTIN_SOURCES: dict[str, SettingDefaults | None] = {
    "sample": sample_setting_defaults,
    "files": None,
    "yfinance": None,
    "synthetic": synthetic_setting_defaults,
}
"""The built-in sources' names, in this order, reserved with the settings each sets the default
of: ``Settings`` accept them, and default as they will, before their factories are registered
(``register_source`` gives each its factory once)."""

_SOURCES: dict[str, DataSource] = {}


def register_source(source: DataSource) -> DataSource:
    """Make ``source`` selectable by ``STOCKER_SOURCE``; InvalidNameError when its name is
    taken (unregister the old one first to replace it). A built-in name
    (``BUILTIN_SOURCES``) is registered again as a no-op when it is the same source, so the
    composition root may run twice."""
    known = _SOURCES.get(source.name)
    if known is not None:
        if source.name in BUILTIN_SOURCES and known == source:
            return known
        raise InvalidNameError(f"source {source.name!r} is already registered")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", source.name):
        raise InvalidNameError(f"source name {source.name!r}: use lower-case letters, digits and _")
    _SOURCES[source.name] = source
    return source


def unregister_source(name: str) -> DataSource:
    """Remove the source ``name`` (InvalidNameError when it is not registered)."""
    data_source(name)
    return _SOURCES.pop(name)


@contextmanager
def registered_source(source: DataSource) -> Iterator[DataSource]:
    """``source`` registered for the block only (tests, experiments)."""
    register_source(source)
    try:
        yield source
    finally:
        unregister_source(source.name)


def source_names() -> tuple[str, ...]:
    """The names ``STOCKER_SOURCE`` accepts: the built-in ones first, then the others
    registered."""
    return tuple(dict.fromkeys((*BUILTIN_SOURCES, *_SOURCES)))


def registered_sources() -> tuple[DataSource, ...]:
    """The registered sources (with their factories), built-in ones first."""
    return tuple(_SOURCES[name] for name in source_names() if name in _SOURCES)


def _names_in_words(names: tuple[str, ...]) -> str:
    return " or ".join(filter(None, [", ".join(names[:-1]), names[-1]])) if names else "none"


def data_source(name: str) -> DataSource:
    """The registered source ``name``; InvalidNameError naming the known ones otherwise (or
    saying the composition root has not run, for a built-in name)."""
    try:
        return _SOURCES[name]
    except KeyError:
        if name in BUILTIN_SOURCES:
            raise InvalidNameError(
                f"source {name!r} is not registered yet: call stocker_core.composition.register_all() "
                "first (the stocker command, the Dagster definitions and the servers do)"
            ) from None
        raise InvalidNameError(f"unknown source {name!r}: use {_names_in_words(source_names())}") from None


def known_source(name: str | None) -> DataSource | None:
    """The registered source ``name``, or None (no name, or one not registered: bars stored from
    a source since removed)."""
    return _SOURCES.get(name) if name is not None else None


def source_calendar(name: str) -> str:
    """The exchange calendar of the source ``name``: the registered source's, else (a built-in
    one not registered yet, or a name since removed) ``DEFAULT_CALENDAR``."""
    known = _SOURCES.get(name)
    return known.calendar if known is not None else DEFAULT_CALENDAR


def source_setting_defaults(name: str) -> SettingDefaults | None:
    """The settings the source ``name`` sets the default of: the registered source's, else (a
    built-in one not registered yet) those reserved for it."""
    known = _SOURCES.get(name)
    return known.setting_defaults if known is not None else BUILTIN_SOURCES.get(name)
