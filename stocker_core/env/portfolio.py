"""Portfolio accounting: cash, whole-share position, transaction costs, invalid trades."""

from __future__ import annotations

import math
from dataclasses import dataclass

from stocker_core.env.actions import Side


@dataclass(frozen=True)
class Fill:
    """What one action did: new cash and position, whether it was invalid, shares traded."""

    cash: float
    position: int
    invalid: bool
    traded: int


def apply_trade(cash: float, position: int, side: int, quantity: int, price: float, cost: float) -> Fill:
    """Apply one action at ``price`` with proportional cost rate ``cost`` (SPEC §1).

    A buy costs ``quantity * price * (1 + cost)``; a sell returns
    ``quantity * price * (1 - cost)``. A buy beyond cash or a sell beyond the
    position is invalid: nothing is executed. Quantity 0 and ``hold`` are no-ops.
    """
    if side == Side.BUY and quantity > 0:
        outlay = quantity * price * (1.0 + cost)
        if outlay > cash:
            return Fill(cash, position, True, 0)
        return Fill(cash - outlay, position + quantity, False, quantity)
    if side == Side.SELL and quantity > 0:
        if quantity > position:
            return Fill(cash, position, True, 0)
        return Fill(cash + quantity * price * (1.0 - cost), position - quantity, False, -quantity)
    return Fill(cash, position, False, 0)


def max_affordable(cash: float, price: float, cost: float) -> int:
    """Most whole shares ``cash`` buys at ``price`` including the cost.

    Closed form: ``floor(cash / unit)``, then at most a few corrective steps for the
    rounding of the outlay product, each at least a few ulps of the share count, so it
    ends even where the count is beyond float precision (a tiny price, a huge cash).
    """
    unit = price * (1.0 + cost)
    if not (math.isfinite(cash) and math.isfinite(unit)) or unit <= 0 or cash <= 0:
        return 0
    ratio = cash / unit
    if not math.isfinite(ratio):
        return 0
    shares = int(math.floor(ratio))
    for _ in range(8):
        # the same product, in the same order, as the feasibility test in apply_trade
        if shares <= 0 or shares * price * (1.0 + cost) <= cash:
            return max(shares, 0)
        shares -= max(1, int(shares * 2.0**-50))
    return 0


def buy_and_hold_final(closes: list[float] | tuple[float, ...], starting_cash: float, cost: float) -> float:
    """Final value of buying as many whole shares as the start cash buys on day 1, held."""
    first, last = float(closes[0]), float(closes[-1])
    fill = apply_trade(starting_cash, 0, Side.BUY, max_affordable(starting_cash, first, cost), first, cost)
    return fill.cash + fill.position * last


@dataclass
class Portfolio:
    """Mutable account state of one episode, marked to market at each step's close."""

    cash: float
    position: int = 0
    starting_cash: float = 0.0
    peak: float = 0.0
    max_drawdown: float = 0.0

    @classmethod
    def start(cls, starting_cash: float) -> Portfolio:
        return cls(cash=starting_cash, position=0, starting_cash=starting_cash, peak=starting_cash)

    def value(self, price: float) -> float:
        """Cash plus the position marked at ``price``."""
        return self.cash + self.position * price

    def apply(self, side: int, quantity: int, price: float, cost: float) -> Fill:
        """Apply an action and update the drawdown tracker with the new value."""
        fill = apply_trade(self.cash, self.position, side, quantity, price, cost)
        self.cash, self.position = fill.cash, fill.position
        value = self.value(price)
        self.peak = max(self.peak, value)
        if self.peak > 0:
            self.max_drawdown = max(self.max_drawdown, (self.peak - value) / self.peak)
        return fill
