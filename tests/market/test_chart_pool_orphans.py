"""The chart pool's workers die with their parent: after kill -9 of the process that started
the pool (``stocker materialize`` drawing charts) no worker lives on (issue 22, defect 8)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see the workers")

PARENT = textwrap.dedent(
    """
    import os, sys, time
    from stocker_core.market.charts import chart_pool

    pool = chart_pool(2)
    pids = set()
    while len(pids) < 2:  # both workers started (each answers with its own pid)
        pids |= {f.result() for f in [pool.submit(os.getpid) for _ in range(8)]}
    print(" ".join(map(str, sorted(pids))), flush=True)
    time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for a reaper)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_workers_exit_after_kill_9_of_their_parent():
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])),
    }
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = parent.stdout.readline()
        workers = [int(p) for p in line.split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)], "chart workers outlived their parent"
    finally:
        parent.kill()
        for pid in workers if "workers" in locals() else []:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_live_parent_keeps_its_workers():
    from stocker_core.market.charts import PARENT_POLL_S, chart_pool

    pool = chart_pool(1)
    try:
        first = pool.submit(os.getpid).result()
        time.sleep(3 * PARENT_POLL_S)
        assert pool.submit(os.getpid).result() == first and _alive(first)
    finally:
        pool.shutdown()
