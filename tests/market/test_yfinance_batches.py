"""The yfinance source at universe size, against a fake Yahoo Finance (the only thing faked:
the third-party network service): batches, request counts, the rate, backoff on 429s and
timeouts, resume after a failure, and nothing stored asked again except the open month."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from yahoo_testing import DAYS, LATE, TODAY, FakeTime, FakeYahoo

from stocker_core.errors import UnknownTickerError
from stocker_core.market.download_store import DownloadStore, months_in
from stocker_core.market.universe_fetch import BatchPolicy, UniverseFetcher, UniverseFetchError
from stocker_core.market.yfinance_source import RateLimitedError, YFinanceSource

START, END = date(2023, 1, 1), date(2024, 4, 1)  # 2023-01 … 2024-03; 2024-03 is open
OPEN = date(2024, 3, 1)
UNIVERSE = [f"T{i:03d}" for i in range(120)]


def _fetcher(yahoo: FakeYahoo, folder: Path, fake_time: FakeTime, **policy) -> UniverseFetcher:
    settings = {"batch_size": 50, "requests_per_minute": 12, "attempts": 4, "max_wait": 2.0, **policy}
    return UniverseFetcher(
        yahoo.download_many,
        DownloadStore(folder),
        BatchPolicy(**settings),
        today=lambda: TODAY,
        clock=fake_time.clock,
        sleep=fake_time.sleep,
    )


def test_a_universe_comes_in_batches_at_the_rate_and_is_stored(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE), FakeTime()
    report = _fetcher(yahoo, tmp_path, fake_time).fetch(UNIVERSE, months_in(START, END))
    assert [len(tickers) for tickers, _, _ in yahoo.calls] == [50, 50, 20]
    assert all(start is None for _, start, _ in yahoo.calls)  # never seen: whole histories
    assert report.requests == report.batches == 3 and sorted(report.stored) == UNIVERSE
    assert fake_time.slept == [5.0, 5.0]  # 12 a minute: one every 5 s
    store = DownloadStore(tmp_path)
    assert store.listed("T001") == date(2022, 6, 1) and store.listed(LATE) == date(2023, 6, 1)
    assert store.covered("T001") >= set(months_in(START, OPEN)) and OPEN not in store.covered("T001")
    assert len(store.read("T001", START, END)) == len(DAYS[pd.Timestamp(START) <= DAYS])


def test_a_rerun_asks_only_for_the_open_month_and_nothing_when_it_is_fresh(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE), FakeTime()
    _fetcher(yahoo, tmp_path, fake_time).fetch(UNIVERSE, months_in(START, END))
    yahoo.calls.clear()
    report = _fetcher(yahoo, tmp_path, fake_time).fetch(UNIVERSE, months_in(START, END))
    assert report.batches == 0 and yahoo.calls == [] and len(report.up_to_date) == 120
    stale = _fetcher(yahoo, tmp_path, fake_time, open_month_fresh_s=0)
    report = stale.fetch(UNIVERSE, months_in(START, END))
    assert [(len(t), s, e) for t, s, e in yahoo.calls] == [(50, OPEN, END), (50, OPEN, END), (20, OPEN, END)]
    assert report.batches == 3


def test_a_failure_mid_way_keeps_what_was_fetched_and_a_rerun_fetches_only_the_rest(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE), FakeTime()
    yahoo.down_from = 2  # the provider goes away after the first batch
    with pytest.raises(
        UniverseFetchError, match=r"batch 2 of 3 .* after 4 tries.*50 tickers were stored"
    ) as caught:
        _fetcher(yahoo, tmp_path, fake_time).fetch(UNIVERSE, months_in(START, END))
    assert "run again to fetch the 70 left" in str(caught.value)
    assert len(yahoo.calls) == 1 + 4 and sorted(caught.value.report.stored) == UNIVERSE[:50]
    assert any(wait > 0 for wait in fake_time.slept[1:])  # backed off between tries
    yahoo.down_from, first_batch = None, set(UNIVERSE[:50])
    yahoo.calls.clear()
    report = _fetcher(yahoo, tmp_path, fake_time).fetch(UNIVERSE, months_in(START, END))
    whole = [set(t) for t, s, _ in yahoo.calls if s is None]
    assert whole == [set(UNIVERSE[50:100]), set(UNIVERSE[100:])] and sorted(report.stored) == UNIVERSE[50:]
    assert all(not (tickers & first_batch) for tickers in whole)
    assert all(s is None for _, s, _ in yahoo.calls)  # the first 50's open month is fresh


def test_rate_limits_and_timeouts_are_retried_with_backoff(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE[:10]), FakeTime()
    yahoo.fail = {1: RateLimitedError("Too Many Requests"), 2: TimeoutError("read timed out")}
    report = _fetcher(yahoo, tmp_path, fake_time).fetch(UNIVERSE[:10], months_in(START, END))
    assert report.requests == 3 and report.batches == 1 and len(report.stored) == 10
    assert len(fake_time.slept) >= 2 and all(0 < s <= 5.0 for s in fake_time.slept)


def test_a_non_transient_error_stops_at_once_naming_the_batch(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE[:10]), FakeTime()
    yahoo.fail = {1: ValueError("unexpected payload")}
    with pytest.raises(UniverseFetchError, match="batch 1 of 1 .*unexpected payload"):
        _fetcher(yahoo, tmp_path, fake_time).fetch(UNIVERSE[:10], months_in(START, END))
    assert len(yahoo.calls) == 1


def test_months_the_warehouse_holds_are_not_asked_again(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE), FakeTime()
    in_warehouse = set(months_in(START, OPEN))
    report = _fetcher(yahoo, tmp_path, fake_time).fetch(
        ["T001", "T002"], months_in(START, END), held=lambda t: in_warehouse if t == "T001" else set()
    )
    assert sorted((t, s) for t, s, _ in yahoo.calls) == [(("T001",), OPEN), (("T002",), None)]
    assert report.stored["T001"] == len(DAYS[pd.Timestamp(OPEN) <= DAYS])


def test_an_unknown_symbol_is_named_and_asked_again_next_time(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(["T001"]), FakeTime()
    report = _fetcher(yahoo, tmp_path, fake_time).fetch(["T001", "NOPE"], months_in(START, END))
    assert report.nothing == ["NOPE"] and list(report.stored) == ["T001"]
    assert not DownloadStore(tmp_path).has("NOPE")


def _source(yahoo: FakeYahoo, folder: Path, fake_time: FakeTime, **policy) -> YFinanceSource:
    settings = {"batch_size": 50, "requests_per_minute": 600, "attempts": 3, "max_wait": 1.0, **policy}
    return YFinanceSource(
        download=yahoo.download,
        store=DownloadStore(folder),
        download_many=yahoo.download_many,
        policy=BatchPolicy(**settings),
        today=lambda: TODAY,
        clock=fake_time.clock,
        sleep=fake_time.sleep,
    )


def test_after_a_prefetch_the_per_ticker_builds_ask_nothing(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE), FakeTime()
    source = _source(yahoo, tmp_path, fake_time)
    source.prefetch(UNIVERSE, START, END)
    assert len(yahoo.calls) == 3
    for ticker in UNIVERSE:
        bars = source.fetch(ticker, START, END)
        assert len(bars) and source.symbol_info(ticker).last_date == date(2024, 3, 14)
    assert source.symbol_info(LATE).first_date == date(2023, 6, 1)
    assert len(yahoo.calls) == 3  # the store answered 120 fetches and 120 symbol_info calls


def test_the_per_ticker_path_stores_what_it_fetched_and_asks_only_for_the_open_month(tmp_path: Path) -> None:
    yahoo, fake_time = FakeYahoo(UNIVERSE), FakeTime()
    first = _source(yahoo, tmp_path, fake_time, open_month_fresh_s=0).fetch("T001", date(2023, 6, 1), END)
    assert [(t, s) for t, s, _ in yahoo.calls] == [(("T001",), date(2023, 6, 1))]
    yahoo.calls.clear()
    again = _source(yahoo, tmp_path, fake_time, open_month_fresh_s=0).fetch("T001", date(2023, 6, 1), END)
    pd.testing.assert_frame_equal(first, again)
    assert [(t, s, e) for t, s, e in yahoo.calls] == [(("T001",), OPEN, END)]
    yahoo.calls.clear()  # months before listing: one whole history, then never again
    source = _source(yahoo, tmp_path, fake_time, open_month_fresh_s=0)
    assert source.fetch(LATE, START, date(2023, 3, 1)).empty
    assert len(yahoo.calls) == 2 and yahoo.calls[1][1] is None
    yahoo.calls.clear()
    assert _source(yahoo, tmp_path, fake_time).fetch(LATE, START, date(2023, 3, 1)).empty
    assert yahoo.calls == []
    with pytest.raises(UnknownTickerError):
        source.fetch("NOPE", START, END)
    assert not DownloadStore(tmp_path).has("NOPE")
