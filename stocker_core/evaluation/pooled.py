"""The pooled held-out evidence: every policy against buy-and-hold over the independent
(non-overlapping) test windows of every ticker, with the family of comparisons corrected.

From the ``eval.rolling`` rows (one per window and policy) and the test-period equity
curves (``eval.equity_curves``) it computes, per policy, the mean Δ daily Sharpe and Δ
total return against buy-and-hold with (ticker, window)-cluster bootstrap CIs, the paired
t-test p-value and its Holm adjustment over the family, the minimum detectable difference
at α = 0.05 and power 0.8, and the percentile among random policies of the same trade
frequency; over the family, Hansen's SPA test and the best policy's Deflated Sharpe.
Hindsight upper bounds (``ideal``) and the benchmark itself are not in the family.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from stocker_core.evaluation.random_policies import random_percentile
from stocker_core.evaluation.runner import ordered_policies, policy_label
from stocker_core.evaluation.significance import (
    DeflatedSharpe,
    SpaResult,
    cluster_bootstrap_ci,
    deflated_sharpe_of_best,
    holm,
    independent_windows,
    min_detectable_difference,
    spa_test,
)
from stocker_core.evaluation.stats import StatsError

BENCHMARK = "buy_and_hold"
ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class EvidenceConfig:
    """Bootstrap and random-policy settings of the pooled evidence."""

    confidence: float = 0.95
    reps: int = 2000
    random_policies: int = 1000
    seed: int = 0
    alpha: float = ALPHA
    power: float = POWER


@dataclass
class Evidence:
    """What the report's top section says."""

    leaderboard: pd.DataFrame
    windows: int
    tickers: int
    mdd_return: float | None
    mdd_sharpe: float | None
    spa: SpaResult | None
    dsr: DeflatedSharpe | None
    notes: list[str] = field(default_factory=list)

    @property
    def best(self) -> pd.Series | None:
        return self.leaderboard.iloc[0] if len(self.leaderboard) else None


def window_sharpe(rows: pd.DataFrame) -> pd.Series:
    """Daily Sharpe per row, 0 where the value never moved (cash: undefined, taken as 0)."""
    sharpe = pd.to_numeric(rows["sharpe"], errors="coerce")
    flat = pd.to_numeric(rows["volatility"], errors="coerce").fillna(0.0) <= 0
    return sharpe.where(~(sharpe.isna() & flat), 0.0)


def _family(rows: pd.DataFrame) -> list[str]:
    upper = set(rows.loc[rows["upper_bound"].astype(bool), "policy"]) if "upper_bound" in rows else set()
    return [
        p for p in ordered_policies(list(dict.fromkeys(rows["policy"]))) if p != BENCHMARK and p not in upper
    ]


