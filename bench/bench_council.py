"""Council benchmarks: the rule specialists' votes, batched and for one day, each against
the old implementation (``tests/council/rule_oracle.py``, frozen) measured in this run.

1. Batched rule votes/s (``rule_batch.rule_table``) on a synthetic ticker with news, forums,
   macro events, a peer and rate symbols over ``--years`` years (the universe's source), against
   the old batched path on the last ``--old-days`` days (the same days for both; the votes are
   checked identical); then the whole history with the new path, and through ``run_votes``.
2. One day's council (``Council.votes`` on a ready DecisionContext, seven votes) on the seed
   fixture's task_easy days, against the old per-day analysts on the same contexts.
3. Cached-vote lookup of the episode from DuckDB: p50 / p99 milliseconds.

Prints the box's ``calibrate`` line and load beside the absolute figures; the ratios are what
compare across boxes. Run: python bench/bench_council.py [--years 10 --old-days 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "council")]

from rule_oracle import ORACLE_RULES, old_rule_votes  # noqa: E402

from stocker_core.composition import register_all  # noqa: E402
from stocker_core.config import REFERENCE_TASKS_DIR, Settings  # noqa: E402
from stocker_core.council.backends import RuleBackend  # noqa: E402
from stocker_core.council.cache import VoteCache  # noqa: E402
from stocker_core.council.rule_batch import rule_table  # noqa: E402
from stocker_core.council.voting import Council, run_votes  # noqa: E402
from stocker_core.decision_context.decision import CouncilInputs, load_council_inputs  # noqa: E402
from stocker_core.market.files_source import FilesSource  # noqa: E402
from stocker_core.text_events.events import load_text_folder  # noqa: E402
from stocker_core.warehouse.db import Warehouse  # noqa: E402


def _timed(fn, repeat: int = 3) -> tuple[float, object]:
    """Best wall time of ``repeat`` runs of ``fn`` and its last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def _calibrate() -> None:
    """The box's load (quote the workplace's calibrate line beside these figures yourself)."""
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


def _synthetic_inputs(home: Path, years: float) -> CouncilInputs:
    settings = Settings(
        source="synthetic", synth_tickers="2", synth_years=years, synth_start="2010-01-01", home=home
    )
    end = (pd.Timestamp("2010-01-01") + pd.DateOffset(days=int(365.25 * years))).date()
    return load_council_inputs("SYN1", "2010-01-01", end, peers=("^SYN",), settings=settings, history_days=0)


def _episode_inputs() -> CouncilInputs:
    source = FilesSource(REFERENCE_TASKS_DIR)
    lo, hi = pd.Timestamp("2020-01-01").date(), pd.Timestamp("2025-01-01").date()
    closes = pd.concat([source.fetch(s, lo, hi).assign(symbol=s) for s in ("MSFT", "GOOGL", "GC=F")])
    text = load_text_folder(REFERENCE_TASKS_DIR)
    return CouncilInputs("AAPL", source.fetch("AAPL", lo, hi), text, closes, ("MSFT", "GOOGL"), "GC=F")


def batched(years: float, old_days: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inputs = _synthetic_inputs(Path(tmp), years)
    days = inputs.trading_days("1900-01-01", "2100-01-01")
    roles = len(ORACLE_RULES)
    recent = days[-old_days:]
    rule_table(inputs, recent[:5])  # warm-up: imports, the calendar, the VADER lexicon
    old_s, old = _timed(lambda: old_rule_votes(inputs, recent), repeat=1)
    new_s, table = _timed(lambda: rule_table(inputs, recent))
    same = table.votes() == old
    n = len(recent) * roles
    print(
        f"batched rule votes, SYN1 ({len(days)} days of history), last {len(recent)} days x {roles} roles "
        f"= {n} votes; identical to the old path: {same}"
    )
    print(f"  old batched path: {old_s:.2f} s = {n / old_s:,.0f} votes/s")
    print(f"  new array rules:  {new_s:.3f} s = {n / new_s:,.0f} votes/s  ({old_s / new_s:.1f}x the old)")
    all_s, table = _timed(lambda: rule_table(inputs, days))
    print(
        f"  new, all {len(days)} days: {len(table)} votes in {all_s:.3f} s = "
        f"{len(table) / all_s:,.0f} votes/s"
    )
    run_s, run = _timed(lambda: run_votes("SYN1", days, inputs.context, RuleBackend(), None, inputs=inputs))
    print(
        f"  new, all days through run_votes (votes frame, no cache): {run_s:.3f} s = "
        f"{len(run.votes) / run_s:,.0f} votes/s"
    )
    if not same:
        raise SystemExit("the array rules' votes differ from the old path's")


def one_day(inputs: CouncilInputs, days: list[pd.Timestamp]) -> None:
    contexts = [inputs.context(d) for d in days]
    roles = list(ORACLE_RULES)
    council = Council()
    council.votes(contexts[0])  # warm-up
    old_s, old = _timed(lambda: [[ORACLE_RULES[r](c) for r in roles] for c in contexts])
    new_s, new = _timed(lambda: [council.votes(c)[0] for c in contexts])
    n = len(days) * len(roles)
    print(
        f"one day's council (7 votes on a ready context), {len(days)} task_easy days; identical: {old == new}"
    )
    print(f"  old per-day analysts: {old_s / len(days) * 1000:.2f} ms/day = {n / old_s:,.0f} votes/s")
    print(
        f"  new Council.votes:    {new_s / len(days) * 1000:.2f} ms/day = {n / new_s:,.0f} votes/s  "
        f"({old_s / new_s:.1f}x the old; the reference Stocker's per-day council: 2,818 votes/s)"
    )
    if old != new:
        raise SystemExit("one day's council differs from the old per-day analysts")


def cached(inputs: CouncilInputs, days: list[pd.Timestamp]) -> None:
    backend = RuleBackend()
    with tempfile.TemporaryDirectory() as tmp:
        cache = VoteCache(Warehouse(Path(tmp) / "bench.duckdb"))
        run = run_votes("AAPL", days, inputs.context, backend, cache, inputs=inputs)
        versions = {r: backend.prompt_version(r) for r in run.votes["role"].unique()}
        timings = []
        for _ in range(50):
            started = time.perf_counter()
            found = cache.lookup("AAPL", days, backend.name, backend.model_id, versions)
            timings.append((time.perf_counter() - started) * 1000)
        timings.sort()
        print(
            f"cached lookup of {len(found)} votes: p50 {statistics.median(timings):.1f} ms, "
            f"p99 {timings[int(0.99 * (len(timings) - 1))]:.1f} ms ({len(timings)} runs)"
        )


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser()
    parser.add_argument("--years", type=float, default=10.0, help="synthetic history for the batched figures")
    parser.add_argument("--old-days", type=int, default=500, help="days the old batched path is timed on")
    args = parser.parse_args()
    _calibrate()
    batched(args.years, args.old_days)
    inputs = _episode_inputs()
    days = inputs.trading_days("2023-08-01", "2023-09-29")
    one_day(inputs, days)
    cached(inputs, days)
    _calibrate()


if __name__ == "__main__":
    main()
