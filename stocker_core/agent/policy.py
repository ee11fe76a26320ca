"""The agent as environment policies: ``agent_scripted``, ``agent_base``, ``agent_rl``.

A daily decision maps to the environment: BUY → all in (the most whole shares the cash
buys), SELL → flat (sell the whole position), HOLD (or no answer) → keep. Decisions
depend only on (ticker, day), so a policy decides every day of its episodes at once, in
one batched loop, when it is built (``AgentBatch``: the registry's batch decider, every
episode of a backtest together; ``AgentPolicy``: one episode).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from stocker_core.agent.config import AgentConfig, agent_config
from stocker_core.agent.data import AgentData, load_agent_data
from stocker_core.agent.decision_store import DecisionStore, store_key
from stocker_core.agent.errors import AgentError, AgentNotTrainedError
from stocker_core.agent.loop import TurnWriter, run_decisions
from stocker_core.agent.scripted import ScriptedWriter
from stocker_core.agent.tools import AgentTools
from stocker_core.agent.trace import Trace
from stocker_core.config import Settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.policies import register_policy, require_settings
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

    from stocker_core.language_model.factory import load_base, load_with_adapter
    from stocker_core.language_model.runtime import quiet_libraries

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


@lru_cache(maxsize=64)  # every ticker of a main job: the traces its days key stay reusable
def _cached_data(ticker: str, settings_json: str) -> AgentData:
    return load_agent_data(ticker, Settings.model_validate_json(settings_json))


def agent_data(ticker: str, settings: Settings) -> AgentData:
    """AgentData of ``ticker`` under ``settings``, reused across episodes of one run."""
    return _cached_data(ticker, settings.model_dump_json())


_TRACES: dict[tuple[str, int, str, bool, int, pd.Timestamp], Trace] = {}
"""Decided days per (policy, writer's model, config, masked prompts, data, day): a decision depends only on
(ticker, day), so overlapping episodes and rolling windows of one process reuse it."""


_PINNED: dict[int, object] = {}
"""Objects whose ids key ``_TRACES``, kept alive so an id is never reused by another object."""


def _identity(obj: object) -> int:
    if obj is None:
        return 0
    _PINNED[id(obj)] = obj
    return id(obj)


class AgentBatch:
    """The agent's daily decisions for many environments (see the module docstring): every
    (ticker, day) not decided yet in this process, nor in ``stores`` (decisions kept on disk
    by earlier evaluation stages, per ticker), is decided in one batched loop when built, and
    the new decisions are added to the stores. A decision read from a store is a trace that
    holds only its decision."""

    def __init__(
        self,
        envs: Sequence[TradingEnv],
        writer: TurnWriter,
        data: Mapping[str, AgentData],
        config: AgentConfig,
        name: str,
        stores: Mapping[str, DecisionStore] | None = None,
    ) -> None:
        self.costs = [env.params.transaction_cost for env in envs]
        model = getattr(writer, "loaded", None)  # the cached model behind a ModelWriter
        masked = getattr(writer, "mask_for", None) is not None
        settings_key = (name, _identity(model), config.model_dump_json(), masked)
        stores = stores or {}
        stored = {ticker: store.load(ticker) for ticker, store in stores.items()}
        keys, missing = [], {}  # missing: key -> the tools of that (ticker, day), each once
        kept: dict[tuple, Trace] = {}  # decisions read from a store (not full traces: not in _TRACES)
        for env in envs:
            ticker = env.episode.ticker
            ticker_data, on_disk = data[ticker], stored.get(ticker, {})
            env_keys = [(*settings_key, _identity(ticker_data), pd.Timestamp(d)) for d in env.episode.dates]
            for key in env_keys:
                day = key[-1]
                if key in _TRACES or key in missing or key in kept:
                    continue
                if day in on_disk:
                    kept[key] = Trace(ticker, day.date().isoformat(), name, [], on_disk[day])
                else:
                    missing[key] = AgentTools(ticker_data, day)
            keys.append(env_keys)
        if missing:
            traces = run_decisions(writer, list(missing.values()), config, name)
            _TRACES.update(zip(missing, traces, strict=True))
            new: dict[str, dict[pd.Timestamp, str | None]] = {}
            for tools, trace in zip(missing.values(), traces, strict=True):
                new.setdefault(tools.data.ticker, {})[tools.day] = trace.decision
            for ticker, decisions in new.items():
                if ticker in stores:
                    stores[ticker].save(ticker, decisions)
        self.traces: list[list[Trace]] = [[_TRACES.get(k) or kept[k] for k in env_keys] for env_keys in keys]

    def __call__(self, live: Sequence[int], observations: Sequence[Observation]) -> list[Action]:
        return [
            decision_action(self.traces[i][o.step].action, o, self.costs[i])
            for i, o in zip(live, observations, strict=True)
        ]


class AgentPolicy:
    """Plays the agent's daily decisions in one environment (an ``AgentBatch`` of one)."""

    def __init__(self, batch: AgentBatch):
        self.batch = batch
        self.traces: list[Trace] = batch.traces[0]
        self.decisions = [t.action for t in self.traces]

    def act(self, observation: Observation) -> Action:
        return self.batch([0], [observation])[0]


def make_agent_batch(
    name: str,
    envs: Sequence[TradingEnv],
    settings: Settings,
    config: AgentConfig | None = None,
    stored: bool = False,
) -> AgentBatch:
    """Policy ``name`` for every environment of ``envs`` with the caller's ``settings`` (the
    config defaults to ``STOCKER_AGENT_*``); ``stored``: read and add to the decisions kept on
    disk (``decision_store``), as the evaluation stages do."""
    config = config or agent_config()
    writer = agent_writer(name, settings, config)
    data = {t: agent_data(t, settings) for t in dict.fromkeys(env.episode.ticker for env in envs)}
    masked = bool(settings.llm_mask and hasattr(writer, "mask_for"))
    if masked:  # chat models read masked prompts
        writer.mask_for = _mask_reader(data)
    stores = _decision_stores(name, settings, config, masked, data) if stored else None
    return AgentBatch(envs, writer, data, config, name, stores)


def model_identity(name: str, settings: Settings, config: AgentConfig) -> str:
    """What names the model behind policy ``name``: the trained run's folder relative to the
    home (a new training run is a new folder; a moved home keeps its name), the untrained
    pretrained model's id, or ``scripted``."""
    from stocker_core.agent.store import current_run

    if name == "agent_scripted":
        return "scripted"
    try:
        from stocker_core.warehouse.home_paths import stored_path

        return f"{name}:{stored_path(current_run(settings.home)['run_dir'], settings.home)}"
    except AgentNotTrainedError:
        return f"{name}:untrained:{config.model}"


def _decision_stores(
    name: str, settings: Settings, config: AgentConfig, masked: bool, data: Mapping[str, AgentData]
) -> dict[str, DecisionStore]:
    """One store per ticker whose decisions can be kept (not with online fundamentals: a download
    is not part of the key)."""
    model = model_identity(name, settings, config)
    settings_json = config.model_dump_json()
    return {
        ticker: DecisionStore(settings.home, store_key(name, model, settings_json, masked, ticker_data))
        for ticker, ticker_data in data.items()
        if not ticker_data.online_fundamentals
    }


def _mask_reader(data: Mapping[str, AgentData]) -> Callable[[Trace], Any]:
    """trace -> its decision's prompt mask, built once per (ticker, day): a trace asks on every turn."""
    from stocker_core.agent.masking import agent_mask

    masks: dict[tuple[str, str], Any] = {}

    def mask_for(trace: Trace) -> Any:
        key = (trace.ticker, str(trace.date))
        if key not in masks:
            masks[key] = agent_mask(data[trace.ticker], trace.date)
        return masks[key]

    return mask_for


def make_agent_policy(
    name: str, env: TradingEnv, settings: Settings, config: AgentConfig | None = None
) -> AgentPolicy:
    """Policy ``name`` for ``env`` with the caller's ``settings`` (the config defaults to
    ``STOCKER_AGENT_*``)."""
    return AgentPolicy(make_agent_batch(name, [env], settings, config))


def register_policies() -> None:
    """``agent_scripted``, ``agent_base`` and ``agent_rl`` with batched deciders that keep their
    decisions on disk; the trained two were fitted on the train split (called by the
    composition root)."""
    for name in AGENT_POLICIES:
        register_policy(
            name,
            lambda env, seed, settings, name=name: make_agent_policy(
                name, env, require_settings(name, settings)
            ),
            lambda envs, seeds, settings, name=name: make_agent_batch(
                name, envs, require_settings(name, settings), stored=True
            ),
            fitted_on_train=name != "agent_scripted",
        )
