"""The GRPO reward: the environment's own reward for a sampled completion.

From the step's snapshot the environment is restored, the parsed action applied, and
``k`` more steps rolled forward by the continuation (the rule moderator on the cached
votes, or hold); the reward is the sum of the environment's step rewards. An
unparsable completion acts as hold and loses ``unparsable_penalty``. Restore + step is
plain Python on a cached environment per episode, a few microseconds per step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stocker_core.env.actions import Action
from stocker_core.errors import StockerError
from stocker_core.training.dataset import EpisodeContext, rule_action, rule_moderator
from stocker_core.training.prompts import parse_completion


class RewardInputError(StockerError, KeyError):
    """A reward call for an episode the reward function was not built with."""


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or chat messages (the assistant's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    return str(completion or "")


@dataclass
class RolloutReward:
    """Callable as a TRL reward function: ``fn(prompts=, completions=, episode_key=, snapshot=)``."""

    contexts: dict[str, EpisodeContext]
    k: int = 5
    continuation: str = "rule"
    unparsable_penalty: float = 1.0
    unparsable: int = 0
    calls: int = 0
    _snapshots: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def _snapshot(self, raw: str | Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(raw, str):
            return dict(raw)
        cached = self._snapshots.get(raw)
        if cached is None:
            cached = self._snapshots[raw] = json.loads(raw)
        return cached

    def score(self, episode_key: str, snapshot: str | Mapping[str, Any], completion: str) -> float:
        """Reward of ``completion`` from ``snapshot`` of ``episode_key`` (see the module doc)."""
        try:
            context = self.contexts[episode_key]
        except KeyError:
            raise RewardInputError(f"no environment for episode {episode_key!r} in this reward") from None
        env = context.env
        observation = env.restore(self._snapshot(snapshot))
        parsed = parse_completion(
            completion, observation.cash, observation.position, observation.close, env.params.transaction_cost
        )
        result = env.step(parsed.action)
        total = result.reward
        moderator = None
        if self.continuation == "rule":
            moderator = rule_moderator(env.params)
            if parsed.action.side != "hold":
                moderator.last_side, moderator.last_trade_step = parsed.action.side, observation.step
        for _ in range(self.k):
            if env.done:
                break
            observation = result.observation
            action = (
                rule_action(moderator, context.votes[observation.step], observation)
                if moderator is not None
                else Action.hold()
            )
            result = env.step(action)
            total += result.reward
        self.calls += 1
        if not parsed.parsed:
            self.unparsable += 1
            total -= self.unparsable_penalty
        return float(total)

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        episode_key: Sequence[str] = (),
        snapshot: Sequence[str] = (),
        **kwargs: Any,
    ) -> list[float]:
        return [
            self.score(key, snap, completion_text(c))
            for key, snap, c in zip(episode_key, snapshot, completions, strict=True)
        ]
