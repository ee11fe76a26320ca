"""``api/council/*`` (an episode's votes, heatmap and replayed decisions; one day's votes) and
``api/charts/{ticker}/{date}`` (the day's chart the specialists saw)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from stocker_core.web import names
from stocker_core.web.api import WebContext, web_context, web_errors
from stocker_core.web.charts import charts_on_demand, day_chart
from stocker_core.web.errors import NotFoundError
from stocker_core.web.reader import plain
from stocker_core.web.votes import chosen_vote_book, heatmap, replay_decisions, votes_payload

router = APIRouter()


def _council(context: WebContext, episode: str, votes: str | None) -> tuple[Any, Any, list[dict], Any]:
    ep = context.sessions.episode(episode)
    book, sets = chosen_vote_book(context.reader, context.settings, ep.ticker, ep.dates, votes)
    replay = replay_decisions(ep, book, context.settings) if book is not None and book.votes else None
    return ep, book, sets, replay


def _no_votes(ep: Any) -> str:
    return (
        f"no council votes for {ep.key} yet: run `stocker materialize` "
        "(the council group) or `stocker council vote`"
    )


@router.get("/council/episode")
@web_errors
def council_episode(request: Request, episode: str = "task_easy", votes: str | None = None) -> dict[str, Any]:
    context = web_context(request)
    ep, book, sets, replay = _council(context, episode, votes)
    charts = context.reader.frame(
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
            if charts_on_demand(context.settings)
            else [plain(d) for d in charts.get("date", [])],
        }
    )


@router.get("/council/day")
@web_errors
def council_day(request: Request, episode: str, date: str, votes: str | None = None) -> dict[str, Any]:
    context = web_context(request)
    day = pd.Timestamp(names.day(date))
    ep, book, sets, replay = _council(context, episode, votes)
    if day not in set(ep.dates):
        raise NotFoundError(
            f"{date} is not a trading day of {ep.key} ({ep.start} … {ep.end}): pick one of its days"
        )
    decision = next((d for d in (replay.decisions if replay else []) if d["date"] == date), None)
    chart = context.reader.frame(
        "SELECT width, height FROM market.charts WHERE ticker = ? AND date = ?",
        [ep.ticker, day.date()],
        needs=["market.charts"],
    )
    drawn = len(chart) > 0 or charts_on_demand(context.settings)
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
def chart(request: Request, ticker: str, date: str) -> Response:
    context = web_context(request)
    found = day_chart(context.settings, context.reader, context.charts, names.ticker(ticker), names.day(date))
    if isinstance(found, bytes):
        return Response(found, media_type="image/png")
    return FileResponse(found, media_type="image/png")
