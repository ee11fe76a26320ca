"""OpenEnv-style HTTP server: ``/reset``, ``/step``, ``/state``, ``/restore`` and friends.

Each client has its own session: send ``X-Session-Id`` (any id returned by
``/reset``, or one you choose). Requests without the header use the session of
the last header-less ``/reset``, which suits single-client OpenEnv tools.
"""

from __future__ import annotations

import json
import math
import re
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from stocker_core.config import Settings, get_settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import EpisodeDoneError, SnapshotError, TradingEnv
from stocker_core.env.episode import Episode, load_episode
from stocker_core.env.rewards import RewardParams
from stocker_core.env.tasks import TASKS
from stocker_core.errors import (
    DataSourceError,
    EmptyDataError,
    InvalidNameError,
    StockerError,
    UnknownTickerError,
)

SESSION_HEADER = "X-Session-Id"
SESSION_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_SESSIONS = 256
MAX_BODY_BYTES = 1_000_000


class ApiError(Exception):
    """An error answered as ``{"error": message}`` with a 4xx status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ResetRequest(BaseModel):
    """Start (or restart) a session on a task or an episode partition key."""

    task_id: str | None = None
    episode: str | None = None
    session_id: str | None = None


@dataclass
class Session:
    env: TradingEnv
    lock: threading.Lock = field(default_factory=threading.Lock)


class SessionStore:
    """Sessions by id (least recently used evicted past ``MAX_SESSIONS``) and an episode cache."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.params = RewardParams.from_settings(settings)
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.episodes: dict[str, Episode] = {}
        self.default_id: str | None = None
        self.lock = threading.Lock()

    def episode(self, name: str) -> Episode:
        with self.lock:
            cached = self.episodes.get(name)
        if cached is not None:
            return cached
        episode = load_episode(name, self.settings)
        with self.lock:
            self.episodes[name] = episode
        return episode

    def put(self, session_id: str, env: TradingEnv) -> None:
        with self.lock:
            self.sessions[session_id] = Session(env)
            self.sessions.move_to_end(session_id)
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)

    def get(self, session_id: str | None) -> tuple[str, Session]:
        sid = session_id or self.default_id
        with self.lock:
            session = self.sessions.get(sid) if sid else None
            if session is None:
                raise ApiError(
                    404,
                    f"no session {sid!r}; POST /reset first (and send the returned "
                    f"session_id as the {SESSION_HEADER} header)",
                )
            self.sessions.move_to_end(sid)
        return sid, session


def _session_header(request: Request) -> str | None:
    sid = request.headers.get(SESSION_HEADER)
    if sid is not None and not SESSION_PATTERN.fullmatch(sid):
        raise ApiError(400, f"{SESSION_HEADER} must be 1-64 letters, digits or . _ -")
    return sid


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a number")


