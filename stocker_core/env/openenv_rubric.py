"""Stocker's step reward as an OpenEnv 0.10 rubric (RFC 004): a tree a trainer can introspect
(``named_rubrics()``, each node's ``last_score``), built from ``rewards.reward_terms``.

>>> rubric = reward_rubric(RewardParams())                       # doctest: +SKIP
>>> rubric(action, result)        # result: a step's answer, its terms in metadata["breakdown"]
>>> {name: r.last_score for name, r in rubric.named_rubrics()}

The leaves read the terms the server computed (``metadata["breakdown"]``) and weigh them; the
root adds them and clips to [-1, 1], so its score equals the served reward. Needs ``openenv``
(the ``openenv`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openenv.core.rubrics.base import Rubric

from stocker_core.env.rewards import RewardParams, clip, reward_terms

__all__ = ["RewardTerm", "StepReward", "reward_rubric"]


def _breakdown(observation: Any) -> Mapping[str, float]:
    """The reward's terms of a step answer: a dict, an OpenEnv ``StepResult`` or an observation
    carrying ``metadata``."""
    metadata = observation.get("metadata") if isinstance(observation, Mapping) else None
    if metadata is None:
        metadata = getattr(observation, "metadata", None) or {}
    breakdown = metadata.get("breakdown")
    if not isinstance(breakdown, Mapping):
        raise ValueError("no reward breakdown: pass a step's answer (metadata['breakdown']), not a reset's")
    return breakdown


class RewardTerm(Rubric):
    """One weighted term of the step reward (``weight × breakdown[term]``)."""

    def __init__(self, term: str, weight: float) -> None:
        super().__init__()
        self.term = term
        self.weight = weight

    def forward(self, action: Any, observation: Any) -> float:
        return self.weight * float(_breakdown(observation)[self.term])


class StepReward(Rubric):
    """SPEC §1's step reward: the terms' sum, clipped to [-1, 1]."""

    def __init__(self, params: RewardParams) -> None:
        super().__init__()
        for spec in reward_terms(params):
            setattr(self, str(spec["name"]), RewardTerm(str(spec["term"]), float(spec["weight"])))

    def forward(self, action: Any, observation: Any) -> float:
        return clip(sum(term(action, observation) for term in self.children()))


def reward_rubric(params: RewardParams | None = None) -> StepReward:
    """The rubric of the reward under ``params`` (the defaults of the settings when None)."""
    return StepReward(params or RewardParams())
