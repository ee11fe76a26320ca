"""Statistics for comparing policies: the one home of the mean's confidence interval, the
one-sample t-test, the sign test and the timing (position-shuffle) test. Pure functions on
arrays, seeded.

Who calls what:

- ``mean_ci``: the interval of a mean difference, a percentile bootstrap (``arch``). The
  learning check's verdict (``moderator.learning_check``), the report's leaderboard
  (``pooled.pooled_evidence``) and the model checks (``model_checks.model_figures``) all give
  this interval, so the same values read the same everywhere
  (``tests/evaluation/test_one_stats_home.py``).
- ``t_test``: the two-sided one-sample t-test of "mean 0" beside it (the learning check, the
  leaderboard's p-values, the forward ledger).
- ``t_interval``: the forward ledger's interval of a mean daily excess (``ledger.score``).
- ``bootstrap_ci``: the rolling summary's moving-block bootstrap over overlapping windows
  (``rolling.summarise``, the agent's evaluation), vectorised for its many (policy, metric)
  pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from stocker_core.errors import StockerError


class StatsError(StockerError, ValueError):
    """Inputs a statistic cannot be computed on."""


@dataclass(frozen=True)
class Interval:
    """A mean with its bootstrap confidence interval (bounds None with fewer than 2 values)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int


def _finite_values(
    values: Sequence[float] | np.ndarray, confidence: float, draws: int, block: int, draws_name: str
) -> np.ndarray:
    """``values`` without NaNs as float64, after checking a bootstrap's arguments."""
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be in (0, 1), got {confidence}")
    if draws < 1 or block < 1:
        raise StatsError(f"{draws_name} and block must be >= 1")
    data = np.asarray(values, dtype=np.float64)
    return data[np.isfinite(data)]


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    block: int = 1,
) -> Interval:
    """Mean and percentile bootstrap CI of ``values``; NaNs are dropped.

    ``block`` > 1 is a moving-block bootstrap (blocks of consecutive values), for series
    whose neighbours are correlated, such as overlapping rolling windows.
    """
    data = _finite_values(values, confidence, resamples, block, "resamples")
    n = len(data)
    if n == 0:
        return Interval(None, None, None, 0)
    mean = float(data.mean())
    if n == 1:
        return Interval(mean, None, None, 1)
    rng = np.random.default_rng(seed)
    block = min(block, n)
    blocks = math.ceil(n / block)
    starts = rng.integers(0, n - block + 1, size=(resamples, blocks))
    index = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(resamples, -1)[:, :n]
    means = data[index].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Interval(mean, float(low), float(high), n)


MEAN_CI_METHOD = "percentile bootstrap of the mean (arch)"


def mean_ci(
    values: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
    block: int = 1,
) -> Interval:
    """The mean of ``values`` and its percentile bootstrap CI (``arch``); NaNs are dropped.

    ``block`` = 1 resamples the values as independent clusters (``IIDBootstrap``: one per
    window, or per (ticker, window)); ``block`` > 1 resamples circular blocks of ``block``
    consecutive values (``CircularBlockBootstrap``), for a series whose neighbours overlap.
    Bounds are None with fewer than 2 values, or fewer than 2 effective ones
    (``n / block`` < 2: a bootstrap there gives a falsely narrow interval); values with no
    spread give the mean as both bounds.

    This is the one interval of a mean difference: the learning check, the report's
    leaderboard and the model checks call it (a percentile bootstrap was what the check and
    the report used; the model checks' t-interval gave way to it).
    """
    from arch.bootstrap import CircularBlockBootstrap, IIDBootstrap

    data = _finite_values(values, confidence, reps, block, "reps")
    n = len(data)
    if n == 0:
        return Interval(None, None, None, 0)
    mean = float(data.mean())
    if n < 2 or n / block < 2:
        return Interval(mean, None, None, n)
    if np.ptp(data) == 0:
        # every resample is the data itself: its percentiles are the mean (what arch returns)
        return Interval(mean, mean, mean, n)
    boot = IIDBootstrap(data, seed=seed) if block == 1 else CircularBlockBootstrap(block, data, seed=seed)
    low, high = boot.conf_int(np.mean, reps=reps, method="percentile", size=confidence).ravel()
    return Interval(mean, float(low), float(high), n)


def t_interval(values: Sequence[float] | np.ndarray, confidence: float = 0.95, block: int = 1) -> Interval:
    """The mean and its t-interval over ``n / block`` effective values (SE = s·√(block/n),
    df = n/block − 1); NaNs are dropped, bounds None below 2 effective values."""
    from scipy.stats import t

    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be in (0, 1), got {confidence}")
    if block < 1:
        raise StatsError("block must be >= 1")
    data = np.asarray(values, dtype=np.float64)
    data = data[np.isfinite(data)]
    n = len(data)
    if n == 0:
        return Interval(None, None, None, 0)
    mean = float(data.mean())
    effective = n / block
    if effective < 2:
        return Interval(mean, None, None, n)
    sd = float(data.std(ddof=1))
    half = float(t.ppf(0.5 + confidence / 2, effective - 1)) * sd / np.sqrt(effective)
    return Interval(mean, mean - half, mean + half, n)


