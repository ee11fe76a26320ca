"""Twenty sessions forward under STOCKER_CLOCK: each decision is recorded before its session's bar
is revealed, then scored; the numbers are those of a backtest of the same policies over them."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pandas as pd
import pytest
from ledger_testing import FIRST_DECISION, after_close, set_clock

from stocker_core.env.episode import Episode
from stocker_core.evaluation.backtests import backtest
from stocker_core.ledger.record import record
from stocker_core.ledger.service import score_ledger, verify_ledger
from stocker_core.ledger.store import LedgerStore
from stocker_core.market.bars import load_bars
from stocker_core.market.calendar import session_close, sessions
from stocker_core.market.gate import ingest_prices
from stocker_core.market.source_builder import get_source
from stocker_core.warehouse.db import Warehouse

POLICIES = ["buy_and_hold", "macd", "zmr"]
DAYS = 20


def _refresh(settings, day: date) -> None:
    """The corpus refresh under the clock: the current month's bars, as the prices asset stores them."""
    ingest_prices(get_source(settings), Warehouse(settings.warehouse_path), "AAPL", [day.replace(day=1)])


def _backtest_episode(settings, days: list[date]) -> Episode:
    bars, _ = load_bars(settings, "AAPL", None, days[-1] + timedelta(days=1))  # what the decisions read
    cut = int(bars["date"].searchsorted(pd.Timestamp(days[0])))
    cols = ["date", "open", "high", "low", "close", "adj_close", "volume"]
    return Episode(
        key=f"AAPL|{days[0].replace(day=1)}",
        ticker="AAPL",
        window_start=days[0],
        window_end=days[-1] + timedelta(days=1),
        bars=bars[cols].iloc[cut:].reset_index(drop=True),
        history=bars[cols].iloc[:cut].reset_index(drop=True),
        starting_cash=settings.starting_cash,
    )


@pytest.mark.slow  # ~25 s of CPU: twenty refreshes, recordings and a scoring
def test_twenty_sessions_forward_equal_a_backtest(aapl_home, monkeypatch):
    days = [d.date() for d in sessions(FIRST_DECISION, FIRST_DECISION + timedelta(days=40))][: DAYS + 1]
    for today, tomorrow in zip(days, days[1:], strict=False):
        settings = set_clock(monkeypatch, after_close(today))
        _refresh(settings, today)
        stored = Warehouse(settings.warehouse_path).read_prices("AAPL", today, tomorrow + timedelta(days=1))
        assert [d.date() for d in stored["date"]] == [today]  # tomorrow's bar is not revealed yet
        result = record(settings, POLICIES)
        assert {(e.decided_on, e.for_session) for e in result.written} == {(str(today), str(tomorrow))}
        assert all(
            pd.Timestamp(e.recorded_at) < session_close(pd.Timestamp(tomorrow)) for e in result.written
        )
        assert {e.mode for e in result.written} == {"replayed"}

    settings = set_clock(monkeypatch, after_close(days[-1]))
    _refresh(settings, days[-1])
    scored = score_ledger(settings)
    assert scored.pending == 0 and len(scored.scores) == DAYS * len(POLICIES)
    assert verify_ledger(settings).ok

    run = backtest(_backtest_episode(settings, days), POLICIES, settings=settings)
    cost, cash = settings.transaction_cost, settings.starting_cash
    before = {}  # each day's account before its trade, from the backtest's own account
    for policy in POLICIES:
        played = run.run_of(policy)
        before[policy] = played.values[1:] + cost * np.abs(played.traded) * played.closes
        mine = scored.scores[scored.scores["policy"] == policy].sort_values("for_session")
        assert list(mine["for_session"]) == [str(d) for d in days[1:]]
        expected = before[policy][1:] / before[policy][:-1] - 1.0
        np.testing.assert_allclose(mine["policy_return"], expected, rtol=0, atol=1e-12)
        exposure = played.positions * played.closes / played.values[1:]
        np.testing.assert_allclose(mine["target_exposure"], exposure[:-1], rtol=0, atol=1e-12)

    record_rows = scored.record.set_index("policy")
    for policy in POLICIES:
        row = record_rows.loc[policy]
        assert row["mode"] == "replayed" and row["days"] == DAYS
        assert row["cumulative_return"] == np.float64(row["cumulative_return"])
        np.testing.assert_allclose(row["cumulative_return"], before[policy][-1] / cash - 1.0, atol=1e-12)
        bench = before["buy_and_hold"][-1] / cash - 1.0
        np.testing.assert_allclose(row["excess_cumulative"], row["cumulative_return"] - bench, atol=1e-12)
    assert record_rows.loc["buy_and_hold", "excess_cumulative"] == 0.0
    macd = record_rows.loc["macd"]
    assert macd["ci_low"] < macd["mean_daily_excess"] < macd["ci_high"]  # a t-interval over 20 days
    assert 0.0 <= macd["p_value"] <= 1.0 and macd["min_detectable_edge"] > 0

    # the same figures are in the warehouse, beside the other tables
    with Warehouse(settings.warehouse_path).connect(read_only=True) as con:
        counted = con.execute("SELECT count(*), max(seq) FROM ledger.entries").fetchone()
        days_scored = con.execute("SELECT days FROM ledger.record WHERE policy = 'macd'").fetchone()
    assert counted == (DAYS * len(POLICIES), DAYS * len(POLICIES)) and days_scored == (DAYS,)
    assert len(LedgerStore(settings).entry_files()) == DAYS
