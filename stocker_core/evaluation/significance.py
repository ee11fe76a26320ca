"""Significance over many tickers and many policies: independent (non-overlapping) windows,
the minimum detectable difference at a stated power, Holm-adjusted p-values, Hansen's SPA
test and the Deflated Sharpe Ratio. Pure functions on arrays and frames, seeded. The mean's
interval and the t-test live in ``stats`` (``mean_ci``, ``t_test``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stocker_core.evaluation.stats import StatsError

EULER_GAMMA = 0.5772156649015329


def independent_windows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of windows that share no day with an earlier kept window of the same ticker.

    ``rows`` are ``eval.rolling`` rows (one per window and policy). Per ticker, windows are
    taken in start order and kept when they start after the last kept window ended, so the
    kept windows are disjoint and, for a 63-day window stepped by 7, every 9th one.
    """
    if rows.empty:
        return rows
    keep: set[tuple[str, int]] = set()
    spans = rows.drop_duplicates(["ticker", "window_index"])[
        ["ticker", "window_index", "start_date", "end_date"]
    ]
    for ticker, part in spans.groupby("ticker", sort=True):
        last_end = None
        for r in part.sort_values("start_date").itertuples(index=False):
            start, end = pd.Timestamp(r.start_date), pd.Timestamp(r.end_date)
            if last_end is None or start > last_end:
                keep.add((str(ticker), int(r.window_index)))
                last_end = end
    chosen = [(str(t), int(w)) in keep for t, w in zip(rows["ticker"], rows["window_index"], strict=True)]
    return rows.loc[chosen]


