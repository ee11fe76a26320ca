"""Votes of one ticker × month: the council over every trading day, cache first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council.backends import Backend
from stocker_core.council.cache import VoteCache
from stocker_core.council.voting import CouncilRun, run_votes
from stocker_core.env.peers import council_inputs
from stocker_core.market.calendar import month_end
from stocker_core.text_events.store import warehouse_text
from stocker_core.warehouse.db import Warehouse


def ticker_votes(
    settings: Settings,
    warehouse: Warehouse,
    backend: Backend,
    ticker: str,
    months: Sequence[date],
    workers: int = 4,
    progress: Callable[[int, int], None] | None = None,
) -> CouncilRun | None:
    """Every role's vote on every stored trading day of ``ticker`` in ``months``.

    The inputs (bars with history, peers, text, chart paths) are loaded once for the
    whole range; cached votes are read first and only misses computed, outside any open
    warehouse connection (see ``run_votes`` for how they are written). Text events come
    from the warehouse's text tables, else the text folder. None when there are no bars.
    """
    months = sorted(months)
    start, end = months[0], month_end(months[-1])
    stored = warehouse.read_prices(ticker, start, end)["date"]
    wanted = {pd.Timestamp(m).to_period("M") for m in months}
    days = [d for d in stored if d.to_period("M") in wanted]
    if not days:
        return None
    inputs = council_inputs(ticker, start, end - pd.Timedelta(days=1), settings, warehouse_text(warehouse))
    charts = warehouse.read_table("market.charts", ticker, start, end)
    if len(charts):
        inputs.charts = {pd.Timestamp(d): p for d, p in zip(charts["date"], charts["path"], strict=True)}
    # no session around the loop: votes are computed with no connection open and
    # written in short transactions, so other processes can read and write meanwhile
    return run_votes(
        ticker,
        days,
        inputs.context,
        backend,
        VoteCache(warehouse),
        max_workers=workers,
        progress=progress,
        inputs=inputs,
    )


def split_by_month(votes: pd.DataFrame) -> dict[date, pd.DataFrame]:
    """A votes frame cut into calendar months (keyed by the month's first day)."""
    months = votes["date"].dt.to_period("M")
    return {period.start_time.date(): part for period, part in votes.groupby(months, sort=True)}


def vote_stats(votes: pd.DataFrame) -> dict[str, int]:
    """Cache hits, misses and parse failures of a votes frame."""
    return {
        "hits": int(votes["cached"].sum()),
        "misses": int((~votes["cached"]).sum()),
        "parse_failures": int(votes["parse_error"].sum()),
    }


def role_summary(votes: pd.DataFrame) -> pd.DataFrame:
    """Mean signal and confidence per role, with parse failures and cache hits."""
    return (
        votes.groupby("role", sort=True)
        .agg(
            mean_signal=("signal", "mean"),
            mean_confidence=("confidence", "mean"),
            parse_failures=("parse_error", "sum"),
            cached=("cached", "sum"),
            votes=("signal", "size"),
        )
        .reset_index()
    )
