"""The web page's JSON API: thin endpoints over the readers and play sessions of this package.

Every answer is JSON (or a PNG / the report's HTML); bad input is a 4xx ``{"error": ...}``.
"""

from __future__ import annotations

import functools
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pandas as pd
from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, Field

from stocker_core.config import Settings
from stocker_core.env.api_models import ErrorAnswer
from stocker_core.env.server_http import client_of
from stocker_core.errors import StockerError
from stocker_core.web import names
from stocker_core.web.chart_memory import ChartMemory
from stocker_core.web.charts import charts_on_demand, day_chart
from stocker_core.web.compare import (
    backtest_keys,
    episode_comparison,
    report_file,
    rolling_overview,
    stored_reports,
)
from stocker_core.web.corpus import DagsterLink, corpus_overview, episode_choices, example_key
from stocker_core.web.errors import BadInputError, NotFoundError, WebError, as_web_error
from stocker_core.web.play import PlaySessions, episode_payload, session_state
from stocker_core.web.reader import WarehouseReader, plain
from stocker_core.web.training_runs import run_image, training_overview
from stocker_core.web.votes import chosen_vote_book, heatmap, replay_decisions, votes_payload

SESSION_ID = re.compile(r"^[0-9a-f]{32}$")
STATUS_TABLES = {
    "prices": "market.prices",
    "charts": "market.charts",
    "episodes": "env.episodes",
    "votes": "council.votes",
    "backtests": "eval.backtests",
    "rolling_windows": "eval.rolling",
    "training_runs": "models.runs",
    "lineage": "meta.lineage",
}

F = TypeVar("F", bound=Callable[..., Any])
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorAnswer, "description": text}
    for status, text in {
        400: "a malformed or unknown value",
        401: "missing or wrong API key",
        404: "nothing stored under that name",
        409: "the request does not fit the current state",
        413: "the body is over the size limit",
        429: "the page, or this client, holds its maximum of play sessions",
    }.items()
}
"""Documented on every API route (the schemathesis test holds the API to it)."""


@dataclass
class WebContext:
    """What every endpoint reads: settings, the read-only warehouse, play sessions, links, the key."""

    settings: Settings
    reader: WarehouseReader
    sessions: PlaySessions
    dagster: DagsterLink
    api_key: str | None = None
    charts: ChartMemory = field(default_factory=ChartMemory)
    """Charts drawn on demand (memory only: the page never writes into the home)."""


class PlayRequest(BaseModel):
    """Start playing ``episode`` (task alias or ``TICKER|YYYY-MM-01``), by hand or with ``policy``."""

    episode: str = "task_easy"
    policy: str | None = None
    seed: int | None = Field(None, ge=0, le=2**32 - 1, description="for policies that draw at random")
    replaces: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{32}$",
        description="the session this page played before: closed first (when it is this client's)",
    )


