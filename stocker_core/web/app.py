"""The web page for people: ``create_web_app`` (the environment server plus ``/web``: what
``stocker serve`` and ``stocker web`` run) and ``mount_web`` (add ``/web`` to any FastAPI app)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from stocker_core.config import Settings, get_settings
from stocker_core.env.server_guards import MAX_BODY_BYTES, BearerAuth, BodyLimit
from stocker_core.web import (
    api_compare,
    api_corpus,
    api_council,
    api_forward,
    api_overview,
    api_play,
    api_reports,
    api_training,
)
from stocker_core.web.api import ERROR_RESPONSES, WebContext, require_key
from stocker_core.web.corpus import DagsterLink
from stocker_core.web.errors import WebError
from stocker_core.web.pages import PAGES, render_page
from stocker_core.web.play import PlaySessions
from stocker_core.web.reader import WarehouseReader

STATIC_DIR = Path(__file__).parent / "static"
DEFAULT_PREFIX = "/web"
DEFAULT_DAGSTER_URL = "http://127.0.0.1:3000"
API_ROUTERS: tuple[APIRouter, ...] = (
    api_overview.router,
    api_play.router,
    api_council.router,
    api_compare.router,
    api_forward.router,
    api_reports.router,
    api_training.router,
    api_corpus.router,
)
"""The JSON API's routes by resource, served under ``<prefix>/api``."""


def configured_api_key(settings: Settings) -> str | None:
    """The server's API key: ``Settings.api_key`` when the settings have one, else ``STOCKER_API_KEY``
    (ServerConfigError for a blank or whitespace-padded key)."""
    from stocker_core.env.server import checked_api_key

    return checked_api_key(getattr(settings, "api_key", None) or os.environ.get("STOCKER_API_KEY")) or None


def mount_web(
    app: FastAPI,
    settings: Settings | None = None,
    prefix: str = DEFAULT_PREFIX,
    dagster_url: str = DEFAULT_DAGSTER_URL,
    api_key: str | None = None,
) -> WebContext:
    """Add the pages (``<prefix>/``, ``<prefix>/episode`` …), their static files and the JSON API
    (``<prefix>/api/…``) to ``app``. With an API key the API needs ``Authorization: Bearer``;
    the pages ask for the key once and keep it for the browser session."""
    from stocker_core.env.server import checked_api_key

    settings = settings or get_settings()
    reader = WarehouseReader(settings.warehouse_path)
    context = WebContext(
        settings=settings,
        reader=reader,
        sessions=PlaySessions(settings, reader),
        dagster=DagsterLink(dagster_url),
        api_key=checked_api_key(api_key) if api_key is not None else configured_api_key(settings),
    )
    prefix = "/" + prefix.strip("/")

    async def web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    app.add_exception_handler(WebError, web_error)
    base = "" if prefix == "/" else prefix
    # ASGI guards in front of everything the API does (the last added runs first): the key
    # before a byte of the body is read, then the body limit (413 without buffering)
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    if context.api_key:
        app.add_middleware(BearerAuth, api_key=context.api_key, only_under=f"{base}/api")
    for router in API_ROUTERS:
        app.include_router(
            router, prefix=f"{base}/api", dependencies=[Depends(require_key)], responses=ERROR_RESPONSES
        )
    app.mount(f"{base}/static", StaticFiles(directory=STATIC_DIR), name="web-static")

    if prefix != "/":

        @app.get(prefix, include_in_schema=False)
        def web_root() -> RedirectResponse:
            return RedirectResponse(f"{prefix}/")

    for path, view in PAGES.items():
        app.add_api_route(
            f"{base}/{path}",
            _page_endpoint(view),
            methods=["GET"],
            response_class=HTMLResponse,
            include_in_schema=False,
        )
    app.state.web = context
    return context


async def _routing_error(request: Request, exc: Exception) -> Response:
    """Routing's own 404/405 in the API's ``{"error": ...}`` shape (FastAPI's is ``{"detail": ...}``)."""
    assert isinstance(exc, StarletteHTTPException)
    return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)


async def _validation_error(request: Request, exc: Exception) -> Response:
    """FastAPI's 422 without the offending input echoed: a NaN or an infinity in a body (which
    Python's JSON parser accepts) cannot be encoded back, so FastAPI's own handler answered 500."""
    assert isinstance(exc, RequestValidationError)
    detail = [
        {
            "loc": [str(p) for p in e.get("loc", ())],
            "msg": str(e.get("msg", "")),
            "type": str(e.get("type", "")),
        }
        for e in exc.errors()
    ]
    problems = "; ".join(f"{'.'.join(d['loc'][1:] or d['loc']) or 'body'}: {d['msg']}" for d in detail)
    return JSONResponse({"error": problems or "invalid request", "detail": detail}, status_code=422)


def _page_endpoint(view: str):
    def page() -> HTMLResponse:
        return HTMLResponse(render_page(view))

    page.__name__ = f"web_page_{view}"
    return page


def web_app(
    settings: Settings | None = None,
    dagster_url: str = DEFAULT_DAGSTER_URL,
    api_key: str | None = None,
) -> FastAPI:
    """The page alone, at its own root (pages at ``/``, the API at ``/api``): mount it anywhere."""
    app = FastAPI(title="Stocker web page", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_exception_handler(StarletteHTTPException, _routing_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    mount_web(app, settings, "", dagster_url, api_key)
    return app


class PageBeside:
    """An ASGI app: ``/web`` and below go to ``page`` (mounted as Starlette mounts do:
    ``root_path`` gains the prefix), every other request and the lifespan go to ``server``
    untouched, so the server's own requests pay for no third app's middleware."""

    def __init__(self, server: ASGIApp, page: ASGIApp, prefix: str = DEFAULT_PREFIX) -> None:
        self.server = server
        self.page = page
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            root = scope.get("root_path", "")
            path = scope["path"]
            route = path[len(root) :] if root and path.startswith(root) else path
            if route == self.prefix and scope.get("method") in ("GET", "HEAD"):
                await RedirectResponse(f"{self.prefix}/")(scope, receive, send)
                return
            if route.startswith(self.prefix + "/"):
                child = {
                    **scope,
                    "app_root_path": scope.get("app_root_path", root),
                    "root_path": root + self.prefix,
                }
                await self.page(child, receive, send)
                return
        await self.server(scope, receive, send)


def with_web(
    server: ASGIApp,
    settings: Settings | None = None,
    dagster_url: str = DEFAULT_DAGSTER_URL,
    api_key: str | None = None,
) -> PageBeside:
    """``server`` (e.g. the environment server) with the page at ``/web``, side by side: the
    page has its own key check (its HTML and scripts load without the key, so it can ask for
    it; its API needs it), and ``server`` keeps its own middleware and start-up."""
    settings = settings or get_settings()
    return PageBeside(server, web_app(settings, dagster_url, api_key))


def create_web_app(
    settings: Settings | None = None,
    dagster_url: str = DEFAULT_DAGSTER_URL,
    api_key: str | None = None,
    **server_options: Any,
) -> PageBeside:
    """The environment server (``stocker_core.env.server.create_app``, same API key, given
    ``server_options`` such as ``max_sessions``, ``idle_s``, ``preload``) with the page at
    ``/web``; ``/`` redirects to the page. ``stocker serve`` and ``stocker web`` run this app."""
    from stocker_core.env.server import create_app

    settings = settings or get_settings()
    key = api_key if api_key is not None else (configured_api_key(settings) or "")
    server = create_app(settings, api_key=key, **server_options)

    @server.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(f"{DEFAULT_PREFIX}/")

    return with_web(server, settings, dagster_url, key)
