"""Episodes played from the web page: a session per browser tab holding a ``TradingEnv``
and, optionally, a policy of the registry that can take the next step."""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stocker_core.config import Settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import EpisodeDoneError, StepResult, TradingEnv
from stocker_core.env.episode import Episode, load_episode
from stocker_core.env.policies import Policy, is_upper_bound, make_policy
from stocker_core.env.rewards import RewardBreakdown, RewardParams
from stocker_core.web import names
from stocker_core.web.errors import BadInputError, ConflictError, NotFoundError, WebError
from stocker_core.web.reader import WarehouseReader, plain
from stocker_core.web.votes import stored_text, stored_vote_book

if TYPE_CHECKING:
    from stocker_core.evaluation.council_votes import VoteBook

MAX_SESSIONS = 64
MAX_PER_CLIENT = 16
"""Play sessions one client (one address) may hold. A client past it, or on a full page, has
its own least recently used session closed to make room (a page loaded again and again is
never locked out); another client's live session is never dropped: a client holding none
on a full page is answered 429."""
IDLE_SECONDS = 3600.0
MAX_EPISODES = 32
MAX_REMEMBERED = 1024
"""Ids of sessions closed to make room, remembered so that their page is told why."""


@dataclass
class PlaySession:
    """One episode being played: the environment, the policy (if any) and every step so far."""

    session_id: str
    env: TradingEnv
    policy_name: str | None
    seed: int | None
    policy: Policy | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    touched: float = field(default_factory=time.monotonic)
    client: str | None = None


def step_record(
    result: StepResult, action: Action, by: str, params: RewardParams | None = None
) -> dict[str, Any]:
    """What the page shows of one step: action, fill, reward and its terms (``terms``: the
    breakdown; ``contributions``: its signed parts that add up to the raw reward), the
    account after."""
    obs, info = result.observation, result.info
    breakdown = info["breakdown"]
    params = params or RewardParams()
    parts = RewardBreakdown(**breakdown).contributions(params.w_perf, params.w_infl)
    return plain(
        {
            "step": obs.step - 1,
            "date": info["date"],
            "price": info["price"],
            "side": action.side,
            "quantity": action.quantity,
            "by": by,
            "traded": info["traded"],
            "invalid": info["invalid"],
            "reward": result.reward,
            "terms": breakdown,
            "contributions": parts,
            "cash": obs.cash,
            "position": obs.position,
            "value": info["portfolio_value"],
            "done": result.done,
        }
    )


def _policy_values(episode: Episode, params: RewardParams, name: str) -> list[float]:
    """Portfolio value after each day of a reference policy (e.g. buy-and-hold)."""
    env = TradingEnv(episode, params)
    policy = make_policy(name, env, None)
    observation, values = env.reset(), []
    while not env.done:
        result = env.step(policy.act(observation))
        observation = result.observation
        values.append(result.info["portfolio_value"])
    return values


def episode_payload(env: TradingEnv) -> dict[str, Any]:
    """Bars, the ideal path and buy-and-hold for the charts of an episode (sent once)."""
    episode, params = env.episode, env.params
    bars = episode.bars
    cash = params.starting_cash
    return plain(
        {
            **episode.summary(),
            "bars": {
                "date": [d.date().isoformat() for d in episode.dates],
                "open": bars["open"].tolist(),
                "high": bars["high"].tolist(),
                "low": bars["low"].tolist(),
                "close": bars["close"].tolist(),
                "volume": bars["volume"].tolist(),
            },
            "ideal": {
                "long": [bool(x) for x in env.ideal.long],
                "value": [cash * (1.0 + float(p)) for p in env.ideal.pnl],
                "total": env.ideal_total,
                "trades": env.ideal.trades,
            },
            "buy_and_hold": {
                "value": _policy_values(episode, params, "buy_and_hold"),
                "final": env.buy_and_hold_final,
            },
            "params": params.__dict__,
        }
    )


def session_state(session: PlaySession) -> dict[str, Any]:
    """The session as the page needs it after any change."""
    env = session.env
    obs = env.observation()
    return plain(
        {
            "session_id": session.session_id,
            "policy": session.policy_name,
            "policy_upper_bound": bool(session.policy_name and is_upper_bound(session.policy_name)),
            "seed": session.seed,
            "step": obs.step,
            "total_steps": obs.total_steps,
            "date": obs.date,
            "close": obs.close,
            "cash": obs.cash,
            "position": obs.position,
            "value": obs.portfolio_value,
            "done": obs.done,
            "total_reward": float(sum(env.rewards)),
            "invalid_count": env.invalid_count,
            "steps": session.steps,
        }
    )


