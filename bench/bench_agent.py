"""The tool-using agent on the sample data (GOOGL 2009–2018): training wall time on this
machine, then held-out result score, action mix and backtest metrics (with bootstrap CIs
over 42-day slices) for agent_scripted / agent_base / agent_rl next to buy-and-hold and the
rule council, and the θ sensitivity table.

    STOCKER_HOME=/tmp/agent_bench python bench/bench_agent.py [--split valid|test] [--skip-train]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import pandas as pd

AGENTS = ["agent_scripted", "agent_base", "agent_rl"]
OTHERS = ["buy_and_hold", "council"]


def _fmt_ci(ci: tuple) -> str:
    low, high = ci
    return "–" if low is None else f"[{low:.3f}, {high:.3f}]"


def other_policies(settings, split: str) -> pd.DataFrame:
    """buy_and_hold and the rule council played over the same split episode."""
    from stocker_core.agent.evaluation import split_episode, window_metrics
    from stocker_core.agent.pairs import agent_splits
    from stocker_core.agent.policy import agent_data
    from stocker_core.env.environment import TradingEnv
    from stocker_core.env.policies import make_policy
    from stocker_core.env.rewards import RewardParams
    from stocker_core.evaluation.backtests import play
    from stocker_core.evaluation.stats import bootstrap_ci

    rows = []
    for ticker in settings.default_tickers:
        data = agent_data(ticker, settings)
        episode = split_episode(
            data, agent_splits(None, {ticker: data}).splits, split, settings.starting_cash
        )
        for name in OTHERS:
            env = TradingEnv(episode, RewardParams.from_settings(settings))
            try:
                run = play(env, make_policy(name, env, settings=settings), name, 0, "per_step")
            except Exception as exc:  # another package mid-change must not sink the agent figures
                print(f"{name} skipped: {type(exc).__name__}: {exc}")
                continue
            slices = window_metrics(run, 42)
            row = {"policy": name, "ticker": ticker}
            for metric in ("arr", "sharpe", "mdd"):
                ci = bootstrap_ci(slices[metric].to_numpy(dtype=float))
                row[metric], row[f"{metric}_ci"] = run.metrics[metric], (ci.low, ci.high)
            row["trades"] = run.metrics["trades"]
            rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", default="valid", choices=["valid", "test"])
    parser.add_argument("--skip-train", action="store_true", help="evaluate the current trained agent")
    args = parser.parse_args()
    os.environ.setdefault("STOCKER_HOME", tempfile.mkdtemp(prefix="agent_bench_"))

    from stocker_core.agent.config import THETA_GRID, agent_config
    from stocker_core.agent.evaluation import evaluate_split
    from stocker_core.agent.training import train_agent
    from stocker_core.composition import register_all
    from stocker_core.config import get_settings

    settings = get_settings(fresh=True)
    register_all()
    config = agent_config()
    print(f"STOCKER_HOME={settings.home}  source={settings.source}  model={config.model}")
    if not args.skip_train:
        result = train_agent(config, settings, progress=print)
        print(
            f"\ntraining wall time: {result.wall_seconds:.1f}s (warm start {result.warm_start_seconds:.1f}s, "
            f"RL {config.rl_steps} steps {result.rl_seconds:.1f}s) on {os.cpu_count()} cores"
        )
        print(pd.DataFrame(result.curves).round(3).to_string(index=False))

    started = time.perf_counter()
    frame = evaluate_split(AGENTS, settings, config, args.split, THETA_GRID)
    print(f"\nevaluation of {len(frame)} (θ, policy) rows in {time.perf_counter() - started:.1f}s")
    main_rows = frame.loc[frame["theta"] == config.theta].copy()
    others = other_policies(settings, args.split)
    table = pd.concat([main_rows, others], ignore_index=True)
    for metric in ("arr", "sharpe", "mdd"):
        table[f"{metric}_ci"] = table[f"{metric}_ci"].map(_fmt_ci)
    columns = ["policy", "result", "format", "tool", "share_buy", "share_sell", "share_hold"]
    columns += ["arr", "arr_ci", "sharpe", "sharpe_ci", "mdd", "mdd_ci", "trades"]
    print(f"\n{args.split} split, θ = {config.theta} (Sharpe daily, not annualised; CIs over 42-day slices)")
    print(table[columns].round(3).to_string(index=False))
    theta = frame[
        ["theta", "policy", "result", "share_buy", "share_sell", "share_hold", "arr", "mdd", "trades"]
    ]
    print(f"\nθ sensitivity ({args.split} split)")
    print(theta.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
