"""Runs `dagster dev` as a child that stops when `stocker ui` is asked to stop.

`dagster dev` starts a webserver, a daemon and code servers. Started from a script it
ignores SIGINT (a background job inherits SIGINT ignored) and SIGTERM never reached its
children, so only SIGKILL ended them. Here it runs in its own process group with default
signal dispositions; a SIGTERM or SIGINT to `stocker ui` is forwarded to that whole group,
then whatever is left after a grace period is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
SUPERSEDED_DEV = "ignore:Function `dev_command` is superseded"
"""A PYTHONWARNINGS entry: `dagster dev` announces that `dg dev` (not installed by
default) supersedes it; `dagster dev` is what we run on purpose."""


def _default_signals() -> None:  # runs in the child between fork and exec
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we cannot signal still exists
        return True
    return True


def _wait_group(process: subprocess.Popen, pgid: int, seconds: float) -> bool:
    """Wait until the leader has exited and the group is empty; True when it is."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        process.poll()
        if process.returncode is not None and not _group_alive(pgid):
            return True
        time.sleep(0.1)
    process.poll()
    return process.returncode is not None and not _group_alive(pgid)


def stop_group(process: subprocess.Popen, sig: int = signal.SIGTERM, grace_s: float = 10.0) -> None:
    """Send ``sig`` to the child's process group, wait ``grace_s``, then SIGKILL what is left."""
    pgid = process.pid  # the leader of its own session: pgid == pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)
    if not _wait_group(process, pgid, grace_s):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        _wait_group(process, pgid, 5.0)
    process.wait()


def run_in_own_group(command: Sequence[str], env: Mapping[str, str], cwd: Path, grace_s: float = 10.0) -> int:
    """Run ``command`` in a new session until it exits; SIGTERM/SIGINT/SIGHUP to this
    process stop the child's whole group (forwarded, then killed after ``grace_s``).
    Returns the child's exit code (0 when it was stopped on request)."""
    process = subprocess.Popen(
        list(command), env=dict(env), cwd=cwd, start_new_session=True, preexec_fn=_default_signals
    )
    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        while process.poll() is None and not received:
            time.sleep(0.2)
        if received:  # Ctrl-C stays an interrupt; SIGTERM and SIGHUP become SIGTERM
            stop_group(process, signal.SIGINT if received[0] == signal.SIGINT else signal.SIGTERM, grace_s)
            return 0
        stop_group(process, signal.SIGTERM, 2.0)  # it exited on its own: clear its children
        return process.returncode
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if process.poll() is None:
            stop_group(process, signal.SIGTERM, grace_s)
