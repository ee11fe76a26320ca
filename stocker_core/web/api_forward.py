"""``api/forward``: the forward ledger's record on the page."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from stocker_core.web.api import web_context, web_errors

router = APIRouter()


@router.get("/forward")
@web_errors
def forward(request: Request) -> dict[str, Any]:
    context = web_context(request)
    from stocker_core.web.forward import forward_overview

    return forward_overview(context.reader)
