"""Which requests a universe needs: per ticker the months neither stored nor held elsewhere
(plus the open month, always asked again), grouped into multi-ticker requests of one span."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from stocker_core.market.calendar import month_end

CLOSE_GRACE = timedelta(days=2)
"""A month is closed (its bars final, never asked again) two days after it ends: the last
session's bar may still change on the provider the morning after."""


def is_closed(month: date, today: date) -> bool:
    """Whether ``month`` (its first day) is over on ``today``, with ``CLOSE_GRACE``."""
    return month_end(month) + CLOSE_GRACE <= today


def missing_months(
    wanted: Iterable[date], held: set[date], today: date, fresh: set[date] = frozenset()
) -> list[date]:
    """``wanted`` months to ask for: those not ``held``, and every month not yet closed unless
    it is ``fresh`` (stored moments ago)."""
    return sorted(
        m
        for m in set(wanted)
        if (m not in held and m not in fresh) or (not is_closed(m, today) and m not in fresh)
    )


def contiguous_runs(months: Sequence[date]) -> list[tuple[date, ...]]:
    """Sorted months cut into runs of consecutive months (one request span each)."""
    runs: list[list[date]] = []
    for month in sorted(months):
        if runs and month_end(runs[-1][-1]) == month:
            runs[-1].append(month)
        else:
            runs.append([month])
    return [tuple(run) for run in runs]


@dataclass(frozen=True)
class Request:
    """One provider call: ``tickers`` over ``[start, end)``; ``start`` None asks for the
    whole history (a ticker never stored: its first day comes with it)."""

    tickers: tuple[str, ...]
    start: date | None
    end: date | None
    months: tuple[date, ...]
    """The months this request answers for each of its tickers (empty: all)."""

    @property
    def whole_history(self) -> bool:
        return self.start is None


def plan_requests(
    needs: Mapping[str, Sequence[date]], batch_size: int, whole: Iterable[str] = ()
) -> list[Request]:
    """Requests for ``needs`` (ticker → months to ask): tickers sharing a span share a request
    of at most ``batch_size`` tickers; tickers in ``whole`` get their whole history instead."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    whole = set(whole)
    spans: dict[tuple[date, ...] | None, list[str]] = {}
    for ticker, months in needs.items():
        if ticker in whole:
            spans.setdefault(None, []).append(ticker)
            continue
        for run in contiguous_runs(months):
            spans.setdefault(run, []).append(ticker)
    requests = []
    for run in sorted(spans, key=lambda r: (r is not None, r or ())):
        tickers = spans[run]
        for i in range(0, len(tickers), batch_size):
            chunk = tuple(tickers[i : i + batch_size])
            if run is None:
                requests.append(Request(chunk, None, None, ()))
            else:
                requests.append(Request(chunk, run[0], month_end(run[-1]), run))
    return requests
