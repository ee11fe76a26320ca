"""The council played from its vote cache: one query per ticker, then only the moderator.

``council`` in the registry builds its inputs and looks its votes up day by day; on a
ticker whose votes the ``specialist_votes`` asset already cached, ``CachedCouncilPolicy``
makes the same decisions (a test holds them equal) at a fraction of the cost. Days the
cache lacks fall back to the registered policy, or are voted now by ``vote_missing_days``
(in memory, for a reader that must not write: the web page).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council.backends import get_backend, get_moderator
from stocker_core.council.cache import VoteCache
from stocker_core.council.models import SpecialistVote
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.council.vote_moderators import Moderator
from stocker_core.decision_context.decision import PortfolioState
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation
from stocker_core.warehouse.db import Warehouse

if TYPE_CHECKING:
    from stocker_core.env.episode import Episode
    from stocker_core.text_events.events import TextEvents

LOCAL_BACKENDS = frozenset({"rule"})
"""Backends whose votes ``vote_missing_days`` computes: quick, offline, deterministic. An LLM
backend's take minutes per episode (and often the network); they are cached by the
``specialist_votes`` asset or ``stocker episode run --policy council``."""


@dataclass(frozen=True)
class VoteBook:
    """Cached votes of one ticker, per day in role order, and what identifies the vote set."""

    ticker: str
    backend: str
    model_id: str
    prompt_versions: dict[str, str]
    votes: dict[pd.Timestamp, list[SpecialistVote]]

    @property
    def version(self) -> str:
        """The vote cache version: a hash of backend, model id and every role's prompt version."""
        key = json.dumps([self.backend, self.model_id, sorted(self.prompt_versions.items())])
        return f"{self.backend}:{self.model_id}:{hashlib.sha256(key.encode()).hexdigest()[:12]}"

    def covers(self, days: Sequence[date | pd.Timestamp]) -> bool:
        """True when every role's vote is cached on every one of ``days``."""
        return all(pd.Timestamp(d).normalize() in self.votes for d in days)

    def on(self, day: date | pd.Timestamp | str) -> list[SpecialistVote]:
        return self.votes[pd.Timestamp(day).normalize()]


def load_vote_book(
    warehouse: Warehouse, settings: Settings, ticker: str, days: Sequence[date | pd.Timestamp]
) -> VoteBook:
    """Votes of the configured backend for ``ticker`` on ``days`` (one query); days missing
    any role are left out."""
    backend = get_backend(settings)
    versions = {role: backend.prompt_version(role) for role in ROLE_NAMES}
    found = VoteCache(warehouse).lookup(ticker, list(days), backend.name, backend.model_id, versions)
    by_day: dict[pd.Timestamp, list[SpecialistVote]] = {}
    for day in (pd.Timestamp(d).normalize() for d in days):
        row = [found.get((role, day)) for role in ROLE_NAMES]
        if all(v is not None for v in row):
            by_day[day] = row  # type: ignore[assignment]
    return VoteBook(ticker, backend.name, backend.model_id, versions, by_day)


class CachedCouncilPolicy:
    """The council's moderator on cached votes (same decisions as the ``council`` policy)."""

    def __init__(self, book: VoteBook, moderator: Moderator) -> None:
        self.book = book
        self.moderator = moderator

    def act(self, observation: Observation) -> Action:
        if observation.step == 0:
            self.moderator.reset()
        portfolio = PortfolioState(
            cash=observation.cash,
            position=observation.position,
            step=observation.step,
            total_steps=observation.total_steps,
        )
        action, _why, _failed = self.moderator.decide(
            self.book.on(observation.date), portfolio, observation.close
        )
        return action


def cached_council(book: VoteBook, settings: Settings) -> CachedCouncilPolicy:
    """A cached council with the configured moderator."""
    return CachedCouncilPolicy(book, get_moderator(settings, cost_rate=settings.transaction_cost))


def vote_missing_days(
    book: VoteBook, episode: Episode, settings: Settings, text: TextEvents | None
) -> VoteBook:
    """``book`` with the votes of every day of ``episode`` it lacks, computed now the way
    ``--policy council`` computes them (``CouncilPolicy``'s inputs: the ticker's bars with
    history, its peers' and commodity's closes, ``text``, else the configured text; then
    ``run_votes``), held in memory only: nothing is written. ``text``: the warehouse's stored
    text events, or None when it has none (as ``text_events.store.warehouse_text`` answers).

    Only for the backends of ``LOCAL_BACKENDS`` (ValueError otherwise) and for ``book`` of the
    configured backend and prompt versions (``load_vote_book``/``stored_vote_book``)."""
    from stocker_core.council.voting import run_votes, votes_from_frame
    from stocker_core.env.peers import council_inputs

    missing = [d.normalize() for d in episode.dates if d.normalize() not in book.votes]
    if not missing:
        return book
    backend = get_backend(settings)
    if backend.name not in LOCAL_BACKENDS:
        raise ValueError(f"the {backend.name} backend's votes are not computed on demand")
    versions = {role: backend.prompt_version(role) for role in ROLE_NAMES}
    if (book.backend, book.model_id, book.prompt_versions) != (backend.name, backend.model_id, versions):
        raise ValueError(f"{book.version} is not the configured backend's vote set")
    inputs = council_inputs(episode.ticker, episode.start, episode.end, settings, text)
    run = run_votes(episode.ticker, missing, inputs.context, backend, cache=None, inputs=inputs)
    votes = dict(book.votes)
    for day, part in run.votes.groupby("date", sort=True):
        by_role = {v.role: v for v in votes_from_frame(part)}
        votes[pd.Timestamp(day).normalize()] = [by_role[role] for role in ROLE_NAMES]
    return replace(book, votes=votes)
