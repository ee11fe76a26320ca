"""Rule baselines (MACD crossover, Z-score mean reversion) and the long/flat plans of every
rule policy whose position depends on prices only.

Each rule exists twice with the same arithmetic: a per-step ``Policy`` (registered as
``macd`` / ``zmr``; it sees only the observation's ``price_history``, closes up to the
decision day) and a vectorised plan over a whole episode that the runner grades in one
batch through the replay grader. A test holds the two equal.

Rules (SPEC §3, issue 8):
- ``macd``: long when the MACD(12, 26, 9) line is above its signal line on day D,
  flat otherwise; all-in whole shares at D's close.
- ``zmr``: z = (close − SMA20) / population std20 on D; buy all-in when z ≤ −1, sell
  everything when z ≥ 0, otherwise keep the position (long-only Z-score mean reversion).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import talib

from stocker_core.env.actions import Action, Side
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.ideal import ideal_trajectory
from stocker_core.env.policies import long_flat_action, register_policy
from stocker_core.env.portfolio import apply_trade, max_affordable
from stocker_core.env.rewards import RewardParams

MACD_FAST, MACD_SLOW, MACD_SIGNAL = 12, 26, 9
MACD_MIN_CLOSES = MACD_SLOW + MACD_SIGNAL - 1
"""Closes up to and including D that MACD(12, 26, 9) and its signal need (TA-Lib lookback + 1)."""
ZMR_WINDOW = 20
ZMR_ENTRY = -1.0
ZMR_EXIT = 0.0


def macd_long(closes: np.ndarray) -> np.ndarray:
    """True on each day whose MACD line is above its signal line (False before enough history)."""
    closes = np.asarray(closes, dtype=np.float64)
    if len(closes) < MACD_MIN_CLOSES:
        return np.zeros(len(closes), dtype=bool)
    line, signal, _ = talib.MACD(closes, MACD_FAST, MACD_SLOW, MACD_SIGNAL)
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(line - signal, nan=0.0) > 0.0


def zscores(closes: np.ndarray, window: int = ZMR_WINDOW) -> np.ndarray:
    """(close − mean) / population std over the last ``window`` closes; NaN before enough
    history or when the window is flat."""
    closes = np.asarray(closes, dtype=np.float64)
    out = np.full(len(closes), np.nan)
    if len(closes) < window:
        return out
    windows = np.lib.stride_tricks.sliding_window_view(closes, window)
    mean = windows.mean(axis=-1)
    std = windows.std(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(std > 0, (closes[window - 1 :] - mean) / np.where(std > 0, std, 1.0), np.nan)
    out[window - 1 :] = z
    return out


def zmr_long(z: np.ndarray) -> np.ndarray:
    """Long/flat state from z-scores: enter at z ≤ −1, exit at z ≥ 0, else keep (flat at first)."""
    state = np.where(z <= ZMR_ENTRY, 1.0, np.where(z >= ZMR_EXIT, 0.0, np.nan))
    state[0] = 0.0 if np.isnan(state[0]) else state[0]
    filled = np.maximum.accumulate(np.where(np.isnan(state), -1, np.arange(len(state))))
    return state[filled] > 0.5


class LongFlatPolicy:
    """All-in whole shares when ``want_long``; sell everything when not (like ``IdealPolicy``)."""

    def __init__(self, cost: float) -> None:
        self.cost = cost

    def want_long(self, observation: Observation) -> bool:
        raise NotImplementedError

    def act(self, observation: Observation) -> Action:
        return long_flat_action(self.want_long(observation), observation, self.cost)


class MacdPolicy(LongFlatPolicy):
    """Long while MACD(12, 26, 9) > its signal on the decision day."""

    def want_long(self, observation: Observation) -> bool:
        history = observation.price_history
        if len(history) < MACD_MIN_CLOSES:
            return False
        return bool(macd_long(history)[-1])


class ZmrPolicy(LongFlatPolicy):
    """Long-only Z-score mean reversion (20 days, enter z ≤ −1, exit z ≥ 0)."""

    def __init__(self, cost: float) -> None:
        super().__init__(cost)
        self.long = False

    def want_long(self, observation: Observation) -> bool:
        if observation.step == 0:
            self.long = False
        z = zscores(observation.price_history[-ZMR_WINDOW:])[-1]
        if z <= ZMR_ENTRY:
            self.long = True
        elif z >= ZMR_EXIT:
            self.long = False
        return self.long


register_policy("macd", lambda env, seed: MacdPolicy(env.params.transaction_cost))
register_policy("zmr", lambda env, seed: ZmrPolicy(env.params.transaction_cost))


@dataclass
class Plan:
    """A whole episode's actions as side codes and share counts, with notes for the user."""

    sides: np.ndarray
    quantities: np.ndarray
    notes: list[str] = field(default_factory=list)


