"""max_affordable in closed form: it ends, and its answer is feasible and maximal, at any scale."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from stocker_core.env.portfolio import apply_trade, max_affordable

finite = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)
costs = st.floats(min_value=0.0, max_value=0.5, allow_nan=False)


def test_the_reported_hang_returns():
    shares = max_affordable(835765104.0841045, 7.908101283112312e-123, 0.001)
    assert shares > 0
    assert shares * 7.908101283112312e-123 * 1.001 <= 835765104.0841045


def test_hand_worked_values():
    assert max_affordable(10_000.0, 100.0, 0.001) == 99  # 100 shares cost 10,010
    assert max_affordable(10_010.0, 100.0, 0.001) == 100
    assert max_affordable(0.0, 100.0, 0.0) == 0
    assert max_affordable(100.0, 0.0, 0.0) == 0
    assert max_affordable(math.inf, 1.0, 0.0) == 0
    assert max_affordable(1.0, math.nan, 0.0) == 0


@given(cash=finite, price=finite, cost=costs)
def test_feasible_and_maximal_at_any_scale(cash, price, cost):
    shares = max_affordable(cash, price, cost)
    assert shares >= 0
    if shares:
        assert not apply_trade(cash, 0, 1, shares, price, cost).invalid
    if shares < 2**52 and cash / (price * (1 + cost)) < 2**52:
        # one more share is unaffordable wherever one share is still resolvable
        assert (shares + 1) * price * (1.0 + cost) > cash * (1 - 1e-12)
