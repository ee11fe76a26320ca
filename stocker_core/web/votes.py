"""The council as the web page shows it: the cached votes of a day or an episode (read-only
from ``council.votes``) and the moderator's decisions replayed on them; the text events the
council reads, read-only too (for votes computed on demand)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council.models import SpecialistVote
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.decision_context.decision import PortfolioState
from stocker_core.env.actions import Action
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation.council_votes import CachedCouncilPolicy, VoteBook
from stocker_core.text_events.events import TextEvents
from stocker_core.web.errors import BadInputError
from stocker_core.web.reader import WarehouseReader, plain

VOTES = "council.votes"


def _day_list(days: Sequence[date | pd.Timestamp]) -> list[date]:
    return [pd.Timestamp(d).date() for d in days]


def vote_sets(reader: WarehouseReader, ticker: str, days: Sequence[date | pd.Timestamp]) -> list[dict]:
    """The (backend, model) pairs with votes of ``ticker`` on ``days``: for each, the newest
    prompt version per role and how many days have all seven roles."""
    frame = reader.frame(
        f"""SELECT backend, model_id, role, prompt_version, count(*) AS n, max(created_at) AS latest
            FROM {VOTES} WHERE ticker = ? AND date IN (SELECT unnest(?::DATE[]))
            GROUP BY ALL ORDER BY backend, model_id, role, latest""",
        [ticker, _day_list(days)],
        needs=[VOTES],
    )
    sets = []
    for (backend, model_id), part in frame.groupby(["backend", "model_id"], sort=True) if len(frame) else []:
        newest = part.sort_values("latest").groupby("role").tail(1)
        versions = dict(zip(newest["role"], newest["prompt_version"], strict=True))
        sets.append({"backend": backend, "model_id": model_id, "prompt_versions": versions})
    return sets


def _book(
    reader: WarehouseReader,
    ticker: str,
    days: Sequence[date | pd.Timestamp],
    backend: str,
    model_id: str,
    versions: dict[str, str],
) -> VoteBook:
    frame = reader.frame(
        f"""SELECT role, date, prompt_version, signal, confidence, rationale, parse_error FROM {VOTES}
            WHERE ticker = ? AND backend = ? AND model_id = ? AND date IN (SELECT unnest(?::DATE[]))""",
        [ticker, backend, model_id, _day_list(days)],
        needs=[VOTES],
    )
    found: dict[tuple[str, pd.Timestamp], SpecialistVote] = {}
    for role, day, version, signal, conf, why, failed in frame.itertuples(index=False):
        if versions.get(role) == version:
            found[(role, pd.Timestamp(day).normalize())] = SpecialistVote(
                role=role, signal=signal, confidence=conf, rationale=why or "", parse_error=bool(failed)
            )
    by_day: dict[pd.Timestamp, list[SpecialistVote]] = {}
    for stamp in (pd.Timestamp(d).normalize() for d in days):
        row = [found.get((role, stamp)) for role in ROLE_NAMES]
        if all(v is not None for v in row):
            by_day[stamp] = row  # type: ignore[assignment]
    return VoteBook(ticker, backend, model_id, versions, by_day)


def stored_vote_book(
    reader: WarehouseReader, settings: Settings, ticker: str, days: Sequence[date | pd.Timestamp]
) -> VoteBook:
    """The votes the ``council`` policy would use (configured backend and prompt versions),
    read without writing; days missing a role are left out (as ``load_vote_book`` does)."""
    from stocker_core.council.backends import get_backend

    backend = get_backend(settings)
    versions = {role: backend.prompt_version(role) for role in ROLE_NAMES}
    return _book(reader, ticker, days, backend.name, backend.model_id, versions)


def stored_text(reader: WarehouseReader) -> TextEvents | None:
    """The text events stored by the text assets, read-only, or None when none are stored
    (what ``text_events.store.warehouse_text`` answers, without its write connection that creates or
    migrates the text tables: a table from before ``published_at`` gets the date-only rule)."""
    from stocker_core.text_events.events import COLUMNS, TextEvents, empty_events, publication_times
    from stocker_core.text_events.store import TEXT_TABLES

    frames = {}
    for kind, table in TEXT_TABLES.items():
        frame = reader.frame(f"SELECT * FROM {table}", needs=[table])
        if frame.empty:
            frames[kind] = empty_events(kind)
            continue
        frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
        for column in ("published_at", "time_stated"):
            if column not in frame.columns:
                frame[column] = None
        # a row without its instant takes the date-only rule, as the migration fills it
        frame["published_at"] = publication_times(frame["date"], frame["published_at"])
        frame["time_stated"] = frame["time_stated"].fillna(False).astype(bool)
        frame = frame.sort_values(["date", "published_at"], kind="stable")
        frames[kind] = frame[COLUMNS[kind]].reset_index(drop=True)
    events = TextEvents(frames["news"], frames["forums"], frames["macro"])
    return events if any(len(f) for f in (events.news, events.forums, events.macro)) else None


def chosen_vote_book(
    reader: WarehouseReader,
    settings: Settings,
    ticker: str,
    days: Sequence[date | pd.Timestamp],
    vote_set: str | None,
) -> tuple[VoteBook | None, list[dict]]:
    """The vote book of ``vote_set`` (``backend:model_id``; default: the configured backend when
    stored, else the first stored set) and every stored set; (None, []) without votes."""
    sets = vote_sets(reader, ticker, days)
    for s in sets:
        s["id"] = f"{s['backend']}:{s['model_id']}"
    if not sets:
        if vote_set:
            raise BadInputError(f"no votes of {vote_set!r} for {ticker} on these days")
        return None, []
    if vote_set is None:
        configured = stored_vote_book(reader, settings, ticker, days)
        if configured.votes:
            return configured, sets
        pick = sets[0]
    else:
        matches = [s for s in sets if s["id"] == vote_set]
        if not matches:
            known = ", ".join(s["id"] for s in sets)
            raise BadInputError(f"unknown vote set {vote_set!r} for {ticker}: stored are {known}")
        pick = matches[0]
    return _book(reader, ticker, days, pick["backend"], pick["model_id"], pick["prompt_versions"]), sets


@dataclass
class RecordingModerator:
    """A moderator that remembers its last decision and rationale (the policy keeps only the action)."""

    inner: Any
    last: tuple[Action, str, bool] | None = None

    def reset(self) -> None:
        self.inner.reset()

    def decide(
        self, votes: Sequence[SpecialistVote], portfolio: PortfolioState, price: float | None
    ) -> tuple[Action, str, bool]:
        self.last = self.inner.decide(votes, portfolio, price)
        return self.last


@dataclass
class Replay:
    """The moderator's decision on each day it had all seven votes, in order."""

    decisions: list[dict[str, Any]] = field(default_factory=list)
    stopped_at: str | None = None
    """The first day without cached votes (the replay cannot go past it), or None."""


