"""What the environment server does, independent of the transport: reset, step, state,
snapshot, restore and close on explicit sessions. The HTTP routes and the MCP tools
both call ``EnvService``; errors are ``ApiError`` (status + message)."""

from __future__ import annotations

import json
import math
import re
import uuid
from typing import Any

from pydantic import ValidationError

from stocker_core.config import Settings
from stocker_core.env.actions import Action
from stocker_core.env.api_models import ResetRequest
from stocker_core.env.environment import EpisodeDoneError, SnapshotError
from stocker_core.env.server_sessions import (
    DEFAULT_IDLE_S,
    DEFAULT_MAX_EPISODES,
    DEFAULT_MAX_PER_CLIENT,
    DEFAULT_MAX_SESSIONS,
    EpisodeCache,
    LoadedEpisode,
    Session,
    SessionError,
    SessionStore,
)
from stocker_core.env.tasks import TASKS
from stocker_core.errors import (
    DataSourceError,
    EmptyDataError,
    InvalidNameError,
    StockerError,
    UnknownTickerError,
)

SESSION_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ApiError(StockerError):
    """An error answered as ``{"error": message}`` with a 4xx/5xx status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def validation_message(exc: ValidationError) -> str:
    """``field: problem; ...`` of a pydantic error."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ())) or "body"
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def finite(value: Any) -> Any:
    """Replace non-finite floats by None so a response is valid JSON (``json_bytes``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def json_bytes(data: Any) -> bytes:
    """``data`` as JSON; non-finite floats (rare: a reward term of a degenerate episode)
    become null, found only when the fast strict encoding fails."""
    try:
        return json.dumps(data, allow_nan=False).encode()
    except ValueError:
        return json.dumps(finite(data), allow_nan=False).encode()


def check_session_id(session_id: object) -> str | None:
    """``session_id`` when well formed (a string of 1-64 letters, digits or . _ -); ApiError 400
    otherwise (a number or a list from a JSON body included)."""
    if session_id is not None and (
        not isinstance(session_id, str) or not SESSION_PATTERN.fullmatch(session_id)
    ):
        raise ApiError(400, "a session id must be 1-64 letters, digits or . _ -")
    return session_id


class EnvService:
    """Sessions of ``TradingEnv`` over cached episodes, with rich observations."""

    def __init__(
        self,
        settings: Settings,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_s: float = DEFAULT_IDLE_S,
        max_episodes: int = DEFAULT_MAX_EPISODES,
        max_per_client: int = DEFAULT_MAX_PER_CLIENT,
    ) -> None:
        self.settings = settings
        self.episodes = EpisodeCache(settings, max_episodes=max_episodes)
        self.sessions = SessionStore(max_sessions, idle_s, max_per_client=max_per_client)

    # -- loading (slow on a cache miss: call from a worker thread) --------------------
    def parse_reset(self, body: Any) -> ResetRequest:
        """The validated reset request (ApiError 422/400 otherwise)."""
        try:
            request = ResetRequest.model_validate(body if body is not None else {})
        except ValidationError as exc:
            raise ApiError(422, validation_message(exc)) from None
        if request.task_id and request.episode:
            raise ApiError(422, "give task_id or episode, not both")
        for value in (request.task_id, request.episode):
            if value is not None and not value.strip():
                raise ApiError(422, "task_id / episode must not be empty")
        check_session_id(request.session_id)
        return request

    @staticmethod
    def episode_name(request: ResetRequest) -> str:
        return request.task_id or request.episode or "task_easy"

    def load(self, name: str) -> LoadedEpisode:
        """The loaded episode ``name``; ApiError 4xx/503 for what cannot be played."""
        try:
            return self.episodes.get(name)
        except InvalidNameError as exc:
            raise ApiError(404 if name in TASKS or "|" not in name else 400, str(exc)) from None
        except (EmptyDataError, UnknownTickerError) as exc:
            raise ApiError(404, str(exc)) from None
        except DataSourceError as exc:
            raise ApiError(503, str(exc)) from None
        except StockerError as exc:
            raise ApiError(422, str(exc)) from None

    # -- fast operations -------------------------------------------------------------
    def session(self, session_id: str | None) -> Session:
        try:
            return self.sessions.get(check_session_id(session_id))
        except SessionError as exc:
            raise ApiError(exc.status, str(exc)) from None

    def owned_session(self, session_id: str | None, client: str | None) -> Session:
        """The live session ``session_id`` when ``client`` started it; ApiError 409 for another
        client's (an id is not a key: a session answers only the address that opened it; 409 as
        a reset of another client's session id and the web page's play sessions answer)."""
        session = self.session(session_id)
        if session.client != client:
            raise ApiError(409, f"session {session_id!r} belongs to another client: start your own")
        return session

    def start(
        self, loaded: LoadedEpisode, request: ResetRequest, session_id: str | None, client: str | None = None
    ) -> dict[str, Any]:
        """Start (or restart) the session of ``client`` (its address) on ``loaded``: the ``/reset`` answer."""
        try:
            session = self.sessions.put(loaded, session_id, request.include_chart, client, request.episode_id)
        except SessionError as exc:
            raise ApiError(exc.status, str(exc)) from None
        with session.lock:
            observation = session.view.observation(session.env.observation(), session.include_chart)
        metadata = {
            "episode": loaded.episode.summary(),
            "ideal_total": loaded.template.ideal_total,
            "episode_id": session.episode_id,
        }
        return {
            "session_id": session.session_id,
            "observation": observation,
            "reward": None,
            "done": False,
            "metadata": metadata,
            "info": metadata,
        }

    def step(self, session_id: str | None, body: Any, client: str | None) -> dict[str, Any]:
        """Apply one action in ``client``'s session: the ``/step`` answer."""
        session = self.owned_session(session_id, client)
        include_chart = session.include_chart
        if isinstance(body, dict):
            body = dict(body)
            once = body.pop("include_chart", None)
            if isinstance(body.get("action"), dict):
                if len(body) > 1:
                    raise ApiError(422, "send the action alone or as {'action': {...}}")
                body = body["action"]
            if isinstance(once, bool):
                include_chart = once
            elif once is not None:
                raise ApiError(422, "include_chart must be true or false")
        try:
            action = Action.model_validate(body)
        except ValidationError as exc:
            raise ApiError(422, f"invalid action: {validation_message(exc)}") from None
        with session.lock:
            try:
                result = session.env.step(action)
            except EpisodeDoneError as exc:
                raise ApiError(409, str(exc)) from None
            observation = session.view.observation(result.observation, include_chart)
        return {
            "session_id": session.session_id,
            "observation": observation,
            "reward": result.reward,
            "done": result.done,
            "metadata": result.info,
            "info": result.info,
        }

    def state(self, session_id: str | None, client: str | None) -> dict[str, Any]:
        """The observation plus the episode so far of ``client``'s session: the ``/state`` answer."""
        session = self.owned_session(session_id, client)
        with session.lock:
            state = session.env.state()
            state["observation"] = session.view.observation(session.env.observation(), session.include_chart)
            step_count = session.env.t
        return {
            "session_id": session.session_id,
            "episode_id": session.episode_id,
            "step_count": step_count,
            **state,
        }

    def snapshot(self, session_id: str | None, client: str | None) -> dict[str, Any]:
        """Everything needed to resume this exact state of ``client``'s session (``POST /restore``
        takes it)."""
        session = self.owned_session(session_id, client)
        with session.lock:
            return session.env.snapshot()

    def close(self, session_id: str | None, client: str | None) -> dict[str, Any]:
        """End ``client``'s session and free its slot."""
        session = self.owned_session(session_id, client)
        self.sessions.close(session.session_id)
        return {"session_id": session.session_id, "closed": True}

    def restore(
        self,
        loaded: LoadedEpisode,
        snapshot: dict[str, Any],
        session_id: str | None,
        client: str | None = None,
    ) -> dict[str, Any]:
        """Resume ``snapshot`` in session ``session_id`` (created when new): the ``/restore`` answer."""
        session = self.sessions.find(session_id) if session_id else None
        if session is not None and session.client != client:
            raise ApiError(409, f"session {session_id!r} belongs to another client: restore into your own")
        if session is None or session.env.episode.key != loaded.episode.key:
            fresh = Session(
                session_id or uuid.uuid4().hex,
                loaded.new_env(),
                loaded.view,
                session.include_chart if session else False,
            )
            try:
                fresh.env.restore(snapshot)
            except SnapshotError as exc:
                raise ApiError(422, str(exc)) from None
            try:
                self.sessions.adopt(fresh, client)
            except SessionError as exc:
                raise ApiError(exc.status, str(exc)) from None
            session = fresh
        else:
            with session.lock:
                try:
                    session.env.restore(snapshot)
                except SnapshotError as exc:
                    raise ApiError(422, str(exc)) from None
        with session.lock:
            observation = session.view.observation(session.env.observation(), session.include_chart)
        return {"session_id": session.session_id, "observation": observation, "done": session.env.done}
