"""Environment vs replay-grader throughput, a 180-combination sweep, and 4,000 ideal paths.

Run: ``python bench/bench_env.py`` (uses the seed fixture's task_easy when it is
found, otherwise a synthetic 43-day episode).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np

from stocker_core.composition import register_all
from stocker_core.config import REFERENCE_TASKS_DIR
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import Episode, episode_from_closes, load_episode
from stocker_core.env.grader import grade_batch, grade_trajectory, sweep
from stocker_core.env.ideal import ideal_totals, ideal_trajectory
from stocker_core.env.policies import make_policy, run_episode
from stocker_core.env.rewards import RewardParams

SEED_DIR = REFERENCE_TASKS_DIR
GRID = {
    "transaction_cost": [0.0, 0.001, 0.002],
    "w_perf": [0.5, 0.7, 0.9],
    "w_infl": [0.1, 0.2, 0.3, 0.4],
    "annual_inflation": [0.0, 0.02, 0.05, 0.08, 0.1],
}


def bench_episode() -> Episode:
    """task_easy from the seed fixture, or a synthetic 43-step episode."""
    if SEED_DIR.is_dir():
        from stocker_core.config import Settings

        settings = Settings(source="files", files_dir=SEED_DIR, home=Path(os.getcwd()) / "data")
        return load_episode("task_easy", settings)
    rng = np.random.default_rng(0)
    return episode_from_closes(180 * np.exp(np.cumsum(rng.normal(0, 0.015, 43))))


def timed(fn, repeat: int) -> float:
    """Median seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    episode = bench_episode()
    n = episode.trading_days
    print(f"episode {episode.key} ({episode.source}): {n} steps")

    env = TradingEnv(episode, RewardParams())
    trajectories = []
    start = time.perf_counter()
    seed = 0
    while time.perf_counter() - start < 2.0:
        trajectories.append(run_episode(env, make_policy("random", env, seed)))
        seed += 1
    env_s = time.perf_counter() - start
    env_rate = len(trajectories) * n / env_s
    print(f"environment: {len(trajectories)} episodes, {env_rate:,.0f} steps/s (random policy)")

    codes = {"hold": 0, "buy": 1, "sell": 2}
    sides = np.array([[codes[a["side"]] for a in t["actions"]] for t in trajectories])
    qty = np.array([[a["quantity"] for a in t["actions"]] for t in trajectories])
    batch_s = timed(lambda: grade_batch(sides, qty, episode.closes, RewardParams()), 5)
    batch_rate = sides.size / batch_s
    result = grade_batch(sides, qty, episode.closes, RewardParams())
    diff = np.abs(result.rewards - np.array([t["rewards"] for t in trajectories])).max()
    print(
        f"grader (batch of {len(trajectories)}): {batch_rate:,.0f} steps/s, "
        f"{batch_rate / env_rate:,.0f}x the environment; max |diff| {diff:.1e}"
    )
    subset = trajectories[:200]
    one_s = timed(lambda: [grade_trajectory(t) for t in subset], 3)
    one_rate = len(subset) * n / one_s
    print(f"grader (one trajectory per call): {one_rate:,.0f} steps/s, {one_rate / env_rate:.1f}x")

    sweep_s = timed(lambda: sweep(trajectories[0], GRID), 50)
    combos = sweep(trajectories[0], GRID).rewards.shape[0]
    print(f"sweep: {combos} combinations x {n} steps in {sweep_s * 1e3:.2f} ms (median of 50)")

    rng = np.random.default_rng(1)
    closes = 100 * np.exp(np.cumsum(rng.normal(0.0003, 0.02, size=(4000, 43)), axis=1))
    batch_ideal = timed(lambda: ideal_totals(closes, 0.001), 3)
    loop_ideal = timed(lambda: [ideal_trajectory(row, 0.001) for row in closes], 1)
    print(
        f"ideal trajectories, 4,000 synthetic 43-step episodes: {batch_ideal * 1e3:.1f} ms "
        f"vectorized, {loop_ideal * 1e3:.0f} ms one by one"
    )


if __name__ == "__main__":
    main()
