"""Offline real data shipped by installed packages (never copied into the repo).

- GOOGL daily OHLCV 2009-05-22 … 2018-08-29 from gym-anytrading;
- 20 S&P 500 stocks' daily closes 1990–2022 and the S&P 500 index (``^GSPC``) from
  skfolio, close-only: open/high/low/volume are NaN, never invented.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from stocker_core.market.frames import normalize_bars
from stocker_core.market.table_source import TableSource


@lru_cache(maxsize=1)
def _load_sample_frames() -> dict[str, pd.DataFrame]:
    from gym_anytrading.datasets import STOCKS_GOOGL

    frames = {"GOOGL": normalize_bars(STOCKS_GOOGL)}
    try:
        from skfolio.datasets import load_sp500_dataset, load_sp500_index
    except ImportError:  # skfolio is optional context data
        return frames
    closes = load_sp500_dataset()
    index = load_sp500_index()
    for symbol in closes.columns:
        frames.setdefault(
            symbol, normalize_bars(pd.DataFrame({"date": closes.index, "close": closes[symbol]}))
        )
    frames["^GSPC"] = normalize_bars(pd.DataFrame({"date": index.index, "close": index.iloc[:, 0]}))
    return frames


class SampleSource(TableSource):
    """The offline sample universe; GOOGL is the default traded ticker."""

    name = "sample"

    def __init__(self) -> None:
        super().__init__(_load_sample_frames())
