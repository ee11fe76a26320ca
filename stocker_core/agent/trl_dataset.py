"""Rows for TRL's ``GRPOTrainer`` with ``StockerToolEnv``: (episode key, day) decisions of
one chronological split (``train`` by default; ``valid`` on request; ``test`` never).

The days are the agent's (``agent.pairs``: days of the split whose ``horizon``-session
label day lies in the same split, evenly sampled over time). Each day is played in the
episode that starts at its month (``TICKER|YYYY-MM-01``), so a day needs a session before it
in that episode (the half-invested start) and ``horizon`` sessions after it (the reward).
The rows carry no ticker or date in their prompt: ``StockerToolEnv.reset`` writes the
decision prompt, masked, from ``episode_key`` and ``day``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from stocker_core.agent.errors import AgentError
from stocker_core.config import Settings, get_settings

SYSTEM_PROMPT = (
    "You are a trading analyst. Look at the stock with the tools (one call per turn), then place "
    "the decision with the trade tool."
)

__all__ = ["SYSTEM_PROMPT", "build_trl_dataset", "trl_rows"]


def trl_rows(
    settings: Settings | None = None,
    tickers: Sequence[str] | None = None,
    split: str = "train",
    horizon: int = 5,
    most: int = 200,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Up to ``most`` rows ``{"prompt", "episode_key", "day"}`` of ``split`` over ``tickers``
    (default: the settings' tickers), oldest first; AgentError when none qualifies."""
    from stocker_core.agent.pairs import agent_splits, sample_pairs, split_pairs
    from stocker_core.agent.policy import agent_data
    from stocker_core.env.episode import window_bounds
    from stocker_core.warehouse.db import Warehouse

    settings = settings or get_settings()
    names = list(settings.default_tickers if tickers is None else tickers)
    if not names:
        raise AgentError("no tickers: pass tickers or set STOCKER_DEFAULT_TICKERS")
    data = {ticker: agent_data(ticker, settings) for ticker in names}
    warehouse = Warehouse(settings.warehouse_path) if settings.warehouse_path.exists() else None
    splits = agent_splits(warehouse, data).splits
    pairs = split_pairs(data, splits, split, horizon, most=10**9, seed=seed)
    rows = []
    for ticker, day in pairs:
        month = day.date().replace(day=1)
        start, end = window_bounds(month, settings.episode_months)
        sessions = data[ticker].trading_days(start, end - pd.Timedelta(days=1))
        step = sessions.index(day)
        if step >= 1 and step + horizon <= len(sessions) - 1:
            rows.append(
                {
                    "prompt": [
                        {"role": "system", "content": SYSTEM_PROMPT},
                        {"role": "user", "content": ""},
                    ],
                    "episode_key": f"{ticker}|{month.isoformat()}",
                    "day": day.date().isoformat(),
                }
            )
    if not rows:
        raise AgentError(f"no {split}-split days with {horizon} sessions after them inside their episode")
    return sample_pairs(rows, most, seed)  # type: ignore[arg-type]  # any list: evenly over time


def build_trl_dataset(settings: Settings | None = None, **options: Any) -> Any:
    """``trl_rows`` as a ``datasets.Dataset`` (what ``GRPOTrainer(train_dataset=...)`` takes)."""
    from datasets import Dataset

    return Dataset.from_list(trl_rows(settings, **options))
