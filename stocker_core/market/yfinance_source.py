"""The real online source: Yahoo Finance through yfinance, with retries and clear errors."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import lru_cache

import pandas as pd
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from stocker_core.errors import DataSourceError, UnknownTickerError
from stocker_core.market.frames import normalize_bars
from stocker_core.market.sources import SymbolInfo, info_from_frame, slice_dates
from stocker_core.market.validation import validate_ticker

Download = Callable[[str, date | None, date | None], pd.DataFrame]


class RateLimitedError(DataSourceError):
    """The provider asked us to slow down."""


def _is_transient(exc: BaseException) -> bool:
    name = type(exc).__name__
    return isinstance(exc, (ConnectionError, TimeoutError, RateLimitedError)) or name in {
        "YFRateLimitError",
        "ReadTimeout",
        "ConnectTimeout",
        "ConnectionError",
        "HTTPError",
        "RequestException",
        "CurlError",
    }


def yfinance_download(ticker: str, start: date | None, end: date | None) -> pd.DataFrame:
    """Daily bars as traded (``auto_adjust=False``); full history when no bounds are given.

    yfinance reports failures in ``yfinance.shared._ERRORS`` rather than raising; they
    are turned into exceptions here so the retry policy can see them.
    """
    import yfinance as yf

    kwargs = {"start": start, "end": end} if start or end else {"period": "max"}
    frame = yf.download(
        ticker, auto_adjust=False, actions=False, progress=False, threads=False, timeout=20, **kwargs
    )
    errors = getattr(getattr(yf, "shared", None), "_ERRORS", {}) or {}
    message = str(errors.get(ticker, ""))
    if frame is None or frame.empty:
        lowered = message.lower()
        if "rate limit" in lowered or "too many requests" in lowered:
            raise RateLimitedError(f"Yahoo Finance rate limit for {ticker}: {message}")
        if any(w in lowered for w in ("timed out", "connection", "resolve", "curl")):
            raise ConnectionError(f"Yahoo Finance unreachable for {ticker}: {message}")
    return frame if frame is not None else pd.DataFrame()


def flatten_yfinance(frame: pd.DataFrame, ticker: str) -> pd.DataFrame:
    """Drop yfinance's (Price, Ticker) column MultiIndex, keeping ``ticker``'s columns."""
    if isinstance(frame.columns, pd.MultiIndex):
        levels = [frame.columns.get_level_values(i) for i in range(frame.columns.nlevels)]
        ticker_level = next((i for i, lv in enumerate(levels) if ticker in set(lv)), None)
        if ticker_level is not None:
            frame = frame.xs(ticker, axis=1, level=ticker_level)
        else:
            frame = frame.droplevel(list(range(1, frame.columns.nlevels)), axis=1)
    return frame


class YFinanceSource:
    """Yahoo Finance bars; transient failures and rate limits are retried with jittered backoff."""

    name = "yfinance"

    def __init__(
        self, download: Download = yfinance_download, attempts: int = 5, max_wait: float = 30.0
    ) -> None:
        self._download = download
        self._retrying = Retrying(
            retry=retry_if_exception(_is_transient),
            wait=wait_random_exponential(multiplier=max_wait / 30, max=max_wait),
            stop=stop_after_attempt(attempts),
            reraise=True,
        )
        self._history = lru_cache(maxsize=256)(self._full_history)

    def _get(self, ticker: str, start: date | None, end: date | None) -> pd.DataFrame:
        try:
            raw = self._retrying(self._download, ticker, start, end)
        except Exception as exc:
            if _is_transient(exc):
                raise DataSourceError(
                    f"Yahoo Finance failed for {ticker} after retries: {exc}. Nothing was written; "
                    "try again later or use STOCKER_SOURCE=files"
                ) from exc
            if type(exc).__name__ in {"YFTickerMissingError", "YFPricesMissingError"}:
                raise UnknownTickerError(f"Yahoo Finance has no symbol {ticker!r}: {exc}") from exc
            raise DataSourceError(f"Yahoo Finance failed for {ticker}: {exc}") from exc
        return normalize_bars(flatten_yfinance(raw, ticker))

    def _full_history(self, ticker: str) -> pd.DataFrame:
        frame = self._get(ticker, None, None)
        if frame.empty:
            raise UnknownTickerError(
                f"Yahoo Finance has no data at all for {ticker!r}: check the symbol (e.g. BRK-B, ^GSPC, GC=F)"
            )
        return frame

    def fetch(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        validate_ticker(ticker)
        frame = slice_dates(self._get(ticker, start, end), start, end)
        if frame.empty:
            self._history(ticker)  # unknown symbol -> UnknownTickerError; else an honest empty month
        return frame

    def symbol_info(self, ticker: str) -> SymbolInfo:
        validate_ticker(ticker)
        return info_from_frame(ticker, self._history(ticker))

    def symbols(self) -> list[str]:
        return []
