"""``api/corpus``: the text corpus (news, forum posts, macro events) and its Dagster links."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from stocker_core.web.api import web_context, web_errors
from stocker_core.web.corpus import corpus_overview

router = APIRouter()


@router.get("/corpus")
@web_errors
def corpus(request: Request) -> dict[str, Any]:
    context = web_context(request)
    return corpus_overview(context.reader, context.dagster)
