"""Offline real data shipped by installed packages (never copied into the repo).

- GOOGL daily OHLCV 2009-05-22 … 2018-08-29 from gym-anytrading;
- 20 S&P 500 stocks' daily closes 1990–2022 and the S&P 500 index (``^GSPC``) from
  skfolio, close-only: open/high/low/volume are NaN, never invented;
- the three reference tasks' bars shipped in this package (``stocker_core/reference_tasks``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path

import pandas as pd

from stocker_core.config import REFERENCE_TASKS_DIR
from stocker_core.market.frames import normalize_bars
from stocker_core.market.table_source import TableSource


def _package_file(package: str, *parts: str) -> Path | None:
    """A data file shipped inside an installed package, found without importing it
    (importing skfolio pulls in scikit-learn and SciPy: ~1.5 s for two CSV files)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    return path if path.exists() else None


def _read_dated_csv(path: Path) -> pd.DataFrame:
    """A CSV (optionally gzip) whose first column is a YYYY-MM-DD date index."""
    frame = pd.read_csv(path, index_col=0)
    frame.index = pd.to_datetime(frame.index, format="%Y-%m-%d")
    return frame


class _NormalizedOnRead(Mapping[str, pd.DataFrame]):
    """Raw frames by symbol, each normalized the first time it is read (a command that
    charts one symbol does not pay for normalizing all 22)."""

    def __init__(self, raw: dict[str, pd.DataFrame]) -> None:
        self._raw = raw
        self._done: dict[str, pd.DataFrame] = {}

    def __getitem__(self, symbol: str) -> pd.DataFrame:
        if symbol not in self._done:
            self._done[symbol] = normalize_bars(self._raw[symbol])
        return self._done[symbol]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


@lru_cache(maxsize=1)
def _load_sample_frames() -> Mapping[str, pd.DataFrame]:
    googl = _package_file("gym_anytrading", "datasets", "data", "STOCKS_GOOGL.csv")
    if googl is None:
        from gym_anytrading.datasets import STOCKS_GOOGL  # its layout changed: the slow way

        raw = {"GOOGL": STOCKS_GOOGL}
    else:
        raw = {"GOOGL": _read_dated_csv(googl)}
    closes_file = _package_file("skfolio", "datasets", "data", "sp500_dataset.csv.gz")
    index_file = _package_file("skfolio", "datasets", "data", "sp500_index.csv.gz")
    if closes_file is not None and index_file is not None:  # skfolio is optional context data
        closes = _read_dated_csv(closes_file)
        index = _read_dated_csv(index_file)
        for symbol in closes.columns:
            raw.setdefault(symbol, pd.DataFrame({"date": closes.index, "close": closes[symbol]}))
        raw["^GSPC"] = pd.DataFrame({"date": index.index, "close": index.iloc[:, 0]})
    _add_reference_bars(raw, REFERENCE_TASKS_DIR)
    return _NormalizedOnRead(raw)


def _add_reference_bars(raw: dict[str, pd.DataFrame], folder: Path) -> None:
    """The reference tasks' bars shipped in the package, under the sample's own data:
    the task tickers' OHLCV after the sample's last day of that symbol (AAPL's closes end
    2022-12-28), and context closes only for symbols the sample lacks, so the sample's own
    symbols (GOOGL, the default traded one) keep their date range."""
    prices = pd.read_csv(folder / "prices.csv", parse_dates=["date"])
    for ticker, rows in prices.groupby("ticker", sort=False):
        rows = rows.drop(columns="ticker").set_index("date")
        if ticker in raw:
            base = raw[ticker]
            base = base.set_index("date") if "date" in base.columns else base
            rows = rows.loc[rows.index > base.index.max()]
            raw[ticker] = pd.concat([base, rows]).reset_index(names="date")
        else:
            raw[ticker] = rows.reset_index(names="date")
    closes = pd.read_csv(folder / "context_closes.csv", parse_dates=["date"])
    for symbol, rows in closes.groupby("symbol", sort=False):
        if symbol not in raw:
            raw[symbol] = rows[["date", "close"]].reset_index(drop=True)


class SampleSource(TableSource):
    """The offline sample universe; GOOGL is the default traded ticker."""

    name = "sample"

    def __init__(self) -> None:
        super().__init__(_load_sample_frames())
