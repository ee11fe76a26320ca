"""The web page for people: ``create_web_app`` (the environment server plus ``/web``) and
``mount_web`` (add ``/web`` to any FastAPI app, e.g. the one ``stocker serve`` runs)."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from stocker_core.config import Settings, get_settings
from stocker_core.env.server_guards import MAX_BODY_BYTES, BearerAuth, BodyLimit
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
    app.include_router(build_api(context), prefix=base)
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
    mount_web(app, settings, "", dagster_url, api_key)
    return app


def with_web(
    server: FastAPI,
    settings: Settings | None = None,
    dagster_url: str = DEFAULT_DAGSTER_URL,
    api_key: str | None = None,
) -> FastAPI:
    """``server`` (e.g. the environment server) with the page at ``/web``, side by side: the
    page has its own key check (its HTML and scripts load without the key, so it can ask for
    it; its API needs it), and ``server`` keeps its own middleware and start-up."""
    settings = settings or get_settings()
    outer = FastAPI(
        title=server.title,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=server.router.lifespan_context,
    )
    outer.add_exception_handler(StarletteHTTPException, _routing_error)

    @outer.get(DEFAULT_PREFIX, include_in_schema=False)
    def web_root() -> RedirectResponse:
        return RedirectResponse(f"{DEFAULT_PREFIX}/")

    outer.mount(DEFAULT_PREFIX, web_app(settings, dagster_url, api_key))
    outer.mount("/", server)
    return outer


def create_web_app(
    settings: Settings | None = None,
    dagster_url: str = DEFAULT_DAGSTER_URL,
    api_key: str | None = None,
) -> FastAPI:
    """The environment server (``stocker_core.env.server``, same API key) with the page at ``/web``;
    ``/`` redirects to the page."""
    from stocker_core.env.server import create_app

    settings = settings or get_settings()
    key = api_key if api_key is not None else (configured_api_key(settings) or "")
    server = create_app(settings, api_key=key)

    @server.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(f"{DEFAULT_PREFIX}/")

    return with_web(server, settings, dagster_url, key)
