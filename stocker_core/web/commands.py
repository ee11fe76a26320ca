"""``stocker serve``: the environment server with the web page at ``/web`` (``--no-web``: the
environment alone); ``stocker web``: its shortcut for people (loopback, opens a browser)."""

from __future__ import annotations

from typing import Any

import typer

from stocker_core.cli_support import EXIT_USAGE, fail

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


commands = typer.Typer()
"""What this area adds to ``stocker``: ``serve`` and ``web``."""


def check_exposure(host: str, api_key: str | None, allow_no_key: bool) -> None:
    """Refuse to listen beyond loopback without an API key unless explicitly allowed."""
    if host not in LOOPBACK and not api_key and not allow_no_key:
        fail(
            f"refusing to serve on {host} without an API key: set STOCKER_API_KEY "
            "(or pass --allow-no-key to accept anyone on the network)",
            EXIT_USAGE,
        )


def has_display() -> bool:
    """Whether a browser window can be opened here (not on a headless Linux box)."""
    import os
    import sys

    return sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def _url(host: str, port: int) -> str:
    """The address a browser on this machine uses for a server bound to ``host``."""
    return f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/"


FORWARDED_HELP = (
    "proxies whose X-Forwarded-For names the client, comma-separated IPs or networks "
    "(default: none, the peer is the client)"
)


def _forwarded_option() -> Any:
    """``--forwarded-allow-ips``, for both commands (uvicorn's ``FORWARDED_ALLOW_IPS`` is not read)."""
    return typer.Option(
        None,
        "--forwarded-allow-ips",
        show_default=False,
        help=FORWARDED_HELP,
    )


@commands.command("serve")
def serve_command(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="address to bind; any non-loopback address needs an API key"
    ),
    port: int = typer.Option(8000, "--port", min=1, max=65_535, help="TCP port"),
    api_key: str | None = typer.Option(
        None,
        "--api-key",
        envvar="STOCKER_API_KEY",
        show_default=False,
        help="require 'Authorization: Bearer <key>' on every route but /health",
    ),
    insecure_no_auth: bool = typer.Option(
        False, "--insecure-no-auth", help="serve a non-loopback address without an API key"
    ),
    max_sessions: int = typer.Option(
        256, "--max-sessions", min=1, max=100_000, help="sessions alive at once"
    ),
    max_sessions_per_client: int | None = typer.Option(
        None,
        "--max-sessions-per-client",
        min=1,
        max=100_000,
        show_default=False,
        help="sessions one client address may hold (default: STOCKER_MAX_SESSIONS_PER_CLIENT, 32); a "
        "trainer needs at least its concurrent environments, e.g. TRL's generation_batch_size",
    ),
    session_idle_s: float = typer.Option(
        900.0, "--session-idle-s", min=1.0, max=604_800.0, help="a session unused this many seconds expires"
    ),
    preload: str = typer.Option(
        "", "--preload", help="episodes to load before serving, comma-separated (e.g. task_easy,task_hard)"
    ),
    web: bool = typer.Option(
        True, "--web/--no-web", help="also serve the web page at /web (same server, same API key)"
    ),
    dagster_url: str = typer.Option(
        "http://127.0.0.1:3000", "--dagster-url", help="the Dagster UI the web page's corpus view links to"
    ),
    access_log: bool = typer.Option(
        False, "--access-log", help="log a line per request (off by default: it costs CPU on every request)"
    ),
    forwarded_allow_ips: str | None = _forwarded_option(),
) -> None:
    """Serve the environment over HTTP (OpenEnv contract: /reset /step /state /schema /mcp ...)
    and, unless --no-web, the web page at /web from the same server."""
    from stocker_core.config import get_settings
    from stocker_core.env.proxies import trusted_proxies, uvicorn_run
    from stocker_core.env.server import ServerConfigError, check_bind, create_app
    from stocker_core.errors import StockerError
    from stocker_core.web.app import create_web_app

    try:
        check_bind(host, api_key, insecure_no_auth)
        trusted_proxies(forwarded_allow_ips)
    except ServerConfigError as exc:
        fail(exc)
    names = [name.strip() for name in preload.split(",") if name.strip()]
    options = {
        "api_key": api_key or "",
        "max_sessions": max_sessions,
        "idle_s": session_idle_s,
        "preload": names,
        "max_per_client": max_sessions_per_client,
    }
    settings = get_settings()
    try:
        if web:
            app = create_web_app(settings, dagster_url=dagster_url, **options)
        else:
            app = create_app(settings, **options)
    except StockerError as exc:
        fail(exc)
    page = f" and the web page at {_url(host, port)}web/" if web else ""
    typer.echo(f"environment at {_url(host, port)}{page}")
    uvicorn_run(app, host, port, forwarded_allow_ips, log_level="info", access_log=access_log)


@commands.command("web")
def web_command(
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (loopback by default)"),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="port to listen on"),
    dagster_url: str = typer.Option(
        "http://127.0.0.1:3000", "--dagster-url", help="the Dagster UI the corpus view links to"
    ),
    open_browser: bool = typer.Option(
        True, "--open/--no-open", help="open /web in the default browser (when there is a display)"
    ),
    allow_no_key: bool = typer.Option(
        False, "--allow-no-key", help="serve beyond loopback without STOCKER_API_KEY"
    ),
    forwarded_allow_ips: str | None = _forwarded_option(),
) -> None:
    """Serve the web page (episodes, council, compare, training, corpus) at http://HOST:PORT/web."""
    from stocker_core.config import get_settings
    from stocker_core.env.proxies import trusted_proxies, uvicorn_run
    from stocker_core.errors import StockerError
    from stocker_core.web.app import configured_api_key, create_web_app

    settings = get_settings()
    try:
        key = configured_api_key(settings)
        check_exposure(host, key, allow_no_key)
        trusted_proxies(forwarded_allow_ips)
        app = create_web_app(settings, dagster_url=dagster_url, api_key=key)
    except StockerError as exc:
        fail(exc)
    url = f"{_url(host, port)}web/"
    typer.echo(f"web page: {url} (warehouse {settings.warehouse_path}, read-only)")
    if open_browser and has_display():
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, [url]).start()
    uvicorn_run(app, host, port, forwarded_allow_ips, log_level="warning")
