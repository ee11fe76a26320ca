"""`stocker materialize` on lanes, and Dagster's event log with its connections kept open:
the same data runs (prices … votes of a few sample tickers over the main job's months) three
ways, each in a new temporary home, in this run:

1. one lane, Dagster's own SQLite event log (the reference: the main job before this change);
2. one lane, ``PooledSqliteEventLogStorage`` (the CLI's instance now);
3. ``--workers`` lanes (default: one per core), the pooled event log.

Each run's council votes are checked identical to the reference's. Prints wall seconds and
the speed-ups against the reference.

Run: python bench/bench_lanes.py [--tickers JNJ,XOM,PG,KO] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

DAGSTER_DEFAULT = "telemetry:\n  enabled: false\n"
"""An instance file without ``event_log_storage``: Dagster's SqliteEventLogStorage."""


def run(tickers: list[str], workers: int, pooled: bool, folder: Path) -> tuple[float, list]:
    """Wall seconds of the data groups for ``tickers`` in a new home, and its votes."""
    home, dagster_home = folder / "home", folder / "dagster"
    dagster_home.mkdir(parents=True)
    if not pooled:  # our instance template is written only where no dagster.yaml exists
        (dagster_home / "dagster.yaml").write_text(DAGSTER_DEFAULT)
    env = {
        **os.environ,
        "STOCKER_HOME": str(home),
        "DAGSTER_HOME": str(dagster_home),
        "STOCKER_MAIN_WORKERS": str(workers),
    }
    args = ["materialize", *[a for t in tickers for a in ("-t", t)], "-g", "market,env,text,council"]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stocker_assets.cli", *args], env=env, capture_output=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"materialize failed ({done.returncode}):\n{done.stdout.decode()[-2000:]}")
    with duckdb.connect(str(home / "stocker.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{home}'")
        votes = con.execute(
            "SELECT role, ticker, date, signal, confidence FROM council.votes ORDER BY ticker, date, role"
        ).fetchall()
    return seconds, votes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickers", default="JNJ,XOM,PG,KO")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    tickers = [t.strip() for t in args.tickers.split(",") if t.strip()]
    cases = [
        ("1 lane, Dagster's event log (reference)", 1, False),
        ("1 lane, pooled event log", 1, True),
        (f"{args.workers} lanes, pooled event log", args.workers, True),
    ]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (label, workers, pooled) in enumerate(cases):
            seconds, votes = run(tickers, workers, pooled, Path(tmp) / str(index))
            results.append((label, seconds, votes))
            print(f"{label:45s} {seconds:7.1f} s", flush=True)
    reference, votes = results[0][1], results[0][2]
    for label, seconds, other in results[1:]:
        assert other == votes, f"{label}: votes differ from the reference"
        print(f"{label:45s} {reference / seconds:5.2f}x the reference")
    print(f"{len(tickers)} tickers, {len(votes)} votes, identical in every run")


if __name__ == "__main__":
    main()
