"""Runs whose process died are marked failed, so the instance never holds a dead run as live.

``stocker materialize`` executes each Dagster run in a process of its own (the CLI or one of its
lanes, ``execute_in_process``). Killed with ``kill -9`` — or with ``SIGTERM`` between two events
— that process cannot record the end of its run, and the run stays ``STARTED`` in the instance
for good: the UI's queue shows it running, and nothing ever finishes it (Dagster's own run
monitoring watches only runs its run launcher started).

So every run names the process that executes it, in three tags (``process_tags``: its host,
its pid and that process's start time, which tells a live process from a later one that
reuses the pid), and each CLI start that opens the instance (``instance.dagster_instance``)
calls ``fail_dead_runs``: a run of this host still not finished whose process is gone is
reported failed (``DagsterInstance.report_run_failed``, with a message saying why). Runs
without the tags (launched from the UI, by a schedule, on another host) are left alone.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import dagster as dg

HOST_TAG = "stocker/host"
PID_TAG = "stocker/pid"
PID_START_TAG = "stocker/pid_start"
"""The host, pid and process start time of the process that executes a run."""

UNFINISHED = (
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
)
"""The statuses of a run that someone is still expected to end."""


def host_name() -> str:
    """This machine's name as the tags hold it (at most 63 characters, Dagster's tag limit)."""
    return socket.gethostname()[:63]


def process_start(pid: int) -> str:
    """When process ``pid`` started, as an opaque string ("" when unknown or gone): its start
    in clock ticks since boot (``/proc/<pid>/stat``) on Linux, psutil's creation time elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[19]  # field 22, starttime
    except (OSError, IndexError):
        pass
    try:
        import psutil

        return f"{psutil.Process(pid).create_time():.3f}"
    except Exception:  # psutil missing, or no such process  # noqa: BLE001
        return ""


def process_tags() -> dict[str, str]:
    """The tags naming this process as the one that executes a run."""
    pid = os.getpid()
    return {HOST_TAG: host_name(), PID_TAG: str(pid), PID_START_TAG: process_start(pid)}


def process_alive(pid: int, started: str = "") -> bool:
    """Whether process ``pid`` of this host is the one that started at ``started`` and still
    runs (a pid reused by a later process is not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's process
    now = process_start(pid)
    return not (started and now and now != started)


def dead_process(run: dg.DagsterRun, host: str | None = None) -> str | None:
    """Why ``run``'s process is gone ("pid N on HOST is gone"), or None when it runs, is on
    another host, or the run does not name its process."""
    tags = run.tags or {}
    if tags.get(HOST_TAG) != (host or host_name()) or not tags.get(PID_TAG, "").isdigit():
        return None
    pid = int(tags[PID_TAG])
    if process_alive(pid, tags.get(PID_START_TAG, "")):
        return None
    return f"process {pid} on {tags[HOST_TAG]} is gone"


def fail_dead_runs(instance: dg.DagsterInstance, host: str | None = None) -> list[str]:
    """Report failed every unfinished run of this host whose process is gone; the ids of those
    marked. A run that cannot be marked (its storage refuses) is left for the next start."""
    marked = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=list(UNFINISHED))):
        why = dead_process(run, host)
        if why is None:
            continue
        try:
            instance.report_run_failed(
                run,
                message=f"Run {run.run_id} marked failed: the {why} (killed or crashed before it "
                "could record the end of the run); a later stocker command found it",
            )
        except Exception:  # housekeeping: never stop the command that opened the instance  # noqa: BLE001
            continue
        marked.append(run.run_id)
    return marked
