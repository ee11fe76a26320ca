"""Whole-episode plans: the actions of a policy that can be known at once (from prices, or a
day's pre-close headlines), as side codes and share counts that the replay grader grades in
one batch. A policy registers its plan beside its per-step factory
(``register_policy(name, factory, plan=...)``); a test holds each plan equal to its policy
played step by step. The built-in ``hold``, ``buy_and_hold`` and ``ideal`` plans live here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from stocker_core.env.actions import Side
from stocker_core.env.episode import Episode
from stocker_core.env.ideal import ideal_trajectory
from stocker_core.env.portfolio import apply_trade, max_affordable
from stocker_core.env.rewards import RewardParams

if TYPE_CHECKING:
    from stocker_core.config import Settings


@dataclass
class Plan:
    """A whole episode's actions as side codes and share counts, with notes for the user."""

    sides: np.ndarray
    quantities: np.ndarray
    notes: list[str] = field(default_factory=list)


PlanFactory = Callable[[Episode, RewardParams, "Settings | None"], Plan]
"""``plan(episode, params, settings)``: the episode's actions at once (``settings`` for a plan
that reads stored data, e.g. the oracle's headlines)."""


def long_flat_plan(want_long: np.ndarray, closes: np.ndarray, cost: float, cash: float) -> Plan:
    """The actions of a long/flat rule (``long_flat_action`` each day) for a known long/flat
    wish per day."""
    steps = len(closes)
    sides = np.zeros(steps, dtype=np.int64)
    qty = np.zeros(steps, dtype=np.float64)
    position = 0
    for t, (want, price) in enumerate(zip(want_long.tolist(), closes.tolist(), strict=True)):
        if want and position == 0:
            q = max_affordable(cash, price, cost)
            if q:
                sides[t], qty[t] = Side.BUY, q
        elif not want and position > 0:
            sides[t], qty[t] = Side.SELL, position
        if sides[t]:
            fill = apply_trade(cash, position, int(sides[t]), int(qty[t]), price, cost)
            cash, position = fill.cash, fill.position
    return Plan(sides, qty)


def hold_plan(episode: Episode, params: RewardParams, settings: Settings | None = None) -> Plan:
    """Never trades."""
    n = episode.trading_days
    return Plan(np.zeros(n, dtype=np.int64), np.zeros(n))


def buy_and_hold_plan(episode: Episode, params: RewardParams, settings: Settings | None = None) -> Plan:
    """All the whole shares the cash buys on day 1, then nothing."""
    plan = hold_plan(episode, params)
    plan.sides[0] = Side.BUY
    plan.quantities[0] = max_affordable(
        params.starting_cash, float(episode.closes[0]), params.transaction_cost
    )
    return plan


def ideal_plan(episode: Episode, params: RewardParams, settings: Settings | None = None) -> Plan:
    """The exact-optimum flat/long path in whole shares (hindsight)."""
    ideal = ideal_trajectory(episode.closes, params.transaction_cost, params.starting_cash)
    return long_flat_plan(ideal.long, episode.closes, params.transaction_cost, params.starting_cash)
