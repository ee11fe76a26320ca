"""Votes of one ticker × month: the council over every trading day, cache first."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council.backends import Backend
from stocker_core.council.cache import VoteCache
from stocker_core.council.context import context_symbols, load_council_inputs
from stocker_core.council.policy import warehouse_text
from stocker_core.council.runner import CouncilRun, run_votes
from stocker_core.market.calendar import month_end
from stocker_core.warehouse.db import Warehouse


def month_votes(
    settings: Settings,
    warehouse: Warehouse,
    backend: Backend,
    ticker: str,
    month: date,
    workers: int = 4,
    progress: Callable[[int, int], None] | None = None,
) -> CouncilRun | None:
    """Every role's vote on every stored trading day of ``ticker`` in ``month``.

    Reads cached votes first and computes only misses; None when the month has no bars.
    Text events come from the warehouse's text tables, else the text folder.
    """
    end = month_end(month)
    days = list(warehouse.read_prices(ticker, month, end)["date"])
    if not days:
        return None
    peers, commodity = context_symbols(ticker, settings)
    inputs = load_council_inputs(
        ticker,
        month,
        end - pd.Timedelta(days=1),
        peers=peers,
        commodity=commodity,
        settings=settings,
        text=warehouse_text(warehouse),
    )
    charts = warehouse.read_table("market.charts", ticker, month, end)
    inputs.charts = {
        pd.Timestamp(d): p for d, p in zip(charts.get("date", []), charts.get("path", []), strict=True)
    }
    with warehouse.session():
        return run_votes(
            ticker,
            days,
            inputs.context,
            backend,
            VoteCache(warehouse),
            max_workers=workers,
            progress=progress,
        )


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
