"""Model policies in backtests: every episode in lockstep (``backtest_many``: step t of all
of them in one model call) against one episode at a time (the per-step reference loop),
both in this run, on one ticker's rolling windows over its valid split (not the test split:
a bench is no test look) of a home where the main job ran. The runs are checked identical.

Run: STOCKER_HOME=... python bench/bench_batched_backtests.py [--ticker GOOGL]
     [--policies moderator_base,moderator_sft,moderator_grpo,a2c,ppo]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from stocker_core.composition import register_all
from stocker_core.config import get_settings
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation.backtests import backtest_many
from stocker_core.evaluation.rolling import window_episodes
from stocker_core.evaluation.splits import load_splits
from stocker_core.market.bars import load_bars
from stocker_core.moderator import policy as moderator_policy
from stocker_core.warehouse.db import Warehouse

DEFAULT_POLICIES = "moderator_base,moderator_sft,moderator_grpo,a2c,ppo"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ticker", default="GOOGL")
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    args = parser.parse_args()
    settings = get_settings()
    register_all()
    warehouse = Warehouse(settings.warehouse_path)
    valid = load_splits(warehouse).range_of(args.ticker, "valid")
    bars, _ = load_bars(settings, args.ticker, None, valid.end + pd.Timedelta(days=1), warehouse)
    params = RewardParams.from_settings(settings)
    episodes = window_episodes(bars, valid, params.starting_cash)
    names = args.policies.split(",")
    seeds = list(range(len(episodes)))
    backtest_many(episodes[:1], names, params, seeds[:1], settings)  # warm-up: model loads, imports

    def timed(vectorised: bool) -> tuple[float, list]:
        moderator_policy._DECIDERS.clear()  # no answers remembered from the other path
        started = time.perf_counter()
        results = backtest_many(episodes, names, params, seeds, settings, vectorised=vectorised)
        return time.perf_counter() - started, results

    alone_s, alone = timed(False)
    batched_s, batched = timed(True)
    for a, b in zip(batched, alone, strict=True):
        assert not a.failures, a.failures
        for x, y in zip(a.runs, b.runs, strict=True):
            assert x.policy == y.policy and np.array_equal(x.traded, y.traded), x.policy
    steps = sum(len(e.dates) for e in episodes)
    print(f"{args.ticker}: {len(episodes)} valid-split windows, {steps} steps, policies {', '.join(names)}")
    print(f"one episode at a time: {alone_s:7.2f} s")
    print(f"all in lockstep:       {batched_s:7.2f} s   ({alone_s / batched_s:.1f}x, identical runs)")


if __name__ == "__main__":
    main()
