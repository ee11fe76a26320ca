"""Backfill throughput: prices + indicators for a synthetic `files` corpus (20 tickers × 24 months).

Prints partitions per second for
  * the default setup: one Dagster run per ticker × month partition (in-process, the
    cheapest form of it; `dagster asset materialize` per partition costs ~11 s more), timed
    on a sample of partitions;
  * our single-run backfill: one run per ticker over its contiguous month range
    (what `stocker materialize` does), timed on the whole corpus;
and the ratio. Run: python bench/bench_backfill.py [--tickers 20 --months 24 --sample 12]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from stocker_core.composition import register_all


def make_corpus(folder: Path, tickers: int, months: int, seed: int = 0) -> list[str]:
    """Random-walk OHLCV on NYSE sessions, one CSV per ticker, plus a year of lookback."""
    from stocker_core.market.calendar import sessions

    rng = np.random.default_rng(seed)
    days = sessions(date(2021, 1, 1), (pd.Timestamp("2022-01-01") + pd.DateOffset(months=months)).date())
    names = [f"SYN{i:02d}" for i in range(tickers)]
    for name in names:
        close = 50 * np.exp(np.cumsum(rng.normal(0, 0.02, len(days))))
        spread = np.abs(rng.normal(0, 0.01, len(days))) * close
        opens = close * (1 + rng.normal(0, 0.005, len(days)))
        pd.DataFrame(
            {
                "date": days,
                "open": opens,
                "high": np.maximum(opens, close) + spread,
                "low": np.minimum(opens, close) - spread,
                "close": close,
                "volume": rng.integers(1e5, 1e7, len(days)),
            }
        ).to_csv(folder / f"{name}.csv", index=False)
    return names


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickers", type=int, default=20)
    parser.add_argument("--months", type=int, default=24)
    parser.add_argument("--sample", type=int, default=12, help="partitions timed one run each")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="stocker-bench-"))
    (root / "bars").mkdir()
    os.environ.update(
        {
            "STOCKER_HOME": str(root / "home"),
            "STOCKER_SOURCE": "files",
            "STOCKER_FILES_DIR": str(root / "bars"),
            "DAGSTER_HOME": str(root / "dagster"),
        }
    )
    (root / "dagster").mkdir()
    names = make_corpus(root / "bars", args.tickers, args.months)

    import dagster as dg

    from stocker_assets.definitions.build import build_definitions
    from stocker_assets.definitions.market.assets import indicators, prices
    from stocker_assets.definitions.market.checks import indicators_are_sane, prices_are_valid
    from stocker_assets.definitions.resources import StockerResource
    from stocker_assets.engine.instance import ensure_dagster_home, register_tickers
    from stocker_assets.engine.runner import run_box
    from stocker_core.config import get_settings

    ensure_dagster_home(get_settings(fresh=True))  # our dagster.yaml: telemetry off

    months = [(pd.Timestamp("2022-01-01") + pd.DateOffset(months=i)).date() for i in range(args.months)]
    resources = {"stocker": StockerResource()}
    assets, checks = [prices, indicators], [prices_are_valid, indicators_are_sane]
    with dg.DagsterInstance.get() as instance:
        register_tickers(instance, names)
        logs = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
        sample = [(names[i % len(names)], months[i % len(months)]) for i in range(args.sample)]
        t0 = time.perf_counter()
        for ticker, month in sample:
            result = dg.materialize(
                [*assets, *checks],
                instance=instance,
                resources=resources,
                partition_key=f"{ticker}|{month.isoformat()}",
                run_config=logs,
            )
            assert result.success
        per_partition = len(sample) / (time.perf_counter() - t0)

        t0 = time.perf_counter()
        defs = build_definitions(resources)  # the named jobs that run_box runs (checks come along)
        for ticker in names:
            outcome = run_box(instance, defs, (ticker,), months, assets)
            assert outcome.success, ticker
        total = len(names) * len(months)
        single_run = total / (time.perf_counter() - t0)

    print(f"corpus: {len(names)} tickers × {len(months)} months = {total} partitions (files source)")
    print(f"default (one run per partition, {len(sample)} timed): {per_partition:8.2f} partitions/s")
    print(f"single-run backfill (one run per ticker):        {single_run:8.2f} partitions/s")
    print(f"ratio single-run / default: {single_run / per_partition:.1f}x")
    print(
        f"full corpus the default way would take ~{total / per_partition:.0f} s vs {total / single_run:.0f} s"
    )


if __name__ == "__main__":
    main()
