"""One decision of the verifiers environment: ``StockerToolEnv`` at an episode's day, and its
score — the same environment and reward as TRL's (``stocker_core.agent.trl_env``).

``decision_env`` is what the tool server plays the rollout's tools on; ``score_decision``
replays the decision the rollout placed (HOLD less the invalid-action penalty when it placed
none) and returns Stocker's reward for it: ``environment`` (SPEC §1, the environment's step
rewards over the decision's close and the ``horizon − 1`` sessions after) or ``excess``
(SPEC §3's training reward).
"""

from __future__ import annotations

from typing import Any

from stocker_core.agent.config import agent_config
from stocker_core.agent.trl_env import RewardMode, StockerToolEnv
from stocker_core.config import Settings

__all__ = ["decision_env", "score_decision"]


def decision_env(
    episode_key: str,
    day: str,
    *,
    settings: Settings | None = None,
    reward: RewardMode = "environment",
    horizon: int | None = None,
    max_tool_calls: int | None = None,
) -> tuple[StockerToolEnv, str]:
    """A ``StockerToolEnv`` reset to ``day`` of ``episode_key``, and its decision prompt
    (TrlEnvError when the episode or day cannot be played)."""
    from stocker_core.market.source_builder import register_sources

    register_sources()  # the data sources, as the composition root registers them (idempotent)
    options: dict[str, Any] = {} if max_tool_calls is None else {"max_tool_calls": max_tool_calls}
    env = StockerToolEnv(settings, reward=reward, horizon=horizon, config=agent_config(**options))
    return env, env.reset(episode_key=episode_key, day=day)


def score_decision(
    episode_key: str,
    day: str,
    decision: str | None,
    *,
    settings: Settings | None = None,
    reward: RewardMode = "environment",
    horizon: int | None = None,
) -> float:
    """Stocker's reward for placing ``decision`` (None: none placed) on ``day`` of ``episode_key``."""
    env, _ = decision_env(episode_key, day, settings=settings, reward=reward, horizon=horizon)
    try:
        if decision is not None:
            env.trade(decision)
        return env.get_reward()
    finally:
        env.__exit__(None, None, None)
