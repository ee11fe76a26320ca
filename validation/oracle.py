"""The oracle of openenv.yaml (``validation.capabilities.oracle``, form ``script``): play one
episode's exact hindsight-optimal trajectory against a running ``stocker serve`` and print what
it scored, as JSON.

    python validation/oracle.py --url http://127.0.0.1:8000 --task task_easy

The ideal long/flat path is computed here from the same episode the server serves (same
``STOCKER_*`` settings: run it where the server runs, e.g. inside the image), then played
through the server's HTTP routes one whole-share trade at a time, as ``IdealPolicy`` plays it in
process. Under the default reward weights it scores 0.64-0.75 a step on the reference tasks: the
trajectory maximises the episode's final value, not the per-step clip bound 1.0.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from stocker_core.composition import register_all
from stocker_core.config import Settings, get_settings
from stocker_core.env.client import StockerEnvClient
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import load_episode
from stocker_core.env.policies import long_flat_action


def play_ideal(client: StockerEnvClient, task: str, settings: Settings) -> dict[str, Any]:
    """Reset ``client`` to ``task`` and play the ideal trajectory to the end; the rewards served."""
    env = TradingEnv(load_episode(task, settings), settings)
    long, cost = env.ideal.long, env.params.transaction_cost
    started = client.reset(episode=task) if "|" in task else client.reset(task_id=task)
    observation = started.observation
    rewards: list[float] = []
    done = False
    while not done:
        action = long_flat_action(bool(long[observation.step]), observation, cost)  # type: ignore[arg-type]
        result = client.step(action)
        observation, done = result.observation, result.done
        rewards.append(float(result.reward))
    return {
        "task": task,
        "steps": len(rewards),
        "rewards": rewards,
        "mean_reward": sum(rewards) / len(rewards),
        "total_reward": sum(rewards),
        "final_value": observation.portfolio_value,
        "ideal_total": env.ideal_total,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the server's base URL")
    parser.add_argument("--task", default="task_easy", help="a task id or an episode key TICKER|YYYY-MM-01")
    args = parser.parse_args(argv)
    register_all()
    with StockerEnvClient(args.url) as client:
        print(json.dumps(play_ideal(client, args.task, get_settings())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
