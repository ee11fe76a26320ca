"""The agent as environment policies: ``agent_scripted``, ``agent_base``, ``agent_rl``.

A daily decision maps to the environment: BUY → all in (the most whole shares the cash
buys), SELL → flat (sell the whole position), HOLD (or no answer) → keep. Decisions
depend only on (ticker, day), so a policy decides every day of the episode at once, in
one batched loop, when it is built.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from stocker_core.agent.config import AgentConfig, agent_config
from stocker_core.agent.data import AgentData, load_agent_data
from stocker_core.agent.errors import AgentError, AgentNotTrainedError
from stocker_core.agent.loop import TurnWriter, run_decisions
from stocker_core.agent.scripted import ScriptedWriter
from stocker_core.agent.tools import AgentTools
from stocker_core.agent.trace import Trace
from stocker_core.config import Settings, get_settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.policies import register_policy
from stocker_core.env.portfolio import max_affordable

AGENT_POLICIES = ("agent_scripted", "agent_base", "agent_rl")


def decision_action(decision: str, observation: Observation, cost: float) -> Action:
    """BUY → buy every affordable whole share, SELL → sell the position, else hold."""
    if decision == "BUY":
        qty = max_affordable(observation.cash, observation.close, cost)
        return Action.buy(qty) if qty > 0 else Action.hold()
    if decision == "SELL" and observation.position > 0:
        return Action.sell(observation.position)
    return Action.hold()


@lru_cache(maxsize=4)
def _loaded_model(kind: str, run_dir: str, threads: int) -> Any:
    import torch

    from stocker_core.training.models import load_base, load_with_adapter
    from stocker_core.training.runtime import quiet_libraries

    quiet_libraries()
    torch.set_num_threads(threads)
    base = Path(run_dir) / "base"
    return load_base(base) if kind == "base" else load_with_adapter(base, Path(run_dir) / "adapter")


def load_agent_model(kind: str, settings: Settings, config: AgentConfig) -> Any:
    """The current trained agent's warm-started base (``base``) or base + RL adapter (``rl``).

    Without a trained agent, ``base`` of a pretrained model (``config.model`` not tiny) is
    that model untrained; otherwise AgentNotTrainedError says to materialize agent_policy."""
    from stocker_core.agent.store import current_run

    try:
        manifest = current_run(settings.home)
    except AgentNotTrainedError:
        if kind == "base" and config.model != "tiny":
            from stocker_core.agent.model import create_agent_base

            return create_agent_base(config)
        raise
    return _loaded_model(kind, manifest["run_dir"], config.threads)


def agent_writer(name: str, settings: Settings, config: AgentConfig) -> TurnWriter:
    """The turn writer behind policy ``name``."""
    from stocker_core.agent.model import ModelWriter

    if name == "agent_scripted":
        return ScriptedWriter(config)
    if name == "agent_base":
        return ModelWriter(load_agent_model("base", settings, config), config)
    if name == "agent_rl":
        return ModelWriter(load_agent_model("rl", settings, config), config)
    raise AgentError(f"unknown agent policy {name!r}: use one of {', '.join(AGENT_POLICIES)}")


@lru_cache(maxsize=8)
def _cached_data(ticker: str, settings_json: str) -> AgentData:
    return load_agent_data(ticker, Settings.model_validate_json(settings_json))


def agent_data(ticker: str, settings: Settings) -> AgentData:
    """AgentData of ``ticker`` under ``settings``, reused across episodes of one run."""
    return _cached_data(ticker, settings.model_dump_json())


_TRACES: dict[tuple[str, int, int, str, bool, pd.Timestamp], Trace] = {}
"""Decided days per (policy, writer's model, data, config, masked prompts, day): a decision depends only on
(ticker, day), so overlapping episodes and rolling windows of one process reuse it."""


_PINNED: dict[int, object] = {}
"""Objects whose ids key ``_TRACES``, kept alive so an id is never reused by another object."""


def _identity(obj: object) -> int:
    if obj is None:
        return 0
    _PINNED[id(obj)] = obj
    return id(obj)


class AgentPolicy:
    """Plays the agent's daily decisions in the environment (see the module docstring)."""

    def __init__(self, env: TradingEnv, writer: TurnWriter, data: AgentData, config: AgentConfig, name: str):
        self.cost = env.params.transaction_cost
        days = [pd.Timestamp(d) for d in env.episode.dates]
        model = getattr(writer, "loaded", None)  # the cached model behind a ModelWriter
        masked = getattr(writer, "mask_for", None) is not None
        keys = [(name, _identity(model), _identity(data), config.model_dump_json(), masked, d) for d in days]
        missing = [i for i, key in enumerate(keys) if key not in _TRACES]
        if missing:
            tools = [AgentTools(data, days[i]) for i in missing]
            for i, trace in zip(missing, run_decisions(writer, tools, config, name), strict=True):
                _TRACES[keys[i]] = trace
        self.traces: list[Trace] = [_TRACES[key] for key in keys]
        self.decisions = [t.action for t in self.traces]

    def act(self, observation: Observation) -> Action:
        return decision_action(self.decisions[observation.step], observation, self.cost)


def make_agent_policy(
    name: str, env: TradingEnv, settings: Settings | None = None, config: AgentConfig | None = None
) -> AgentPolicy:
    """Policy ``name`` for ``env`` (settings and config default to the environment's)."""
    settings = settings or get_settings()
    config = config or agent_config()
    writer = agent_writer(name, settings, config)
    data = agent_data(env.episode.ticker, settings)
    if settings.llm_mask and hasattr(writer, "mask_for"):  # chat models read masked prompts
        from stocker_core.agent.masking import agent_mask

        writer.mask_for = lambda trace: agent_mask(data, trace.date)
    return AgentPolicy(env, writer, data, config, name)


for _name in AGENT_POLICIES:
    register_policy(_name, lambda env, seed, _name=_name: make_agent_policy(_name, env))
