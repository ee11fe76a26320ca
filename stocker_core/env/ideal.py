"""Hindsight-best long-only trajectories: the exact optimum (DP) and the greedy rule.

With proportional costs and fractional shares the optimal long-only policy is
always all-in or all-out, so a dynamic programme over the two states *flat*
(all cash) and *long* (all shares) finds the true optimum. Values are marked
to market after each step like the environment's portfolio value (a position
held at the end is valued at the last close, without a closing sale).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stocker_core.env.actions import Side
from stocker_core.env.portfolio import apply_trade, max_affordable


@dataclass(frozen=True)
class TrajectoryResult:
    """A long-only trajectory: per-step PnL (fraction of start cash), state and value."""

    method: str
    pnl: np.ndarray
    """PnL after each step as a fraction of start cash (``value / start - 1``)."""
    long: np.ndarray
    """True where the trajectory holds shares after the step."""
    shares: np.ndarray
    """Shares held after each step (fractional for the optimum, whole for greedy)."""
    values: np.ndarray
    """Portfolio value after each step."""
    starting_cash: float

    @property
    def total(self) -> float:
        """Final PnL as a fraction of start cash."""
        return float(self.pnl[-1]) if len(self.pnl) else 0.0

    @property
    def trades(self) -> int:
        """Number of position changes (buys plus sells)."""
        states = np.concatenate([[False], self.long])
        return int(np.count_nonzero(states[1:] != states[:-1]))

    def to_dict(self) -> dict[str, object]:
        return {
            "method": self.method,
            "total": self.total,
            "trades": self.trades,
            "pnl": self.pnl.tolist(),
            "long": self.long.astype(int).tolist(),
            "shares": self.shares.tolist(),
            "values": self.values.tolist(),
            "starting_cash": self.starting_cash,
        }


def _as_matrix(closes: Sequence[float] | np.ndarray) -> np.ndarray:
    prices = np.asarray(closes, dtype=np.float64)
    if prices.ndim == 1:
        prices = prices[None, :]
    if prices.ndim != 2 or prices.shape[1] == 0:
        raise ValueError("closes must be a non-empty 1-D series or a 2-D (episodes, steps) array")
    if not np.all(np.isfinite(prices)) or np.any(prices <= 0):
        raise ValueError("closes must be finite and positive")
    return prices


SCALAR_ROWS = 4
"""Up to this many series the DP runs as a plain loop (faster than numpy for few rows)."""


def _ideal_path_scalar(
    prices: list[float], cost: float, starting_cash: float
) -> tuple[list[bool], list[float], list[float]]:
    """The same DP as ``ideal_paths`` for one series, in plain floats."""
    n = len(prices)
    buy, sell = 1.0 + cost, 1.0 - cost
    flat = [starting_cash] * n
    held = [starting_cash / (prices[0] * buy)] * n
    from_sell = [False] * n
    from_buy = [True] * n
    for t in range(1, n):
        sold = held[t - 1] * (prices[t] * sell)
        bought = flat[t - 1] / (prices[t] * buy)
        from_sell[t] = sold > flat[t - 1]
        from_buy[t] = bought > held[t - 1]
        flat[t] = sold if from_sell[t] else flat[t - 1]
        held[t] = bought if from_buy[t] else held[t - 1]
    long = [False] * n
    state = held[-1] * prices[-1] > flat[-1]
    for t in range(n - 1, -1, -1):
        long[t] = state
        state = state ^ (from_buy[t] if state else from_sell[t])
    shares = [held[t] if long[t] else 0.0 for t in range(n)]
    values = [held[t] * prices[t] if long[t] else flat[t] for t in range(n)]
    return long, shares, values


def ideal_paths(
    closes: Sequence[float] | np.ndarray,
    cost: float | np.ndarray,
    starting_cash: float | np.ndarray = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact optimum for many series at once.

    ``closes`` is (E, n) (or one series); ``cost`` a scalar or one rate per row.
    Returns ``(long, shares, values)``, each (E, n): the optimal state after
    each step, shares held and the marked-to-market value.
    """
    prices = _as_matrix(closes)
    rows, n = prices.shape
    if rows <= SCALAR_ROWS:
        costs = np.broadcast_to(np.asarray(cost, dtype=np.float64).reshape(-1), (rows,))
        cashes = np.broadcast_to(np.asarray(starting_cash, dtype=np.float64).reshape(-1), (rows,))
        parts = [
            _ideal_path_scalar(prices[i].tolist(), float(costs[i]), float(cashes[i])) for i in range(rows)
        ]
        return tuple(np.array([p[j] for p in parts]) for j in range(3))  # type: ignore[return-value]
    c = np.broadcast_to(np.asarray(cost, dtype=np.float64).reshape(-1), (rows,))
    cash0 = np.broadcast_to(np.asarray(starting_cash, dtype=np.float64).reshape(-1), (rows,))
    buy_px = prices * (1.0 + c)[:, None]
    sell_px = prices * (1.0 - c)[:, None]
    flat = np.empty((rows, n))  # best cash when flat after step t
    held = np.empty((rows, n))  # best shares when long after step t
    flat_from_sell = np.zeros((rows, n), dtype=bool)
    long_from_buy = np.zeros((rows, n), dtype=bool)
    flat[:, 0] = cash0
    held[:, 0] = cash0 / buy_px[:, 0]
    long_from_buy[:, 0] = True
    for t in range(1, n):
        sold = held[:, t - 1] * sell_px[:, t]
        bought = flat[:, t - 1] / buy_px[:, t]
        flat_from_sell[:, t] = sold > flat[:, t - 1]
        long_from_buy[:, t] = bought > held[:, t - 1]
        flat[:, t] = np.where(flat_from_sell[:, t], sold, flat[:, t - 1])
        held[:, t] = np.where(long_from_buy[:, t], bought, held[:, t - 1])
    long = np.zeros((rows, n), dtype=bool)
    state = held[:, -1] * prices[:, -1] > flat[:, -1]
    idx = np.arange(rows)
    for t in range(n - 1, -1, -1):
        long[:, t] = state
        switched = np.where(state, long_from_buy[idx, t], flat_from_sell[idx, t])
        state = state ^ switched
    shares = np.where(long, held, 0.0)
    values = np.where(long, held * prices, flat)
    return long, shares, values


