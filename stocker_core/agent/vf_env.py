"""``load_environment``: Stocker's decision taskset as a verifiers ``Env``, and
``run_rollouts``: one rollout of each task against an OpenAI-compatible endpoint.

The env is verifiers' own ``SingleAgentEnv`` over ``StockerTaskset`` (the package id
``stocker-verifiers``, the top-level ``stocker_verifiers`` module), played by
``StockerChatHarness`` on the ``subprocess`` runtime (the host, where the data is). Each
episode's trace carries the reward (``trace.rewards["stocker_reward"]``), the metrics and the
conversation.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarnessConfig

from stocker_core.agent.vf_taskset import StockerTaskConfig, StockerTasksetConfig

TASKSET_ID = "stocker-verifiers"

__all__ = ["TASKSET_ID", "load_environment", "run_rollouts"]


def load_environment(
    episodes: list[str] | None = None,
    *,
    decision_step: int = 10,
    split: str | None = None,
    tickers: list[str] | None = None,
    most: int = 8,
    reward: str = "environment",
    horizon: int | None = None,
    max_tool_calls: int | None = None,
    max_turns: int | None = 8,
) -> vf.Env:
    """The environment (the Environments Hub entry point): the reference tasks by default,
    ``episodes`` (task ids or episode keys) at ``decision_step``, or ``split``'s rows."""
    task = StockerTaskConfig(reward=reward, horizon=horizon, tools={"max_tool_calls": max_tool_calls})
    options: dict[str, Any] = {"decision_step": decision_step, "split": split, "most": most, "task": task}
    if episodes is not None:
        options["episodes"] = list(episodes)
    if tickers:
        options["tickers"] = list(tickers)
    config = vf.SingleAgentEnvConfig(
        taskset=StockerTasksetConfig(id=TASKSET_ID, **options),
        agent=vf.AgentConfig(
            harness=NullHarnessConfig(id=TASKSET_ID),
            runtime=vf.SubprocessConfig(),
            max_turns=max_turns,
        ),
    )
    return vf.load_environment(config)


async def run_rollouts(
    env: vf.Env,
    base_url: str,
    model: str = "local",
    *,
    max_tokens: int = 64,
    temperature: float = 0.0,
    limit: int | None = None,
    api_key_var: str = "STOCKER_LM_API_KEY",
) -> list[vf.Episode]:
    """One episode of each task (the first ``limit``), one at a time, the model at ``base_url``
    (OpenAI-compatible, e.g. ``ChatServer``; its key in ``$api_key_var``, if it needs one)."""
    ctx = vf.ModelContext(
        model=model,
        client=vf.EvalClientConfig(base_url=base_url, api_key_var=api_key_var),
        sampling=vf.SamplingConfig(max_tokens=max_tokens, temperature=temperature),
    )
    tasks = list(env.taskset if limit is None else env.taskset.take(limit))
    episodes = []
    async with env.serving():
        for task in tasks:
            for slot in env.slots(task):
                episodes.append(await env.run_slot(slot, ctx))
    return episodes
