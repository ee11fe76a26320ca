"""Start-up cost of the ``stocker`` command in CPU-seconds, against the interpreter's floors.

Usage: python bench/bench_cli.py [RUNS]   (default 3)

Each command runs RUNS times in a fresh process (the ``stocker`` script of this virtual
environment, a temporary STOCKER_HOME, the default ``sample`` source), after one run that warms
the file cache and byte-code. A run's cost is the CPU time of the child, user + system, from
``os.wait4`` (what a busy machine does not inflate, unlike wall time); the median is printed
next to the floors measured in the same run: ``python -c pass``, ``import pandas`` (what any
command that touches bars pays) and ``import dagster`` (what every command paid when Dagster
was imported up front), and as ratios to the last two.

Goals: ``stocker --help`` ≤ 0.6 and ``stocker tickers list`` ≤ 0.8 CPU-seconds; ``episode info``
and ``agent tools`` are shown for comparison. ``episode info`` also runs once with an empty
calendar cache (the first command on a machine).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
EPISODE = "GOOGL|2012-03-01"  # the sample source's GOOGL runs 2009-05 … 2018-08

FLOORS: list[tuple[str, list[str]]] = [
    ("python -c pass", [sys.executable, "-c", "pass"]),
    ("import pandas", [sys.executable, "-c", "import pandas"]),
    ("import dagster", [sys.executable, "-c", "import dagster"]),
]
COMMANDS: list[tuple[str, list[str], float | None]] = [
    ("stocker --help", ["stocker", "--help"], 0.6),
    ("stocker tickers list", ["stocker", "tickers", "list"], 0.8),
    ("stocker episode info --episode …", ["stocker", "episode", "info", "--episode", EPISODE], None),
    ("stocker agent tools", ["stocker", "agent", "tools"], None),
]
"""(label, argv, goal in CPU-seconds or None)."""


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU-seconds, wall seconds) of one run of ``argv``; raises if it fails."""
    if argv[0] == "stocker":
        argv = [str(BIN / "stocker"), *argv[1:]]
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode(errors="replace") if child.stderr else ""
    if child.stderr:
        child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}: {errors.strip()[-400:]}")
    return usage.ru_utime + usage.ru_stime, wall


def median_cost(argv: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median (CPU-seconds, wall seconds) over ``runs`` runs after a warm-up run."""
    run_once(argv, env)
    costs = [run_once(argv, env) for _ in range(runs)]
    return statistics.median(c for c, _ in costs), statistics.median(w for _, w in costs)


def main(runs: int = 3) -> int:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cold_cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
        env.update(STOCKER_HOME=home, STOCKER_SOURCE="sample")
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"median of {runs} runs, CPU-seconds (user + sys), {os.cpu_count()} cores, load {load:.2f}")
        floors: dict[str, float] = {}
        for label, argv in FLOORS:
            cpu, wall = median_cost(argv, env, runs)
            floors[label] = cpu
            print(f"  floor {label:<46} {cpu:6.3f} CPU-s  (wall {wall:5.3f} s)")
        pandas, dagster = floors["import pandas"], floors["import dagster"]
        missed = []
        for label, argv, goal in COMMANDS:
            cpu, wall = median_cost(argv, env, runs)
            verdict = "" if goal is None else f"  goal ≤ {goal:.1f}: {'met' if cpu <= goal else 'NOT met'}"
            if goal is not None and cpu > goal:
                missed.append(label)
            print(
                f"  {label:<52} {cpu:6.3f} CPU-s  (wall {wall:5.3f} s; ×{cpu / pandas:.2f} import pandas, "
                f"×{cpu / dagster:.2f} import dagster){verdict}"
            )
        cold, wall = run_once(COMMANDS[2][1], {**env, "XDG_CACHE_HOME": cold_cache})
        label = "episode info, empty calendar cache (first run)"
        print(f"  {label:<52} {cold:6.3f} CPU-s  (wall {wall:5.3f} s)")
        print(f"  goals: {'all met' if not missed else 'NOT met for ' + ', '.join(missed)}")
        return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
