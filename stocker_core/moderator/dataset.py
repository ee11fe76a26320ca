"""The moderator's training rows: one per (episode, step) of the train split.

Each row holds the prompt (the seven cached votes, the price move, the portfolio and
the step), the hindsight-ideal completion (the SFT target) and the environment snapshot
taken before the step (JSON), which the GRPO reward restores. The states follow the rule
council's trajectory (``state_path="council"``: votes merged by the rule moderator, so
cash and position vary) or the ideal one (``"ideal"``: all in / all out).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stocker_core.council.models import SpecialistVote
from stocker_core.council.vote_moderators import RuleModerator, RuleModeratorConfig
from stocker_core.decision_context.decision import PortfolioState
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.ideal import ideal_trajectory
from stocker_core.env.portfolio import max_affordable
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import EmptyDataError
from stocker_core.moderator.prompts import (
    ModeratorState,
    chat_messages,
    completion_for,
    price_move,
    prompt_text,
    prompt_words,
)
from stocker_core.moderator.selection import SplitGuard
from stocker_core.moderator.votes import EpisodeVotes, VoteTuple

ROW_COLUMNS = ["episode_key", "step", "date", "prompt_words", "prompt_text", "target", "snapshot"]


def moderator_state(observation: Observation, votes: VoteTuple, starting_cash: float) -> ModeratorState:
    """The moderator's view of ``observation`` with that day's votes."""
    return ModeratorState(
        votes=votes,
        price=observation.close,
        price_move=price_move(observation.price_history),
        cash=observation.cash,
        position=observation.position,
        starting_cash=starting_cash,
        step=observation.step,
        total_steps=observation.total_steps,
    )


def rule_moderator(params: RewardParams) -> RuleModerator:
    """The rule moderator with the environment's cost rate."""
    return RuleModerator(RuleModeratorConfig(cost_rate=params.transaction_cost))


def rule_action(moderator: RuleModerator, votes: VoteTuple, observation: Observation) -> Action:
    """The rule moderator's feasible action on ``votes`` from ``observation``'s portfolio."""
    ballots = [SpecialistVote(role=r, signal=s, confidence=c) for r, s, c in votes]
    portfolio = PortfolioState(
        cash=observation.cash,
        position=observation.position,
        step=observation.step,
        total_steps=observation.total_steps,
    )
    return moderator.decide(ballots, portfolio, observation.close)[0]


def target_path(env: TradingEnv, target_cost: float | None = None) -> np.ndarray:
    """Where the SFT teacher is long: the environment's ideal path, or the exact optimum
    under a higher ``target_cost`` (it skips short swings: a teacher that does not churn)."""
    if target_cost is None or target_cost == env.params.transaction_cost:
        return env.ideal.long
    return ideal_trajectory(env.closes, target_cost, env.params.starting_cash).long


def ideal_completion(env: TradingEnv, observation: Observation, long: np.ndarray | None = None) -> str:
    """The hindsight-ideal move from this state: all in where the ideal path (``long``,
    default the environment's) is long, all out where it is flat, hold when already there
    (or nothing is feasible)."""
    want_long = bool((env.ideal.long if long is None else long)[observation.step])
    cost = env.params.transaction_cost
    if want_long and max_affordable(observation.cash, observation.close, cost) > 0:
        return completion_for("buy", 4)
    if not want_long and observation.position > 0:
        return completion_for("sell", 4)
    return completion_for("hold")


@dataclass(frozen=True)
class EpisodeContext:
    """An environment and its per-step votes (what rows and rewards are computed from)."""

    env: TradingEnv
    votes: list[VoteTuple]


def episode_context(episode: Episode, votes: EpisodeVotes, params: RewardParams) -> EpisodeContext:
    """The environment of ``episode`` and its votes step by step."""
    env = TradingEnv(episode, params)
    days = [d.date().isoformat() for d in episode.dates]
    return EpisodeContext(env, [votes.for_day(episode.ticker, day) for day in days])


def episode_rows(
    context: EpisodeContext, state_path: str = "council", target_cost: float | None = None
) -> list[dict[str, Any]]:
    """One row per step along the rule council's (or the ideal's) trajectory; targets from
    ``target_path(env, target_cost)``."""
    env = context.env
    observation = env.reset()
    moderator = rule_moderator(env.params)
    ideal = env.ideal.long
    teacher = target_path(env, target_cost)
    rows = []
    while not env.done:
        votes = context.votes[observation.step]
        state = moderator_state(observation, votes, env.params.starting_cash)
        rows.append(
            {
                "episode_key": env.episode.key,
                "step": observation.step,
                "date": observation.date,
                "prompt_words": prompt_words(state),
                "prompt_text": prompt_text(state),
                "target": ideal_completion(env, observation, teacher),
                "snapshot": json.dumps(env.snapshot()),
            }
        )
        if state_path == "ideal":
            want_long = bool(ideal[observation.step])
            qty = max_affordable(observation.cash, observation.close, env.params.transaction_cost)
            if want_long and qty > 0:
                action = Action.buy(qty)
            elif not want_long and observation.position > 0:
                action = Action.sell(observation.position)
            else:
                action = Action.hold()
        else:
            action = rule_action(moderator, votes, observation)
        observation = env.step(action).observation
    env.reset()
    return rows


def build_rows(
    episodes: Sequence[Episode],
    votes: EpisodeVotes,
    params: RewardParams,
    guard: SplitGuard,
    state_path: str = "council",
    target_cost: float | None = None,
) -> tuple[list[dict[str, Any]], dict[str, EpisodeContext]]:
    """Rows of every episode (each checked by ``guard`` first: a valid- or test-split
    episode raises SplitLeakError) and the episode contexts keyed by episode key."""
    if not episodes:
        raise EmptyDataError(
            "no training episodes: materialize the env group (episodes) for the train split first"
        )
    for episode in episodes:
        guard.check(episode)
    contexts = {ep.key: episode_context(ep, votes, params) for ep in episodes}
    rows = [row for ctx in contexts.values() for row in episode_rows(ctx, state_path, target_cost)]
    return rows, contexts


def trl_records(rows: Sequence[dict[str, Any]], prompt_style: str, with_target: bool) -> list[dict[str, Any]]:
    """Rows as TRL prompt(-completion) records: plain strings for the word model, chat
    messages for a chat model; the episode key and snapshot ride along for the reward."""
    records = []
    for row in rows:
        if prompt_style == "words":
            prompt: Any = row["prompt_words"]
            completion: Any = " " + row["target"]
        elif prompt_style == "chat":
            prompt = chat_messages(row["prompt_text"])
            completion = [{"role": "assistant", "content": row["target"]}]
        else:
            prompt = row["prompt_text"]
            completion = " " + row["target"]
        record = {"prompt": prompt, "episode_key": row["episode_key"], "snapshot": row["snapshot"]}
        if with_target:
            record["completion"] = completion
        records.append(record)
    return records
