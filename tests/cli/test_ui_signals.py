"""`stocker ui` stops dagster dev and every process it started on SIGTERM, and starts
without the SupersessionWarning and the "dagster.yaml … will not be used" warning."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _parents() -> dict[int, int]:
    """{pid: parent pid} of every process (Linux /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # the command name (2nd field) may hold spaces: fields restart after its ')'
        found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":  # a zombie has exited; its parent just has not reaped it yet
            alive.add(pid)
    return alive


@pytest.mark.slow
def test_sigterm_stops_dagster_dev_and_all_its_children(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOCKER_", "DAGSTER_HOME"))}
    env.update(STOCKER_HOME=str(tmp_path / "home"), STOCKER_SOURCE="sample")
    port = _free_port()
    log = (tmp_path / "ui.log").open("wb")
    # as a background job: SIGINT ignored, which dagster dev inherits unless it is reset
    stocker = subprocess.Popen(
        [sys.executable, "-m", "stocker_assets.cli", "ui", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            assert stocker.poll() is None, (tmp_path / "ui.log").read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "dagster dev did not serve within 180 s"
            time.sleep(0.25)
        children = _descendants(stocker.pid)
        assert len(children) >= 3  # dagster dev, the webserver, the daemon (and code servers)
        stocker.send_signal(signal.SIGTERM)
        assert stocker.wait(timeout=20) == 0
        stopped_by = time.monotonic() + 15
        while _alive(children) and time.monotonic() < stopped_by:
            time.sleep(0.2)
        assert _alive(children) == set(), "left running after SIGTERM"
    finally:
        if stocker.poll() is None:
            stocker.kill()
        for pid in _alive(_descendants(stocker.pid)):
            os.kill(pid, signal.SIGKILL)
        log.close()
    output = (tmp_path / "ui.log").read_text()
    assert "SupersessionWarning" not in output
    assert "will not be used" not in output
    assert "Traceback" not in output
