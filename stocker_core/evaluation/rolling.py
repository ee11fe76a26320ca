"""Rolling-window evaluation over the test split, and the whole test period as one backtest.

Windows are ``window_days`` consecutive trading days (default 63 ≈ 3 months), moved
forward ``step_days`` trading days (default 7) at a time, inside each ticker's test
split; no retraining, fixed settings. Every policy plays every window. The ``random``
policy is seeded per window with ``seed + window_index`` (one draw per window). Per
policy and metric: the mean over windows with a moving-block bootstrap confidence
interval (blocks of ceil(window/step) windows, since neighbouring windows share most of
their days); paired comparisons (wins, two-sided sign test) against the baselines on the
independent (non-overlapping) windows only, pooled across tickers, with Holm-adjusted
p-values over the family of comparisons (hindsight upper bounds left out of the family).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import pandas as pd

from stocker_core.env.episode import Episode
from stocker_core.errors import EmptyDataError
from stocker_core.evaluation.backtests import Backtest, PolicyRun, policy_label
from stocker_core.evaluation.metrics import METRIC_NAMES
from stocker_core.evaluation.significance import holm, independent_windows
from stocker_core.evaluation.splits import SplitRange
from stocker_core.evaluation.stats import bootstrap_ci, sign_test

BAR_COLUMNS = ["date", "open", "high", "low", "close", "adj_close", "volume"]
SUMMARY_METRICS = (*METRIC_NAMES, "timing_share")


@dataclass(frozen=True)
class RollingConfig:
    """Window length and step in trading days, statistics settings, paired baselines."""

    window_days: int = 63
    step_days: int = 7
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0
    comparison_metric: str = "total_return"
    baselines: tuple[str, ...] = ("buy_and_hold", "random")

    @property
    def block(self) -> int:
        """Windows per bootstrap block: those that overlap the first one."""
        return max(1, math.ceil(self.window_days / self.step_days))


def window_starts(days: int, window: int, step: int) -> list[int]:
    """Start offsets of full windows of ``window`` days stepped by ``step`` in ``days`` days."""
    if window < 2 or step < 1:
        raise ValueError("a window needs at least 2 days and a step of at least 1")
    return list(range(0, days - window + 1, step))


def slice_episode(bars: pd.DataFrame, lo: int, hi: int, ticker: str, key: str, cash: float) -> Episode:
    """An episode over ``bars[lo:hi]`` (sorted bars of one ticker) with everything before as history."""
    window = bars[BAR_COLUMNS].iloc[lo:hi].reset_index(drop=True)
    return Episode(
        key=key,
        ticker=ticker,
        window_start=window["date"].iloc[0].date(),
        window_end=window["date"].iloc[-1].date() + timedelta(days=1),
        bars=window,
        history=bars[BAR_COLUMNS].iloc[:lo].reset_index(drop=True),
        starting_cash=cash,
        source="warehouse",
    )


def split_bounds(bars: pd.DataFrame, split: SplitRange) -> tuple[int, int]:
    """[lo, hi) row positions of ``split``'s days in sorted ``bars``."""
    lo, hi = bars["date"].searchsorted(
        [pd.Timestamp(split.start), pd.Timestamp(split.end) + pd.Timedelta(days=1)]
    )
    if hi <= lo:
        raise EmptyDataError(
            f"{split.ticker}: no stored bars in its {split.split} split {split.start}…{split.end}"
        )
    return int(lo), int(hi)


def test_period_episode(bars: pd.DataFrame, test: SplitRange, cash: float) -> Episode:
    """The whole test split of one ticker as one episode (key ``TICKER|test``)."""
    lo, hi = split_bounds(bars, test)
    return slice_episode(bars, lo, hi, test.ticker, f"{test.ticker}|test", cash)


def window_episodes(
    bars: pd.DataFrame, test: SplitRange, cash: float, config: RollingConfig | None = None
) -> list[Episode]:
    """The episodes of every rolling window of ``test`` (one ticker), oldest first; the
    window at index i is played with seed ``config.seed + i``."""
    config = config or RollingConfig()
    lo, hi = split_bounds(bars, test)
    starts = window_starts(hi - lo, config.window_days, config.step_days)
    if not starts:
        raise EmptyDataError(
            f"{test.ticker}: the test split holds {hi - lo} trading days, fewer than one "
            f"{config.window_days}-day window"
        )
    episodes = []
    for offset in starts:
        first = lo + offset
        key = f"{test.ticker}|{bars['date'].iloc[first].date().isoformat()}"
        episodes.append(slice_episode(bars, first, first + config.window_days, test.ticker, key, cash))
    return episodes


