"""The web page for people: ``create_web_app`` (the environment server plus ``/web``) and
``mount_web`` (add ``/web`` to any FastAPI app, e.g. the one ``stocker serve`` runs)."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from stocker_core.config import Settings, get_settings
from stocker_core.web.api import WebContext, build_api
from stocker_core.web.corpus import DagsterLink
from stocker_core.web.errors import WebError
from stocker_core.web.pages import PAGES, render_page
from stocker_core.web.play import PlaySessions
from stocker_core.web.reader import WarehouseReader

STATIC_DIR = Path(__file__).parent / "static"
DEFAULT_PREFIX = "/web"
DEFAULT_DAGSTER_URL = "http://127.0.0.1:3000"


def configured_api_key(settings: Settings) -> str | None:
    """The server's API key: ``Settings.api_key`` when the settings have one, else ``STOCKER_API_KEY``."""
    return getattr(settings, "api_key", None) or os.environ.get("STOCKER_API_KEY") or None


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
    settings = settings or get_settings()
    reader = WarehouseReader(settings.warehouse_path)
    context = WebContext(
        settings=settings,
        reader=reader,
        sessions=PlaySessions(settings, reader),
        dagster=DagsterLink(dagster_url),
        api_key=api_key if api_key is not None else configured_api_key(settings),
    )
    prefix = "/" + prefix.strip("/")

    async def web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    app.add_exception_handler(WebError, web_error)
    app.include_router(build_api(context), prefix=prefix)
    app.mount(f"{prefix}/static", StaticFiles(directory=STATIC_DIR), name="web-static")

    @app.get(prefix, include_in_schema=False)
    def web_root() -> RedirectResponse:
        return RedirectResponse(f"{prefix}/")

    for path, view in PAGES.items():
        app.add_api_route(
            f"{prefix}/{path}",
            _page_endpoint(view),
            methods=["GET"],
            response_class=HTMLResponse,
            include_in_schema=False,
        )
    app.state.web = context
    return context


def _page_endpoint(view: str):
    def page() -> HTMLResponse:
        return HTMLResponse(render_page(view))

    page.__name__ = f"web_page_{view}"
    return page


def create_web_app(
    settings: Settings | None = None,
    dagster_url: str = DEFAULT_DAGSTER_URL,
    api_key: str | None = None,
) -> FastAPI:
    """The environment server (``stocker_core.env.server``) with the web page at ``/web``."""
    from stocker_core.env.server import create_app

    settings = settings or get_settings()
    app = create_app(settings)
    mount_web(app, settings, DEFAULT_PREFIX, dagster_url, api_key)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(f"{DEFAULT_PREFIX}/")

    return app
