"""Rule baselines: MACD crossover and Z-score mean reversion.

Each rule exists twice with the same arithmetic: a per-step ``Policy`` (registered as
``macd`` / ``zmr``; it sees only the observation's ``price_history``, closes up to the
decision day) and a vectorised plan over a whole episode (``env.plans``) that the backtest
grades in one batch through the replay grader; both are registered together. A test holds
the two equal.

Rules (SPEC §3, issue 8):
- ``macd``: long when the MACD(12, 26, 9) line is above its signal line on day D,
  flat otherwise; all-in whole shares at D's close.
- ``zmr``: z = (close − SMA20) / population std20 on D; buy all-in when z ≤ −1, sell
  everything when z ≥ 0, otherwise keep the position (long-only Z-score mean reversion).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import talib

from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.plans import Plan, long_flat_plan
from stocker_core.env.policies import long_flat_action, register_policy
from stocker_core.env.rewards import RewardParams

if TYPE_CHECKING:
    from stocker_core.config import Settings

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


def history_note(name: str, needed: int, history: int, days: int, available: int) -> str | None:
    """A note when the first days of an episode lack the closes ``name`` needs, else None."""
    if history + 1 >= needed:
        return None
    return (
        f"{name}: needs {needed} closes up to the decision day; the warehouse stores "
        f"{history} before the window, so {days - available} of {days} day(s) had too little "
        "history and stayed flat"
    )


def macd_plan(episode: Episode, params: RewardParams, settings: Settings | None = None) -> Plan:
    """``macd``'s actions over the whole episode (the vectorised twin of ``MacdPolicy``)."""
    closes, offset = episode.all_closes, len(episode.history)
    want = macd_long(closes)[offset:]
    plan = long_flat_plan(want, episode.closes, params.transaction_cost, params.starting_cash)
    valid = max(0, len(closes) - max(offset, MACD_MIN_CLOSES - 1))
    note = history_note("macd", MACD_MIN_CLOSES, offset, episode.trading_days, valid)
    plan.notes.extend([note] if note else [])
    return plan


def zmr_plan(episode: Episode, params: RewardParams, settings: Settings | None = None) -> Plan:
    """``zmr``'s actions over the whole episode (the vectorised twin of ``ZmrPolicy``)."""
    closes, offset = episode.all_closes, len(episode.history)
    want = zmr_long(zscores(closes)[offset:])
    plan = long_flat_plan(want, episode.closes, params.transaction_cost, params.starting_cash)
    valid = max(0, len(closes) - max(offset, ZMR_WINDOW - 1))
    note = history_note("zmr", ZMR_WINDOW, offset, episode.trading_days, valid)
    plan.notes.extend([note] if note else [])
    return plan


def per_step_policy(name: str, env: TradingEnv) -> LongFlatPolicy | None:
    """The per-step twin of a vectorised rule (for the equivalence test and the benchmark)."""
    if name == "macd":
        return MacdPolicy(env.params.transaction_cost)
    if name == "zmr":
        return ZmrPolicy(env.params.transaction_cost)
    return None


def register_policies() -> None:
    """``macd`` and ``zmr``, each with its whole-episode plan (called by the composition root)."""
    register_policy(
        "macd", lambda env, seed, settings: MacdPolicy(env.params.transaction_cost), plan=macd_plan
    )
    register_policy("zmr", lambda env, seed, settings: ZmrPolicy(env.params.transaction_cost), plan=zmr_plan)
