"""``api/training``: the training runs and each run's curve image."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from stocker_core.web import names
from stocker_core.web.api import web_context, web_errors
from stocker_core.web.training_runs import run_image, training_overview

router = APIRouter()


@router.get("/training")
@web_errors
def training(request: Request) -> dict[str, Any]:
    context = web_context(request)
    return training_overview(context.reader)


@router.get("/training/{run_id}/image")
@web_errors
def training_image(request: Request, run_id: str) -> FileResponse:
    context = web_context(request)
    path = run_image(context.reader, context.settings.home, names.run_id(run_id))
    return FileResponse(path, media_type="image/png")
