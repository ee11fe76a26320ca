"""How the main job's cost grows with tickers and years, and what a rerun and one new session cost.

Usage: python bench/bench_scaling.py [--tickers 4,8,16,32] [--years 3] [--year-steps 3,6,12]
       [--year-tickers 4] [--groups market,env,text,council] [--workers 2]

For each size, on the synthetic source (seed 7) in a fresh home, ``stocker materialize``
three times in its own process, with ``STOCKER_CLOCK`` after the close of the data's
second-to-last session and then of its last:

- **first build**: everything (clock on the second-to-last session);
- **rerun**: the same command with nothing changed (everything should be skipped);
- **new session**: the clock one session later (only the months that read it rebuild).

It prints seconds and seconds per ticker-year for each, the ratio of each size's cost per
ticker-year to the smallest size's (1.0 everywhere is linear growth; a ratio that grows with
the size is super-linear), and the rerun and new-session costs as fractions of the first
build. The default groups are the per-ticker work (market, env, text, council); the
whole-history training and evaluation are a fixed budget per run (docs/results.md).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import pandas as pd

from stocker_core.composition import register_all

BIN = Path(sys.executable).parent
START = date(2010, 1, 1)


def sessions_near_end(tickers: int, years: float) -> tuple[date, date]:
    """The synthetic market's second-to-last and last sessions (its first ticker's last bars)."""
    from stocker_core.config import Settings
    from stocker_core.market.source_builder import get_source

    settings = Settings(
        source="synthetic", synth_tickers=str(tickers), synth_years=years, synth_start=START, clock=None
    )
    source = get_source(settings)
    last = source.symbol_info("SYN1").last_date
    bars = source.fetch("SYN1", last - timedelta(days=10), last + timedelta(days=1))
    days = sorted(pd.to_datetime(bars["date"]).dt.date)
    return days[-2], days[-1]


def run(env: dict[str, str], args: list[str]) -> float:
    began = time.perf_counter()
    done = subprocess.run([str(BIN / "stocker"), *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        tail = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        sys.exit(f"stocker {' '.join(args)} failed ({done.returncode}):\n{tail}")
    return seconds


def measure(tickers: int, years: float, groups: str, workers: int) -> dict[str, float]:
    """Seconds of the first build, the rerun and the new session at one size."""
    before, last = sessions_near_end(tickers, years)
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
        env.update(
            STOCKER_HOME=f"{tmp}/home",
            DAGSTER_HOME=f"{tmp}/dagster",
            STOCKER_SOURCE="synthetic",
            STOCKER_SYNTH_TICKERS=str(tickers),
            STOCKER_SYNTH_YEARS=str(years),
            STOCKER_SYNTH_START=START.isoformat(),
            STOCKER_MAIN_WORKERS=str(workers),
            STOCKER_CLOCK=f"{before.isoformat()}T22:00:00Z",
            NO_COLOR="1",
        )
        args = ["materialize", "--groups", groups]
        first = run(env, args)
        rerun = run(env, args)
        env["STOCKER_CLOCK"] = f"{last.isoformat()}T22:00:00Z"
        session = run(env, args)
    return {"first build": first, "rerun": rerun, "new session": session}


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickers", default="4,8,16,32")
    parser.add_argument("--years", type=float, default=3.0)
    parser.add_argument("--year-steps", default="3,6,12")
    parser.add_argument("--year-tickers", type=int, default=4)
    parser.add_argument("--groups", default="market,env,text,council")
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    sizes = [(int(t), options.years) for t in options.tickers.split(",")]
    sizes += [(options.year_tickers, float(y)) for y in options.year_steps.split(",")]
    sizes = list(dict.fromkeys(sizes))
    print(f"groups {options.groups}; {options.workers} lane(s); synthetic source, seed 7, from {START}")
    header = f"{'tickers':>7} {'years':>5} {'ticker-yrs':>10} | " + " | ".join(
        f"{name:>11} s  s/t-y  ratio" for name in ("first build", "rerun", "new session")
    )
    print(header)
    reference: dict[str, float] = {}
    for tickers, years in sizes:
        seconds = measure(tickers, years, options.groups, options.workers)
        units = tickers * years
        cells = []
        for name, value in seconds.items():
            per = value / units
            reference.setdefault(name, per)
            cells.append(f"{value:13.1f} {per:6.2f} {per / reference[name]:6.2f}")
        print(f"{tickers:7d} {years:5.1f} {units:10.1f} | " + " | ".join(cells), flush=True)
        share = seconds["rerun"] / seconds["first build"], seconds["new session"] / seconds["first build"]
        print(
            f"{'':26}   rerun = {share[0]:.1%} of the first build, new session = {share[1]:.1%}", flush=True
        )


if __name__ == "__main__":
    main()
