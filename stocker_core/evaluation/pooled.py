"""The pooled held-out evidence: every policy against buy-and-hold over the independent
(non-overlapping) test windows of every ticker, with the family of comparisons corrected.

From the ``eval.rolling`` rows (one per window and policy) and the test-period equity
curves (``eval.equity_curves``) it computes, per policy, the mean Δ daily Sharpe and Δ
total return against buy-and-hold with (ticker, window)-cluster bootstrap CIs, the paired
t-test p-value and its Holm adjustment over the family, the minimum detectable difference
at α = 0.05 and power 0.8, and the percentile among random policies of the same trade
frequency; over the family, Hansen's SPA test and the best policy's Deflated Sharpe.
Hindsight upper bounds (``ideal``) and the benchmark itself are not in the family, nor are
clones (a policy identical to another on every window: ``clones.window_clones``): they are
listed under their original as "a2c = buy_and_hold", never counted as a try of their own
and never named the best.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from stocker_core.evaluation.backtests import ordered_policies, policy_label
from stocker_core.evaluation.clones import clone_label, clone_summary, window_clones
from stocker_core.evaluation.random_policies import random_percentile
from stocker_core.evaluation.report_statistics import ReportStatistic, report_statistics, statistic_values
from stocker_core.evaluation.significance import (
    DeflatedSharpe,
    SpaResult,
    deflated_sharpe_of_best,
    holm,
    independent_windows,
    min_detectable_difference,
    spa_test,
)
from stocker_core.evaluation.stats import StatsError, mean_ci, t_test

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
    clones: dict[str, str] = field(default_factory=dict)
    """``{policy: the policy it equals on every window}`` (leaderboard rows, not in the family)."""
    statistics: tuple[ReportStatistic, ...] = ()
    """The registered report statistics computed into the leaderboard (a column each)."""

    @property
    def distinct(self) -> pd.DataFrame:
        """The leaderboard rows of distinct policies (the family), best first."""
        if self.leaderboard.empty or "clone_of" not in self.leaderboard:
            return self.leaderboard
        return self.leaderboard.loc[self.leaderboard["clone_of"].isna()]

    @property
    def best(self) -> pd.Series | None:
        """The best distinct policy (a clone is never the best)."""
        distinct = self.distinct
        return distinct.iloc[0] if len(distinct) else None


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


def _min_detectable(diffs: np.ndarray, config: EvidenceConfig) -> float | None:
    """The smallest mean of ``diffs`` detectable at ``config``'s α and power."""
    spread = float(np.std(diffs, ddof=1)) if len(diffs) > 1 else 0.0
    return min_detectable_difference(spread, len(diffs), config.alpha, config.power)


def _random_rank(paths: dict[str, Path], config: EvidenceConfig) -> float:
    """The percentile of a policy's test-period paths among random policies trading as often."""
    tickers = sorted(paths)
    return random_percentile(
        [paths[t][0] for t in tickers],
        [paths[t][1] for t in tickers],
        config.random_policies,
        config.seed,
        trades=[paths[t][3] for t in tickers],
    ).percentile


def _leaderboard_row(
    policy: str,
    sharpe: pd.DataFrame,
    returns: pd.DataFrame,
    same: str | None,
    paths: dict[str, dict[str, Path]],
    policy_rows: pd.DataFrame,
    statistics: tuple[ReportStatistic, ...],
    config: EvidenceConfig,
) -> dict[str, object]:
    """One policy against the benchmark: Δ Sharpe and Δ return with CIs, p-value, minimum
    detectable differences, random-policy percentile and the report statistics."""
    d_sharpe = (sharpe[policy] - sharpe[BENCHMARK]).dropna().to_numpy()
    d_return = (returns[policy] - returns[BENCHMARK]).dropna().to_numpy()
    ci_s = mean_ci(d_sharpe, config.confidence, config.reps, config.seed)
    ci_r = mean_ci(d_return, config.confidence, config.reps, config.seed)
    test = t_test(d_sharpe)
    p = test.p_value if test else None
    rank = _random_rank(paths[policy], config) if policy in paths else None
    # a clone of the benchmark differs by exactly 0: nothing to detect, no size to quote
    to_benchmark = same == BENCHMARK
    return {
        "policy": policy,
        "label": clone_label(policy, same) if same else policy_label(policy),
        "clone_of": same,
        "n": ci_s.n,
        "d_sharpe": ci_s.mean,
        "d_sharpe_low": ci_s.low,
        "d_sharpe_high": ci_s.high,
        "d_return": ci_r.mean,
        "d_return_low": ci_r.low,
        "d_return_high": ci_r.high,
        "p_value": p,
        "mdd_sharpe": None if to_benchmark else _min_detectable(d_sharpe, config),
        "mdd_return": None if to_benchmark else _min_detectable(d_return, config),
        "random_percentile": rank,
        **statistic_values(policy_rows, statistics),
    }