def paired_frame(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """(ticker, window) × policy values of ``metric`` over independent windows."""
    kept = independent_windows(rows).copy()
    kept["value"] = (
        window_sharpe(kept) if metric == "sharpe" else pd.to_numeric(kept[metric], errors="coerce")
    )
    return kept.pivot_table(
        index=["ticker", "window_index"], columns="policy", values="value", aggfunc="first"
    )


Path = tuple[np.ndarray, np.ndarray, np.ndarray, int]


def period_paths(curves: pd.DataFrame) -> dict[str, dict[str, Path]]:
    """{policy: {ticker: (exposures, closes, daily returns, trading days)}} from test-period
    equity curves."""
    out: dict[str, dict[str, Path]] = {}
    if curves.empty:
        return out
    for (policy, ticker), part in curves.groupby(["policy", "ticker"], sort=True):
        part = part.sort_values("step")
        values = part["value"].to_numpy(dtype=float)
        days = part.iloc[1:]
        closes = days["close"].to_numpy(dtype=float)
        exposure = days["position"].to_numpy(dtype=float) * closes / days["value"].to_numpy(dtype=float)
        trades = int((days["traded"].fillna(0.0).abs() > 0).sum())
        out.setdefault(str(policy), {})[str(ticker)] = (
            exposure,
            closes,
            values[1:] / values[:-1] - 1.0,
            trades,
        )
    return out


def pooled_evidence(
    rows: pd.DataFrame, curves: pd.DataFrame, config: EvidenceConfig | None = None
) -> Evidence:
    """The leaderboard (best first by mean Δ daily Sharpe) and the family-wide tests."""
    config = config or EvidenceConfig()
    empty = Evidence(pd.DataFrame(), 0, 0, None, None, None, None)
    if rows.empty or BENCHMARK not in set(rows["policy"]):
        empty.notes.append("no buy-and-hold rows in the rolling windows: nothing to compare with")
        return empty
    sharpe = paired_frame(rows, "sharpe")
    returns = paired_frame(rows, "total_return")
    family = [p for p in _family(rows) if p in sharpe.columns]
    paths = period_paths(curves)
    from scipy.stats import ttest_1samp

    lines = []
    for policy in family:
        d_sharpe = (sharpe[policy] - sharpe[BENCHMARK]).dropna().to_numpy()
        d_return = (returns[policy] - returns[BENCHMARK]).dropna().to_numpy()
        ci_s = cluster_bootstrap_ci(d_sharpe, config.confidence, config.reps, config.seed)
        ci_r = cluster_bootstrap_ci(d_return, config.confidence, config.reps, config.seed)
        p = float(ttest_1samp(d_sharpe, 0.0).pvalue) if len(d_sharpe) > 1 and np.ptp(d_sharpe) > 0 else None
        rank = None
        if policy in paths:
            tickers = sorted(paths[policy])
            rank = random_percentile(
                [paths[policy][t][0] for t in tickers],
                [paths[policy][t][1] for t in tickers],
                config.random_policies,
                config.seed,
                trades=[paths[policy][t][3] for t in tickers],
            ).percentile
        lines.append(
            {
                "policy": policy,
                "label": policy_label(policy),
                "n": ci_s.n,
                "d_sharpe": ci_s.mean,
                "d_sharpe_low": ci_s.low,
                "d_sharpe_high": ci_s.high,
                "d_return": ci_r.mean,
                "d_return_low": ci_r.low,
                "d_return_high": ci_r.high,
                "p_value": p,
                "mdd_sharpe": min_detectable_difference(
                    float(np.std(d_sharpe, ddof=1)) if len(d_sharpe) > 1 else 0.0,
                    len(d_sharpe),
                    config.alpha,
                    config.power,
                ),
                "mdd_return": min_detectable_difference(
                    float(np.std(d_return, ddof=1)) if len(d_return) > 1 else 0.0,
                    len(d_return),
                    config.alpha,
                    config.power,
                ),
                "random_percentile": rank,
            }
        )
    board = pd.DataFrame(lines)
    if board.empty:
        return Evidence(board, 0, 0, None, None, None, None, ["no policy besides the benchmark"])
    board["p_holm"] = holm(board["p_value"].tolist())
    board = board.sort_values("d_sharpe", ascending=False, na_position="last").reset_index(drop=True)
    independent = sharpe[BENCHMARK].dropna()
    evidence = Evidence(
        board,
        windows=len(independent),
        tickers=independent.index.get_level_values("ticker").nunique(),
        mdd_return=_median(board["mdd_return"]),
        mdd_sharpe=_median(board["mdd_sharpe"]),
        spa=None,
        dsr=None,
    )
    try:
        evidence.spa = spa_test(
            returns[BENCHMARK].to_numpy(),
            {p: returns[p].to_numpy() for p in family},
            config.reps,
            config.seed,
            1,
        )
    except StatsError as exc:
        evidence.notes.append(f"SPA test not computed: {exc}")
    daily = {
        p: np.concatenate([paths[p][t][2] for t in sorted(paths[p])])
        for p in [BENCHMARK, *family]
        if p in paths
    }
    best = str(board["policy"].iloc[0])
    if best in daily:
        try:
            evidence.dsr = deflated_sharpe_of_best(daily, best)
        except StatsError as exc:
            evidence.notes.append(f"Deflated Sharpe not computed: {exc}")
    return evidence


def _median(values: pd.Series) -> float | None:
    clean = pd.to_numeric(values, errors="coerce").dropna()
    return float(clean.median()) if len(clean) else None


def headline(evidence: Evidence, alpha: float = ALPHA) -> str:
    """The report's first sentence: does anything beat buy-and-hold on held-out data?"""
    best = evidence.best
    if best is None:
        return "No answer yet: no policy was compared with buy-and-hold on the test split."
    spa = f"; SPA p = {evidence.spa.p_consistent:.2g}" if evidence.spa else ""
    size = f"over {evidence.windows} independent test windows of {evidence.tickers} ticker(s)"
    ci = _fmt_ci(best["d_sharpe"], best["d_sharpe_low"], best["d_sharpe_high"])
    p_holm = "–" if pd.isna(best["p_holm"]) else f"{best['p_holm']:.2g}"
    won = (
        pd.notna(best["p_holm"])
        and best["p_holm"] < alpha
        and best["d_sharpe"] > 0
        and (evidence.spa is None or evidence.spa.p_consistent < alpha)
    )
    if won:
        return (
            f"Yes: {best['label']} beats buy-and-hold on held-out data by {ci} daily Sharpe "
            f"(Holm-adjusted p = {p_holm}{spa}), {size}."
        )
    mdd = (
        f"; differences under {evidence.mdd_sharpe:.3f} daily Sharpe cannot be told apart at this size"
        if evidence.mdd_sharpe
        else ""
    )
    return (
        f"No: nothing beats buy-and-hold on held-out data. The best, {best['label']}, differs by "
        f"{ci} daily Sharpe (Holm-adjusted p = {p_holm}{spa}), {size}{mdd}."
    )


def _fmt_ci(mean: float | None, low: float | None, high: float | None) -> str:
    if mean is None or pd.isna(mean):
        return "–"
    if low is None or pd.isna(low) or high is None or pd.isna(high):
        return f"{mean:+.3f}"
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def leaderboard_table(evidence: Evidence, confidence: float = 0.95) -> pd.DataFrame:
    """The leaderboard formatted for the report."""
    pct = int(round(confidence * 100))
    out = []
    for r in evidence.leaderboard.itertuples(index=False):
        out.append(
            {
                "policy": r.label,
                "independent windows": r.n,
                f"Δ daily Sharpe vs buy_and_hold [{pct}% CI]": _fmt_ci(
                    r.d_sharpe, r.d_sharpe_low, r.d_sharpe_high
                ),
                f"Δ total return [{pct}% CI]": _fmt_ci(r.d_return, r.d_return_low, r.d_return_high),
                "p (t-test)": "–" if pd.isna(r.p_value) else f"{r.p_value:.2g}",
                "Holm p": "–" if pd.isna(r.p_holm) else f"{r.p_holm:.2g}",
                "min. detectable Δ Sharpe": "–" if pd.isna(r.mdd_sharpe) else f"{r.mdd_sharpe:.3f}",
                "percentile among random": "–"
                if pd.isna(r.random_percentile)
                else f"{r.random_percentile:.0f}",
            }
        )
    return pd.DataFrame(out)
