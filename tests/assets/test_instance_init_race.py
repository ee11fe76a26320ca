"""Issue 11 item 4: several commands initialising one fresh Dagster instance at once."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

# The CLI's first step in every Dagster-backed command, as a subprocess: set up the home,
# get the instance and touch each storage (run, event log, schedules).
INIT = """
import sys
from stocker_assets.runner import dagster_instance
from stocker_core.config import Settings
instance = dagster_instance(Settings(home=sys.argv[1]))
instance.get_runs(limit=1)
instance.get_dynamic_partitions("ticker")
instance.all_instigator_state()
"""


def _heads(home: Path) -> dict[str, int]:
    counts = {}
    for db in sorted((home / "dagster").rglob("*.db")):
        with sqlite3.connect(db) as con:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "alembic_version" in tables:
                counts[db.name] = con.execute("SELECT count(*) FROM alembic_version").fetchone()[0]
    return counts


def _init_at_once(home: Path, processes: int) -> list[subprocess.CompletedProcess]:
    env = {"PATH": "/usr/bin:/bin", "DAGSTER_HOME": "", "HOME": str(home)}
    started = [
        subprocess.Popen(
            [sys.executable, "-c", INIT, str(home)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={k: v for k, v in env.items() if v},
        )
        for _ in range(processes)
    ]
    return [subprocess.CompletedProcess(p.args, p.wait(), *p.communicate()) for p in started]


@pytest.mark.slow
def test_parallel_first_commands_leave_one_head_20_times(tmp_path):
    for round_ in range(20):
        home = tmp_path / f"home{round_}"
        results = _init_at_once(home, 3)
        for r in results:
            assert r.returncode == 0, r.stderr[-2000:]
        heads = _heads(home)
        assert heads and set(heads.values()) == {1}, (round_, heads)
        later = _init_at_once(home, 1)[0]  # a later command still works
        assert later.returncode == 0, later.stderr[-2000:]
