"""OpenEnv's task API routes over ``TaskCatalog``: ``GET /list_environments``,
``GET /stocker/splits``, ``POST /stocker/tasks``, ``/stocker/num_tasks``, ``/stocker/task`` and
``/stocker/task_range`` (bodies ``{"split"}``, ``{"split", "index"}``, ``{"split", "start",
"stop"}``). An unknown environment or split is a 404, a task index out of range a 400."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool

from stocker_core.env.server_http import json_body, json_response
from stocker_core.env.server_service import ApiError
from stocker_core.env.task_api import ENV_NAME, TaskCatalog, UnknownSplitError

__all__ = ["router"]

router = APIRouter(tags=["Task API"])


def _body_schema(*fields: str, required: tuple[str, ...] = ("split",)) -> dict[str, Any]:
    types = {"split": {"type": "string"}, "index": {"type": "integer", "minimum": 0}}
    types |= {"start": {"type": ["integer", "null"]}, "stop": {"type": ["integer", "null"]}}
    schema = {"type": "object", "properties": {f: types[f] for f in fields}, "required": list(required)}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _check_env(env_name: str) -> None:
    if env_name.lower() != ENV_NAME:
        raise ApiError(404, f"unknown environment {env_name!r}: this server serves {ENV_NAME!r}")


def _field(body: Any, name: str, kind: type, optional: bool = False) -> Any:
    if not isinstance(body, dict):
        raise ApiError(422, "send a JSON object, e.g. {'split': 'reference'}")
    value = body.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ApiError(422, f"{name} must be a{'n integer' if kind is int else ' string'}")
    return value


async def _run(method: Any, *args: Any) -> Any:
    try:
        return await run_in_threadpool(method, *args)
    except UnknownSplitError as exc:
        raise ApiError(404, str(exc)) from None
    except IndexError as exc:
        raise ApiError(400, str(exc)) from None


def task_catalog(request: Request) -> TaskCatalog:
    """The server's ``TaskCatalog`` (``app.state.tasks``, set by ``create_app``)."""
    return request.app.state.tasks


@router.get("/list_environments")
def list_environments() -> list[str]:
    return [ENV_NAME]


@router.get("/{env_name}/splits")
async def list_splits(env_name: str, request: Request) -> Response:
    catalog = task_catalog(request)
    _check_env(env_name)
    return json_response(await _run(catalog.list_splits))


@router.post("/{env_name}/tasks", openapi_extra=_body_schema("split"))
async def list_tasks(env_name: str, request: Request) -> Response:
    catalog = task_catalog(request)
    _check_env(env_name)
    split = _field(await json_body(request), "split", str)
    return json_response({"tasks": await _run(catalog.list_tasks, split), "env_name": ENV_NAME})


@router.post("/{env_name}/num_tasks", openapi_extra=_body_schema("split"))
async def num_tasks(env_name: str, request: Request) -> Response:
    catalog = task_catalog(request)
    _check_env(env_name)
    split = _field(await json_body(request), "split", str)
    return json_response({"num_tasks": await _run(catalog.num_tasks, split)})


@router.post("/{env_name}/task", openapi_extra=_body_schema("split", "index", required=("split", "index")))
async def get_task(env_name: str, request: Request) -> Response:
    catalog = task_catalog(request)
    _check_env(env_name)
    body = await json_body(request)
    split, index = _field(body, "split", str), _field(body, "index", int)
    return json_response({"task": await _run(catalog.get_task, split, index)})


@router.post("/{env_name}/task_range", openapi_extra=_body_schema("split", "start", "stop"))
async def get_task_range(env_name: str, request: Request) -> Response:
    catalog = task_catalog(request)
    _check_env(env_name)
    body = await json_body(request)
    split = _field(body, "split", str)
    start, stop = _field(body, "start", int, optional=True), _field(body, "stop", int, optional=True)
    return json_response({"tasks": await _run(catalog.get_task_range, split, start, stop)})
