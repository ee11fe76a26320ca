"""Sessions of the environment server and the cache of loaded episodes.

Sessions are explicit: ``/reset`` answers with an id that every later call sends.
At most ``max_sessions`` live at once; a session unused for ``idle_s`` seconds
expires. Loaded episodes (with a ready ``TradingEnv`` to copy and their council
view) are cached per (source, files folder, episode), and loaded once even when
many clients ask for the same one at the same moment. The cache keeps the
``max_episodes`` (default ``DEFAULT_MAX_EPISODES``) most recently used: a live
session keeps its own episode alive, so dropping one from the cache never breaks a
session, it only means the next reset of that episode loads it again.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from stocker_core.config import Settings
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import Episode, load_episode
from stocker_core.env.observation import CouncilView
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import StockerError

SESSION_HEADER = "X-Session-Id"
DEFAULT_MAX_SESSIONS = 256
DEFAULT_MAX_PER_CLIENT: int = Settings.model_fields["max_sessions_per_client"].default
"""Live sessions one client (one address) may hold (32; ``STOCKER_MAX_SESSIONS_PER_CLIENT``,
``stocker serve --max-sessions-per-client``): one client cannot fill the server."""
DEFAULT_IDLE_S = 900.0
DEFAULT_MAX_EPISODES = 64
"""Loaded episodes the server keeps (~1.2 MB each with their council view: ~80 MB at most)."""


class SessionError(StockerError, LookupError):
    """A request named no session, or one that does not exist (any more)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class LoadedEpisode:
    """An episode ready to play: the environment to copy and the council view."""

    episode: Episode
    template: TradingEnv
    view: CouncilView

    def new_env(self) -> TradingEnv:
        """A fresh environment at step 0 (a copy of the template: no solving again)."""
        env = copy.copy(self.template)
        env.reset()
        return env


@dataclass
class Session:
    """One client's environment."""

    session_id: str
    env: TradingEnv
    view: CouncilView
    include_chart: bool = False
    last_used: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    client: str | None = None
    """Who started it (the client's address): its quota counts the session."""
    episode_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """The episode's name for OpenEnv's state contract: reset's ``episode_id``, else a new id."""


class EpisodeCache:
    """Loaded episodes by (source, files folder, name), the ``max_episodes`` most recently used
    (least recently used dropped first); each loaded once at a time (single flight)."""

    def __init__(
        self,
        settings: Settings,
        loader: Callable[[str], Episode] | None = None,
        max_episodes: int = DEFAULT_MAX_EPISODES,
    ) -> None:
        if max_episodes < 1:
            raise ValueError("max_episodes must be at least 1")
        self.settings = settings
        self.params = RewardParams.from_settings(settings)
        self.max_episodes = max_episodes
        self._loader = loader or (lambda name: load_episode(name, settings))
        self._loaded: OrderedDict[tuple[str, str, str], LoadedEpisode] = OrderedDict()
        self._loading: dict[tuple[str, str, str], threading.Lock] = {}
        self._lock = threading.Lock()
        self.loads = 0

    def __len__(self) -> int:
        return len(self._loaded)

    def key(self, name: str) -> tuple[str, str, str]:
        return (self.settings.source, str(self.settings.files_dir or ""), name)

    def cached(self, name: str) -> LoadedEpisode | None:
        """The loaded episode if it is in the cache (never loads); marks it recently used."""
        key = self.key(name)
        with self._lock:
            hit = self._loaded.get(key)
            if hit is not None:
                self._loaded.move_to_end(key)
            return hit

    def get(self, name: str) -> LoadedEpisode:
        """The loaded episode ``name`` (task alias or partition key); slow on a miss."""
        key = self.key(name)
        hit = self.cached(name)
        if hit is not None:
            return hit
        with self._lock:
            gate = self._loading.setdefault(key, threading.Lock())
        try:
            with gate:  # concurrent first requests wait for one load
                hit = self.cached(name)
                if hit is None:
                    episode = self._loader(name)
                    template = TradingEnv(episode, self.params)
                    view = CouncilView.load(episode, self.settings)
                    view.prepare([d.date().isoformat() for d in episode.dates])
                    hit = LoadedEpisode(episode, template, view)
                    with self._lock:
                        self._loaded[key] = hit
                        self.loads += 1
                        while len(self._loaded) > self.max_episodes:
                            self._loaded.popitem(last=False)
        finally:
            with self._lock:  # the gates are not a second unbounded cache
                if self._loading.get(key) is gate and not gate.locked():
                    del self._loading[key]
        return hit