def replay_decisions(episode: Episode, book: VoteBook, settings: Settings) -> Replay:
    """Play the council's moderator on ``book`` through the episode, as the backtests do
    (``CachedCouncilPolicy``), recording each day's action and rationale."""
    from stocker_core.council.backends import get_moderator

    env = TradingEnv(episode, RewardParams.from_settings(settings))
    moderator = RecordingModerator(get_moderator(settings, cost_rate=settings.transaction_cost))
    policy = CachedCouncilPolicy(book, moderator)
    replay = Replay()
    observation = env.reset()
    while not env.done:
        if pd.Timestamp(observation.date) not in book.votes:
            replay.stopped_at = observation.date
            break
        action = policy.act(observation)
        _, rationale, failed = moderator.last or (action, "", False)
        result = env.step(action)
        replay.decisions.append(
            plain(
                {
                    "date": observation.date,
                    "side": action.side,
                    "quantity": action.quantity,
                    "rationale": rationale,
                    "parse_error": failed,
                    "reward": result.reward,
                    "cash": result.observation.cash,
                    "position": result.observation.position,
                    "value": result.info["portfolio_value"],
                }
            )
        )
        observation = result.observation
    return replay


def votes_payload(book: VoteBook, day: pd.Timestamp) -> list[dict[str, Any]]:
    """The seven votes of ``day`` in role order (empty when the day is not covered)."""
    votes = book.votes.get(day.normalize(), [])
    return [plain({**v.model_dump(), "prompt_version": book.prompt_versions.get(v.role)}) for v in votes]


def heatmap(book: VoteBook, days: Sequence[pd.Timestamp]) -> dict[str, Any]:
    """Signal and confidence by role × day (None where a day has no votes)."""
    signal = {role: [] for role in ROLE_NAMES}
    confidence = {role: [] for role in ROLE_NAMES}
    for day in days:
        votes = {v.role: v for v in book.votes.get(pd.Timestamp(day).normalize(), [])}
        for role in ROLE_NAMES:
            vote = votes.get(role)
            signal[role].append(vote.signal if vote else None)
            confidence[role].append(vote.confidence if vote else None)
    return plain({"roles": list(ROLE_NAMES), "signal": signal, "confidence": confidence})
