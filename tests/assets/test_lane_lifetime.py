"""Lane workers die with the CLI (issue 34, defect 3): after ``SIGTERM`` or ``kill -9`` of a
2-lane ``stocker materialize`` no process of that run is alive 5 s later, and a rerun started at
once gives the same warehouse as a clean one-process run; a rerun waits, saying so, for the lanes of a killed
run that still hold the home."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from stocker_assets.engine.lane_lifetime import LANES_DIR, wait_for_leftover_lanes
from stocker_core.warehouse import Warehouse

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
time.sleep(60)
"""


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_a_rerun_waits_for_the_lanes_of_a_killed_run_and_says_so(tmp_path: Path) -> None:
    lock = tmp_path / LANES_DIR / f"{_dead_pid()}.lock"
    lock.parent.mkdir()
    lock.write_text("0\n")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    said: list[str] = []
    threading.Timer(1.0, holder.kill).start()
    started = time.monotonic()
    assert wait_for_leftover_lanes(tmp_path, said.append) == 1
    assert 0.8 < time.monotonic() - started < 10
    assert said and "waiting for the lane workers of an earlier stocker materialize" in said[0]
    assert not lock.exists()
    holder.wait()


def test_a_live_run_is_left_alone(tmp_path: Path) -> None:
    lock = tmp_path / LANES_DIR / f"{os.getppid()}.lock"  # a live process: another run in progress
    lock.parent.mkdir()
    lock.write_text("0\n")
    assert wait_for_leftover_lanes(tmp_path, print) == 0 and lock.exists()


def _run_of(proc: subprocess.Popen) -> list[psutil.Process]:
    try:
        return psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _lanes_of(proc: subprocess.Popen) -> list[psutil.Process]:
    """The run's lane processes (spawned by multiprocessing); short-lived children that end or
    turn zombie while being looked at are not lanes."""
    lanes = []
    for child in _run_of(proc):
        try:
            if "multiprocessing" in " ".join(child.cmdline()):
                lanes.append(child)
        except (psutil.NoSuchProcess, psutil.AccessDenied):  # ZombieProcess is a NoSuchProcess
            pass
    return lanes


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    found = []
    for p in processes:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.NoSuchProcess:
            pass
    return found


def _env(tmp_path: Path, seed_dir: Path, name: str) -> dict[str, str]:
    (tmp_path / f"dagster-{name}").mkdir()
    return {
        **os.environ,
        "STOCKER_HOME": str(tmp_path / name),
        "DAGSTER_HOME": str(tmp_path / f"dagster-{name}"),
        "STOCKER_SOURCE": "files",
        "STOCKER_FILES_DIR": str(seed_dir),
        "STOCKER_MAIN_WORKERS": "2",
    }


COMMAND = [sys.executable, "-m", "stocker_assets.cli", "materialize", "-t", "AAPL", "-t", "INTC"]
COMMAND += ["--from", "2023-07", "--to", "2023-08", "--skip", "charts", "--groups", "market,env,text,council"]
STEP_STARTED = re.compile(r"stage \d+: (AAPL|INTC) .*: \w+ started \(")
"""A progress line of the CLI: one of the tickers' steps started in a lane (its Dagster run is under way)."""


def _start_and_stop(env: dict[str, str], signum: int) -> list[psutil.Process]:
    """Start the 2-lane run, let its lanes work, send ``signum`` to the CLI; every process of the
    run that is still alive 5 s later (a process that has ended stays ended, so the wait stops as
    soon as none is left)."""
    cli = subprocess.Popen(
        COMMAND, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    at_work = threading.Event()  # a ticker's Dagster step has started in a lane

    def follow() -> None:
        for line in cli.stdout:  # type: ignore[union-attr]
            if STEP_STARTED.search(line):
                at_work.set()

    threading.Thread(target=follow, daemon=True).start()
    deadline = time.monotonic() + 240
    lanes: list[psutil.Process] = []
    while time.monotonic() < deadline and cli.poll() is None:
        lanes = _lanes_of(cli)
        if len(lanes) >= 2 and at_work.is_set():
            break
        time.sleep(0.05)
    assert len(lanes) >= 2 and at_work.is_set(), "the run never put its two lanes to work"
    run = _run_of(cli)
    assert len(_alive(run)) >= 2
    os.kill(cli.pid, signum)
    stopped = time.monotonic()
    with contextlib.suppress(subprocess.TimeoutExpired):
        cli.wait(timeout=5)
    while True:
        alive = _alive([*run, psutil.Process(cli.pid)] if cli.poll() is None else run)
        if not alive or time.monotonic() - stopped >= 5:
            break
        time.sleep(0.1)
    if cli.poll() is None:
        cli.kill()
        cli.wait()
    return alive


def _stored(home: Path) -> dict[str, pd.DataFrame]:
    warehouse = Warehouse(home / "stocker.duckdb")
    votes = warehouse.query("SELECT * FROM council.votes")
    votes = votes.drop(columns=[c for c in votes.columns if c in ("created_at", "run_id")])
    prices = warehouse.query("SELECT * FROM market.prices")
    episodes = warehouse.query("SELECT key, ticker, month FROM env.episodes")
    return {
        "votes": votes.sort_values(["ticker", "date", "role"], ignore_index=True),
        "prices": prices.sort_values(["ticker", "date"], ignore_index=True),
        "episodes": episodes.sort_values("key", ignore_index=True),
    }


@pytest.mark.slow
def test_killed_lanes_die_and_a_rerun_matches_a_clean_run(tmp_path: Path, seed_dir: Path) -> None:
    env = _env(tmp_path, seed_dir, "home")
    for signum in (signal.SIGTERM, signal.SIGKILL):
        alive = _start_and_stop(env, signum)
        assert alive == [], f"alive 5 s after {signum.name}: {[(p.pid, p.cmdline()[-2:]) for p in alive]}"
    rerun = subprocess.run(COMMAND, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    assert not list((tmp_path / "home" / LANES_DIR).glob("*.lock"))
    # the reference runs in one process: the rerun's lanes must give what no lane gives
    clean_env = {**_env(tmp_path, seed_dir, "clean"), "STOCKER_MAIN_WORKERS": "1"}
    clean = subprocess.run(COMMAND, env=clean_env, capture_output=True, text=True, timeout=600)
    assert clean.returncode == 0, clean.stdout[-2000:] + clean.stderr[-2000:]
    rerun_rows, clean_rows = _stored(tmp_path / "home"), _stored(tmp_path / "clean")
    assert len(clean_rows["votes"]) > 0 and len(clean_rows["prices"]) > 0
    for table in clean_rows:
        pd.testing.assert_frame_equal(rerun_rows[table], clean_rows[table])