def min_detectable_difference(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """Smallest true mean difference a two-sided one-sample t-test on ``n`` paired differences
    of standard deviation ``sd`` detects with probability ``power`` at level ``alpha``
    (None with fewer than 2 values or no spread)."""
    from statsmodels.stats.power import TTestPower

    if n < 2 or not math.isfinite(sd) or sd <= 0:
        return None
    effect = TTestPower().solve_power(
        effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided"
    )
    return float(effect) * float(sd)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values over the family (None / NaN entries are not in the family): the
    ``i``-th smallest of ``m`` times ``m - i + 1``, made non-decreasing, capped at 1 — what
    statsmodels' ``multipletests(method="holm")`` returns (tested against it), written here
    because that call runs a full ``gc.collect()`` each time (~0.4 s in a process holding
    Dagster and torch)."""
    raw = np.array([np.nan if p is None else float(p) for p in p_values], dtype=np.float64)
    present = np.isfinite(raw)
    out: list[float | None] = [None] * len(raw)
    if present.any():
        family = raw[present]
        order = np.argsort(family)
        scaled = family[order] * np.arange(len(family), 0, -1)
        adjusted = np.empty_like(family)
        adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
        for slot, value in zip(np.flatnonzero(present), adjusted, strict=True):
            out[int(slot)] = float(value)
    return out


@dataclass(frozen=True)
class SpaResult:
    """Hansen's SPA test of "no policy beats the benchmark" (p-values: lower, consistent, upper)."""

    p_lower: float
    p_consistent: float
    p_upper: float
    best: str
    n: int
    policies: int


def spa_test(
    benchmark: Sequence[float] | np.ndarray,
    policies: Mapping[str, Sequence[float] | np.ndarray],
    reps: int = 2000,
    seed: int = 0,
    block_size: int | None = None,
) -> SpaResult:
    """Hansen's Superior Predictive Ability test with ``arch.bootstrap.SPA``.

    ``benchmark`` and each of ``policies`` are paired performance values where higher is
    better (e.g. one return per independent window); arch takes losses, so their negatives
    go in. Rows with a NaN anywhere are dropped. ``block_size`` None lets arch choose.
    """
    from arch.bootstrap import SPA

    if not policies:
        raise StatsError("the SPA test needs at least one policy")
    names = list(policies)
    frame = pd.DataFrame({"__benchmark__": np.asarray(benchmark, dtype=np.float64)})
    for name in names:
        values = np.asarray(policies[name], dtype=np.float64)
        if len(values) != len(frame):
            raise StatsError(f"{name}: {len(values)} values, the benchmark has {len(frame)}")
        frame[name] = values
    frame = frame.dropna()
    if len(frame) < 2:
        raise StatsError(f"the SPA test needs at least 2 complete rows, got {len(frame)}")
    spa = SPA(
        -frame["__benchmark__"].to_numpy(),
        -frame[names].to_numpy(),
        block_size=block_size,
        reps=reps,
        seed=seed,
    )
    spa.compute()
    p = spa.pvalues
    best = names[int(np.argmax(frame[names].mean().to_numpy()))]
    return SpaResult(
        float(p["lower"]), float(p["consistent"]), float(p["upper"]), best, len(frame), len(names)
    )


def expected_max_sharpe(trial_variance: float, trials: int) -> float:
    """SR₀: the expected maximum Sharpe of ``trials`` unskilled strategies whose Sharpe
    estimates have variance ``trial_variance`` (Bailey & López de Prado 2014, eq. for SR₀)."""
    from scipy.stats import norm

    if trials < 2 or trial_variance <= 0:
        return 0.0
    return math.sqrt(trial_variance) * (
        (1 - EULER_GAMMA) * norm.ppf(1 - 1 / trials) + EULER_GAMMA * norm.ppf(1 - 1 / (trials * math.e))
    )


def deflated_sharpe(
    sharpe: float, observations: int, skew: float, kurtosis: float, trial_variance: float, trials: int
) -> float:
    """Deflated Sharpe Ratio: the probability that the true Sharpe exceeds SR₀ given ``trials``
    tries (Bailey & López de Prado 2014). ``sharpe`` and ``trial_variance`` are per period
    (daily here); ``kurtosis`` is Pearson's (3 for a normal), not the excess."""
    from scipy.stats import norm

    if observations < 2:
        raise StatsError("the Deflated Sharpe needs at least 2 returns")
    threshold = expected_max_sharpe(trial_variance, trials)
    denominator = 1 - skew * sharpe + (kurtosis - 1) / 4 * sharpe**2
    if denominator <= 0:
        raise StatsError("skew and kurtosis give a non-positive variance for the Sharpe estimate")
    z = (sharpe - threshold) * math.sqrt(observations - 1) / math.sqrt(denominator)
    return float(norm.cdf(z))


@dataclass(frozen=True)
class DeflatedSharpe:
    """The best policy's daily Sharpe, the SR₀ it must beat and its Deflated Sharpe Ratio."""

    policy: str
    sharpe: float
    threshold: float
    dsr: float
    observations: int
    trials: int


def deflated_sharpe_of_best(returns: Mapping[str, Sequence[float] | np.ndarray], best: str) -> DeflatedSharpe:
    """DSR of ``best`` among every tried policy's daily returns (the family sets SR₀)."""
    from scipy.stats import kurtosis, skew

    if best not in returns:
        raise StatsError(f"{best} is not among the policies' returns")
    sharpes = []
    for values in returns.values():
        r = np.asarray(values, dtype=np.float64)
        r = r[np.isfinite(r)]
        sd = r.std(ddof=1) if len(r) > 1 else 0.0
        sharpes.append(r.mean() / sd if sd > 0 else np.nan)
    sharpes_arr = np.asarray(sharpes)
    trial_variance = float(np.nanvar(sharpes_arr, ddof=1)) if np.isfinite(sharpes_arr).sum() > 1 else 0.0
    r = np.asarray(returns[best], dtype=np.float64)
    r = r[np.isfinite(r)]
    sd = r.std(ddof=1) if len(r) > 1 else 0.0
    if sd <= 0:
        raise StatsError(f"{best}: constant returns have no Sharpe")
    sr = float(r.mean() / sd)
    trials = len(returns)
    dsr = deflated_sharpe(
        sr, len(r), float(skew(r)), float(kurtosis(r, fisher=False)), trial_variance, trials
    )
    return DeflatedSharpe(best, sr, expected_max_sharpe(trial_variance, trials), dsr, len(r), trials)
