"""A policy's percentile among many seeded random policies with the same trade frequency.

A random policy starts flat and, on ``trades`` days drawn uniformly without replacement,
moves its exposure (the invested fraction of value, long only) to a new level drawn
uniformly from [0, 1]; so it trades exactly as often as the policy it is compared with,
whether that policy flips between long and flat or rebalances every day. Exposure
``w[t]`` is held from day t's close and earns day t+1's price change (as in the timing
test); each change of exposure pays ``cost`` × |Δw| of value. Everything is vectorised
over the random policies: 1,000 of them on a year cost milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stocker_core.evaluation.stats import StatsError


def exposure_return(
    exposure: Sequence[float] | np.ndarray, closes: Sequence[float] | np.ndarray, cost: float = 0.0
) -> float:
    """Compounded return of holding ``exposure[t]`` from close t to close t+1, with costs."""
    w = np.asarray(exposure, dtype=np.float64)
    px = np.asarray(closes, dtype=np.float64)
    if w.shape != px.shape or w.ndim != 1:
        raise StatsError(f"one exposure per close needed, got {w.shape} and {px.shape}")
    return float(exposure_returns(w[None, :], px, cost)[0])


def exposure_returns(exposures: np.ndarray, closes: np.ndarray, cost: float = 0.0) -> np.ndarray:
    """Compounded returns of many exposure paths (rows of ``exposures``) on one price path."""
    if len(closes) < 2:
        return np.zeros(len(exposures))
    market = closes[1:] / closes[:-1] - 1.0
    growth = np.prod(1.0 + exposures[:, :-1] * market[None, :], axis=1)
    changes = np.abs(np.diff(exposures, axis=1, prepend=0.0))
    return growth * np.prod(1.0 - cost * changes, axis=1) - 1.0


def trade_count(exposure: Sequence[float] | np.ndarray, tolerance: float = 1e-9) -> int:
    """Days on which the exposure changes (from flat before the first day)."""
    w = np.asarray(exposure, dtype=np.float64)
    return int(np.sum(np.abs(np.diff(w, prepend=0.0)) > tolerance))


def random_exposures(days: int, trades: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` exposure paths over ``days`` days, each moving to a uniform random level in
    [0, 1] on exactly ``trades`` days (capped at ``days`` − 1: the last day earns nothing)."""
    trades = max(0, min(trades, days - 1))
    paths = np.zeros((count, days), dtype=np.float64)
    if not trades:
        return paths
    traded = np.zeros((count, days), dtype=bool)
    days_drawn = np.argsort(rng.random((count, days - 1)), axis=1)[:, :trades]
    np.put_along_axis(traded, days_drawn, True, axis=1)
    levels = np.where(traded, rng.random((count, days)), np.nan)
    # carry each level forward to the next trade day (flat before the first)
    index = np.where(traded, np.arange(days)[None, :], 0)
    np.maximum.accumulate(index, axis=1, out=index)
    filled = np.take_along_axis(levels, index, axis=1)
    started = np.cumsum(traded, axis=1) > 0
    paths[started] = filled[started]
    return paths


@dataclass(frozen=True)
class RandomRank:
    """Where a policy's (pooled) return falls among random policies' (0–100)."""

    actual: float
    percentile: float
    random_median: float
    random_count: int


def random_percentile(
    exposures: Sequence[np.ndarray],
    closes: Sequence[np.ndarray],
    count: int = 1000,
    seed: int = 0,
    cost: float = 0.0,
    trades: Sequence[int] | None = None,
) -> RandomRank:
    """Percentile of a policy's return, pooled over tickers (the mean of each ticker's
    return), among ``count`` random policies with the policy's trade count on each ticker.

    ``exposures[i]`` and ``closes[i]`` are the policy's daily exposures and the closes of
    ticker i; ``trades[i]`` its number of trading days there (default: the days its
    exposure changes, right for paths that only change by trading). Random policy j is one
    random path per ticker (seed ``seed``), pooled the same way. Ties count half.
    """
    if count < 1:
        raise StatsError("count must be >= 1")
    if len(exposures) != len(closes) or not exposures:
        raise StatsError("one exposure path per close path needed, and at least one")
    rng = np.random.default_rng(seed)
    actual, pooled = [], np.zeros(count)
    if trades is not None and len(trades) != len(closes):
        raise StatsError("one trade count per close path needed")
    for i, (w, px) in enumerate(zip(exposures, closes, strict=True)):
        w, px = np.asarray(w, dtype=np.float64), np.asarray(px, dtype=np.float64)
        if w.shape != px.shape:
            raise StatsError(f"one exposure per close needed, got {len(w)} and {len(px)}")
        actual.append(exposure_return(w, px, cost))
        k = trade_count(w) if trades is None else int(trades[i])
        pooled += exposure_returns(random_exposures(len(px), k, count, rng), px, cost)
    pooled /= len(closes)
    mine = float(np.mean(actual))
    below = np.mean(pooled < mine - 1e-12)
    ties = np.mean(np.abs(pooled - mine) <= 1e-12)
    return RandomRank(mine, float(100.0 * (below + 0.5 * ties)), float(np.median(pooled)), count)
