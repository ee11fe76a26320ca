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
    """Live sessions by id, at most ``max_sessions``, expiring after ``idle_s`` unused."""

    def __init__(
        self,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_s: float = DEFAULT_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def _expire(self, now: float) -> int:
        expired = 0
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if now - oldest.last_used < self.idle_s:
                break
            self._sessions.popitem(last=False)
            expired += 1
        return expired

    def expire(self) -> int:
        """Drop sessions idle for ``idle_s`` or longer; how many were dropped."""
        with self._lock:
            return self._expire(self.clock())

    def put(self, loaded: LoadedEpisode, session_id: str | None, include_chart: bool) -> Session:
        """Start (or restart) a session on ``loaded``; a new random id when none is given."""
        sid = session_id or uuid.uuid4().hex
        with self._lock:
            now = self.clock()
            self._expire(now)
            if sid not in self._sessions and len(self._sessions) >= self.max_sessions:
                raise SessionError(
                    f"the server holds its maximum of {self.max_sessions} sessions; close one "
                    f"(DELETE /session) or wait until one is idle for {self.idle_s:g} s",
                    429,
                )
            session = Session(sid, loaded.new_env(), loaded.view, include_chart, now)
            self._sessions[sid] = session
            self._sessions.move_to_end(sid)
        return session

    def adopt(self, session: Session) -> None:
        """Store a session built elsewhere (a restore into a new id), same cap."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            if session.session_id not in self._sessions and len(self._sessions) >= self.max_sessions:
                raise SessionError(f"the server holds its maximum of {self.max_sessions} sessions", 429)
            session.last_used = now
            self._sessions[session.session_id] = session
            self._sessions.move_to_end(session.session_id)

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
            self._sessions.pop(session_id, None)
