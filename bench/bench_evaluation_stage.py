"""The evaluation stage's two parts, before and after keeping the agents' decisions on disk,
both in this run, on the valid split (not the test split: a bench is no test look) of a home
where the main job ran.

Like the main job, two stages play the same days in different processes: first the rolling
windows of every ticker in one batch (as ``rolling_evaluation``), then each ticker's
partition-like episodes (42 days stepped by 21, as ``backtests``). Each stage starts with
nothing in memory (the in-process traces and agent data cleared, as in a fresh lane).
Before: each stage decides every (ticker, day) itself and the timing test draws its shuffles
for every run. After: the second stage reads the first stage's decisions from the store and
the shuffles are drawn once per (seed, length). The runs are checked identical.

Run: STOCKER_HOME=... python bench/bench_evaluation_stage.py [--tickers GOOGL,JPM]
     [--policies agent_scripted,agent_base,agent_rl,buy_and_hold,random]
"""

from __future__ import annotations

import argparse
import shutil
import time
import uuid
from collections.abc import Callable

import numpy as np
import pandas as pd

from stocker_core.agent import decision_store
from stocker_core.agent import policy as agent_policy
from stocker_core.composition import register_all
from stocker_core.config import get_settings
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation import stats
from stocker_core.evaluation.backtests import Backtest, backtest_many
from stocker_core.evaluation.rolling import slice_episode, split_bounds, window_episodes
from stocker_core.evaluation.splits import load_splits
from stocker_core.market.bars import load_bars
from stocker_core.warehouse.db import Warehouse

DEFAULT_POLICIES = "agent_scripted,agent_base,agent_rl,buy_and_hold,random"
EPISODE_DAYS, EPISODE_STEP = 42, 21


def _fresh_process() -> None:
    """What a new lane starts without: decided traces and loaded agent data."""
    agent_policy._TRACES.clear()
    agent_policy._cached_data.cache_clear()


_uncached_shuffles = stats.shuffle_orders.__wrapped__
"""The timing test's shuffles drawn for every run, as before they were kept per (seed, length)."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickers", default="GOOGL,JPM")
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    args = parser.parse_args()
    settings = get_settings()
    register_all()
    warehouse = Warehouse(settings.warehouse_path)
    splits = load_splits(warehouse)
    params = RewardParams.from_settings(settings)
    names = args.policies.split(",")
    windows, partitions = [], {}
    for ticker in args.tickers.split(","):
        valid = splits.range_of(ticker, "valid")
        bars, _ = load_bars(settings, ticker, None, valid.end + pd.Timedelta(days=1), warehouse)
        windows += window_episodes(bars, valid, params.starting_cash)
        lo, hi = split_bounds(bars, valid)
        partitions[ticker] = [
            slice_episode(bars, s, s + EPISODE_DAYS, ticker, f"{ticker}|valid@{s - lo}", params.starting_cash)
            for s in range(lo, hi - EPISODE_DAYS + 1, EPISODE_STEP)
        ]

    def stage_pair(keep: bool) -> tuple[float, float, list[Backtest]]:
        original_stores = agent_policy._decision_stores
        original_orders = stats.shuffle_orders
        if not keep:
            agent_policy._decision_stores = lambda *a, **k: {}  # type: ignore[assignment]
            stats.shuffle_orders = _uncached_shuffles  # type: ignore[assignment]
        try:
            _fresh_process()
            rolling_s, rolled = _timed(lambda: backtest_many(windows, names, params, 0, settings))
            _fresh_process()
            played: list[Backtest] = []
            partition_s, _ = _timed(
                lambda: [
                    played.extend(backtest_many(e, names, params, 0, settings)) for e in partitions.values()
                ]
            )
            return rolling_s, partition_s, rolled + played
        finally:
            agent_policy._decision_stores = original_stores  # type: ignore[assignment]
            stats.shuffle_orders = original_orders  # type: ignore[assignment]

    folder = ("cache", f"bench-agent-decisions-{uuid.uuid4().hex[:8]}")  # the home's store untouched
    decision_store.STORE_FOLDER = folder
    try:
        backtest_many(windows[:1], names, params, 0, settings)  # warm-up: imports, model loads
        shutil.rmtree(settings.home.joinpath(*folder), ignore_errors=True)  # both start empty
        before = stage_pair(keep=False)
        stats.shuffle_orders.cache_clear()
        after = stage_pair(keep=True)
    finally:
        shutil.rmtree(settings.home.joinpath(*folder), ignore_errors=True)
    for a, b in zip(before[2], after[2], strict=True):
        assert not a.failures and not b.failures, (a.failures, b.failures)
        for x, y in zip(a.runs, b.runs, strict=True):
            assert x.row() == y.row() and np.array_equal(x.traded, y.traded), (x.episode_key, x.policy)
    steps = sum(len(e.dates) for e in windows) + sum(len(e.dates) for p in partitions.values() for e in p)
    count = sum(len(p) for p in partitions.values())
    print(f"{args.tickers}: valid split, {len(windows)} rolling windows + {count} partition-like episodes, ")
    print(f"  {steps} steps, policies {', '.join(names)}")
    for label, b, a in (
        ("rolling windows:   ", before[0], after[0]),
        ("partition episodes:", before[1], after[1]),
    ):
        print(f"{label} before {b:7.2f} s   after {a:7.2f} s   ({b / a:.2f}x)")
    total_before, total_after = before[0] + before[1], after[0] + after[1]
    print(
        f"both stages:         before {total_before:7.2f} s   after {total_after:7.2f} s   "
        f"({total_before / total_after:.2f}x, identical runs)"
    )


def _timed(work: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    out = work()
    return time.perf_counter() - started, out


if __name__ == "__main__":
    main()
