"""The ``oracle`` policy: follow the sentiment of the day's headlines, as an analyst could.

On each day D it scores (``sentiment.score_text``) the ticker's headlines published on
D's New York calendar day before D's close (``decision_cutoff``: what a decision at the
close may see) and is long, all in, when their mean score is positive, flat otherwise
(and flat on a day without headlines). A date-only headline dated D−1 counts on D (it is
published at midnight). On the synthetic source those headlines carry the planted
factor, so the oracle is the ceiling a learning loop can reach there; on real data it
simply follows news sentiment.

Text comes from the warehouse's text tables when any are stored, else from the
configuration (``configured_text``: the synthetic market's, or the text folder's).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from stocker_core.baselines.rules import LongFlatPolicy
from stocker_core.config import Settings
from stocker_core.decision_context.point_in_time import decision_cutoff
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.plans import Plan, long_flat_plan
from stocker_core.env.policies import register_policy, require_settings
from stocker_core.env.rewards import RewardParams
from stocker_core.market.calendar import NEW_YORK
from stocker_core.text_events.sentiment import score_text

ORACLE = "oracle"


def day_sentiment(news: pd.DataFrame, days: Sequence[date | pd.Timestamp]) -> np.ndarray:
    """Per day D, the mean score of the headlines published from D's New York midnight to
    strictly before D's close; NaN on a day without any."""
    days = pd.DatetimeIndex(pd.to_datetime(list(days))).normalize()
    out = np.full(len(days), np.nan)
    if news is None or len(news) == 0 or len(days) == 0:
        return out
    instants = pd.to_datetime(news["published_at"], utc=True).dt.tz_localize(None).to_numpy("datetime64[ns]")
    opens = days.tz_localize(NEW_YORK).tz_convert("UTC").tz_localize(None).to_numpy("datetime64[ns]")
    closes = pd.DatetimeIndex([_cutoff(d) for d in days]).tz_localize(None).to_numpy("datetime64[ns]")
    keep = (instants >= opens.min()) & (instants < closes.max())
    if not keep.any():
        return out
    order = np.argsort(instants[keep], kind="stable")
    stamps = instants[keep][order]
    scores = np.array([_score(h) for h in news["headline"].to_numpy()[keep][order]])
    first = np.searchsorted(stamps, opens, "left")
    last = np.searchsorted(stamps, closes, "left")
    for i, (lo, hi) in enumerate(zip(first.tolist(), last.tolist(), strict=True)):
        if hi > lo:
            out[i] = float(scores[lo:hi].mean())
    return out


@lru_cache(maxsize=65_536)
def _cutoff(day: pd.Timestamp) -> pd.Timestamp:
    """``decision_cutoff`` of a day, once per process: overlapping episodes and rolling windows
    ask for the same days again and again."""
    return decision_cutoff(day)


@lru_cache(maxsize=262_144)
def _score(headline: str) -> float:
    """``score_text`` of a headline, once per process (the same reason)."""
    return score_text(headline)


def oracle_long(news: pd.DataFrame, days: Sequence[date | pd.Timestamp]) -> np.ndarray:
    """True on each day whose pre-close headlines score positive on average."""
    return np.nan_to_num(day_sentiment(news, days), nan=0.0) > 0.0


def _file_state(path: Path) -> tuple[int, int]:
    stat = path.stat() if path.exists() else None
    return (stat.st_mtime_ns, stat.st_size) if stat else (0, 0)


@lru_cache(maxsize=4)
def _stored_news(path: Path, state: tuple) -> pd.DataFrame | None:
    """Every stored headline when the warehouse at ``path`` stores any text, else None
    (cached per file state: ``path`` and its write-ahead log, unchanged since)."""
    from stocker_core.text_events.events import COLUMNS
    from stocker_core.text_events.store import TEXT_TABLES, ensure_text_tables, read_events
    from stocker_core.warehouse.db import Warehouse

    warehouse = Warehouse(path)
    ensure_text_tables(warehouse)
    any_stored = " OR ".join(f"EXISTS (SELECT 1 FROM {table})" for table in TEXT_TABLES.values())
    if not warehouse.query(f"SELECT {any_stored} AS stored")["stored"].iloc[0]:
        return None
    return read_events(warehouse, "news")[COLUMNS["news"]]


def ticker_news(ticker: str, settings: Settings) -> pd.DataFrame:
    """``ticker``'s headlines: the warehouse's when it stores any text, else the configured ones."""
    from stocker_core.text_events.configured import configured_text

    path = settings.warehouse_path
    if path.exists():
        wal = path.with_name(path.name + ".wal")
        stored = _stored_ticker_news(path.resolve(), (_file_state(path), _file_state(wal)), ticker)
        if stored is not None:
            return stored
    news = configured_text(settings).news
    return news.loc[news["ticker"] == ticker].reset_index(drop=True)


@lru_cache(maxsize=64)
def _stored_ticker_news(path: Path, state: tuple, ticker: str) -> pd.DataFrame | None:
    """``ticker``'s stored headlines (``_stored_news``), cut once per ticker and file state: every
    episode of a ticker reads the same frame (not to be modified)."""
    news = _stored_news(path, state)
    return None if news is None else news.loc[news["ticker"] == ticker].reset_index(drop=True)


class OraclePolicy(LongFlatPolicy):
    """Long (all in) on days whose pre-close headlines read positive, flat otherwise."""

    def __init__(self, env: TradingEnv, settings: Settings) -> None:
        super().__init__(env.params.transaction_cost)
        episode = env.episode
        wanted = oracle_long(ticker_news(episode.ticker, settings), episode.dates)
        self.long = {day.strftime("%Y-%m-%d"): bool(w) for day, w in zip(episode.dates, wanted, strict=True)}

    def want_long(self, observation: Observation) -> bool:
        return self.long.get(observation.date, False)


def oracle_plan(episode: Episode, params: RewardParams, settings: Settings | None = None) -> Plan:
    """The oracle's actions for a whole episode (the vectorised twin of ``OraclePolicy``); the
    headlines are read with ``settings`` (required)."""
    news = ticker_news(episode.ticker, require_settings(ORACLE, settings))
    wanted = oracle_long(news, episode.dates)
    return long_flat_plan(wanted, episode.closes, params.transaction_cost, params.starting_cash)


def register_policies() -> None:
    """``oracle`` with its whole-episode plan (called by the composition root)."""
    register_policy(
        ORACLE,
        lambda env, seed, settings: OraclePolicy(env, require_settings(ORACLE, settings)),
        plan=oracle_plan,
    )
