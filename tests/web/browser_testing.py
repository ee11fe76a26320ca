"""A live ``stocker serve`` in a child process and headless Chromium through Playwright (no browser
download: the Debian ``chromium`` package, found on PATH or at ``STOCKER_CHROMIUM``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx

from stocker_core.config import Settings


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


SERVE = "from stocker_assets.cli import app; app(prog_name='stocker')"
"""``stocker`` run by this interpreter (so it is this checkout's code, whatever is on PATH)."""


@contextmanager
def live_server(
    settings: Settings, api_key: str = "", *options: str, command: str = "serve", host: str = "127.0.0.1"
) -> Iterator[str]:
    """``http://127.0.0.1:<port>`` answered by ``stocker serve`` (the environment server and the
    web page at ``/web``; ``options`` are more ``serve`` flags; ``command="web"``: ``stocker web
    --no-open``; ``host``: the address it binds) in a child process reading ``settings``' home,
    source and folders, until the block ends."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
    for name in ("home", "source", "files_dir", "text_dir"):
        value = getattr(settings, name, None)
        if value:
            env[f"STOCKER_{name.upper()}"] = str(value)
    if api_key:
        env["STOCKER_API_KEY"] = api_key
    extra = ["--no-open"] if command == "web" else []
    argv = [sys.executable, "-c", SERVE, command, "--host", host, "--port", str(port), *extra, *options]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    with tempfile.TemporaryFile(mode="w+") as log:
        server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"`stocker {command}` did not start:\n{log.read()[-4000:]}")
                time.sleep(0.1)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@dataclass
class PageWatch:
    """Console errors, page errors and failed or 4xx/5xx requests seen by a page."""

    problems: list[str] = field(default_factory=list)

    def attach(self, page) -> None:
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.problems.append(f"{r.status}: {r.url}"))