def _family_tests(
    evidence: Evidence,
    returns: pd.DataFrame,
    family: list[str],
    paths: dict[str, dict[str, Path]],
    best: str,
    config: EvidenceConfig,
) -> None:
    """Hansen's SPA test over the family and the best policy's Deflated Sharpe, into
    ``evidence`` (a note where either cannot be computed)."""
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
    if best in daily:
        try:
            evidence.dsr = deflated_sharpe_of_best(daily, best)
        except StatsError as exc:
            evidence.notes.append(f"Deflated Sharpe not computed: {exc}")


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
    # clones on the windows the tests read: a policy equal to another on every independent
    # window adds nothing to the family, whatever it did on the overlapping ones
    independent_rows = independent_windows(rows)
    clones = {p: o for p, o in window_clones(independent_rows).items() if p in sharpe.columns}
    statistics = report_statistics()
    compared = [p for p in _family(rows) if p in sharpe.columns]
    family = [p for p in compared if p not in clones]
    paths = period_paths(curves)
    lines = [
        _leaderboard_row(
            policy,
            sharpe,
            returns,
            clones.get(policy),
            paths,
            independent_rows.loc[independent_rows["policy"] == policy],
            statistics,
            config,
        )
        for policy in compared
    ]
    board = pd.DataFrame(lines)
    if board.empty:
        return Evidence(board, 0, 0, None, None, None, None, ["no policy besides the benchmark"])
    board = _ranked(_with_holm(board), clones)
    distinct = board.loc[board["clone_of"].isna()]
    independent = sharpe[BENCHMARK].dropna()
    evidence = Evidence(
        board,
        windows=len(independent),
        tickers=independent.index.get_level_values("ticker").nunique(),
        mdd_return=_median(distinct["mdd_return"]),
        mdd_sharpe=_median(distinct["mdd_sharpe"]),
        spa=None,
        dsr=None,
        clones=clones,
        statistics=statistics,
    )
    if distinct.empty:
        evidence.notes.append("no distinct policy besides the benchmark: every one is a clone")
        return evidence
    _family_tests(evidence, returns, family, paths, str(distinct["policy"].iloc[0]), config)
    return evidence


def _with_holm(board: pd.DataFrame) -> pd.DataFrame:
    """Holm-adjusted p-values over the distinct policies; a clone shows its original's."""
    board = board.copy()
    distinct = board["clone_of"].isna()
    board["p_holm"] = None
    board.loc[distinct, "p_holm"] = holm(board.loc[distinct, "p_value"].tolist()) if distinct.any() else []
    adjusted = dict(zip(board["policy"], board["p_holm"], strict=True))
    board.loc[~distinct, "p_holm"] = [adjusted.get(o) for o in board.loc[~distinct, "clone_of"]]
    board["p_holm"] = pd.to_numeric(board["p_holm"], errors="coerce")
    return board


def _ranked(board: pd.DataFrame, clones: dict[str, str]) -> pd.DataFrame:
    """Distinct policies best first by mean Δ daily Sharpe, each clone right under its
    original, the benchmark's clones last."""
    distinct = board.loc[board["clone_of"].isna()].sort_values(
        "d_sharpe", ascending=False, na_position="last"
    )
    order: list[str] = []
    for policy in distinct["policy"]:
        order += [policy, *(c for c in board["policy"] if clones.get(c) == policy)]
    order += [p for p in board["policy"] if p not in order]
    return board.set_index("policy").loc[order].reset_index()


