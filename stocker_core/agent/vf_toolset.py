"""The agent's tools and ``trade`` as a verifiers tool server (``vf.Toolset``, MCP).

One server per rollout (``StockerTask.toolsets``): ``setup_task`` puts a ``StockerToolEnv``
at the task's episode and day, and each tool is that environment's (the agent's seven
point-in-time tools, same names, arguments and docstrings, answers as JSON seen through the
mask, at most ``AgentConfig.max_tool_calls`` calls; ``trade(decision)`` once). What the
rollout did lands in the rollout's ``StockerState`` (the decision, the calls), which the task's
reward reads. Tools are advertised bare (``get_news``, not ``stocker_toolset_get_news``), as the
agent's catalog names them. verifiers runs this module as ``python -m`` in the rollout's runtime.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import verifiers.v1 as vf

from stocker_core.agent.tool_catalog import TOOL_NAMES
from stocker_core.agent.tools import AgentTools

__all__ = ["StockerState", "StockerToolset", "StockerToolsetConfig"]


class StockerState(vf.State):
    """What one rollout did: the decision it placed and its tool calls."""

    decision: str | None = None
    tool_calls: int = 0
    invalid_tool_calls: int = 0


class StockerToolsetConfig(vf.ToolsetConfig):
    """The tool server's knobs (the data comes from ``STOCKER_*`` as everywhere)."""

    max_tool_calls: int | None = None
    """The tool-call cap (default: the agent's)."""


class StockerToolset(vf.Toolset[StockerToolsetConfig, StockerState]):
    """The agent's tools plus ``trade`` on one decision (see the module docstring)."""

    TOOL_PREFIX = None

    def __init__(self, config: StockerToolsetConfig) -> None:
        super().__init__(config)
        self.env: Any = None

    async def setup_task(self, task: Any) -> None:
        """Put the episode at the task's day (``task`` is its ``StockerData``)."""
        from stocker_core.agent.vf_episode import decision_env

        self.env, _ = decision_env(task.episode_key, task.day, max_tool_calls=self.config.max_tool_calls)

    @vf.tool
    def trade(self, decision: str) -> str:
        """Place the decision at the decision day's close; call it once, after the tools you need.

        Args:
            decision: BUY (invest the whole portfolio), SELL (sell the whole position) or HOLD (keep it).
        """
        if self.env is None:
            return json.dumps({"error": "no episode: the task was not set up"})
        answer = self.env.trade(decision)
        self._sync()
        return answer

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self.env is None:
            return json.dumps({"error": "no episode: the task was not set up"})
        answer = getattr(self.env, name)(**arguments)
        self._sync()
        return answer

    def _sync(self) -> None:
        state = self.state
        state.decision = self.env.decision
        state.tool_calls = self.env.tool_calls
        state.invalid_tool_calls = self.env.invalid_tool_calls


def _agent_tool(name: str) -> Any:
    """A tool method that runs the agent's tool ``name`` (its signature and docstring)."""
    source = getattr(AgentTools, name)

    @functools.wraps(source)
    def tool(self: StockerToolset, **arguments: Any) -> str:
        return self._call(name, arguments)

    tool.__annotations__ = {**source.__annotations__, "return": "str"}
    return vf.tool(tool)


for _tool_name in TOOL_NAMES:
    setattr(StockerToolset, _tool_name, _agent_tool(_tool_name))


if __name__ == "__main__":
    StockerToolset.run()
