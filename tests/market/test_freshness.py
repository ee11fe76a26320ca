"""Freshness against the NYSE calendar, on hand-worked dates (holidays and early closes)."""

from datetime import date

import pandas as pd

from stocker_core.market.calendar import month_sessions
from stocker_core.market.freshness import (
    completed_sessions,
    freshness_severity,
    judged_as_of,
    ticker_freshness,
)


def _utc(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def _sessions(first: str, last: str) -> list[date]:
    return [
        d.date()
        for d in month_sessions(pd.Timestamp(first).replace(day=1).date())
        if first <= str(d.date()) <= last
    ]


def test_completed_sessions_skip_holidays_and_wait_for_the_close():
    # Thanksgiving 2023-11-23 is closed; the 24th closes early at 13:00 New York (18:00 UTC)
    assert completed_sessions(date(2023, 11, 21), _utc("2023-11-24 17:59")) == [
        date(2023, 11, 21),
        date(2023, 11, 22),
    ]
    assert completed_sessions(date(2023, 11, 21), _utc("2023-11-24 18:00"))[-1] == date(2023, 11, 24)
    # Good Friday 2024-03-29 is closed
    assert completed_sessions(date(2024, 3, 28), _utc("2024-04-01 21:00")) == [
        date(2024, 3, 28),
        date(2024, 4, 1),
    ]


def test_severity_thresholds():
    assert [freshness_severity(n) for n in (0, 1, 3, 4, 20)] == ["ok", "warn", "warn", "error", "error"]


def test_complete_past_month_is_fresh():
    bars = _sessions("2023-08-01", "2023-08-31")
    verdict = ticker_freshness("AAPL", bars, date(2023, 8, 1), _utc("2026-01-01"))
    assert verdict.missing == () and verdict.severity == "ok"
    assert verdict.last_bar == date(2023, 8, 31)


def test_interior_gap_of_two_sessions_warns():
    bars = [
        d for d in _sessions("2023-08-01", "2023-08-31") if d not in (date(2023, 8, 14), date(2023, 8, 15))
    ]
    verdict = ticker_freshness("AAPL", bars, date(2023, 8, 1), _utc("2026-01-01"))
    assert verdict.missing == (date(2023, 8, 14), date(2023, 8, 15)) and verdict.severity == "warn"


def test_current_month_counts_only_completed_sessions():
    bars = _sessions("2023-11-01", "2023-11-22")
    before_close = ticker_freshness("X", bars, date(2023, 11, 1), _utc("2023-11-24 17:00"))
    assert before_close.missing == () and before_close.severity == "ok"
    after_close = ticker_freshness("X", bars, date(2023, 11, 1), _utc("2023-11-24 23:30"))
    assert after_close.missing == (date(2023, 11, 24),) and after_close.severity == "warn"


def test_feed_stopped_before_the_month_counts_from_the_last_bar():
    # last bar Friday 2023-10-27; by Friday 2023-11-03 after the close: Oct 30, 31, Nov 1, 2, 3
    bars = _sessions("2023-10-02", "2023-10-27")
    verdict = ticker_freshness("X", bars, date(2023, 11, 1), _utc("2023-11-03 21:30"))
    assert verdict.window_start == date(2023, 10, 28)
    assert len(verdict.missing) == 5 and verdict.severity == "error"
    assert verdict.last_bar == date(2023, 10, 27)


def test_nothing_expected_before_listing():
    verdict = ticker_freshness("NEW", [], date(2023, 8, 1), _utc("2026-01-01"), first_date=date(2023, 9, 5))
    assert verdict.missing == () and verdict.severity == "ok"
    listed = ticker_freshness(
        "NEW", [], date(2023, 9, 1), _utc("2023-09-06 21:00"), first_date=date(2023, 9, 5)
    )
    assert listed.missing == (date(2023, 9, 5), date(2023, 9, 6)) and listed.severity == "warn"


def test_a_fixed_data_set_is_judged_as_of_its_last_day():
    # the sample's GOOGL ends Wednesday 2018-08-29; its close is 20:00 UTC (EDT)
    bars = _sessions("2018-08-01", "2018-08-29")
    now = _utc("2026-12-02 06:00")
    for source in ("sample", "synthetic"):
        as_of = judged_as_of(source, date(2018, 8, 29), now)
        assert as_of == _utc("2018-08-29 20:00")
        verdict = ticker_freshness("GOOGL", bars, date(2018, 8, 1), as_of)
        assert verdict.missing == () and verdict.severity == "ok"
    # a gap inside the set is still found
    gapped = [d for d in bars if d != date(2018, 8, 14)]
    as_of = judged_as_of("sample", date(2018, 8, 29), now)
    assert ticker_freshness("GOOGL", gapped, date(2018, 8, 1), as_of).missing == (date(2018, 8, 14),)


def test_a_live_source_is_judged_against_the_calendar():
    bars = _sessions("2018-08-01", "2018-08-29")
    now = _utc("2026-12-02 06:00")
    for source in ("yfinance", "files", None):
        assert judged_as_of(source, date(2018, 8, 29), now) == now
        verdict = ticker_freshness(
            "GOOGL", bars, date(2018, 8, 1), judged_as_of(source, date(2018, 8, 29), now)
        )
        assert verdict.missing == (date(2018, 8, 30), date(2018, 8, 31)) and verdict.severity == "warn"


def test_a_fixed_set_judged_before_its_last_day_uses_now():
    now = _utc("2018-08-15 14:00")
    assert judged_as_of("sample", date(2018, 8, 29), now) == now
    assert judged_as_of("sample", None, now) == now
