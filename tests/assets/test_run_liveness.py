"""Issue 43, item 5: after ``kill -9`` (or ``SIGTERM``) of ``stocker materialize`` its Dagster
runs stayed ``STARTED`` in the instance for good. Every run names the process that executes it
(host, pid, that process's start time); the next CLI start that opens the instance reports a
run whose process is gone as failed, and leaves every other run alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.dagster_run import DagsterRun

from stocker_assets.engine.instance import dagster_instance
from stocker_assets.engine.run_liveness import (
    HOST_TAG,
    PID_START_TAG,
    PID_TAG,
    fail_dead_runs,
    host_name,
    process_start,
    process_tags,
)
from stocker_core.config import Settings

Status = dg.DagsterRunStatus


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _run(instance: dg.DagsterInstance, status: Status, tags: dict[str, str]) -> str:
    run_id = str(uuid.uuid4())
    instance.add_run(DagsterRun(job_name="prices_job", run_id=run_id, status=status, tags=tags))
    return run_id


def _tags(pid: int, start: str | None = None, host: str | None = None) -> dict[str, str]:
    return {
        HOST_TAG: host or host_name(),
        PID_TAG: str(pid),
        PID_START_TAG: process_start(pid) if start is None else start,
    }


def test_a_run_whose_process_is_dead_is_marked_failed_and_no_other(tmp_path: Path) -> None:
    instance = dg.DagsterInstance.local_temp(str(tmp_path))
    dead = _dead_pid()
    runs = {
        "dead": _run(instance, Status.STARTED, _tags(dead, start="")),
        "dead_not_started": _run(instance, Status.NOT_STARTED, _tags(dead, start="")),
        "reused_pid": _run(instance, Status.STARTED, _tags(os.getpid(), start="1")),
        "alive": _run(instance, Status.STARTED, process_tags()),
        "other_host": _run(instance, Status.STARTED, _tags(dead, host="another-machine")),
        "untagged": _run(instance, Status.STARTED, {}),
        "finished": _run(instance, Status.SUCCESS, _tags(dead, start="")),
    }
    marked = fail_dead_runs(instance)
    assert sorted(marked) == sorted([runs["dead"], runs["dead_not_started"], runs["reused_pid"]])
    status = {name: instance.get_run_by_id(run_id).status for name, run_id in runs.items()}
    assert status == {
        "dead": Status.FAILURE,
        "dead_not_started": Status.FAILURE,
        "reused_pid": Status.FAILURE,
        "alive": Status.STARTED,
        "other_host": Status.STARTED,
        "untagged": Status.STARTED,
        "finished": Status.SUCCESS,
    }
    failure = instance.all_logs(runs["dead"], of_type=dg.DagsterEventType.RUN_FAILURE)
    assert len(failure) == 1 and f"process {dead} on {host_name()} is gone" in failure[0].message
    assert fail_dead_runs(instance) == []  # marked once


def test_opening_the_cli_instance_marks_the_dead_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    settings = Settings(home=tmp_path / "home")
    instance = dagster_instance(settings)
    run_id = _run(instance, Status.STARTED, _tags(_dead_pid(), start=""))
    instance.dispose()
    again = dagster_instance(settings)  # what the next stocker command does first
    assert again.get_run_by_id(run_id).status == Status.FAILURE
    again.dispose()


KILLED = """
import sys, time
from pathlib import Path

import dagster as dg

from stocker_assets.engine.instance import dagster_instance
from stocker_assets.engine.runner import _execute
from stocker_core.config import Settings


@dg.asset
def slow() -> None:
    Path(sys.argv[2]).touch()
    time.sleep(120)


defs = dg.Definitions(assets=[slow], jobs=[dg.define_asset_job("slow_job", selection=[slow])])
instance = dagster_instance(Settings(home=Path(sys.argv[1])))
_execute(instance, defs, "slow_job", [slow], {}, None, "WARNING")
"""


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_materialize_leaves_no_started_run(tmp_path: Path, monkeypatch, signum) -> None:
    """The repro: a run executing in a process killed mid-step stays STARTED (or, on SIGTERM,
    may be ended by Dagster itself); the next CLI start leaves none unfinished."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home, started = tmp_path / "home", tmp_path / "step-started"
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    child = subprocess.Popen([sys.executable, str(script), str(home), str(started)], env=env)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert child.poll() is None, "the run's process ended before its step started"
            assert time.monotonic() < deadline, "the step never started"
            time.sleep(0.1)
        child.send_signal(signum)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    instance = dagster_instance(Settings(home=home))
    runs = instance.get_runs()
    assert len(runs) == 1 and runs[0].tags[PID_TAG] == str(child.pid)
    assert runs[0].status in (Status.FAILURE, Status.CANCELED), runs[0].status
    assert not instance.get_runs(filters=dg.RunsFilter(statuses=[Status.STARTED, Status.NOT_STARTED]))
    instance.dispose()