async def _json_body(request: Request, required: bool = True) -> Any:
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ApiError(413, f"request body over {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        if required:
            raise ApiError(400, "empty body: send a JSON object")
        return {}
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, f"malformed JSON: {exc}") from None


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ())) or "body"
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def _finite(value: Any) -> Any:
    """Replace non-finite floats by None so responses are valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


ACTION_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": Action.model_json_schema()}},
    }
}
RESET_BODY = {
    "requestBody": {
        "required": False,
        "content": {"application/json": {"schema": ResetRequest.model_json_schema()}},
    }
}
RESTORE_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"type": "object", "description": "GET /snapshot"}}},
    }
}


def create_app(settings: Settings | None = None) -> FastAPI:
    """The FastAPI app; each app keeps its own sessions."""
    settings = settings or get_settings()
    store = SessionStore(settings)
    app = FastAPI(
        title="Stocker trading environment",
        description="OpenEnv-style single-agent trading environment (SPEC §1).",
        version="0.1.0",
    )
    app.state.store = store

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _request_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": str(exc.errors())}, status_code=422)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "healthy", "sessions": len(store.sessions)}

    @app.get("/metadata")
    def metadata() -> dict[str, Any]:
        return {
            "name": "stocker",
            "description": "Trade one ticker over an episode of trading days; reward per SPEC §1.",
            "tasks": {t.task_id: {"episode": t.key, "regime": t.regime} for t in TASKS.values()},
            "episode_months": settings.episode_months,
            "reward_params": RewardParams.from_settings(settings).__dict__,
            "session_header": SESSION_HEADER,
        }

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        return {
            "action": Action.model_json_schema(),
            "reset": ResetRequest.model_json_schema(),
            "observation": {
                "type": "object",
                "properties": {
                    name: {"type": kind}
                    for name, kind in [
                        ("ticker", "string"),
                        ("date", "string"),
                        ("close", "number"),
                        ("step", "integer"),
                        ("total_steps", "integer"),
                        ("cash", "number"),
                        ("position", "integer"),
                        ("portfolio_value", "number"),
                        ("done", "boolean"),
                        ("price_history", "array"),
                    ]
                },
            },
        }

    @app.post("/reset", openapi_extra=RESET_BODY)
    async def reset(request: Request) -> dict[str, Any]:
        header = _session_header(request)
        body = await _json_body(request, required=False)
        try:
            req = ResetRequest.model_validate(body)
        except ValidationError as exc:
            raise ApiError(422, _validation_message(exc)) from None
        name = req.task_id or req.episode or "task_easy"
        sid = header or req.session_id
        if sid is not None and not SESSION_PATTERN.fullmatch(sid):
            raise ApiError(400, "session_id must be 1-64 letters, digits or . _ -")
        try:
            episode = await run_in_threadpool(store.episode, name)
        except InvalidNameError as exc:
            raise ApiError(404 if name in TASKS or "|" not in name else 400, str(exc)) from None
        except (EmptyDataError, UnknownTickerError) as exc:
            raise ApiError(404, str(exc)) from None
        except DataSourceError as exc:
            raise ApiError(503, str(exc)) from None
        env = TradingEnv(episode, store.params)
        if sid is None:
            sid = uuid.uuid4().hex
            store.default_id = sid
        store.put(sid, env)
        return {
            "session_id": sid,
            "observation": env.observation().to_dict(),
            "reward": None,
            "done": False,
            "info": {"episode": episode.summary(), "ideal_total": env.ideal_total},
        }

    @app.post("/step", openapi_extra=ACTION_BODY)
    async def step(request: Request) -> dict[str, Any]:
        sid, session = store.get(_session_header(request))
        body = await _json_body(request)
        if isinstance(body, dict) and isinstance(body.get("action"), dict):
            body = body["action"]
        try:
            action = Action.model_validate(body)
        except ValidationError as exc:
            raise ApiError(422, f"invalid action: {_validation_message(exc)}") from None
        with session.lock:
            try:
                result = session.env.step(action)
            except EpisodeDoneError as exc:
                raise ApiError(409, str(exc)) from None
        return _finite(
            {
                "session_id": sid,
                "observation": result.observation.to_dict(),
                "reward": result.reward,
                "done": result.done,
                "info": result.info,
            }
        )

    @app.get("/state")
    def state(request: Request) -> dict[str, Any]:
        sid, session = store.get(_session_header(request))
        with session.lock:
            return _finite({"session_id": sid, **session.env.state()})

    @app.get("/snapshot")
    def snapshot(request: Request) -> dict[str, Any]:
        sid, session = store.get(_session_header(request))
        with session.lock:
            return _finite(session.env.snapshot())

    @app.post("/restore", openapi_extra=RESTORE_BODY)
    async def restore(request: Request) -> dict[str, Any]:
        header = _session_header(request)
        body = await _json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("episode_key"), str):
            raise ApiError(422, "send the JSON object GET /snapshot returned")
        try:
            sid, session = store.get(header)
        except ApiError:
            sid, session = header or uuid.uuid4().hex, None
        try:
            episode = await run_in_threadpool(store.episode, body["episode_key"])
        except StockerError as exc:
            raise ApiError(404, str(exc)) from None
        env = session.env if session and session.env.episode.key == episode.key else None
        fresh = env is None
        env = env or TradingEnv(episode, store.params)
        lock = session.lock if session and not fresh else threading.Lock()
        with lock:
            try:
                observation = env.restore(body)
            except SnapshotError as exc:
                raise ApiError(422, str(exc)) from None
        if fresh:
            store.put(sid, env)
            if header is None:
                store.default_id = sid
        return {"session_id": sid, "observation": observation.to_dict(), "done": env.done}

    return app


def serve(host: str = "127.0.0.1", port: int = 8000, settings: Settings | None = None) -> None:
    """Run the server with uvicorn (blocking)."""
    import uvicorn

    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")
