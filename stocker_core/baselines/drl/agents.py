"""The deep-RL baselines ``a2c`` and ``ppo`` as environment policies.

A policy loads the current trained model of its algorithm from ``$STOCKER_HOME``
(see ``drl.store``), turns each observation into the Gymnasium wrapper's features and
maps the model's deterministic discrete action back to a whole-share trade with the
wrapper's own ``to_action``. It sees only the observation: closes up to the decision
day, cash, position, step.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from stocker_core.baselines.drl.store import (
    ALGOS,
    DrlTrainingResult,
    MissingModelError,
    ModelMismatchError,
    check_algo,
    current_result,
    drl_model_dir,
)
from stocker_core.baselines.drl.training import DrlConfig, train_drl_agent, train_drl_agents
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.gym_env import StockerGymEnv
from stocker_core.env.policies import register_policy, require_settings

__all__ = [
    "ALGOS",
    "DrlConfig",
    "DrlBatch",
    "DrlPolicy",
    "DrlTrainingResult",
    "MissingModelError",
    "ModelMismatchError",
    "drl_model_dir",
    "load_drl_agent",
    "make_drl_batch",
    "make_drl_policy",
    "train_drl_agent",
    "train_drl_agents",
]


@lru_cache(maxsize=8)
def _load_model(algo: str, path: str, sha256: str) -> Any:
    from stable_baselines3 import A2C, PPO

    return {"a2c": A2C, "ppo": PPO}[algo].load(path, device="cpu")


def load_drl_agent(algo: str, home: Path | str) -> tuple[Any, DrlTrainingResult]:
    """The current SB3 model of ``algo`` under ``home`` (``settings.home``) and what
    trained it. MissingModelError says to materialize ``drl_agents`` when there is none."""
    algo = check_algo(algo)
    result = current_result(home, algo)
    return _load_model(algo, result.model_path, result.sha256), result


class DrlPolicy:
    """A trained SB3 agent acting deterministically on one episode."""

    def __init__(self, model: Any, env: TradingEnv, window: int, fractions: tuple[float, ...]) -> None:
        self.model = model
        # the wrapper's feature and action translation, pointed at the episode being played
        self.adapter = StockerGymEnv(env.episode, env.params, fractions, window)
        self.adapter.env = env
        expected = self.adapter.observation_space.shape
        if model.observation_space.shape != expected:
            raise ModelMismatchError(
                f"the stored model expects observations of shape {model.observation_space.shape}, "
                f"not {expected}: retrain it (materialize drl_agents)"
            )

    def act(self, observation: Observation) -> Action:
        features = self.adapter.features(observation)
        action, _ = self.model.predict(features, deterministic=True)
        return self.adapter.to_action(int(action), observation)


class DrlBatch:
    """A trained SB3 agent acting deterministically on many episodes: step t of every live
    environment in one ``predict`` call over the stacked features."""

    def __init__(
        self, model: Any, envs: Sequence[TradingEnv], window: int, fractions: tuple[float, ...]
    ) -> None:
        self.model = model
        self.policies = [DrlPolicy(model, env, window, fractions) for env in envs]

    def __call__(self, live: Sequence[int], observations: Sequence[Observation]) -> list[Action]:
        adapters = [self.policies[i].adapter for i in live]
        features = np.stack([a.features(o) for a, o in zip(adapters, observations, strict=True)])
        actions, _ = self.model.predict(features, deterministic=True)
        return [a.to_action(int(k), o) for a, k, o in zip(adapters, actions, observations, strict=True)]


def make_drl_policy(algo: str, env: TradingEnv, home: Path | str) -> DrlPolicy:
    """The ``algo`` policy for ``env`` from the current model under ``home``."""
    model, result = load_drl_agent(algo, home)
    return DrlPolicy(model, env, int(result.config["window"]), tuple(result.config["fractions"]))


def make_drl_batch(algo: str, envs: Sequence[TradingEnv], home: Path | str) -> DrlBatch:
    """The ``algo`` policy for every environment of ``envs`` (one batched decider)."""
    model, result = load_drl_agent(algo, home)
    return DrlBatch(model, envs, int(result.config["window"]), tuple(result.config["fractions"]))


def register_policies() -> None:
    """``a2c`` and ``ppo``, fitted on the train split, each with a batched decider (called by
    the composition root); their models are read under the caller's ``settings.home``."""
    for algo in ALGOS:
        register_policy(
            algo,
            lambda env, seed, settings, algo=algo: make_drl_policy(
                algo, env, require_settings(algo, settings).home
            ),
            lambda envs, seeds, settings, algo=algo: make_drl_batch(
                algo, envs, require_settings(algo, settings).home
            ),
            fitted_on_train=True,
        )