@dataclass(frozen=True)
class TTest:
    """A two-sided one-sample t-test of "the mean is 0"."""

    statistic: float
    p_value: float
    n: int


def t_test(values: Sequence[float] | np.ndarray) -> TTest | None:
    """``scipy.stats.ttest_1samp`` of the finite ``values`` against 0 (None with fewer than 2
    of them or no spread: nothing to test)."""
    from scipy.stats import ttest_1samp

    data = np.asarray(values, dtype=np.float64)
    data = data[np.isfinite(data)]
    if len(data) < 2 or np.ptp(data) == 0:
        return None
    test = ttest_1samp(data, 0.0)
    return TTest(float(test.statistic), float(test.pvalue), len(data))


@dataclass(frozen=True)
class SignTest:
    """Paired comparison: wins, losses and ties of A against B, and the two-sided p-value."""

    wins: int
    losses: int
    ties: int
    p_value: float | None

    @property
    def n(self) -> int:
        """Pairs compared (ties excluded)."""
        return self.wins + self.losses


def sign_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> SignTest:
    """Two-sided sign test of paired values (ties dropped; p None when every pair ties)."""
    from scipy.stats import binomtest

    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise StatsError(f"paired values need equal lengths, got {len(x)} and {len(y)}")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    wins, losses = int(np.sum(x > y)), int(np.sum(x < y))
    ties = len(x) - wins - losses
    p = float(binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else None
    return SignTest(wins, losses, ties, p)


@dataclass(frozen=True)
class TimingTest:
    """How the policy's own daily exposures, in their order, compare with shuffled orders."""

    actual_return: float
    share_beaten: float | None
    """Share of shuffles whose return is strictly below the policy's (None: exposure constant)."""
    shuffles: int


def timing_test(
    exposure: Sequence[float] | np.ndarray,
    closes: Sequence[float] | np.ndarray,
    shuffles: int = 1000,
    seed: int = 0,
) -> TimingTest:
    """Shuffle the exposures across days and compare compounded frictionless returns.

    ``exposure[t]`` is the fraction of value invested at day t's close and earns the next
    day's price change; the last day earns nothing inside the window. The same exposures
    in a random order keep the policy's average market exposure but lose its timing, so
    the share of shuffles it beats separates skill from exposure. (``timing_tests`` of one row.)
    """
    w = np.asarray(exposure, dtype=np.float64)
    px = np.asarray(closes, dtype=np.float64)
    if w.shape != px.shape or w.ndim != 1:
        raise StatsError(f"one exposure per close needed, got {len(w)} and {len(px)}")
    return timing_tests(w[None, :], px[None, :], shuffles, seed)[0]


TIMING_CHUNK = 250_000
"""Most (row, shuffle, day) cells ``timing_tests`` holds at once (~2 MB a temporary: the gather
is memory-bound, and larger chunks fall out of the cache and run slower)."""


def timing_tests(
    exposure: np.ndarray, closes: np.ndarray, shuffles: int = 1000, seed: int = 0
) -> list[TimingTest]:
    """``timing_test`` of many (R, T) rows of one length and one seed at once: the same
    shuffles for every row, the products in the same order as one row at a time."""
    w = np.asarray(exposure, dtype=np.float64)
    px = np.asarray(closes, dtype=np.float64)
    if w.shape != px.shape or w.ndim != 2:
        raise StatsError(f"one exposure per close needed, got shapes {w.shape} and {px.shape}")
    if w.shape[1] < 2:
        return [TimingTest(0.0, None, 0)] * len(w)
    w, market = w[:, :-1], px[:, 1:] / px[:, :-1] - 1.0
    actual = np.prod(1.0 + w * market, axis=1) - 1.0
    varied = np.ptp(w, axis=1) >= 1e-12
    out = [TimingTest(float(a), None, 0) for a in actual]
    rows = np.flatnonzero(varied)
    if not len(rows):
        return out
    order = shuffle_orders(seed, shuffles, w.shape[1])
    step = max(1, TIMING_CHUNK // (shuffles * w.shape[1]))
    for lo in range(0, len(rows), step):
        chunk = rows[lo : lo + step]
        shuffled = np.prod(1.0 + w[chunk][:, order] * market[chunk][:, None, :], axis=2) - 1.0
        beaten = np.mean(shuffled < actual[chunk, None] - 1e-12, axis=1)
        for i, share in zip(chunk.tolist(), beaten.tolist(), strict=True):
            out[i] = TimingTest(float(actual[i]), float(share), shuffles)
    return out


@lru_cache(maxsize=64)
def shuffle_orders(seed: int, shuffles: int, days: int) -> np.ndarray:
    """The ``shuffles`` seeded permutations of ``days`` days the timing test applies (read-only):
    the same for every run of that seed and length, so drawn once per process."""
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((shuffles, days)), axis=1)
    order.setflags(write=False)
    return order
