"""A source over an in-memory table of many symbols (shared by ``sample`` and ``files``)."""

from __future__ import annotations

from datetime import date

import pandas as pd

from stocker_core.data_sources import SymbolInfo
from stocker_core.errors import UnknownTickerError
from stocker_core.market.frames import BarIssue
from stocker_core.market.sources import info_from_frame, slice_dates
from stocker_core.market.validation import validate_ticker


class TableSource:
    """Serves normalized per-symbol frames held in a dict, with the issues seen while
    normalizing them (``bar_issues``, read by the quality gate)."""

    name = "table"

    def __init__(
        self, frames: dict[str, pd.DataFrame], issues: dict[str, list[BarIssue]] | None = None
    ) -> None:
        self._frames = frames
        self._issues = issues or {}

    def _unknown(self, ticker: str) -> UnknownTickerError:
        known = ", ".join(sorted(self._frames)[:30])
        return UnknownTickerError(f"the {self.name} source has no symbol {ticker!r}; it has: {known}")

    def _frame(self, ticker: str) -> pd.DataFrame:
        validate_ticker(ticker)
        try:
            return self._frames[ticker]
        except KeyError:
            raise self._unknown(ticker) from None

    def fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        return slice_dates(self._frame(ticker), start, end)

    def symbol_info(self, ticker: str) -> SymbolInfo:
        return info_from_frame(ticker, self._frame(ticker))

    def symbols(self) -> list[str]:
        return sorted(self._frames)

    def bar_issues(self, ticker: str) -> list[BarIssue]:
        """Raw-data problems of ``ticker`` (duplicates, text in numbers, missing columns)."""
        self._frame(ticker)
        return list(self._issues.get(ticker, []))
