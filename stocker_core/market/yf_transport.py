"""The network side of the yfinance source: the calls into ``yfinance`` and how their
failures read (transient: retried; rate limits: slowed down). Nothing here stores anything;
tests replace these callables with fakes of the provider."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date

import pandas as pd

from stocker_core.errors import DataSourceError

Download = Callable[[str, date | None, date | None], pd.DataFrame]
"""One ticker's raw bars in ``[start, end)`` (full history when both are None)."""
DownloadMany = Callable[[Sequence[str], date | None, date | None], dict[str, pd.DataFrame]]
"""Raw bars of many tickers in ``[start, end)`` in one request (whole histories when both are
None); a ticker the provider has nothing for is left out of the answer."""

_TRANSIENT_NAMES = {
    "YFRateLimitError",
    "ReadTimeout",
    "ConnectTimeout",
    "ConnectionError",
    "HTTPError",
    "RequestException",
    "CurlError",
}


class RateLimitedError(DataSourceError):
    """The provider asked us to slow down (HTTP 429, "Too Many Requests")."""


def is_transient(exc: BaseException) -> bool:
    """Whether a retry may succeed: timeouts, dropped connections, rate limits."""
    return isinstance(exc, (ConnectionError, TimeoutError, RateLimitedError)) or (
        type(exc).__name__ in _TRANSIENT_NAMES
    )


def _raise_for(message: str, what: str) -> None:
    """Turn yfinance's recorded failure text into the exception the retry policy reads."""
    lowered = message.lower()
    if "rate limit" in lowered or "too many requests" in lowered or "429" in lowered:
        raise RateLimitedError(f"Yahoo Finance rate limit for {what}: {message}")
    if any(w in lowered for w in ("timed out", "timeout", "connection", "resolve", "curl")):
        raise ConnectionError(f"Yahoo Finance unreachable for {what}: {message}")


def _errors() -> dict[str, str]:
    import yfinance as yf

    return {k: str(v) for k, v in (getattr(getattr(yf, "shared", None), "_ERRORS", {}) or {}).items()}


def yfinance_download(ticker: str, start: date | None, end: date | None) -> pd.DataFrame:  # pragma: no cover
    """Daily bars as traded (``auto_adjust=False``); full history when no bounds are given.

    yfinance reports failures in ``yfinance.shared._ERRORS`` rather than raising; they
    are turned into exceptions here so the retry policy can see them.
    """
    import yfinance as yf

    kwargs = {"start": start, "end": end} if start or end else {"period": "max"}
    frame = yf.download(
        ticker, auto_adjust=False, actions=False, progress=False, threads=False, timeout=20, **kwargs
    )
    if frame is None or frame.empty:
        _raise_for(_errors().get(ticker, ""), ticker)
    return frame if frame is not None else pd.DataFrame()


def yfinance_download_many(
    tickers: Sequence[str], start: date | None, end: date | None
) -> dict[str, pd.DataFrame]:  # pragma: no cover - network
    """One ``yf.download`` of ``tickers`` over ``[start, end)`` (whole histories when both are
    None), split per ticker. A transient failure of any ticker raises (the batch is retried
    whole); a ticker yfinance found nothing for is left out."""
    import yfinance as yf

    span = {"start": start, "end": end} if start or end else {"period": "max"}
    frame = yf.download(
        list(tickers),
        **span,
        auto_adjust=False,
        actions=False,
        progress=False,
        threads=False,
        timeout=20,
        group_by="column",
    )
    errors = _errors()
    for ticker in tickers:
        if ticker in errors:
            _raise_for(errors[ticker], f"{ticker} (batch of {len(tickers)})")
    if frame is None or frame.empty:
        return {}
    return {t: flatten_yfinance(frame, t) for t in tickers if t not in errors and _has_columns(frame, t)}


def _has_columns(frame: pd.DataFrame, ticker: str) -> bool:
    if not isinstance(frame.columns, pd.MultiIndex):
        return True
    return any(ticker in set(frame.columns.get_level_values(i)) for i in range(frame.columns.nlevels))


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
