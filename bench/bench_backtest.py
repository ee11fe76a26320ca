"""Policy-episodes per second for the rule baselines: vectorised plans graded in one batch by
the replay grader vs a straightforward per-step loop through the environment, same run.

    python bench/bench_backtest.py [--episodes 500] [--days 42] [--history 120]

Two levels are timed: playing only (actions, rewards and the equity curve) and the full
``backtest`` (plus every metric and the 1,000-shuffle timing test per policy-episode).
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta

import numpy as np
import pandas as pd

from stocker_core.composition import register_all
from stocker_core.config import get_settings
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.grader import grade_batch
from stocker_core.env.policies import has_plan, make_policy, plan_for, policy_names, run_episode
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation.backtests import backtest

register_all()
SETTINGS = get_settings()  # the oracle reads its headlines with them
RULES = [n for n in policy_names() if has_plan(n)]  # hold, buy_and_hold, macd, zmr, forecast, oracle, ideal


def synthetic_episodes(count: int, days: int, history: int, seed: int = 0) -> list[Episode]:
    """Random-walk episodes with ``history`` bars before a ``days``-day window."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2010-01-01", periods=days + history)
    episodes = []
    for i in range(count):
        closes = 100 * np.exp(np.cumsum(rng.normal(0.0004, 0.02, days + history)))
        bars = pd.DataFrame(
            {
                "date": dates.astype("datetime64[ns]"),
                "open": closes,
                "high": closes,
                "low": closes,
                "close": closes,
                "adj_close": closes,
                "volume": 0.0,
            }
        )
        window = bars.iloc[history:].reset_index(drop=True)
        episodes.append(
            Episode(
                key=f"SYN{i}|2010-01-01",
                ticker=f"SYN{i}",
                window_start=window["date"].iloc[0].date(),
                window_end=window["date"].iloc[-1].date() + timedelta(days=1),
                bars=window,
                history=bars.iloc[:history].reset_index(drop=True),
                starting_cash=10_000.0,
            )
        )
    return episodes


def play_vectorised(episodes: list[Episode], params: RewardParams) -> float:
    """Plans of every rule, graded in one batch per episode; returns the summed final values."""
    total = 0.0
    for episode in episodes:
        plans = [plan_for(name, episode, params, SETTINGS) for name in RULES]
        graded = grade_batch(
            np.stack([p.sides for p in plans]),
            np.stack([p.quantities for p in plans]),
            episode.closes,
            params,
        )
        total += float(graded.values[:, -1].sum())
    return total


def play_per_step(episodes: list[Episode], params: RewardParams) -> float:
    """The reference loop: one environment per episode, every rule played step by step."""
    total = 0.0
    for episode in episodes:
        env = TradingEnv(episode, params)
        for name in RULES:
            total += run_episode(env, make_policy(name, env, settings=SETTINGS))["final_value"]
    return total


def timed(label: str, fn, count: int) -> float:
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    print(f"{label:<44} {seconds:8.2f} s  {count / seconds:10.0f} policy-episodes/s")
    return result, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--days", type=int, default=42)
    parser.add_argument("--history", type=int, default=120)
    args = parser.parse_args()
    episodes = synthetic_episodes(args.episodes, args.days, args.history)
    params = RewardParams(starting_cash=10_000.0)
    count = len(episodes) * len(RULES)
    names = ", ".join(RULES)
    print(f"{len(episodes)} episodes × {len(RULES)} rule baselines ({names}) = {count} policy-episodes")
    play_vectorised(episodes[:5], params)  # warm-up (imports, TA-Lib)
    play_per_step(episodes[:5], params)
    backtest(episodes[0], RULES, params, settings=SETTINGS)
    backtest(episodes[0], RULES, params, settings=SETTINGS, vectorised=False)
    fast, fast_s = timed("play, vectorised + replay grader", lambda: play_vectorised(episodes, params), count)
    slow, slow_s = timed("play, per-step environment loop", lambda: play_per_step(episodes, params), count)
    assert abs(fast - slow) < 1e-6 * count, "vectorised and per-step results differ"
    print(f"speed-up (play): {slow_s / fast_s:.1f}x; summed final values equal ({fast:,.2f})")
    sample = episodes[: max(1, len(episodes) // 5)]
    n = len(sample) * len(RULES)
    _, full_fast = timed(
        "backtest() incl. metrics, vectorised",
        lambda: [backtest(e, RULES, params, settings=SETTINGS) for e in sample],
        n,
    )
    _, full_slow = timed(
        "backtest() incl. metrics, per-step",
        lambda: [backtest(e, RULES, params, settings=SETTINGS, vectorised=False) for e in sample],
        n,
    )
    print(f"speed-up (full backtest on {len(sample)} episodes): {full_slow / full_fast:.1f}x")


if __name__ == "__main__":
    main()
