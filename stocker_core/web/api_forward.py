"""``api/forward``: the forward ledger's record on the page."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from stocker_core.web.api import WebContext, web_context, web_errors

router = APIRouter()


@router.get("/forward")
@web_errors
def forward(context: WebContext = Depends(web_context)) -> dict[str, Any]:
    from stocker_core.web.forward import forward_overview

    return forward_overview(context.reader)
