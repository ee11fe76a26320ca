"""Synthetic episodes and stored prices shared by the evaluation tests (import as evaluation_testing)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pandas as pd
from stocker_testing import make_bars

from stocker_core.env.episode import Episode


def random_walk(n: int, seed: int, start: float = 100.0) -> np.ndarray:
    steps = np.random.default_rng(seed).normal(0.0005, 0.02, n)
    return start * np.exp(np.cumsum(steps))


def episode_with_history(closes, history_days: int, key: str = "SYN|2020-01-01") -> Episode:
    """The last ``len(closes) - history_days`` closes as the window, the rest as history."""
    bars = make_bars(closes, start="2019-01-01")
    cols = ["date", "open", "high", "low", "close", "adj_close", "volume"]
    window = bars[cols].iloc[history_days:].reset_index(drop=True)
    return Episode(
        key=key,
        ticker=key.split("|")[0],
        window_start=window["date"].iloc[0].date(),
        window_end=window["date"].iloc[-1].date() + timedelta(days=1),
        bars=window,
        history=bars[cols].iloc[:history_days].reset_index(drop=True),
        starting_cash=10_000.0,
    )


def synthetic_prices(ticker: str = "SYN", days: int = 400, seed: int = 3) -> pd.DataFrame:
    """Long ``market.prices``-shaped bars of one ticker over business days from 2015."""
    bars = make_bars(random_walk(days, seed), start="2015-01-01")
    return bars.assign(ticker=ticker)


RULE_POLICIES = ["buy_and_hold", "hold", "random", "macd", "zmr", "ideal"]


def store_prices(warehouse, frame: pd.DataFrame) -> None:
    """Store bars in ``market.prices`` (what the prices asset would store), per ticker."""
    for ticker, bars in frame.groupby("ticker"):
        warehouse.replace_partitions("market.prices", ticker, bars.drop(columns="ticker"))