class PlaySessions:
    """Sessions by id, least recently used first (at most ``MAX_SESSIONS``, ``MAX_PER_CLIENT``
    per client, each dropped after an idle hour, closed by its page when it leaves or plays
    again, or, past a quota, the client's own least recently used one closed to make room; a
    full page answers 429 only to a client with no session of its own) and the episodes they
    play (loaded once per key)."""

    def __init__(self, settings: Settings, reader: WarehouseReader) -> None:
        self.settings = settings
        self.reader = reader
        self.params = RewardParams.from_settings(settings)
        self.sessions: OrderedDict[str, PlaySession] = OrderedDict()
        self.made_room: OrderedDict[str, None] = OrderedDict()
        """Sessions closed to make room for a newer one of their client (the last ``MAX_REMEMBERED``)."""
        self.episodes: OrderedDict[str, Episode] = OrderedDict()
        self.vote_books: OrderedDict[tuple[str, str], VoteBook] = OrderedDict()
        """Council votes computed on demand, by (episode key, vote cache version)."""
        self.lock = threading.Lock()
        self.vote_lock = threading.Lock()

    def episode(self, name: str) -> Episode:
        """The episode of a task alias or partition key (cached)."""
        key, task_id = names.episode_key(name)
        cache_key = task_id or key
        with self.lock:
            if cache_key in self.episodes:
                self.episodes.move_to_end(cache_key)
                return self.episodes[cache_key]
        episode = load_episode(name, self.settings)
        with self.lock:
            self.episodes[cache_key] = episode
            while len(self.episodes) > MAX_EPISODES:
                self.episodes.popitem(last=False)
        return episode

    def _policy(self, name: str, env: TradingEnv, seed: int | None) -> Policy:
        """A registry policy; the council plays from its stored votes, the days they lack voted
        now (``council_book``)."""
        if name == "council":
            from stocker_core.evaluation.council_votes import cached_council

            return cached_council(self.council_book(env.episode), self.settings)
        return make_policy(name, env, seed, self.settings)

    def council_book(self, episode: Episode) -> VoteBook:
        """The configured backend's votes on every day of ``episode``: the stored ones, and the
        days they lack computed now as ``stocker episode run --policy council`` computes them
        (``vote_missing_days``: same inputs, same ``run_votes``), kept in this process only. The
        page never writes the warehouse (the pipeline may be writing it; its reader is read-only):
        ``stocker episode run`` or the ``specialist_votes`` asset store votes. An LLM backend's
        missing votes are not computed here (minutes, often the network): ConflictError."""
        from stocker_core.evaluation.council_votes import LOCAL_BACKENDS, vote_missing_days

        book = stored_vote_book(self.reader, self.settings, episode.ticker, episode.dates)
        if book.covers(episode.dates):
            return book
        memo_key = (episode.key, book.version)
        with self.vote_lock:  # one computation at a time: a second request for the same days waits
            known = self.vote_books.get(memo_key)
            if known is not None:
                self.vote_books.move_to_end(memo_key)
                return known
            if book.backend not in LOCAL_BACKENDS:
                missing = sum(1 for d in episode.dates if d.normalize() not in book.votes)
                raise ConflictError(
                    f"the council has no stored votes for {missing} of {len(episode.dates)} days of "
                    f"{episode.key} ({book.backend}:{book.model_id}), and the page computes only the "
                    f"rule backend's (an LLM's take minutes and often the network): run `stocker "
                    f"episode run --episode '{episode.key}' --policy council` or materialize "
                    "specialist_votes for it first"
                )
            full = vote_missing_days(book, episode, self.settings, stored_text(self.reader))
            self.vote_books[memo_key] = full
            while len(self.vote_books) > MAX_EPISODES:
                self.vote_books.popitem(last=False)
        return full

    def start(
        self,
        episode: str,
        policy: str | None = None,
        seed: int | None = None,
        client: str | None = None,
        replaces: str | None = None,
    ) -> PlaySession:
        """A new session of ``client`` (its address) on ``episode`` with ``policy`` (None: by hand
        only). ``replaces``: the session this page played before, closed as this one is
        admitted when it is the same client's (a page that plays again frees its old session; an
        unknown or another client's is left alone; a start that fails leaves it open). Past the
        client's quota or on a full page, the client's least recently used session is closed
        to make room (``_admit``); WebError 429 only on a full page where it holds none."""
        if policy is not None:
            names.policy(policy)
        with self.lock:  # refuse before loading anything
            self._admit(client, replaces)
        env = TradingEnv(self.episode(episode), self.params)
        chosen = self._policy(policy, env, seed) if policy else None
        session = PlaySession(uuid.uuid4().hex, env, policy, seed, chosen, client=client)
        with self.lock:
            victims = self._admit(client, replaces)
            old = self.sessions.get(replaces) if replaces else None
            if old is not None and old.client == client:
                del self.sessions[replaces]
            for sid in victims:
                del self.sessions[sid]
                self.made_room[sid] = None
                while len(self.made_room) > MAX_REMEMBERED:
                    self.made_room.popitem(last=False)
            self.sessions[session.session_id] = session
        return session

    def _admit(self, client: str | None, replaces: str | None = None) -> list[str]:
        """The sessions of ``client`` to close, least recently used first, so that it may start
        one now within its quota and the page's, counting ``replaces`` (when it is the client's)
        as closed; WebError 429 when the page is full of other clients' sessions (the caller
        holds the lock; nothing is closed here)."""
        self._expire()
        old = self.sessions.get(replaces) if replaces else None
        freed = 1 if old is not None and old.client == client else 0
        own = [
            sid for sid, s in self.sessions.items() if s.client == client and not (freed and sid == replaces)
        ]
        victims: list[str] = []

        def over() -> bool:
            kept = len(self.sessions) - freed - len(victims)
            return len(own) - len(victims) >= MAX_PER_CLIENT or kept >= MAX_SESSIONS

        while len(victims) < len(own) and over():
            victims.append(own[len(victims)])
        if over():  # the client has nothing left to close: the page is full of others' sessions
            raise WebError(
                429,
                f"the page holds its maximum of {MAX_SESSIONS} play sessions, none of them this "
                f"client's: one is freed after {IDLE_SECONDS / 60:g} idle minutes or when its page "
                "closes it",
            )
        return victims

    def _expire(self) -> None:
        cutoff = time.monotonic() - IDLE_SECONDS
        for sid in [sid for sid, s in self.sessions.items() if s.touched < cutoff]:
            del self.sessions[sid]

    def close(self, session_id: str, client: str | None = None) -> None:
        """End session ``session_id`` of ``client`` (the page leaving): NotFoundError when unknown
        or expired, ConflictError when another client started it."""
        with self.lock:
            session = self.sessions.get(session_id)
            if session is None:
                raise NotFoundError(self._missing(session_id))
            if session.client != client:
                raise ConflictError(_not_yours(session_id))
            del self.sessions[session_id]

    def _missing(self, session_id: str) -> str:
        if session_id in self.made_room:
            return (
                f"no play session {session_id!r}: closed to make room for a newer one of this client "
                f"(at most {MAX_PER_CLIENT} per client, {MAX_SESSIONS} on the page)"
            )
        return f"no play session {session_id!r} (expired, closed or never started)"

    def get(self, session_id: str, client: str | None) -> PlaySession:
        """The session ``session_id`` of ``client``: NotFoundError when unknown or expired,
        ConflictError when another client started it (nothing of it read or touched)."""
        with self.lock:
            session = self.sessions.get(session_id)
            if session is None:
                raise NotFoundError(self._missing(session_id) + ": start again")
            if session.client != client:
                raise ConflictError(_not_yours(session_id))
            self.sessions.move_to_end(session_id)
            session.touched = time.monotonic()
        return session

    def step(self, session_id: str, action: dict[str, Any] | None, client: str | None) -> dict[str, Any]:
        """One step of ``client``'s session: ``action`` by hand (``{"side", "quantity"}``) or,
        when None, the policy's."""
        session = self.get(session_id, client)
        with session.lock:
            env = session.env
            if action is None:
                if session.policy is None:
                    raise BadInputError("this session has no policy: send an action {side, quantity}")
                chosen, by = session.policy.act(env.observation()), session.policy_name or "policy"
            else:
                chosen, by = _parse(action), "hand"
            try:
                result = env.step(chosen)
            except EpisodeDoneError as exc:
                raise ConflictError(str(exc)) from None
            record = step_record(result, chosen, by, env.params)
            session.steps.append(record)
            return record

    def run(self, session_id: str, client: str | None) -> list[dict[str, Any]]:
        """Let the policy of ``client``'s session play every remaining step."""
        session = self.get(session_id, client)
        if session.policy is None:
            raise BadInputError("this session has no policy to play: start one with a policy")
        done = []
        while not session.env.done:
            done.append(self.step(session_id, None, client))
        return done

    def reset(self, session_id: str, client: str | None) -> PlaySession:
        """Start ``client``'s session's episode over (a fresh policy of the same name and seed)."""
        session = self.get(session_id, client)
        with session.lock:
            session.env.reset()
            session.steps.clear()
            if session.policy_name:
                session.policy = self._policy(session.policy_name, session.env, session.seed)
        return session


def _not_yours(session_id: str) -> str:
    return f"play session {session_id!r} belongs to another client: start your own"


def _parse(action: dict[str, Any]) -> Action:
    from pydantic import ValidationError

    try:
        return Action.model_validate(action)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'action'}: {e['msg']}" for e in exc.errors())
        raise BadInputError(f"invalid action: {problems}") from None
