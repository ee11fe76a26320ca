"""Shared helpers of the council tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

FIXTURE = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "seed_tasks"


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


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    return FIXTURE


@pytest.fixture(scope="session")
def easy_inputs():
    """Council inputs of task_easy from the seed fixture."""
    from stocker_core.council.context import CouncilInputs
    from stocker_core.market.files_source import FilesSource
    from stocker_core.text.events import load_text_folder

    source = FilesSource(FIXTURE)
    lo, hi = pd.Timestamp("2020-01-01").date(), pd.Timestamp("2025-01-01").date()
    closes = pd.concat([source.fetch(s, lo, hi).assign(symbol=s) for s in ("MSFT", "GOOGL", "GC=F")])
    return CouncilInputs(
        "AAPL", source.fetch("AAPL", lo, hi), load_text_folder(FIXTURE), closes, ("MSFT", "GOOGL"), "GC=F"
    )
