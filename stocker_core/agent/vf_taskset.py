"""Stocker's trading decision as a verifiers (0.4.0, ``verifiers.v1``) taskset.

A task is one decision (an episode key and a day), as in TRL's ``StockerToolEnv``: the prompt
is its decision prompt (masked when ``Settings.llm_mask`` is on), the tools are the agent's
seven plus ``trade`` (``StockerToolset``, one MCP server per rollout), the rollout ends when the
decision is placed (or the model answers in text), and the reward is Stocker's for the decision
placed (``vf_episode.score_decision``: ``environment``, SPEC §1, by default; ``excess``,
SPEC §3). The tasks: the three reference tasks (offline, package data) at their
``decision_step``-th session, or the agent's rows of a chronological split (``split``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from stocker_core.agent.trl_dataset import SYSTEM_PROMPT
from stocker_core.agent.trl_env import REWARD_MODES
from stocker_core.agent.vf_toolset import StockerState, StockerToolset, StockerToolsetConfig

REFERENCE_TASKS: tuple[str, ...] = ("task_easy", "task_medium", "task_hard")

__all__ = [
    "REFERENCE_TASKS",
    "StockerData",
    "StockerTask",
    "StockerTaskConfig",
    "StockerTaskset",
    "StockerTasksetConfig",
]


class StockerData(vf.TaskData):
    """One decision: the episode and the day it is taken on."""

    episode_key: str
    day: str


class StockerTaskConfig(vf.TaskConfig):
    """How a rollout is scored and what its tools allow."""

    reward: str = "environment"
    """``environment`` (SPEC §1 step rewards) or ``excess`` (SPEC §3 training reward)."""
    horizon: int | None = None
    """Sessions the decision is scored over (default: the agent's, 5)."""
    tools: StockerToolsetConfig = StockerToolsetConfig()


class StockerTask(vf.Task[StockerData, StockerState, StockerTaskConfig]):
    """One decision with the agent's tools, scored by Stocker's reward."""

    @classmethod
    def toolsets(cls, config: StockerTaskConfig) -> list[vf.Toolset]:
        return [StockerToolset(config.tools)]

    @property
    def key(self) -> str:
        return f"{self.data.episode_key}@{self.data.day}"

    @vf.stop
    def placed(self, trace: vf.Trace) -> bool:
        """The decision is placed: nothing more to do."""
        return getattr(trace.state, "decision", None) is not None

    @vf.reward
    async def stocker_reward(self, trace: vf.Trace) -> float:
        """Stocker's reward for the decision the rollout placed (HOLD less the invalid-action
        penalty when it placed none)."""
        from stocker_core.agent.vf_episode import score_decision

        decision = getattr(trace.state, "decision", None)
        return await asyncio.to_thread(
            score_decision,
            self.data.episode_key,
            self.data.day,
            decision,
            reward=self.config.reward,  # type: ignore[arg-type]
            horizon=self.config.horizon,
        )

    @vf.metric
    async def tool_calls(self, trace: vf.Trace) -> float:
        """The tool calls the rollout made (``trade`` not counted)."""
        return float(getattr(trace.state, "tool_calls", 0))

    @vf.metric
    async def placed_decision(self, trace: vf.Trace) -> float:
        """1 when the rollout placed a decision with ``trade``."""
        return float(getattr(trace.state, "decision", None) is not None)


class StockerTasksetConfig(vf.TasksetConfig):
    """Which decisions the taskset holds."""

    episodes: list[str] = Field(default_factory=lambda: list(REFERENCE_TASKS))
    """Reference task ids (``task_easy``) or episode keys (``AAPL|2023-08-01``)."""
    decision_step: int = Field(10, ge=1)
    """The session of each episode the decision is taken at (0 is the first)."""
    split: str | None = None
    """Instead of ``episodes``: the agent's rows of this split (``train`` or ``valid``)."""
    tickers: list[str] = Field(default_factory=list)
    """The split's tickers (default: the settings' tickers)."""
    most: int = Field(8, ge=1)
    """The split's rows at most."""
    task: StockerTaskConfig = StockerTaskConfig()


class StockerTaskset(vf.Taskset[StockerTask, StockerTasksetConfig]):
    """The decisions of ``StockerTasksetConfig`` (see the module docstring)."""

    def load(self) -> Iterator[StockerTask]:
        from stocker_core.agent.vf_episode import decision_env

        config = self.config
        if config.task.reward not in REWARD_MODES:
            raise ValueError(f"unknown reward {config.task.reward!r}: use one of {', '.join(REWARD_MODES)}")
        for name, episode_key, day in self.decisions():
            _, prompt = decision_env(episode_key, day, reward=config.task.reward, horizon=config.task.horizon)
            yield StockerTask(
                StockerData(
                    id=f"{episode_key}@{day}",
                    name=name,
                    prompt=prompt,
                    system_prompt=SYSTEM_PROMPT,
                    episode_key=episode_key,
                    day=day,
                ),
                config.task,
            )

    def decisions(self) -> list[tuple[str, str, str]]:
        """(name, episode key, day) of each task."""
        config = self.config
        if config.split is not None:
            from stocker_core.agent.trl_dataset import trl_rows
            from stocker_core.market.source_builder import register_sources

            register_sources()
            rows = trl_rows(tickers=config.tickers or None, split=config.split, most=config.most)
            return [(f"{r['episode_key']}@{r['day']}", r["episode_key"], r["day"]) for r in rows]
        return [(name, *_reference_decision(name, config.decision_step)) for name in config.episodes]


def _reference_decision(name: str, step: int) -> tuple[str, str]:
    """(episode key, the day of its ``step``-th session) of a task id or an episode key."""
    from stocker_core.env.episode import load_episode
    from stocker_core.market.source_builder import register_sources

    register_sources()
    episode: Any = load_episode(name)
    if step >= len(episode.dates):
        raise ValueError(f"{name} has {len(episode.dates)} sessions: decision_step {step} is past its end")
    return episode.key, episode.dates[step].date().isoformat()
