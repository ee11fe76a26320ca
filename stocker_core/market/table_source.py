"""A source over an in-memory table of many symbols (shared by ``sample`` and ``files``)."""

from __future__ import annotations

from datetime import date

import pandas as pd

from stocker_core.errors import UnknownTickerError
from stocker_core.market.sources import SymbolInfo, info_from_frame, slice_dates
from stocker_core.market.validation import validate_ticker


class TableSource:
    """Serves normalized per-symbol frames held in a dict."""

    name = "table"

    def __init__(self, frames: dict[str, pd.DataFrame]) -> None:
        self._frames = frames

    def _frame(self, ticker: str) -> pd.DataFrame:
        validate_ticker(ticker)
        try:
            return self._frames[ticker]
        except KeyError:
            known = ", ".join(sorted(self._frames)[:30])
            raise UnknownTickerError(
                f"the {self.name} source has no symbol {ticker!r}; it has: {known}"
            ) from None

    def fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        return slice_dates(self._frame(ticker), start, end)

    def symbol_info(self, ticker: str) -> SymbolInfo:
        return info_from_frame(ticker, self._frame(ticker))

    def symbols(self) -> list[str]:
        return sorted(self._frames)
