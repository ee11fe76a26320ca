"""Held-out episodes played by the moderators and the reference policies, scored by the one
scoring home (``evaluation.backtests``: the same ``PolicyRun`` as the backtests), summarised
per policy and kept per episode (``heldout_episodes``: what the model checks read).

The moderators play in lockstep, step t of every episode decided in one batch: by scored
choices (argmax over the nine answers, which cannot fail to parse) or, with
``decode="generate"``, by greedy text that is parsed (unparsable text holds, counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation
from stocker_core.env.policies import BuyAndHoldPolicy, RandomPolicy
from stocker_core.evaluation.backtests import PolicyRun, play, play_lockstep
from stocker_core.language_model.factory import LoadedModel
from stocker_core.moderator.dataset import EpisodeContext, moderator_state, rule_action, rule_moderator
from stocker_core.moderator.prompts import parse_completion

REFERENCE_POLICIES = ("rule_council", "buy_and_hold", "random")
SUMMARY_COLUMNS = [
    "policy",
    "episodes",
    "mean_reward",
    "std_reward",
    "mean_final_value",
    "mean_total_return",
    "trades",
    "unparsable",
]


class ModeratorDecider:
    """A loaded moderator deciding a batch of observations (each with its episode's votes)."""

    def __init__(self, loaded: LoadedModel, decode: str = "scored") -> None:
        self.loaded, self.decode = loaded, decode
        self.unparsable = 0
        self._answers: dict[str, str] = {}

    def answers(self, prompts: Sequence[str]) -> list[str]:
        """The model's answer to each rendered prompt (each distinct prompt decided once)."""
        from stocker_core.moderator.answers import choose_answers
        from stocker_core.moderator.generation import generate

        todo = list(dict.fromkeys(p for p in prompts if p not in self._answers))
        if todo:
            texts = (
                choose_answers(self.loaded, todo, by_side=self.decode == "side")
                if self.decode in ("scored", "side")
                else generate(self.loaded, todo)
            )
            self._answers.update(zip(todo, texts, strict=True))
        return [self._answers[p] for p in prompts]

    def prompt(self, context: EpisodeContext, observation: Observation) -> str:
        """The rendered prompt of ``observation`` in ``context``'s episode."""
        from stocker_core.moderator.generation import render_prompt
        from stocker_core.moderator.prompts import prompt_text, prompt_words

        state = moderator_state(
            observation, context.votes[observation.step], context.env.params.starting_cash
        )
        return render_prompt(self.loaded, prompt_words(state), prompt_text(state))

    def actions(
        self, observations: Sequence[Observation], votes: Sequence[Any], starting_cash: float, cost: float
    ) -> list[Action]:
        """Feasible actions for ``observations`` with that day's ``votes``."""
        return [action for action, _ in self.decide(observations, votes, starting_cash, cost)]

    def decide(
        self, observations: Sequence[Observation], votes: Sequence[Any], starting_cash: float, cost: float
    ) -> list[tuple[Action, bool]]:
        """(feasible action, whether the answer parsed) for each observation; the prompts
        are answered in one batch (each distinct prompt once)."""
        from stocker_core.moderator.generation import render_prompt
        from stocker_core.moderator.prompts import prompt_text, prompt_words

        states = [moderator_state(o, v, starting_cash) for o, v in zip(observations, votes, strict=True)]
        prompts = [render_prompt(self.loaded, prompt_words(s), prompt_text(s)) for s in states]
        out = []
        for obs, text in zip(observations, self.answers(prompts), strict=True):
            parsed = parse_completion(text, obs.cash, obs.position, obs.close, cost)
            self.unparsable += int(not parsed.parsed)
            out.append((parsed.action, parsed.parsed))
        return out


def play_moderator(
    loaded: LoadedModel, contexts: Sequence[EpisodeContext], name: str, decode: str = "scored"
) -> list[tuple[PolicyRun, int]]:
    """Every episode played by ``loaded``; (run, unparsable answers) per episode."""
    decider = ModeratorDecider(loaded, decode)
    unparsable = [0] * len(contexts)

    def decide(live: Sequence[int], observations: Sequence[Observation]) -> list[Action]:
        actions = []
        for i, obs in zip(live, observations, strict=True):
            env = contexts[i].env
            before = decider.unparsable
            actions += decider.actions(
                [obs], [contexts[i].votes[obs.step]], env.params.starting_cash, env.params.transaction_cost
            )
            unparsable[i] += decider.unparsable - before
        return actions

    def decide_batched(live: Sequence[int], observations: Sequence[Observation]) -> list[Action]:
        # one model call answers the whole step; each episode then reads its cached answer
        decider.answers([decider.prompt(contexts[i], o) for i, o in zip(live, observations, strict=True)])
        return decide(live, observations)

    runs = play_lockstep([c.env for c in contexts], decide_batched, name, method=f"moderator_{decode}")
    return list(zip(runs, unparsable, strict=True))


def play_reference(name: str, contexts: Sequence[EpisodeContext], seed: int = 0) -> list[PolicyRun]:
    """``rule_council`` (rule moderator on the same cached votes), ``buy_and_hold`` or ``random``."""
    runs = []
    for i, ctx in enumerate(contexts):
        cost = ctx.env.params.transaction_cost
        if name == "rule_council":
            moderator = rule_moderator(ctx.env.params)
            policy: Any = _RuleCouncil(ctx, moderator)
        elif name == "buy_and_hold":
            policy = BuyAndHoldPolicy(cost)
        elif name == "random":
            policy = RandomPolicy(cost, seed + i)
        else:
            raise ValueError(f"unknown reference policy {name!r}: use one of {', '.join(REFERENCE_POLICIES)}")
        runs.append(play(ctx.env, policy, name, seed if name == "random" else None, "per_step"))
    return runs


class _RuleCouncil:
    def __init__(self, context: EpisodeContext, moderator: Any) -> None:
        self.context, self.moderator = context, moderator

    def act(self, observation: Observation) -> Action:
        return rule_action(self.moderator, self.context.votes[observation.step], observation)


def episode_records(
    runs: Sequence[PolicyRun], unparsable: Sequence[int] | None = None
) -> list[dict[str, Any]]:
    """One record per played episode: ``{policy, episode_key, final_value, total_return,
    total_reward, trades, unparsable, steps}`` (what the model checks and the table read)."""
    unparsable = list(unparsable) if unparsable is not None else [0] * len(runs)
    return [
        {
            "policy": run.policy,
            "episode_key": run.episode_key,
            "final_value": float(run.values[-1]),
            "total_return": float(run.metrics["total_return"]),
            "total_reward": float(run.rewards.sum()),
            "trades": int(run.metrics["trades"]),
            "unparsable": int(n),
            "steps": len(run.dates),
        }
        for run, n in zip(runs, unparsable, strict=True)
    ]


def summarize(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Mean (and std) episode reward, mean final value and return, trades and unparsable per policy."""
    frame = pd.DataFrame(list(records))
    if frame.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    return (
        frame.groupby("policy", sort=False)
        .agg(
            episodes=("episode_key", "size"),
            mean_reward=("total_reward", "mean"),
            std_reward=("total_reward", lambda x: float(np.std(x, ddof=1)) if len(x) > 1 else 0.0),
            mean_final_value=("final_value", "mean"),
            mean_total_return=("total_return", "mean"),
            trades=("trades", "mean"),
            unparsable=("unparsable", "sum"),
        )
        .reset_index()
    )
