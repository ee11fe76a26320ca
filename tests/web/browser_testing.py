"""A live web server in a thread and headless Chromium through Playwright (no browser download:
the Debian ``chromium`` package, found on PATH or at ``STOCKER_CHROMIUM``)."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn

from stocker_core.config import Settings
from stocker_core.web.app import create_web_app


def chromium_path() -> str | None:
    """The Chromium executable, or None when it is not installed."""
    given = os.environ.get("STOCKER_CHROMIUM")
    if given and os.path.exists(given):
        return given
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def live_server(settings: Settings, api_key: str = "") -> Iterator[str]:
    """``http://127.0.0.1:<port>`` serving ``create_web_app(settings)`` until the block ends."""
    port = free_port()
    config = uvicorn.Config(
        create_web_app(settings, api_key=api_key), host="127.0.0.1", port=port, log_level="error"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@dataclass
class PageWatch:
    """Console errors, page errors and failed or 4xx/5xx requests seen by a page."""

    problems: list[str] = field(default_factory=list)

    def attach(self, page) -> None:
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.problems.append(f"{r.status}: {r.url}"))