def rolling_rows(results: Sequence[Backtest]) -> pd.DataFrame:
    """``eval.rolling`` rows: one per (window, policy)."""
    rows = []
    for index, result in enumerate(results):
        for run in result.runs:
            row = run.row()
            rows.append(
                {
                    "ticker": run.ticker,
                    "window_index": index,
                    "start_date": run.dates[0],
                    "end_date": run.dates[-1],
                    "trading_days": len(run.dates),
                    "policy": run.policy,
                    "label": row["label"],
                    "upper_bound": row["upper_bound"],
                    **{m: row[m] for m in METRIC_NAMES},
                    "invalid_steps": row["invalid_steps"],
                    "timing_share": row["timing_share"],
                    "method": run.method,
                    "seed": run.seed,
                    "notes": row["notes"],
                }
            )
    return pd.DataFrame(rows)


def summarise(rows: pd.DataFrame, config: RollingConfig | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``eval.rolling_summary``, ``eval.rolling_comparisons``) of rolling rows."""
    config = config or RollingConfig()
    rows = rows.sort_values(["ticker", "window_index"])
    summary, comparisons = [], []
    for policy, part in rows.groupby("policy", sort=False):
        for metric in SUMMARY_METRICS:
            values = pd.to_numeric(part[metric], errors="coerce").to_numpy(dtype=float)
            ci = bootstrap_ci(values, config.confidence, config.resamples, config.seed, config.block)
            summary.append(
                {
                    "policy": policy,
                    "label": policy_label(str(policy)),
                    "upper_bound": bool(part["upper_bound"].iloc[0]),
                    "metric": metric,
                    "mean": ci.mean,
                    "ci_low": ci.low,
                    "ci_high": ci.high,
                    "n": ci.n,
                    "confidence": config.confidence,
                    "block": config.block,
                }
            )
    metric = config.comparison_metric
    # significance on windows that share no day (overlapping windows stay for the means and plots)
    wide = independent_windows(rows).pivot_table(
        index=["ticker", "window_index"], columns="policy", values=metric, aggfunc="first"
    )
    for baseline in config.baselines:
        if baseline not in wide.columns:
            continue
        for policy in wide.columns:
            if policy == baseline:
                continue
            test = sign_test(wide[policy].to_numpy(float), wide[baseline].to_numpy(float))
            comparisons.append(
                {
                    "policy": policy,
                    "baseline": baseline,
                    "metric": metric,
                    "wins": test.wins,
                    "losses": test.losses,
                    "ties": test.ties,
                    "n": test.n,
                    "p_value": test.p_value,
                }
            )
    if comparisons:
        upper = set(rows.loc[rows["upper_bound"].astype(bool), "policy"])
        family = [c for c in comparisons if c["policy"] not in upper]
        for c, adjusted in zip(family, holm([c["p_value"] for c in family]), strict=True):
            c["p_holm"] = adjusted
    return pd.DataFrame(summary), pd.DataFrame(comparisons)


def verdict(
    policy: str,
    baseline: str,
    wins: int,
    n: int,
    p_value: float | None,
    alpha: float = 0.05,
    ties: int = 0,
    p_holm: float | None = None,
) -> str:
    """One plain-language line, e.g. "council beats random in 15/30 independent windows, p = 1.0,
    Holm p = 1.0 — not distinguishable from chance" (``n`` counts the windows that did not tie).
    With ``p_holm`` the verdict rests on the Holm-adjusted p-value."""
    label = policy_label(policy)
    if n == 0 or p_value is None:
        return f"{label} ties {baseline} in every window — no difference"
    tied = f" ({ties} tied window{'s' if ties != 1 else ''} left out)" if ties else ""
    holm_text = "" if p_holm is None else f", Holm p = {p_holm:.2g}"
    head = f"{label} beats {baseline} in {wins}/{n} independent windows{tied}, p = {p_value:.2g}{holm_text}"
    decisive = p_value if p_holm is None else p_holm
    if decisive >= alpha:
        return f"{head} — not distinguishable from chance"
    better = wins * 2 > n
    test = "sign test, Holm-adjusted" if p_holm is not None else "sign test"
    return f"{head} — {'reliably better' if better else 'reliably worse'} ({test}, α = {alpha})"


def runs_of(results: Sequence[Backtest]) -> list[PolicyRun]:
    return [run for result in results for run in result.runs]
