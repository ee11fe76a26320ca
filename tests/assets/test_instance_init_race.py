"""Issue 11 item 4: several commands initialising one fresh Dagster instance at once.

Three processes start together on 10 fresh homes in turn (a file barrier lines them up
before each round), each doing what every Dagster-backed ``stocker`` command does first:
``instance.dagster_instance`` (set up the home, open the instance, let each storage create
its tables). Afterwards every SQLite database has exactly one alembic head and a later
command opens each home without error. Without the lock, 4 of 5 such rounds broke a home (10
rounds miss that with odds of 0.2**10, about 1 in 10 million).
"""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROUNDS, PROCESSES = 10, 3

WORKER = """
import os, sys, time
from pathlib import Path

import pytest
from stocker_assets.engine.instance import dagster_instance
from stocker_core.config import Settings

base, rounds, processes, name = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for r in range(rounds):
    ready = base / f"ready{r}"
    ready.mkdir(parents=True, exist_ok=True)
    (ready / name).touch()
    deadline = time.monotonic() + 120
    while len(list(ready.iterdir())) < processes:  # barrier: start the round together
        if time.monotonic() > deadline:
            sys.exit(f"barrier timeout in round {r}")
        time.sleep(0.002)
    os.environ.pop("DAGSTER_HOME", None)
    instance = dagster_instance(Settings(home=base / f"home{r}"))
    instance.dispose()
"""

LATER = """
import os, sys
from pathlib import Path

import pytest
from stocker_assets.engine.instance import dagster_instance
from stocker_core.config import Settings

base, rounds = Path(sys.argv[1]), int(sys.argv[2])
for r in range(rounds):
    os.environ.pop("DAGSTER_HOME", None)
    instance = dagster_instance(Settings(home=base / f"home{r}"))
    instance.add_dynamic_partitions("ticker", ["AAPL"])
    assert instance.get_dynamic_partitions("ticker") == ["AAPL"]
    instance.dispose()
"""


def _heads(home: Path) -> dict[str, int]:
    counts = {}
    for db in sorted((home / "dagster").rglob("*.db")):
        with sqlite3.connect(db) as con:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "alembic_version" in tables:
                counts[db.name] = con.execute("SELECT count(*) FROM alembic_version").fetchone()[0]
    return counts


def _python(*args: str) -> subprocess.Popen:
    env = {"PATH": "/usr/bin:/bin", "HOME": args[1]}
    return subprocess.Popen(
        [sys.executable, "-c", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


@pytest.mark.slow
def test_parallel_first_commands_leave_one_head_10_times(tmp_path):
    workers = [_python(WORKER, str(tmp_path), str(ROUNDS), str(PROCESSES), f"w{i}") for i in range(PROCESSES)]
    for worker in workers:
        _, err = worker.communicate(timeout=400)
        assert worker.returncode == 0, err[-3000:]
    for r in range(ROUNDS):
        heads = _heads(tmp_path / f"home{r}")
        assert len(heads) >= 2 and set(heads.values()) == {1}, (r, heads)
    later = _python(LATER, str(tmp_path), str(ROUNDS))
    _, err = later.communicate(timeout=400)
    assert later.returncode == 0, err[-3000:]
