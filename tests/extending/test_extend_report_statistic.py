"""Extension point "a report statistic": one function plus one ``register_statistic`` call
puts a column in the report's leaderboard (docs/extending.md, "Add a report statistic")."""

from __future__ import annotations

import pandas as pd
import pytest

from stocker_core.evaluation.pooled import EvidenceConfig, leaderboard_table, pooled_evidence
from stocker_core.evaluation.report import ReportData, report_context
from stocker_core.evaluation.report_statistics import (
    register_statistic,
    report_statistics,
    unregister_statistic,
)
from stocker_core.evaluation.stats import StatsError

NAME = "best window return"
RETURNS = {
    "buy_and_hold": [0.010, 0.020, -0.010, 0.005],
    "macd": [0.030, -0.020, 0.060, 0.000],
    "zmr": [0.000, 0.010, 0.015, -0.040],
}
"""Each policy's total return on four disjoint windows (two per ticker)."""


def best_window_return(rows: pd.DataFrame) -> float | None:
    """The toy statistic: the policy's best total return over its independent windows."""
    values = pd.to_numeric(rows["total_return"], errors="coerce").dropna()
    return float(values.max()) if len(values) else None


@pytest.fixture
def registered():
    register_statistic(NAME, best_window_return)
    try:
        yield
    finally:
        unregister_statistic(NAME)


def _rolling() -> pd.DataFrame:
    """``eval.rolling`` rows of disjoint 5-day windows, as the report reads them."""
    rows = []
    for i in range(4):
        ticker, index = ("AAA", "BBB")[i % 2], i // 2
        start = pd.Timestamp("2021-03-01") + pd.Timedelta(weeks=2 * index)
        for policy, returns in RETURNS.items():
            rows.append(
                {
                    "ticker": ticker,
                    "window_index": index,
                    "start_date": start,
                    "end_date": start + pd.Timedelta(days=4),
                    "trading_days": 5,
                    "policy": policy,
                    "upper_bound": False,
                    "sharpe": returns[i] * 10,
                    "volatility": 0.1,
                    "total_return": returns[i],
                    "timing_share": float("nan"),
                }
            )
    return pd.DataFrame(rows)


def test_a_registered_statistic_is_a_leaderboard_column_with_its_value(registered):
    evidence = pooled_evidence(_rolling(), pd.DataFrame(), EvidenceConfig(reps=200, random_policies=10))
    table = leaderboard_table(evidence).set_index("policy")
    assert list(table.columns)[-1] == NAME
    assert table.loc["macd", NAME] == "0.06" and table.loc["zmr", NAME] == "0.015"
    assert evidence.leaderboard.set_index("policy").loc["macd", NAME] == pytest.approx(0.06)


def test_the_report_shows_the_column(registered):
    empty = pd.DataFrame()
    data = ReportData(
        splits=empty,
        episodes=empty,
        test_period=empty,
        curves=empty,
        rolling=_rolling(),
        summary=pd.DataFrame(columns=["policy", "metric", "mean", "ci_low", "ci_high"]),
        comparisons=empty,
    )
    context = report_context(data)
    header, _, *lines = context["leaderboard_md"].splitlines()
    assert header.rstrip(" |").endswith(NAME)
    cells = {line.split("|")[1].strip(): line.rstrip(" |").rsplit("|", 1)[-1].strip() for line in lines}
    assert cells == {"macd": "0.06", "zmr": "0.015"}
    assert f"<th>{NAME}</th>" in context["leaderboard_html"]


def test_unregistered_it_is_gone_and_names_are_checked():
    assert NAME not in {s.name for s in report_statistics()}
    table = leaderboard_table(pooled_evidence(_rolling(), pd.DataFrame(), EvidenceConfig(reps=200)))
    assert NAME not in table.columns
    with pytest.raises(StatsError, match="leaderboard has that column"):
        register_statistic("p_value", best_window_return)
    register_statistic(NAME, best_window_return)
    try:
        with pytest.raises(StatsError, match="already registered"):
            register_statistic(NAME, lambda rows: 0.0)
    finally:
        unregister_statistic(NAME)
