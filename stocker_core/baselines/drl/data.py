"""The deep-RL agents' training data: stored episodes wholly inside the train split."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import duckdb
import pandas as pd

from stocker_core.config import Settings
from stocker_core.env.episode import Episode, episode_from_bars, window_bounds
from stocker_core.errors import EmptyDataError
from stocker_core.evaluation.splits import Splits, load_splits
from stocker_core.market.bars import load_bars
from stocker_core.market.validation import parse_partition_key
from stocker_core.warehouse.db import Warehouse


def stored_episode_spans(warehouse: Warehouse) -> dict[str, tuple[date, date]]:
    """{episode key: (first, last trading day)} of every row in ``env.episodes``."""
    try:
        rows = warehouse.query("SELECT key, start_date, end_date FROM env.episodes ORDER BY ticker, month")
    except duckdb.CatalogException:
        rows = pd.DataFrame()
    if rows.empty:
        raise EmptyDataError("no episodes stored in env.episodes: materialize episodes first")
    return {
        str(r.key): (pd.Timestamp(r.start_date).date(), pd.Timestamp(r.end_date).date())
        for r in rows.itertuples(index=False)
    }


def split_episode_keys(
    splits: Splits, spans: dict[str, tuple[date, date]], split: str = "train"
) -> list[str]:
    """Keys whose first and last trading day (hence every day: ranges are contiguous)
    lie in ``split``."""
    return splits.episodes_in_split(split, {key: list(span) for key, span in spans.items()})


def load_episodes(keys: Sequence[str], settings: Settings, warehouse: Warehouse) -> list[Episode]:
    """The episodes of ``keys``, reading each ticker's bars once."""
    by_ticker: dict[str, list[str]] = {}
    for key in keys:
        by_ticker.setdefault(parse_partition_key(key)[0], []).append(key)
    episodes: list[Episode] = []
    for ticker, ticker_keys in by_ticker.items():
        last_end = max(
            window_bounds(parse_partition_key(k)[1], settings.episode_months)[1] for k in ticker_keys
        )
        bars, origin = load_bars(settings, ticker, None, last_end, warehouse)
        episodes.extend(episode_from_bars(key, bars, settings, origin) for key in ticker_keys)
    return episodes


def train_split_episodes(settings: Settings, warehouse: Warehouse) -> list[Episode]:
    """Every stored episode wholly inside its ticker's train split, loaded; the splits'
    leak guard checks that no window day is a test-split day."""
    splits = load_splits(warehouse)
    keys = split_episode_keys(splits, stored_episode_spans(warehouse), "train")
    if not keys:
        raise EmptyDataError(
            "no stored episode lies wholly inside a train split: materialize episodes for "
            "earlier months (or splits after more prices)"
        )
    episodes = load_episodes(keys, settings, warehouse)
    for episode in episodes:
        splits.assert_not_test(episode.ticker, episode.dates)
    return episodes
