"""Scoring: each entry against its outcome bar, and each policy's forward record.

An entry decided at close ``c0`` holds ``target_exposure`` of the account over the next
session and paid ``cost_fraction`` of it to get there, so with the outcome close ``c1`` its
return is ``(1 - cost_fraction) * (1 + target_exposure * (c1 / c0 - 1)) - 1``: exactly the
paper account's change from before the trade to the next close, as a backtest's account moves.
Its excess is that minus buy-and-hold's return on the same ticker and session.

A policy's forward record, per mode (``live`` and ``replayed`` are never mixed): the days
scored, the compounded equal-weight daily return over its tickers, buy-and-hold's, the
excess, and the mean daily excess with a t-interval over the days (no interval under two),
its p-value and the minimum detectable edge at that many days (80 % power, 5 % two-sided).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

import numpy as np
import pandas as pd

from stocker_core.config import Settings
from stocker_core.errors import UnknownTickerError
from stocker_core.evaluation.significance import min_detectable_difference
from stocker_core.evaluation.stats import t_interval, t_test
from stocker_core.ledger.entries import BENCHMARK, ENTRY_FIELDS_IN_SCORES, LedgerEntry
from stocker_core.market.bars import load_bars
from stocker_core.market.clock import clock_now, close_of

SCORE_COLUMNS = (
    "seq",
    *ENTRY_FIELDS_IN_SCORES,
    "outcome_close",
    "session_return",
    "policy_return",
    "benchmark_return",
    "excess",
)
RECORD_COLUMNS = (
    "mode",
    "policy",
    "days",
    "tickers",
    "first_session",
    "last_session",
    "cumulative_return",
    "benchmark_cumulative",
    "excess_cumulative",
    "mean_daily_excess",
    "ci_low",
    "ci_high",
    "p_value",
    "min_detectable_edge",
)


def entry_return(exposure: float, cost_fraction: float, decision_close: float, outcome_close: float) -> float:
    """The account's return from before the decision's trade to the outcome close."""
    return (1.0 - cost_fraction) * (1.0 + exposure * (outcome_close / decision_close - 1.0)) - 1.0


def _outcome_closes(settings: Settings, entries: Sequence[LedgerEntry]) -> dict[tuple[str, str], float]:
    """``{(ticker, ISO date): close}`` of the outcome sessions, read once per ticker."""
    closes: dict[tuple[str, str], float] = {}
    by_ticker: dict[str, list[date]] = {}
    for e in entries:
        by_ticker.setdefault(e.ticker, []).append(date.fromisoformat(e.for_session))
    for ticker, days in by_ticker.items():
        try:
            bars, _ = load_bars(settings, ticker, min(days), max(days) + timedelta(days=1))
        except UnknownTickerError:
            continue
        for day, close in zip(bars["date"], bars["close"], strict=True):
            closes[(ticker, pd.Timestamp(day).date().isoformat())] = float(close)
    return closes


def score_entries(
    settings: Settings, entries: Sequence[LedgerEntry], instant: pd.Timestamp | None = None
) -> tuple[pd.DataFrame, int]:
    """One scored row per entry whose outcome session has closed by ``instant`` (default: the
    clock) and whose bar exists; and the number of entries still pending."""
    instant = clock_now(settings.clock) if instant is None else instant
    due = [e for e in entries if close_of(date.fromisoformat(e.for_session)) <= instant]
    closes = _outcome_closes(settings, due)
    rows = []
    for e in due:
        outcome = closes.get((e.ticker, e.for_session))
        if outcome is None:
            continue
        rows.append(
            {
                "seq": e.seq,
                "ticker": e.ticker,
                "policy": e.policy,
                "mode": e.mode,
                "decided_on": e.decided_on,
                "for_session": e.for_session,
                "target_exposure": e.target_exposure,
                "cost_fraction": e.cost_fraction,
                "decision_close": e.decision_close,
                "outcome_close": outcome,
                "session_return": outcome / e.decision_close - 1.0,
                "policy_return": entry_return(e.target_exposure, e.cost_fraction, e.decision_close, outcome),
            }
        )
    frame = pd.DataFrame(rows, columns=[c for c in SCORE_COLUMNS if c not in ("benchmark_return", "excess")])
    bench = frame.loc[frame["policy"] == BENCHMARK, ["ticker", "mode", "for_session", "policy_return"]]
    bench = bench.rename(columns={"policy_return": "benchmark_return"})
    frame = frame.merge(bench, on=["ticker", "mode", "for_session"], how="left")
    frame["excess"] = frame["policy_return"] - frame["benchmark_return"]
    frame = frame.astype({"seq": "int64"}).sort_values("seq").reset_index(drop=True)
    return frame[list(SCORE_COLUMNS)], len(entries) - len(frame)


def daily_returns(scores: pd.DataFrame) -> pd.DataFrame:
    """Per mode, policy and session: the equal-weight mean over tickers of the policy's,
    buy-and-hold's and the excess return, with the equity of each from 1.0."""
    columns = ["mode", "policy", "for_session", "policy_return", "benchmark_return", "excess", "tickers"]
    if len(scores) == 0:
        return pd.DataFrame(columns=[*columns, "equity", "benchmark_equity"])
    daily = (
        scores.groupby(["mode", "policy", "for_session"], sort=True)
        .agg(
            policy_return=("policy_return", "mean"),
            benchmark_return=("benchmark_return", "mean"),
            excess=("excess", "mean"),
            tickers=("ticker", "nunique"),
        )
        .reset_index()
    )
    grouped = daily.groupby(["mode", "policy"], sort=False)
    daily["equity"] = grouped["policy_return"].transform(lambda r: (1.0 + r).cumprod())
    daily["benchmark_equity"] = grouped["benchmark_return"].transform(lambda r: (1.0 + r).cumprod())
    return daily


def forward_record(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per mode and policy (see the module docstring)."""
    rows = []
    for (mode, policy), days in daily_returns(scores).groupby(["mode", "policy"], sort=True):
        excess = days["excess"].dropna().to_numpy(dtype=float)
        n = len(excess)
        mean = float(excess.mean()) if n else None
        sd = float(excess.std(ddof=1)) if n > 1 else float("nan")
        low = high = p = None
        if n > 1 and sd > 0:
            interval, test = t_interval(excess), t_test(excess)
            low, high = interval.low, interval.high
            p = test.p_value if test else None
        cumulative = float(np.prod(1.0 + days["policy_return"].to_numpy()) - 1.0)
        bench = float(np.prod(1.0 + days["benchmark_return"].dropna().to_numpy()) - 1.0)
        rows.append(
            {
                "mode": mode,
                "policy": policy,
                "days": int(len(days)),
                "tickers": int(
                    scores.loc[(scores["mode"] == mode) & (scores["policy"] == policy), "ticker"].nunique()
                ),
                "first_session": str(days["for_session"].iloc[0]),
                "last_session": str(days["for_session"].iloc[-1]),
                "cumulative_return": cumulative,
                "benchmark_cumulative": bench,
                "excess_cumulative": cumulative - bench,
                "mean_daily_excess": mean,
                "ci_low": low,
                "ci_high": high,
                "p_value": p,
                "min_detectable_edge": min_detectable_difference(sd, n),
            }
        )
    return pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
