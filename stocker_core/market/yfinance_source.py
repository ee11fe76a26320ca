"""The real online source: Yahoo Finance through yfinance, with retries and clear errors.

With a download store (``$STOCKER_HOME/downloads/yfinance``, as ``source_builder`` builds it)
a month is asked for once: closed months come from the store, only missing months and the
open one from the network. ``prefetch`` fetches a whole universe in multi-ticker batches
(``universe_fetch``) before the per-ticker builds read it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import date
from functools import lru_cache

import pandas as pd
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from stocker_core.data_sources import SymbolInfo
from stocker_core.errors import DataSourceError, UnknownTickerError
from stocker_core.market.download_store import DownloadStore, months_in
from stocker_core.market.fetch_plan import contiguous_runs, is_closed, missing_months
from stocker_core.market.frames import normalize_bars
from stocker_core.market.rate_limit import RateLimiter
from stocker_core.market.sources import info_from_frame, slice_dates
from stocker_core.market.universe_fetch import BatchPolicy, FetchReport, Held, UniverseFetcher
from stocker_core.market.validation import validate_ticker
from stocker_core.market.yf_transport import (
    Download,
    DownloadMany,
    RateLimitedError,
    flatten_yfinance,
    is_transient,
    yfinance_download,
    yfinance_download_many,
)

__all__ = [
    "Download",
    "RateLimitedError",
    "YFinanceSource",
    "flatten_yfinance",
    "yfinance_download",
]


class YFinanceSource:
    """Yahoo Finance bars; transient failures and rate limits are retried with jittered backoff."""

    name = "yfinance"

    def __init__(
        self,
        download: Download = yfinance_download,
        attempts: int = 5,
        max_wait: float = 30.0,
        *,
        store: DownloadStore | None = None,
        download_many: DownloadMany = yfinance_download_many,
        policy: BatchPolicy | None = None,
        today: Callable[[], date] = date.today,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._download, self.store, self._today = download, store, today
        self.policy = policy or BatchPolicy(attempts=attempts, max_wait=max_wait)
        self._limiter = RateLimiter(self.policy.requests_per_minute, clock, sleep) if policy else None
        self._retrying = Retrying(
            retry=retry_if_exception(is_transient),
            wait=wait_random_exponential(multiplier=max_wait / 30, max=max_wait),
            stop=stop_after_attempt(attempts),
            sleep=sleep,
            reraise=True,
        )
        self._batches = (
            UniverseFetcher(download_many, store, self.policy, today, clock, sleep)
            if store is not None
            else None
        )
        self._history = lru_cache(maxsize=256)(self._full_history)

    def _call(self, ticker: str, start: date | None, end: date | None) -> pd.DataFrame:
        if self._limiter is not None:
            self._limiter.wait()
        return self._download(ticker, start, end)

    def _get(self, ticker: str, start: date | None, end: date | None) -> pd.DataFrame:
        try:
            raw = self._retrying(self._call, ticker, start, end)
        except Exception as exc:
            if is_transient(exc):
                raise DataSourceError(
                    f"Yahoo Finance failed for {ticker} after retries: {exc}. Nothing was written; "
                    "try again later or use STOCKER_SOURCE=files"
                ) from exc
            if type(exc).__name__ in {"YFTickerMissingError", "YFPricesMissingError"}:
                raise UnknownTickerError(f"Yahoo Finance has no symbol {ticker!r}: {exc}") from exc
            raise DataSourceError(f"Yahoo Finance failed for {ticker}: {exc}") from exc
        return normalize_bars(flatten_yfinance(raw, ticker))

    def _full_history(self, ticker: str) -> pd.DataFrame:
        if self.store is not None and self.store.listed(ticker):
            return self.store.read(ticker, date(1800, 1, 1), date(2200, 12, 31))
        frame = self._get(ticker, None, None)
        if frame.empty:
            raise UnknownTickerError(
                f"Yahoo Finance has no data at all for {ticker!r}: check the symbol (e.g. BRK-B, ^GSPC, GC=F)"
            )
        if self.store is not None:
            self._keep(ticker, frame, months_in(frame["date"].iloc[0].date(), self._today()), listed=True)
        return frame

    def _keep(self, ticker: str, frame: pd.DataFrame, months: Sequence[date], listed: bool = False) -> None:
        today = self._today()
        first = frame["date"].iloc[0].date() if listed else None
        self.store.save(ticker, frame, months, [m for m in months if is_closed(m, today)], listed=first)

    def _stored_fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        """Missing and open months from the network (one request a run of them), the rest
        from the store."""
        listed = self.store.listed(ticker)
        fresh = self.store.fresh(ticker, self.policy.open_month_fresh_s)
        need = missing_months(months_in(start, end), self.store.covered(ticker), self._today(), fresh)
        need = [m for m in need if not listed or m >= listed.replace(day=1)]
        for run in contiguous_runs(need):
            first, last = run[0], (pd.Timestamp(run[-1]) + pd.offsets.MonthBegin(1)).date()
            frame = self._get(ticker, first, last)
            if frame.empty:  # an unknown symbol raises here, before anything is stored
                frame = slice_dates(self._history(ticker), first, last)
            self._keep(ticker, frame, run)
            self._history.cache_clear()  # its last day may have moved
        return self.store.read(ticker, start, end)

    def fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        validate_ticker(ticker)
        if self.store is not None:
            frame = self._stored_fetch(ticker, start, end)
        else:
            frame = slice_dates(self._get(ticker, start, end), start, end)
        if frame.empty:
            self._history(ticker)  # unknown symbol -> UnknownTickerError; else an honest empty month
        return frame

    def prefetch(
        self, tickers: Sequence[str], start: date, end: date, held: Held | None = None
    ) -> FetchReport:
        """Store every missing month of ``tickers`` in ``[start, end)`` in multi-ticker batches
        (``universe_fetch.UniverseFetcher``); ``held``: months stored elsewhere (the warehouse).
        Needs a download store."""
        if self._batches is None:
            raise DataSourceError("prefetch needs a download store (YFinanceSource(store=...))")
        for ticker in tickers:
            validate_ticker(ticker)
        report = self._batches.fetch(tickers, months_in(start, end), held)
        self._history.cache_clear()
        return report

    def symbol_info(self, ticker: str) -> SymbolInfo:
        validate_ticker(ticker)
        return info_from_frame(ticker, self._history(ticker))

    def symbols(self) -> list[str]:
        return []
