"""Warehouse rows describing episodes and their ideal trajectories (for the env assets)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stocker_core.env.episode import Episode
from stocker_core.env.ideal import TrajectoryResult, greedy_trajectory, ideal_trajectory
from stocker_core.env.portfolio import buy_and_hold_final


@dataclass(frozen=True)
class EpisodeSolution:
    """An episode with its exact-optimum and greedy trajectories."""

    episode: Episode
    ideal: TrajectoryResult
    greedy: TrajectoryResult
    buy_and_hold_final: float


def solve_episode(episode: Episode, cost: float) -> EpisodeSolution:
    """Ideal (DP) and greedy trajectories plus buy-and-hold for one episode."""
    closes = episode.closes
    return EpisodeSolution(
        episode=episode,
        ideal=ideal_trajectory(closes, cost, episode.starting_cash),
        greedy=greedy_trajectory(closes, cost, episode.starting_cash),
        buy_and_hold_final=buy_and_hold_final(list(closes), episode.starting_cash, cost),
    )


def episode_row(solution: EpisodeSolution) -> dict[str, object]:
    """One ``env.episodes`` row."""
    ep = solution.episode
    return {
        "ticker": ep.ticker,
        "month": ep.window_start,
        "key": ep.key,
        "start_date": ep.start,
        "end_date": ep.end,
        "trading_days": ep.trading_days,
        "starting_cash": ep.starting_cash,
        "first_close": float(ep.closes[0]),
        "last_close": float(ep.closes[-1]),
        "buy_and_hold_final": solution.buy_and_hold_final,
        "ideal_total": solution.ideal.total,
        "greedy_total": solution.greedy.total,
        "source": ep.source,
    }


def trajectory_rows(solution: EpisodeSolution) -> pd.DataFrame:
    """``env.ideal_trajectories`` rows: one per step with both paths."""
    ep = solution.episode
    return pd.DataFrame(
        {
            "month": ep.window_start,
            "step": np.arange(ep.trading_days, dtype=np.int32),
            "date": ep.dates.date,
            "close": ep.closes,
            "ideal_long": solution.ideal.long,
            "ideal_shares": solution.ideal.shares,
            "ideal_pnl": solution.ideal.pnl,
            "greedy_long": solution.greedy.long,
            "greedy_shares": solution.greedy.shares,
            "greedy_pnl": solution.greedy.pnl,
        }
    )