def web_errors(fn: F) -> F:
    """Turn project errors raised by an endpoint into 4xx JSON answers."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StockerError as exc:
            raise as_web_error(exc) from None

    return wrapper  # type: ignore[return-value]


def _session_id(text: str) -> str:
    if not SESSION_ID.fullmatch(text):
        raise BadInputError(f"invalid session id {text!r}: 32 hex digits from POST api/play")
    return text


def key_checker(context: WebContext) -> Callable[[Request], None]:
    """A dependency that requires ``Authorization: Bearer <key>`` when an API key is set."""

    def check(request: Request) -> None:
        if not context.api_key:
            return
        header = request.headers.get("authorization", "")
        given = header[7:].strip() if header.lower().startswith("bearer ") else ""
        if not hmac.compare_digest(given.encode(), context.api_key.encode()):
            raise WebError(401, "this server needs its API key: send Authorization: Bearer <key>")

    return check


def build_api(context: WebContext) -> APIRouter:
    """The ``api/...`` routes of the web page."""
    router = APIRouter(prefix="/api", dependencies=[Depends(key_checker(context))], responses=ERROR_RESPONSES)
    reader, sessions, settings = context.reader, context.sessions, context.settings

    @router.get("/status")
    @web_errors
    def status() -> dict[str, Any]:
        rows = reader.row_counts(list(STATUS_TABLES.values()))
        counts = {name: rows[table] for name, table in STATUS_TABLES.items()}
        return {"warehouse": str(reader.path), "exists": reader.exists, "counts": counts}

    @router.get("/choices")
    @web_errors
    def choices() -> dict[str, Any]:
        from stocker_core.env.policies import is_upper_bound
        from stocker_core.evaluation.backtests import ordered_policies, policy_label

        policies = [
            {"name": n, "label": policy_label(n), "upper_bound": is_upper_bound(n)}
            for n in ordered_policies()
        ]
        return {**episode_choices(reader), "policies": policies}

    @router.post("/play")
    @web_errors
    def play_start(request: PlayRequest, http: Request) -> dict[str, Any]:
        client = client_of(http)
        session = sessions.start(request.episode, request.policy, request.seed, client, request.replaces)
        return {"episode": episode_payload(session.env), "state": session_state(session)}

    # every route on a session is its client's alone (``PlaySessions.get``: 409 for another's)
    @router.delete("/play/{session_id}")
    @web_errors
    def play_close(session_id: str, http: Request) -> dict[str, Any]:
        """End a play session (the page closes its own when it leaves)."""
        sessions.close(_session_id(session_id), client_of(http))
        return {"closed": session_id}

    @router.get("/play/{session_id}")
    @web_errors
    def play_state(session_id: str, http: Request) -> dict[str, Any]:
        return session_state(sessions.get(_session_id(session_id), client_of(http)))

    @router.post("/play/{session_id}/step")
    @web_errors
    def play_step(
        session_id: str, http: Request, action: dict[str, Any] | None = Body(default=None)
    ) -> dict[str, Any]:
        sid, client = _session_id(session_id), client_of(http)
        record = sessions.step(sid, action or None, client)
        session = sessions.get(sid, client)
        return {"record": record, "state": {k: v for k, v in session_state(session).items() if k != "steps"}}

    @router.post("/play/{session_id}/run")
    @web_errors
    def play_run(session_id: str, http: Request) -> dict[str, Any]:
        sid, client = _session_id(session_id), client_of(http)
        done = sessions.run(sid, client)
        return {"records": done, "state": session_state(sessions.get(sid, client))}

    @router.post("/play/{session_id}/reset")
    @web_errors
    def play_reset(session_id: str, http: Request) -> dict[str, Any]:
        return session_state(sessions.reset(_session_id(session_id), client_of(http)))

    def _council(episode: str, votes: str | None) -> tuple[Any, Any, list[dict], Any]:
        ep = sessions.episode(episode)
        book, sets = chosen_vote_book(reader, settings, ep.ticker, ep.dates, votes)
        replay = replay_decisions(ep, book, settings) if book is not None and book.votes else None
        return ep, book, sets, replay

    def _no_votes(ep: Any) -> str:
        return (
            f"no council votes for {ep.key} yet: run `stocker materialize` "
            "(the council group) or `stocker council vote`"
        )

    @router.get("/council/episode")
    @web_errors
    def council_episode(episode: str = "task_easy", votes: str | None = None) -> dict[str, Any]:
        ep, book, sets, replay = _council(episode, votes)
        charts = reader.frame(
            "SELECT date FROM market.charts WHERE ticker = ? AND date BETWEEN ? AND ?",
            [ep.ticker, ep.start, ep.end],
            needs=["market.charts"],
        )
        return plain(
            {
                "episode": ep.summary(),
                "days": [d.date().isoformat() for d in ep.dates],
                "closes": ep.closes.tolist(),
                "vote_sets": sets,
                "vote_set": f"{book.backend}:{book.model_id}" if book else None,
                "vote_version": book.version if book else None,
                "empty": None if book is not None and book.votes else _no_votes(ep),
                "heatmap": heatmap(book, list(ep.dates)) if book else None,
                "decisions": replay.decisions if replay else [],
                "replay_stopped_at": replay.stopped_at if replay else None,
                # on demand, every day's chart is drawn when first asked for
                "chart_days": [d.date().isoformat() for d in ep.dates]
                if charts_on_demand(settings)
                else [plain(d) for d in charts.get("date", [])],
            }
        )

    @router.get("/council/day")
    @web_errors
    def council_day(episode: str, date: str, votes: str | None = None) -> dict[str, Any]:
        day = pd.Timestamp(names.day(date))
        ep, book, sets, replay = _council(episode, votes)
        if day not in set(ep.dates):
            raise NotFoundError(
                f"{date} is not a trading day of {ep.key} ({ep.start} … {ep.end}): pick one of its days"
            )
        decision = next((d for d in (replay.decisions if replay else []) if d["date"] == date), None)
        chart = reader.frame(
            "SELECT width, height FROM market.charts WHERE ticker = ? AND date = ?",
            [ep.ticker, day.date()],
            needs=["market.charts"],
        )
        drawn = len(chart) > 0 or charts_on_demand(settings)
        return plain(
            {
                "episode": ep.key,
                "ticker": ep.ticker,
                "date": date,
                "step": int(list(ep.dates).index(day)),
                "vote_set": f"{book.backend}:{book.model_id}" if book else None,
                "vote_version": book.version if book else None,
                "vote_sets": sets,
                "votes": votes_payload(book, day) if book else [],
                "empty": None if book is not None and book.votes else _no_votes(ep),
                "decision": decision,
                "decision_note": None
                if decision
                else (
                    f"no moderator decision: votes stop at {replay.stopped_at}"
                    if replay and replay.stopped_at
                    else "no moderator decision without the seven votes"
                ),
                "chart": f"api/charts/{ep.ticker}/{date}" if drawn else None,
                "chart_hint": None if drawn else "no chart stored for this day: materialize charts",
            }
        )

    @router.get("/charts/{ticker}/{date}")
    @web_errors
    def chart(ticker: str, date: str) -> Response:
        found = day_chart(settings, reader, context.charts, names.ticker(ticker), names.day(date))
        if isinstance(found, bytes):
            return Response(found, media_type="image/png")
        return FileResponse(found, media_type="image/png")

    @router.get("/compare/episodes")
    @web_errors
    def compare_keys() -> dict[str, Any]:
        from stocker_core.web.compare import NO_BACKTESTS

        keys = backtest_keys(reader)
        return {"episodes": keys, "empty": None if keys else NO_BACKTESTS}

    @router.get("/compare/episode")
    @web_errors
    def compare_episode(key: str) -> dict[str, Any]:
        if not re.fullmatch(r"[A-Za-z0-9.^=|:_-]{1,64}", key):
            raise BadInputError(f"invalid episode key {key!r}: e.g. {example_key(reader)}")
        return episode_comparison(reader, key)

    @router.get("/compare/rolling")
    @web_errors
    def compare_rolling() -> dict[str, Any]:
        return rolling_overview(reader)

    @router.get("/forward")
    @web_errors
    def forward() -> dict[str, Any]:
        from stocker_core.web.forward import forward_overview

        return forward_overview(reader)

    @router.get("/reports")
    @web_errors
    def reports() -> dict[str, Any]:
        found = stored_reports(reader, settings.home)
        return {"reports": found, "empty": None if found else "no report yet: run `stocker report`"}

    @router.get("/reports/{name}/report.html")
    @web_errors
    def report(name: str) -> FileResponse:
        return FileResponse(report_file(settings.home, names.plain_name(name, "report name")))

    @router.get("/training")
    @web_errors
    def training() -> dict[str, Any]:
        return training_overview(reader)

    @router.get("/training/{run_id}/image")
    @web_errors
    def training_image(run_id: str) -> FileResponse:
        return FileResponse(run_image(reader, settings.home, names.run_id(run_id)), media_type="image/png")

    @router.get("/corpus")
    @web_errors
    def corpus() -> dict[str, Any]:
        return corpus_overview(reader, context.dagster)

    return router
