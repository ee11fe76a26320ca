"""Rule council votes/s: the per-day path (a DecisionContext per day, each analyst on it)
against the batched path (``council/rule_batch.py``: arrays once, slices per day), on the
seed fixture's AAPL (news, forums, macro, peers and a commodity) over one year, both in
this run; the votes are checked identical.

Run: python bench/bench_rule_batch.py [--start 2023-01-01 --end 2023-12-29]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from stocker_core.composition import register_all
from stocker_core.config import REFERENCE_TASKS_DIR
from stocker_core.context.decision import CouncilInputs
from stocker_core.council.analysts import RULE_ANALYSTS
from stocker_core.council.rule_batch import rule_votes
from stocker_core.market.files_source import FilesSource
from stocker_core.text.events import load_text_folder

FIXTURE = REFERENCE_TASKS_DIR


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser()
    parser.add_argument("--start", default="2023-01-01")
    parser.add_argument("--end", default="2023-12-29")
    args = parser.parse_args()
    source = FilesSource(FIXTURE)
    lo, hi = pd.Timestamp("2020-01-01").date(), pd.Timestamp("2025-01-01").date()
    closes = pd.concat([source.fetch(s, lo, hi).assign(symbol=s) for s in ("MSFT", "GOOGL", "GC=F")])
    inputs = CouncilInputs(
        "AAPL", source.fetch("AAPL", lo, hi), load_text_folder(FIXTURE), closes, ("MSFT", "GOOGL"), "GC=F"
    )
    days = inputs.trading_days(args.start, args.end)
    rule_votes(inputs, days[:5])  # warm-up: imports, the calendar, the VADER lexicon
    started = time.perf_counter()
    per_day = {(r, d): fn(inputs.context(d)) for d in days for r, fn in RULE_ANALYSTS.items()}
    slow = time.perf_counter() - started
    started = time.perf_counter()
    batch = rule_votes(inputs, days)
    fast = time.perf_counter() - started
    same = batch == per_day
    n = len(per_day)
    print(f"{len(days)} days x {len(RULE_ANALYSTS)} roles = {n} votes; identical: {same}")
    print(f"per-day path: {slow:.2f} s = {n / slow:.0f} votes/s")
    print(f"batched path: {fast:.2f} s = {n / fast:.0f} votes/s")
    print(f"ratio: {slow / fast:.1f}x")
    if not same:
        raise SystemExit("the batched votes differ from the per-day votes")


if __name__ == "__main__":
    main()
