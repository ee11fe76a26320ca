"""Council benchmarks on the seed fixture (task_easy, 43 days x the council's roles, seven built in).

1. Rule-backend votes per second for a whole episode (no cache).
2. Cached-vote lookup of the episode from DuckDB: p50 / p99 milliseconds.

Run: python bench/bench_council.py
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd

from stocker_core.composition import register_all
from stocker_core.config import REFERENCE_TASKS_DIR
from stocker_core.context.decision import CouncilInputs
from stocker_core.council.backends import RuleBackend
from stocker_core.council.cache import VoteCache
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.council.voting import run_votes
from stocker_core.market.files_source import FilesSource
from stocker_core.text.events import load_text_folder
from stocker_core.warehouse.db import Warehouse

FIXTURE = REFERENCE_TASKS_DIR


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    source = FilesSource(FIXTURE)
    lo, hi = pd.Timestamp("2020-01-01").date(), pd.Timestamp("2025-01-01").date()
    closes = pd.concat([source.fetch(s, lo, hi).assign(symbol=s) for s in ("MSFT", "GOOGL", "GC=F")])
    inputs = CouncilInputs(
        "AAPL", source.fetch("AAPL", lo, hi), load_text_folder(FIXTURE), closes, ("MSFT", "GOOGL"), "GC=F"
    )
    days = inputs.trading_days("2023-08-01", "2023-09-29")
    backend = RuleBackend()
    for workers in (1, 4):
        started = time.perf_counter()
        run = run_votes("AAPL", days, inputs.context, backend, None, max_workers=workers)
        elapsed = time.perf_counter() - started
        print(
            f"rule backend, {workers} thread(s): {len(run.votes)} votes "
            f"({len(days)} days x {len(ROLE_NAMES)} roles) in {elapsed:.2f} s = "
            f"{len(run.votes) / elapsed:.0f} votes/s"
        )
    with tempfile.TemporaryDirectory() as tmp:
        cache = VoteCache(Warehouse(Path(tmp) / "bench.duckdb"))
        run_votes("AAPL", days, inputs.context, backend, cache)
        versions = {r: backend.prompt_version(r) for r in run.votes["role"].unique()}
        for label, held in (("open+close per lookup", False), ("inside Warehouse.session()", True)):
            timings = []
            with cache.warehouse.session() if held else contextlib.nullcontext():
                for _ in range(200):
                    started = time.perf_counter()
                    found = cache.lookup("AAPL", days, backend.name, backend.model_id, versions)
                    timings.append((time.perf_counter() - started) * 1000)
            assert len(found) == len(ROLE_NAMES) * len(days)
            timings.sort()
            p99 = timings[int(0.99 * (len(timings) - 1))]
            print(
                f"cached lookup of {len(found)} votes, {label}: p50 {statistics.median(timings):.1f} ms, "
                f"p99 {p99:.1f} ms ({len(timings)} runs)"
            )
        started = time.perf_counter()
        rerun = run_votes("AAPL", days, inputs.context, backend, cache)
        print(
            f"full cached episode through run_votes: {rerun.stats} in "
            f"{(time.perf_counter() - started) * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
