"""Which (ticker, day) decisions the agent trains and is validated on: days of the
train / valid split whose forward-return day (``horizon`` sessions later) is in the same
split, so no label reads past the split's end. Splits come from ``eval.splits`` when the
splits asset stored them, else they are computed from the ticker's bars the same way
(``stocker_core.evaluation.splits``). The test split is never handed out here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stocker_core.agent.data import AgentData
from stocker_core.errors import StockerError
from stocker_core.evaluation.splits import SplitLeakError, Splits, splits_from_prices
from stocker_core.warehouse.db import Warehouse

Pair = tuple[str, pd.Timestamp]


@dataclass(frozen=True)
class SplitSource:
    """The splits used and where they came from (``stored`` or ``computed``)."""

    splits: Splits
    origin: str


def agent_splits(warehouse: Warehouse | None, data: dict[str, AgentData]) -> SplitSource:
    """Stored splits covering every ticker of ``data``, else splits computed from its bars."""
    if warehouse is not None and warehouse.path.exists():
        from stocker_core.evaluation.splits import load_splits

        try:
            stored = load_splits(warehouse)
            if set(data) <= set(stored.tickers):
                return SplitSource(stored, "stored")
        except StockerError:
            pass
    frame = pd.concat([d.bars[["date"]].assign(ticker=t) for t, d in data.items()], ignore_index=True)
    return SplitSource(splits_from_prices(frame, tickers=list(data)), "computed")


def split_days(data: AgentData, splits: Splits, split: str, horizon: int) -> list[pd.Timestamp]:
    """Days of ``split`` whose label day ``horizon`` sessions later lies in it too."""
    if split == "test":
        raise SplitLeakError("the test split is reserved for the final backtest, not for training")
    span = splits.range_of(data.ticker, split)
    days = []
    for day in data.trading_days(span.start, span.end):
        ahead = data.forward_day(day, horizon)
        if ahead is not None and span.contains(ahead):
            days.append(day)
    if split == "train":
        splits.assert_not_test(data.ticker, days)
    return days


def sample_pairs(pairs: list[Pair], most: int, seed: int) -> list[Pair]:
    """At most ``most`` pairs, evenly spread over time (seeded tie-break), oldest first."""
    if len(pairs) <= most:
        return list(pairs)
    rng = np.random.default_rng(seed)
    edges = np.linspace(0, len(pairs), most + 1).astype(int)
    picks = [
        int(rng.integers(lo, hi)) if hi > lo else lo for lo, hi in zip(edges[:-1], edges[1:], strict=True)
    ]
    return [pairs[i] for i in picks]


def split_pairs(
    data: dict[str, AgentData], splits: Splits, split: str, horizon: int, most: int, seed: int
) -> list[Pair]:
    """Up to ``most`` (ticker, day) pairs of ``split`` over every ticker of ``data``."""
    pairs = [(t, d) for t, agent_data in data.items() for d in split_days(agent_data, splits, split, horizon)]
    if not pairs:
        raise StockerError(f"no {split}-split days with a {horizon}-session label: store more history")
    return sample_pairs(pairs, most, seed)
