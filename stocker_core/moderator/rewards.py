"""The moderator's training rewards, a configuration choice (``TrainingConfig.reward``).

``excess`` (the default): the step's excess over buy-and-hold minus costs,
``(e_a − e_bh) · r_(t+H) − c · |e_a − e_t|``, where
``e_a`` is the share of value invested after answer ``a`` at day t's close, ``e_t`` before
it, ``e_bh`` buy-and-hold's share that day and ``r_(t+H)`` the close-to-close return over
the next ``H`` sessions of the episode. Its spread is across actions, not states: the
state enters only through ``−e_bh · r``, the same for every answer, which the group
baseline removes. A step with no next session inside the episode has no reward.

With ``market_relative`` (on by default in ``TrainingConfig``; an ``ExcessReward`` built
by hand leaves it off) ``r_(t+H)`` is the ticker's return less the day's cross-sectional
mean over the episodes' tickers, plus that mean's average over the days
(the drift stays, the day's common shock goes): nothing in a ticker's prompt predicts the
market's shock, and on a small universe slow inputs shared across tickers (macro votes, the
step, trend votes) fit those shocks in sample and lose out of sample (measured on the dev
synthetic market: a linear fit on every input lost −2.3e-3 a state on held-out windows with the
raw return and made +0.6e-3 with the relative one; see ``docs/training.md``). Days with fewer
than ``MIN_PEERS`` tickers keep the raw return.

``environment``: the environment's own (level-based) reward, described next.

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

import numpy as np

from stocker_core.env.actions import Action, Side
from stocker_core.env.portfolio import apply_trade, max_affordable
from stocker_core.errors import StockerError
from stocker_core.language_model.forward_return import forward_return
from stocker_core.moderator.dataset import EpisodeContext, rule_action, rule_moderator
from stocker_core.moderator.prompts import parse_completion, quarter_quantity


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


def exposure(cash: float, position: int, price: float) -> float:
    """Share of the portfolio's value held in stock (0 when it is worth nothing)."""
    value = cash + position * price
    return position * price / value if value > 0 else 0.0


def buy_and_hold_exposure(closes: np.ndarray, starting_cash: float, cost: float) -> np.ndarray:
    """Buy-and-hold's invested share after each day's close (whole shares bought on day 1)."""
    closes = np.asarray(closes, dtype=np.float64)
    shares = max_affordable(starting_cash, float(closes[0]), cost)
    cash = apply_trade(starting_cash, 0, Side.BUY, shares, float(closes[0]), cost).cash
    held = shares * closes
    return np.where(cash + held > 0, held / (cash + held), 0.0)


def excess_rewards(
    cash: float,
    position: int,
    price: float,
    forward_return: float,
    bh_exposure: float,
    cost: float,
    answers: Sequence[str],
) -> np.ndarray:
    """``(e_a − e_bh) · r − c · |e_a − e_t|`` for each answer (``side qN`` text)."""
    before = exposure(cash, position, price)
    out = np.empty(len(answers))
    for i, answer in enumerate(answers):
        parsed = parse_completion(answer, cash, position, price, cost)
        side, quarters = parsed.side, parsed.quarters
        qty = quarter_quantity(side, quarters, cash, position, price, cost)
        code = Side.BUY if side == "buy" else Side.SELL if side == "sell" else Side.HOLD
        fill = apply_trade(cash, position, code, qty, price, cost)
        after = exposure(fill.cash, fill.position, price)
        out[i] = (after - bh_exposure) * forward_return - cost * abs(after - before)
    return out


MIN_PEERS = 3
"""Tickers a day needs for its cross-sectional mean to stand for the market's move."""


def market_moves(contexts: Mapping[str, EpisodeContext], horizon: int) -> tuple[dict[Any, float], float]:
    """The cross-sectional mean ``horizon``-session return of each day with at least
    ``MIN_PEERS`` tickers among ``contexts``' episodes, and the mean of those means (the drift)."""
    by_day: dict[Any, dict[str, float]] = {}
    for context in contexts.values():
        closes, episode = context.env.closes, context.env.episode
        for step, day in enumerate(episode.dates):
            move = forward_return(closes, step, horizon)
            if move is None:  # the episode's last ``horizon`` days
                break
            by_day.setdefault(day, {})[episode.ticker] = move
    means = {day: float(np.mean(list(v.values()))) for day, v in by_day.items() if len(v) >= MIN_PEERS}
    drift = float(np.mean(list(means.values()))) if means else 0.0
    return means, drift


@dataclass
class ExcessReward:
    """The ``excess`` training reward of every answer at a training row's state."""

    contexts: dict[str, EpisodeContext]
    horizon: int = 1
    market_relative: bool = False
    _bh: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _market: tuple[dict[Any, float], float] | None = field(default=None, repr=False)

    def _bh_exposure(self, context: EpisodeContext) -> np.ndarray:
        key = context.env.episode.key
        if key not in self._bh:
            params = context.env.params
            self._bh[key] = buy_and_hold_exposure(
                context.env.closes, params.starting_cash, params.transaction_cost
            )
        return self._bh[key]

    def forward_return(self, episode_key: str, step: int) -> float | None:
        """Close-to-close return from ``step`` over ``horizon`` sessions (``language_model.forward_return``;
        None past the end), less the day's market move with ``market_relative``."""
        env = self.contexts[episode_key].env
        raw = forward_return(env.closes, step, self.horizon)
        if raw is None or not self.market_relative:
            return raw
        if self._market is None:
            self._market = market_moves(self.contexts, self.horizon)
        means, drift = self._market
        day = env.episode.dates[step]
        return raw - means[day] + drift if day in means else raw

    def answers(self, row: Mapping[str, Any], answers: Sequence[str]) -> np.ndarray | None:
        """Rewards of ``answers`` at ``row``'s state (None when the row has no next session)."""
        try:
            context = self.contexts[row["episode_key"]]
        except KeyError:
            raise RewardInputError(
                f"no environment for episode {row['episode_key']!r} in this reward"
            ) from None
        snapshot = json.loads(row["snapshot"]) if isinstance(row["snapshot"], str) else row["snapshot"]
        step = int(snapshot["step"])
        forward = self.forward_return(row["episode_key"], step)
        if forward is None:
            return None
        env = context.env
        return excess_rewards(
            float(snapshot["cash"]),
            int(snapshot["position"]),
            float(env.closes[step]),
            forward,
            float(self._bh_exposure(context)[step]),
            env.params.transaction_cost,
            answers,
        )


def environment_answer_rewards(
    reward: RolloutReward, row: Mapping[str, Any], answers: Sequence[str]
) -> np.ndarray:
    """The ``environment`` reward (rollout of K steps) of each answer at ``row``'s state."""
    return np.array([reward.score(row["episode_key"], row["snapshot"], a) for a in answers])
