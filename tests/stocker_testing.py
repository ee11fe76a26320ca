"""Helpers shared by the tests (importable from any test module: tests/ is on sys.path)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stocker_core.config import REFERENCE_TASKS_DIR

SEED_DIR = REFERENCE_TASKS_DIR  # the three reference episodes' data, shipped in the package


def make_bars(
    closes: np.ndarray | list[float], start: str = "2023-01-02", spread: float = 0.005
) -> pd.DataFrame:
    """Business-day OHLC bars around the given closes."""
    closes = np.asarray(closes, dtype=float)
    dates = pd.bdate_range(start, periods=len(closes))
    opens = np.r_[closes[0], closes[:-1]]
    return pd.DataFrame(
        {
            "date": dates,
            "open": opens,
            "high": np.maximum(opens, closes) * (1 + spread),
            "low": np.minimum(opens, closes) * (1 - spread),
            "close": closes,
            "adj_close": closes,
            "volume": 1e6,
        }
    )
