"""Rows for warehouse tests: business-day bars of a ticker-month, votes, episodes."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd


def month_bars(ticker: str, month: date, seed: int = 0) -> pd.DataFrame:
    """``market.prices`` rows (without ticker) for the business days of ``month``."""
    days = pd.bdate_range(month, pd.Timestamp(month) + pd.offsets.MonthEnd(0))
    rng = np.random.default_rng(abs(hash((ticker, month.isoformat(), seed))) % 2**32)
    close = 100 + rng.normal(0, 1, len(days)).cumsum()
    return pd.DataFrame(
        {
            "date": days,
            "open": close,
            "high": close + 1,
            "low": close - 1,
            "close": close,
            "adj_close": close,
            "volume": rng.integers(1_000, 9_000, len(days)).astype(float),
            "source": f"test-{seed}",
        }
    )


def months(first: str, count: int) -> list[date]:
    return [d.date() for d in pd.date_range(first, periods=count, freq="MS")]
