"""Episodes with a stored history before the window (for the forecast and deep-RL tests)."""

from __future__ import annotations

import numpy as np

from stocker_core.env.episode import Episode, episode_from_closes


def episode_with_history(closes: np.ndarray | list[float], history: int, ticker: str = "SYN") -> Episode:
    """The episode of ``closes[history:]`` with ``closes[:history]`` as its history."""
    whole = episode_from_closes(closes, ticker=ticker)
    bars = whole.bars
    first = bars["date"].iloc[history].date()
    return Episode(
        key=f"{ticker}|{first.replace(day=1).isoformat()}",
        ticker=ticker,
        window_start=first,
        window_end=whole.window_end,
        bars=bars.iloc[history:].reset_index(drop=True),
        history=bars.iloc[:history].reset_index(drop=True),
        starting_cash=whole.starting_cash,
        source="synthetic",
    )


def zigzag(n: int, low: float = 100.0, high: float = 101.0) -> np.ndarray:
    """low, high, low, high, ...: log returns alternate exactly between +a and -a."""
    return np.where(np.arange(n) % 2 == 0, low, high).astype(float)