class SessionStore:
    """Live sessions by id, at most ``max_sessions`` in all and ``max_per_client`` per client,
    expiring after ``idle_s`` unused. A full store or a client at its quota gets SessionError
    429: no live session is ever dropped to make room, and a client cannot restart another
    client's session (409). Every transport (HTTP routes, MCP calls one by one, WebSocket)
    passes its client's address as ``client``."""

    def __init__(
        self,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_s: float = DEFAULT_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
        max_per_client: int = DEFAULT_MAX_PER_CLIENT,
    ) -> None:
        self.max_sessions = max_sessions
        self.max_per_client = max_per_client
        self.idle_s = idle_s
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self._per_client: dict[str | None, int] = {}
        self._lock = threading.Lock()

    def held_by(self, client: str | None) -> int:
        """Live sessions of ``client``."""
        with self._lock:
            return self._per_client.get(client, 0)

    def _drop(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            left = self._per_client.get(session.client, 0) - 1
            if left > 0:
                self._per_client[session.client] = left
            else:
                self._per_client.pop(session.client, None)

    def _admit(self, session_id: str, client: str | None) -> None:
        """SessionError unless a session ``session_id`` of ``client`` may be stored now."""
        existing = self._sessions.get(session_id)
        if existing is not None:
            if existing.client != client:
                raise SessionError(f"session {session_id!r} belongs to another client: start your own", 409)
            return
        if len(self._sessions) >= self.max_sessions:
            raise SessionError(
                f"the server holds its maximum of {self.max_sessions} sessions; close one "
                f"(DELETE /session) or wait until one is idle for {self.idle_s:g} s",
                429,
            )
        if self._per_client.get(client, 0) >= self.max_per_client:
            raise SessionError(
                f"this client holds its maximum of {self.max_per_client} sessions; close one "
                f"(DELETE /session) or wait until one is idle for {self.idle_s:g} s",
                429,
            )

    def _store(self, session: Session) -> None:
        if session.session_id in self._sessions:
            self._drop(session.session_id)
        self._sessions[session.session_id] = session
        self._per_client[session.client] = self._per_client.get(session.client, 0) + 1

    def __len__(self) -> int:
        return len(self._sessions)

    def _expire(self, now: float) -> int:
        expired = 0
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if now - oldest.last_used < self.idle_s:
                break
            self._drop(oldest.session_id)
            expired += 1
        return expired

    def expire(self) -> int:
        """Drop sessions idle for ``idle_s`` or longer; how many were dropped."""
        with self._lock:
            return self._expire(self.clock())

    def put(
        self,
        loaded: LoadedEpisode,
        session_id: str | None,
        include_chart: bool,
        client: str | None = None,
        episode_id: str | None = None,
    ) -> Session:
        """Start (or restart) a session of ``client`` on ``loaded``; a new random id when none is
        given. SessionError 429 when the store or the client's quota is full, 409 for another
        client's session id."""
        sid = session_id or uuid.uuid4().hex
        with self._lock:
            now = self.clock()
            self._expire(now)
            self._admit(sid, client)
            session = Session(sid, loaded.new_env(), loaded.view, include_chart, now, client=client)
            if episode_id is not None:
                session.episode_id = episode_id
            self._store(session)
        return session

    def adopt(self, session: Session, client: str | None = None) -> None:
        """Store a session built elsewhere (a restore into a new id) as ``client``'s, same caps."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            self._admit(session.session_id, client)
            session.last_used = now
            session.client = client
            self._store(session)

    def get(self, session_id: str | None) -> Session:
        """The live session ``session_id``; SessionError (400 missing, 404 unknown/expired)."""
        if not session_id:
            raise SessionError(
                f"no session id: send the session_id that POST /reset returned as the "
                f"{SESSION_HEADER} header",
                400,
            )
        with self._lock:
            now = self.clock()
            self._expire(now)
            session = self._sessions.get(session_id)
            if session is None:
                raise SessionError(
                    f"no session {session_id!r} (never started, closed, or idle for more than "
                    f"{self.idle_s:g} s); POST /reset to start one",
                    404,
                )
            session.last_used = now
            self._sessions.move_to_end(session_id)
        return session

    def find(self, session_id: str | None) -> Session | None:
        """The live session ``session_id`` or None (no error)."""
        try:
            return self.get(session_id)
        except SessionError:
            return None

    def close(self, session_id: str | None) -> None:
        """End session ``session_id`` (SessionError when there is none)."""
        self.get(session_id)
        with self._lock:
            if session_id is not None:
                self._drop(session_id)
