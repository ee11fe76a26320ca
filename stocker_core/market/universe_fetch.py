"""Fetching a universe from an online source in batches: within a request rate, retried with
backoff on rate limits and timeouts, each batch stored as it arrives (a failure keeps what
was fetched; a rerun asks only for what is missing), stored months never asked again except
the open one."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

import pandas as pd
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from stocker_core.errors import DataSourceError
from stocker_core.market.download_store import DownloadStore
from stocker_core.market.fetch_plan import Request, is_closed, missing_months, plan_requests
from stocker_core.market.frames import normalize_bars
from stocker_core.market.rate_limit import RateLimiter
from stocker_core.market.yf_transport import DownloadMany, flatten_yfinance, is_transient

Held = Callable[[str], set[date]]
"""Months of a ticker held elsewhere (the warehouse): never asked again once closed."""


@dataclass
class FetchReport:
    """What one universe fetch did."""

    requests: int = 0
    """Provider calls made, retries included."""
    batches: int = 0
    """Requests planned (each answered by one successful call)."""
    stored: dict[str, int] = field(default_factory=dict)
    """Rows stored per ticker this time."""
    nothing: list[str] = field(default_factory=list)
    """Tickers the provider had nothing for (unknown or delisted symbols)."""
    up_to_date: list[str] = field(default_factory=list)
    """Tickers that needed no request (every month stored and closed)."""


class UniverseFetchError(DataSourceError):
    """A batch failed after its retries; ``report`` says what was stored before it."""

    def __init__(self, message: str, report: FetchReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class BatchPolicy:
    """How hard to press the provider: tickers a request, requests a minute, retries."""

    batch_size: int = 50
    requests_per_minute: float = 30.0
    attempts: int = 5
    max_wait: float = 60.0
    open_month_fresh_s: float = 3600.0
    """An open month stored less than this long ago is not asked again (0: always asked)."""


class UniverseFetcher:
    """Runs the requests a universe needs through ``download_many`` into ``store``."""

    def __init__(
        self,
        download_many: DownloadMany,
        store: DownloadStore,
        policy: BatchPolicy | None = None,
        today: Callable[[], date] = date.today,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.policy = policy or BatchPolicy()
        self._download, self.store, self._today = download_many, store, today
        self._limiter = RateLimiter(self.policy.requests_per_minute, clock, sleep)
        self._retrying = Retrying(
            retry=retry_if_exception(is_transient),
            wait=wait_random_exponential(
                multiplier=max(self.policy.max_wait / 30, 1e-3), max=self.policy.max_wait
            ),
            stop=stop_after_attempt(self.policy.attempts),
            sleep=sleep,
            reraise=True,
        )

    def plan(self, tickers: Sequence[str], months: Sequence[date], held: Held | None = None) -> list[Request]:
        """The requests ``tickers`` × ``months`` need now (see ``fetch``)."""
        today = self._today()
        needs, whole = {}, []
        for ticker in dict.fromkeys(tickers):
            elsewhere = held(ticker) if held else set()
            have = self.store.covered(ticker) | elsewhere
            fresh = self.store.fresh(ticker, self.policy.open_month_fresh_s)
            listed = self.store.listed(ticker)
            need = missing_months(months, have, today, fresh)
            need = [m for m in need if not listed or m >= listed.replace(day=1)]
            if need:
                needs[ticker] = need
                if not self.store.has(ticker) and not elsewhere:
                    whole.append(ticker)  # never seen: its whole history, first day included
        return plan_requests(needs, self.policy.batch_size, whole)

    def fetch(self, tickers: Sequence[str], months: Sequence[date], held: Held | None = None) -> FetchReport:
        """Store the bars of ``tickers`` × ``months`` that are missing: months neither in the
        store nor ``held`` (the warehouse), and the open month. Raises UniverseFetchError
        naming what was stored and what a rerun will fetch when a batch fails for good."""
        report = FetchReport()
        requests = self.plan(tickers, months, held)
        planned = {t for r in requests for t in r.tickers}
        report.up_to_date = [t for t in dict.fromkeys(tickers) if t not in planned]
        for number, request in enumerate(requests, start=1):
            try:
                answer = self._retrying(self._call, request, report)
            except Exception as exc:
                left = sorted({t for r in requests[number - 1 :] for t in r.tickers})
                raise UniverseFetchError(
                    f"Yahoo Finance failed for batch {number} of {len(requests)} ({_names(request.tickers)}) "
                    f"after {self.policy.attempts} tries: {exc}. {len(report.stored)} tickers were stored in "
                    f"{self.store.folder}; run again to fetch the {len(left)} left ({_names(left)}): "
                    "nothing stored is asked again",
                    report,
                ) from exc
            report.batches += 1
            self._keep(request, answer, report)
        return report

    def _call(self, request: Request, report: FetchReport) -> dict[str, pd.DataFrame]:
        self._limiter.wait()
        report.requests += 1
        return self._download(request.tickers, request.start, request.end)

    def _keep(self, request: Request, answer: dict[str, pd.DataFrame], report: FetchReport) -> None:
        today = self._today()
        for ticker in request.tickers:
            raw = answer.get(ticker)
            bars = normalize_bars(flatten_yfinance(raw, ticker)) if raw is not None else None
            if bars is None or (request.whole_history and bars.empty):
                report.nothing.append(ticker)
                continue
            if request.whole_history:
                first = bars["date"].iloc[0].date().replace(day=1)
                months = pd.period_range(first, today, freq="M")
                months = [p.to_timestamp().date() for p in months]
                listed = bars["date"].iloc[0].date()
            else:
                months, listed = list(request.months), None
            closed = [m for m in months if is_closed(m, today)]
            self.store.save(ticker, bars, months, closed, listed=listed)
            report.stored[ticker] = report.stored.get(ticker, 0) + len(bars)


def _names(tickers: Sequence[str], shown: int = 5) -> str:
    tickers = list(tickers)
    return ", ".join(tickers[:shown]) + (f" … ({len(tickers)})" if len(tickers) > shown else "")