def ideal_trajectory(
    closes: Sequence[float] | np.ndarray, cost: float, starting_cash: float = 10_000.0
) -> TrajectoryResult:
    """The exact hindsight-best long-only trajectory of one close series (fractional shares)."""
    long, shares, values = ideal_paths(closes, cost, starting_cash)
    return TrajectoryResult(
        method="optimal_dp",
        pnl=values[0] / starting_cash - 1.0,
        long=long[0],
        shares=shares[0],
        values=values[0],
        starting_cash=starting_cash,
    )


def ideal_totals(closes: np.ndarray, cost: float | np.ndarray) -> np.ndarray:
    """Optimal final PnL fraction of each row of an (E, n) close matrix."""
    _, _, values = ideal_paths(closes, cost, 1.0)
    return values[:, -1] - 1.0


def greedy_trajectory(
    closes: Sequence[float] | np.ndarray, cost: float, starting_cash: float = 10_000.0
) -> TrajectoryResult:
    """The reference rule in whole shares: long when the next close is higher, flat otherwise.

    Exactly as the reference computes it: at each step before the last the rule
    buys as many whole shares as cash allows when tomorrow closes higher and sells
    everything otherwise; on the last step (no next close) it sells what it holds,
    so its total is realised cash after costs (0.182203 on task_easy, 0.236178 on
    task_medium). The exact optimum (``ideal_trajectory``) stays the ideal.
    """
    prices = _as_matrix(closes)[0]
    n = len(prices)
    cash, position = float(starting_cash), 0
    long = np.zeros(n, dtype=bool)
    shares = np.zeros(n)
    values = np.zeros(n)
    for t in range(n):
        price = float(prices[t])
        rises = t < n - 1 and prices[t + 1] > price
        if rises and position == 0:
            qty = max_affordable(cash, price, cost)
            fill = apply_trade(cash, position, Side.BUY, qty, price, cost)
            cash, position = fill.cash, fill.position
        elif not rises and position > 0:  # a fall, a flat day or the last step: sell all
            fill = apply_trade(cash, position, Side.SELL, position, price, cost)
            cash, position = fill.cash, fill.position
        long[t] = position > 0
        shares[t] = position
        values[t] = cash + position * price
    return TrajectoryResult(
        method="greedy",
        pnl=values / starting_cash - 1.0,
        long=long,
        shares=shares,
        values=values,
        starting_cash=starting_cash,
    )


def brute_force_total(closes: Sequence[float], cost: float) -> float:
    """Best final PnL fraction over every flat/long path (2**n paths; tests only, n <= 16)."""
    prices = [float(p) for p in closes]
    n = len(prices)
    if n > 16:
        raise ValueError("brute force is for short series (n <= 16)")
    best = -np.inf
    for mask in range(1 << n):
        cash, held, is_long = 1.0, 0.0, False
        for t in range(n):
            want = bool(mask >> t & 1)
            if want and not is_long:
                held, cash, is_long = cash / (prices[t] * (1 + cost)), 0.0, True
            elif not want and is_long:
                cash, held, is_long = held * prices[t] * (1 - cost), 0.0, False
        best = max(best, cash + held * prices[-1] - 1.0)
    return float(best)
