"""STOCKER_CLOCK: sources reveal only bars whose session closed by it and text published before it."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
from ledger_testing import set_clock

from stocker_core.market.bars import configured_source
from stocker_core.market.clock import ClockError, last_closed_session
from stocker_core.market.source_builder import get_source
from stocker_core.text_events.configured import configured_events, configured_text


def _utc(text: str) -> pd.Timestamp:
    return pd.Timestamp(text).tz_convert("UTC")


def test_the_last_closed_session_follows_the_close_early_closes_included():
    assert last_closed_session(_utc("2023-11-22T15:59:00-05:00")) == date(2023, 11, 21)
    assert last_closed_session(_utc("2023-11-22T16:00:00-05:00")) == date(2023, 11, 22)
    assert last_closed_session(_utc("2023-11-23T20:00:00-05:00")) == date(2023, 11, 22)  # Thanksgiving
    assert last_closed_session(_utc("2023-11-24T13:00:00-05:00")) == date(2023, 11, 24)  # closes at 13:00
    assert last_closed_session(_utc("2023-11-26T12:00:00-05:00")) == date(2023, 11, 24)  # a Sunday
    with pytest.raises(ClockError, match="past the exchange calendar"):
        last_closed_session(_utc("2099-01-05T12:00:00Z"))


def test_sources_reveal_only_bars_closed_by_the_clock(aapl_home, monkeypatch):
    settings = set_clock(monkeypatch, "2023-06-02T15:30:00-04:00")  # Friday, before its close
    for source in (configured_source(settings), get_source(settings)):
        bars = source.fetch("AAPL", date(2023, 5, 25), date(2023, 6, 10))
        assert pd.Timestamp(bars["date"].iloc[-1]).date() == date(2023, 6, 1)
        assert source.symbol_info("AAPL").last_date == date(2023, 6, 1)
    settings = set_clock(monkeypatch, "2023-06-02T16:00:00-04:00")
    bars = configured_source(settings).fetch("AAPL", date(2023, 5, 25), date(2023, 6, 10))
    assert pd.Timestamp(bars["date"].iloc[-1]).date() == date(2023, 6, 2)
    monkeypatch.delenv("STOCKER_CLOCK")
    from stocker_core.config import get_settings

    unclocked = configured_source(get_settings(fresh=True)).fetch(
        "AAPL", date(2023, 5, 25), date(2023, 6, 10)
    )
    assert pd.Timestamp(unclocked["date"].iloc[-1]).date() == date(2023, 6, 9)


def test_text_is_cut_at_the_clock(aapl_home, monkeypatch):
    from stocker_core.config import get_settings

    every = configured_text(get_settings()).news
    instants = pd.to_datetime(every["published_at"], utc=True).sort_values()
    middle = instants.iloc[len(instants) // 2]
    settings = set_clock(monkeypatch, middle.isoformat())
    seen = configured_text(settings).news
    assert len(seen) == int((instants < middle).sum()) and 0 < len(seen) < len(every)
    assert (pd.to_datetime(seen["published_at"], utc=True) < middle).all()
    assert len(configured_events(settings, "news")) == len(seen)
