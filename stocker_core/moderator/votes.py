"""The council's cached votes for whole episodes: read from ``council.votes``, misses computed
once by the council's voting (which writes them back), and the cache version that was used."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council.backends import Backend
from stocker_core.council.cache import VoteCache
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.env.episode import Episode
from stocker_core.warehouse.db import Warehouse, frame_version

VoteTuple = tuple[tuple[str, float, float], ...]
"""(role, signal, confidence) for every role, in the council's role order."""


@dataclass(frozen=True)
class EpisodeVotes:
    """Votes by ticker and ISO date, with the cache version and a content hash of them."""

    by_day: dict[tuple[str, str], VoteTuple]
    cache_version: str
    data_version: str
    computed: int
    """Votes that were missing from the cache and computed now."""

    def for_day(self, ticker: str, day: str) -> VoteTuple:
        return self.by_day[(ticker, day)]


def cache_version(backend: Backend) -> str:
    """``backend:model_id:<hash of the roles' prompt versions>`` — what keys the cached votes."""
    versions = ",".join(f"{role}={backend.prompt_version(role)}" for role in ROLE_NAMES)
    digest = hashlib.sha256(versions.encode()).hexdigest()[:12]
    return f"{backend.name}:{backend.model_id}:{digest}"


def _compute_missing(
    ticker: str, days: list[pd.Timestamp], settings: Settings, warehouse: Warehouse, backend: Backend
) -> int:
    """Run the council for ``days`` of ``ticker`` (cache first, misses written back)."""
    from stocker_core.council.voting import run_votes
    from stocker_core.env.peers import council_inputs
    from stocker_core.text_events.store import warehouse_text

    inputs = council_inputs(ticker, days[0].date(), days[-1].date(), settings, warehouse_text(warehouse))
    run = run_votes(ticker, days, inputs.context, backend, VoteCache(warehouse), max_workers=1)
    return int(run.stats["misses"])


def _vote_tuples(ticker: str, frame: pd.DataFrame) -> dict[tuple[str, str], VoteTuple]:
    """``{(ticker, ISO day): votes in role order}`` from cached vote rows (a role without a row
    that day abstains: signal and confidence 0; the last row of a repeated role counts)."""
    if not len(frame):
        return {}
    last = frame.drop_duplicates(["date", "role"], keep="last")
    wide = last.assign(present=True).pivot(
        index="date", columns="role", values=["signal", "confidence", "present"]
    )
    columns = []
    for role in ROLE_NAMES:
        if ("present", role) in wide.columns:
            present = wide[("present", role)].eq(True).to_numpy()
            signal = wide[("signal", role)].to_numpy(dtype=float)
            confidence = wide[("confidence", role)].to_numpy(dtype=float)
            columns.append(
                [
                    (role, float(s), float(c)) if p else (role, 0.0, 0.0)
                    for s, c, p in zip(signal, confidence, present, strict=True)
                ]
            )
        else:
            columns.append([(role, 0.0, 0.0)] * len(wide))
    days = [pd.Timestamp(d).date().isoformat() for d in wide.index]
    return {(ticker, day): tuple(votes) for day, *votes in zip(days, *columns, strict=True)}


def episode_votes(
    episodes: Sequence[Episode], settings: Settings, warehouse: Warehouse, backend: Backend
) -> EpisodeVotes:
    """Every role's vote on every trading day of ``episodes`` from ``backend``'s cache;
    days missing from the cache are computed through the council's voting (``council.voting``) first."""
    cache = VoteCache(warehouse)
    versions = {role: backend.prompt_version(role) for role in ROLE_NAMES}
    days_by_ticker: dict[str, set[pd.Timestamp]] = {}
    for episode in episodes:
        days_by_ticker.setdefault(episode.ticker, set()).update(pd.Timestamp(d) for d in episode.dates)
    by_day: dict[tuple[str, str], VoteTuple] = {}
    frames, computed = [], 0
    for ticker, day_set in sorted(days_by_ticker.items()):
        days = sorted(day_set)
        frame = cache.votes_for(
            ticker, days, backend=backend.name, model_id=backend.model_id, prompt_versions=versions
        )
        complete = frame.groupby("date")["role"].nunique() if len(frame) else pd.Series(dtype=int)
        missing = [d for d in days if complete.get(d, 0) < len(ROLE_NAMES)]
        if missing:
            computed += _compute_missing(ticker, missing, settings, warehouse, backend)
            frame = cache.votes_for(
                ticker, days, backend=backend.name, model_id=backend.model_id, prompt_versions=versions
            )
        by_day.update(_vote_tuples(ticker, frame))
        frames.append(frame.assign(ticker=ticker)[["ticker", "date", "role", "signal", "confidence"]])
    allv = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    version = (
        frame_version(allv.sort_values(["ticker", "date", "role"]).reset_index(drop=True))
        if len(allv)
        else ""
    )
    return EpisodeVotes(by_day, cache_version(backend), version, computed)