def long_flat_plan(want_long: np.ndarray, closes: np.ndarray, cost: float, cash: float) -> Plan:
    """The actions of ``LongFlatPolicy`` for a known long/flat wish per day."""
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


def history_note(name: str, needed: int, history: int, days: int, available: int) -> str | None:
    """A note when the first days of an episode lack the closes ``name`` needs, else None."""
    if history + 1 >= needed:
        return None
    return (
        f"{name}: needs {needed} closes up to the decision day; the warehouse stores "
        f"{history} before the window, so {days - available} of {days} day(s) had too little "
        "history and stayed flat"
    )


def _hold_plan(episode: Episode, params: RewardParams) -> Plan:
    n = episode.trading_days
    return Plan(np.zeros(n, dtype=np.int64), np.zeros(n))


def _buy_and_hold_plan(episode: Episode, params: RewardParams) -> Plan:
    plan = _hold_plan(episode, params)
    plan.sides[0] = Side.BUY
    plan.quantities[0] = max_affordable(
        params.starting_cash, float(episode.closes[0]), params.transaction_cost
    )
    return plan


def _macd_plan(episode: Episode, params: RewardParams) -> Plan:
    closes, offset = episode.all_closes, len(episode.history)
    want = macd_long(closes)[offset:]
    plan = long_flat_plan(want, episode.closes, params.transaction_cost, params.starting_cash)
    valid = max(0, len(closes) - max(offset, MACD_MIN_CLOSES - 1))
    note = history_note("macd", MACD_MIN_CLOSES, offset, episode.trading_days, valid)
    plan.notes.extend([note] if note else [])
    return plan


def _zmr_plan(episode: Episode, params: RewardParams) -> Plan:
    closes, offset = episode.all_closes, len(episode.history)
    want = zmr_long(zscores(closes)[offset:])
    plan = long_flat_plan(want, episode.closes, params.transaction_cost, params.starting_cash)
    valid = max(0, len(closes) - max(offset, ZMR_WINDOW - 1))
    note = history_note("zmr", ZMR_WINDOW, offset, episode.trading_days, valid)
    plan.notes.extend([note] if note else [])
    return plan


def _forecast_plan(episode: Episode, params: RewardParams) -> Plan:
    from stocker_core.evaluation.forecast import ForecastConfig, predicted_returns

    config = ForecastConfig()
    closes, offset = episode.all_closes, len(episode.history)
    predicted = predicted_returns(closes, config)[offset:]
    want = np.nan_to_num(predicted, nan=-np.inf) > config.threshold
    plan = long_flat_plan(want, episode.closes, params.transaction_cost, params.starting_cash)
    valid = int(np.isfinite(predicted).sum())
    note = history_note("forecast", config.lookback, offset, episode.trading_days, valid)
    plan.notes.extend([note] if note else [])
    return plan


def _oracle_plan(episode: Episode, params: RewardParams) -> Plan:
    from stocker_core.evaluation.oracle import oracle_plan

    return oracle_plan(episode, params)


def _ideal_plan(episode: Episode, params: RewardParams) -> Plan:
    ideal = ideal_trajectory(episode.closes, params.transaction_cost, params.starting_cash)
    return long_flat_plan(ideal.long, episode.closes, params.transaction_cost, params.starting_cash)


PlanFactory = Callable[[Episode, RewardParams], Plan]

VECTORISED_PLANS: dict[str, PlanFactory] = {
    "hold": _hold_plan,
    "buy_and_hold": _buy_and_hold_plan,
    "macd": _macd_plan,
    "zmr": _zmr_plan,
    "forecast": _forecast_plan,
    "oracle": _oracle_plan,
    "ideal": _ideal_plan,
}
"""Policies whose whole-episode actions are known at once (from prices, or for ``oracle`` from
the day's pre-close headlines): planned at once, graded in a batch."""


def plan_for(name: str, episode: Episode, params: RewardParams) -> Plan | None:
    """The vectorised plan of ``name`` on ``episode``, or None when it has none."""
    factory = VECTORISED_PLANS.get(name)
    return factory(episode, params) if factory else None


def per_step_policy(name: str, env: TradingEnv) -> LongFlatPolicy | None:
    """The per-step twin of a vectorised rule (for the equivalence test and the benchmark)."""
    if name == "macd":
        return MacdPolicy(env.params.transaction_cost)
    if name == "zmr":
        return ZmrPolicy(env.params.transaction_cost)
    return None