def _median(values: pd.Series) -> float | None:
    clean = pd.to_numeric(values, errors="coerce").dropna()
    return float(clean.median()) if len(clean) else None


def headline(evidence: Evidence, alpha: float = ALPHA) -> str:
    """The report's first sentence: does anything beat buy-and-hold on held-out data? The best
    is picked among distinct policies; clones are named at the end."""
    best = evidence.best
    clones = _clones_clause(evidence.clones)
    if best is None and evidence.clones:
        return f"No: every policy compared is identical to another on every window{clones}."
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
            f"(Holm-adjusted p = {p_holm}{spa}), {size}{clones}."
        )
    mdd = (
        f"; differences under {evidence.mdd_sharpe:.3f} daily Sharpe cannot be told apart at this size"
        if evidence.mdd_sharpe
        else ""
    )
    among = f" of {len(evidence.distinct)} distinct policies" if evidence.clones else ""
    return (
        f"No: nothing beats buy-and-hold on held-out data. The best{among}, {best['label']}, differs by "
        f"{ci} daily Sharpe (Holm-adjusted p = {p_holm}{spa}), {size}{mdd}{clones}."
    )


def _clones_clause(clones: dict[str, str]) -> str:
    if not clones:
        return ""
    return f". Clones, identical on every independent window and not counted: {clone_summary(clones)}"


def _fmt_ci(mean: float | None, low: float | None, high: float | None) -> str:
    if mean is None or pd.isna(mean):
        return "–"
    bounds = [v for v in (low, high) if v is not None and not pd.isna(v)]
    digits = _digits(max(abs(v) for v in (mean, *bounds)))
    if len(bounds) < 2:
        return f"{mean:+.{digits}f}"
    return f"{mean:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def _digits(largest: float) -> int:
    """Three decimals, or as many as it takes to show two significant digits of a difference
    smaller than 0.0005 (a near-twin of buy-and-hold must not read "+0.000 [+0.000, +0.000]")."""
    if largest == 0 or largest >= 5e-4:
        return 3
    return min(8, 1 - int(np.floor(np.log10(largest))))


def leaderboard_table(evidence: Evidence, confidence: float = 0.95) -> pd.DataFrame:
    """The leaderboard formatted for the report, the registered report statistics
    (``report_statistics``) as the last columns; a clone's row reads "= <original>" in every
    cell after the window count (its numbers are its original's, or exactly 0 against the
    benchmark: nothing of its own to show)."""
    pct = int(round(confidence * 100))
    out = []
    board = evidence.leaderboard
    for r, record in zip(board.itertuples(index=False), board.to_dict("records"), strict=True):
        same = getattr(r, "clone_of", None)
        cells = {
            f"Δ daily Sharpe vs buy_and_hold [{pct}% CI]": _fmt_ci(
                r.d_sharpe, r.d_sharpe_low, r.d_sharpe_high
            ),
            f"Δ total return [{pct}% CI]": _fmt_ci(r.d_return, r.d_return_low, r.d_return_high),
            "p (t-test)": "–" if pd.isna(r.p_value) else f"{r.p_value:.2g}",
            "Holm p": "–" if pd.isna(r.p_holm) else f"{r.p_holm:.2g}",
            "min. detectable Δ Sharpe": "–" if pd.isna(r.mdd_sharpe) else f"{r.mdd_sharpe:.3f}",
            "percentile among random": "–" if pd.isna(r.random_percentile) else f"{r.random_percentile:.0f}",
            **{s.name: s.fmt(record.get(s.name)) for s in evidence.statistics},
        }
        if isinstance(same, str):
            cells = dict.fromkeys(cells, f"= {same}")
        out.append({"policy": r.label, "independent windows": r.n, **cells})
    return pd.DataFrame(out)
