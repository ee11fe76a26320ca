"""Start-up time of the ``stocker`` command against the interpreter's floor.

Usage: python bench/bench_cli.py [RUNS]   (default 7; ~1 minute)

Each command runs RUNS times in a fresh process (the ``stocker`` script of this virtual
environment, a temporary STOCKER_HOME, the default ``sample`` source) and the median wall
time is printed next to the floor measured in the same run: ``python -c pass``,
``python -c "import pandas"`` (what any command that touches bars pays) and
``python -c "import dagster"`` (what every command paid when Dagster was imported up front).
``episode info`` also runs once with an empty calendar cache (the first command on a machine).
The goal: ``stocker --help``, ``tickers list``, ``episode info`` and ``agent tools`` under 1 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 1.0
BIN = Path(sys.executable).parent
EPISODE = "GOOGL|2012-03-01"  # the sample source's GOOGL runs 2009-05 … 2018-08

FLOORS: list[tuple[str, list[str]]] = [
    ("python -c pass", [sys.executable, "-c", "pass"]),
    ('python -c "import pandas"', [sys.executable, "-c", "import pandas"]),
    ('python -c "import dagster"', [sys.executable, "-c", "import dagster"]),
]
COMMANDS: list[tuple[str, list[str]]] = [
    ("stocker --help", ["stocker", "--help"]),
    ("stocker tickers list", ["stocker", "tickers", "list"]),
    (f"stocker episode info --episode '{EPISODE}'", ["stocker", "episode", "info", "--episode", EPISODE]),
    ("stocker agent tools", ["stocker", "agent", "tools"]),
]


def wall_time(argv: list[str], env: dict[str, str]) -> float:
    """Seconds one run of ``argv`` takes; raises if it fails."""
    if argv[0] == "stocker":
        argv = [str(BIN / "stocker"), *argv[1:]]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return elapsed


def median_time(argv: list[str], env: dict[str, str], runs: int) -> float:
    wall_time(argv, env)  # warm the file cache and byte-code
    return statistics.median(wall_time(argv, env) for _ in range(runs))


def main(runs: int = 7) -> None:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cold_cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
        env.update(STOCKER_HOME=home, STOCKER_SOURCE="sample")
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"median of {runs} runs, {os.cpu_count()} cores, load average {load:.2f}")
        floor = 0.0
        for label, argv in FLOORS:
            seconds = median_time(argv, env, runs)
            floor = floor or seconds
            print(f"  {label:<52} {seconds:6.3f} s")
        worst = 0.0
        for label, argv in COMMANDS:
            seconds = median_time(argv, env, runs)
            worst = max(worst, seconds)
            print(f"  {label:<52} {seconds:6.3f} s  ({seconds - floor:+.3f} s over python -c pass)")
        cold = wall_time(COMMANDS[-1][1], {**env, "XDG_CACHE_HOME": cold_cache})
        print(f"  {'episode info, empty calendar cache (first run)':<48} {cold:6.3f} s")
        verdict = "met" if worst < GOAL_S else "NOT met"
        print(f"  goal: every command under {GOAL_S:.1f} s: {verdict} (slowest {worst:.3f} s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
