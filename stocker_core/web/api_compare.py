"""``api/compare/*``: the episodes with backtests, one episode's policies side by side, the
rolling evaluation's overview."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request

from stocker_core.web.api import web_context, web_errors
from stocker_core.web.compare import backtest_keys, episode_comparison, rolling_overview
from stocker_core.web.corpus import example_key
from stocker_core.web.errors import BadInputError

router = APIRouter()


@router.get("/compare/episodes")
@web_errors
def compare_keys(request: Request) -> dict[str, Any]:
    context = web_context(request)
    from stocker_core.web.compare import NO_BACKTESTS

    keys = backtest_keys(context.reader)
    return {"episodes": keys, "empty": None if keys else NO_BACKTESTS}


@router.get("/compare/episode")
@web_errors
def compare_episode(request: Request, key: str) -> dict[str, Any]:
    context = web_context(request)
    if not re.fullmatch(r"[A-Za-z0-9.^=|:_-]{1,64}", key):
        raise BadInputError(f"invalid episode key {key!r}: e.g. {example_key(context.reader)}")
    return episode_comparison(context.reader, key)


@router.get("/compare/rolling")
@web_errors
def compare_rolling(request: Request) -> dict[str, Any]:
    context = web_context(request)
    return rolling_overview(context.reader)
