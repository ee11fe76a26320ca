"""``api/status`` (what the warehouse holds) and ``api/choices`` (the page's menus: episodes
and policies)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from stocker_core.web.api import web_context, web_errors
from stocker_core.web.corpus import episode_choices

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

router = APIRouter()


@router.get("/status")
@web_errors
def status(request: Request) -> dict[str, Any]:
    context = web_context(request)
    reader = context.reader
    rows = reader.row_counts(list(STATUS_TABLES.values()))
    counts = {name: rows[table] for name, table in STATUS_TABLES.items()}
    return {"warehouse": str(reader.path), "exists": reader.exists, "counts": counts}


@router.get("/choices")
@web_errors
def choices(request: Request) -> dict[str, Any]:
    context = web_context(request)
    from stocker_core.env.policies import is_upper_bound
    from stocker_core.evaluation.backtests import ordered_policies, policy_label

    policies = [
        {"name": n, "label": policy_label(n), "upper_bound": is_upper_bound(n)} for n in ordered_policies()
    ]
    return {**episode_choices(context.reader), "policies": policies}
