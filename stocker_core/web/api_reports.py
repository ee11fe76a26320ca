"""``api/reports``: the stored evaluation reports and each one's HTML."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from stocker_core.web import names
from stocker_core.web.api import web_context, web_errors
from stocker_core.web.compare import report_file, stored_reports

router = APIRouter()


@router.get("/reports")
@web_errors
def reports(request: Request) -> dict[str, Any]:
    context = web_context(request)
    found = stored_reports(context.reader, context.settings.home)
    return {"reports": found, "empty": None if found else "no report yet: run `stocker report`"}


@router.get("/reports/{name}/report.html")
@web_errors
def report(request: Request, name: str) -> FileResponse:
    context = web_context(request)
    return FileResponse(report_file(context.settings.home, names.plain_name(name, "report name")))
