"""Held-out episodes played by the moderators (in lockstep, one batched generation per step)
and by the reference policies, summarised as mean episode reward per policy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation
from stocker_core.env.policies import BuyAndHoldPolicy, RandomPolicy
from stocker_core.training.dataset import EpisodeContext, moderator_state, rule_action, rule_moderator
from stocker_core.training.generation import generate, render_prompt
from stocker_core.training.models import LoadedModel
from stocker_core.training.prompts import parse_completion, prompt_text, prompt_words

REFERENCE_POLICIES = ("rule_council", "buy_and_hold", "random")


@dataclass(frozen=True)
class EpisodeScore:
    """One played episode: total reward, final value, trades and unparsable completions."""

    policy: str
    episode_key: str
    total_reward: float
    final_value: float
    trades: int
    unparsable: int = 0


def play_moderator(loaded: LoadedModel, contexts: Sequence[EpisodeContext], name: str) -> list[EpisodeScore]:
    """Every episode played greedily by ``loaded``; step t of all episodes is one batch."""
    envs = [c.env for c in contexts]
    observations = [env.reset() for env in envs]
    unparsable = [0] * len(envs)
    while True:
        live = [i for i, env in enumerate(envs) if not env.done]
        if not live:
            break
        prompts = []
        for i in live:
            state = moderator_state(
                observations[i], contexts[i].votes[observations[i].step], envs[i].params.starting_cash
            )
            prompts.append(render_prompt(loaded, prompt_words(state), prompt_text(state)))
        for i, text in zip(live, generate(loaded, prompts), strict=True):
            obs = observations[i]
            parsed = parse_completion(
                text, obs.cash, obs.position, obs.close, envs[i].params.transaction_cost
            )
            unparsable[i] += int(not parsed.parsed)
            observations[i] = envs[i].step(parsed.action).observation
    return [_score(name, ctx, n) for ctx, n in zip(contexts, unparsable, strict=True)]


def _score(name: str, context: EpisodeContext, unparsable: int = 0) -> EpisodeScore:
    env = context.env
    trajectory = env.trajectory()
    trades = sum(1 for side, qty in env.actions if side != 0 and qty > 0)
    return EpisodeScore(
        name, env.episode.key, trajectory["total_reward"], trajectory["final_value"], trades, unparsable
    )


def _play(context: EpisodeContext, act: Callable[[Observation], Action], name: str) -> EpisodeScore:
    env = context.env
    observation = env.reset()
    while not env.done:
        observation = env.step(act(observation)).observation
    return _score(name, context)


def play_reference(name: str, contexts: Sequence[EpisodeContext], seed: int = 0) -> list[EpisodeScore]:
    """``rule_council`` (rule moderator on the same cached votes), ``buy_and_hold`` or ``random``."""
    scores = []
    for i, ctx in enumerate(contexts):
        cost = ctx.env.params.transaction_cost
        if name == "rule_council":
            moderator = rule_moderator(ctx.env.params)
            scores.append(_play(ctx, lambda o, c=ctx, m=moderator: rule_action(m, c.votes[o.step], o), name))
        elif name == "buy_and_hold":
            scores.append(_play(ctx, BuyAndHoldPolicy(cost).act, name))
        elif name == "random":
            scores.append(_play(ctx, RandomPolicy(cost, seed + i).act, name))
        else:
            raise ValueError(f"unknown reference policy {name!r}: use one of {', '.join(REFERENCE_POLICIES)}")
    return scores


def summarize(scores: Sequence[EpisodeScore]) -> pd.DataFrame:
    """Mean (and std) episode reward, mean final value, trades and unparsable per policy."""
    frame = pd.DataFrame([s.__dict__ for s in scores])
    if frame.empty:
        return pd.DataFrame(
            columns=[
                "policy",
                "episodes",
                "mean_reward",
                "std_reward",
                "mean_final_value",
                "trades",
                "unparsable",
            ]
        )
    table = (
        frame.groupby("policy", sort=False)
        .agg(
            episodes=("episode_key", "size"),
            mean_reward=("total_reward", "mean"),
            std_reward=("total_reward", lambda x: float(np.std(x, ddof=1)) if len(x) > 1 else 0.0),
            mean_final_value=("final_value", "mean"),
            trades=("trades", "mean"),
            unparsable=("unparsable", "sum"),
        )
        .reset_index()
    )
    return table
