"""The `prices` asset asks a source that fetches in batches (yfinance) for all the tickers of a
run at once: one multi-ticker request instead of one a ticker, nothing stored asked again, and
a batch that fails leaves each ticker fetched on its own (issue 49). Yahoo Finance is the fake
of tests/yahoo_testing.py (the only thing faked: the network service)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner
from yahoo_testing import TODAY, FakeTime, FakeYahoo

from stocker_assets import pipeline_cli
from stocker_core.cli import build_app
from stocker_core.config import Settings
from stocker_core.data_sources import DataSource, registered_source
from stocker_core.market.download_store import DownloadStore
from stocker_core.market.universe_fetch import BatchPolicy
from stocker_core.market.yfinance_source import YFinanceSource
from stocker_core.warehouse import Warehouse

TICKERS = ["T001", "T002", "T003"]
MONTHS = ["--from", "2023-10", "--to", "2023-10"]  # every weekday a session: the fake knows no holidays


@pytest.fixture
def yahoo(tmp_path, monkeypatch):
    """A source named ``fakeyahoo``: YFinanceSource over the fake provider, its store in the home."""
    fake, fake_time = FakeYahoo(TICKERS), FakeTime()

    class FakeYahooSource(YFinanceSource):
        name = "fakeyahoo"

    def build(settings: Settings) -> YFinanceSource:
        return FakeYahooSource(
            fake.download,
            attempts=2,
            max_wait=0.01,
            store=DownloadStore(settings.home / "downloads" / "yfinance"),
            download_many=fake.download_many,
            policy=BatchPolicy(batch_size=50, requests_per_minute=600, attempts=2, max_wait=0.01),
            today=lambda: TODAY,
            clock=fake_time.clock,
            sleep=fake_time.sleep,
        )

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    (tmp_path / "dagster").mkdir()
    monkeypatch.setenv("STOCKER_SOURCE", "fakeyahoo")
    with registered_source(DataSource("fakeyahoo", build, online=True)):
        yield fake


def _materialize() -> str:
    app = build_app([pipeline_cli.commands])
    result = CliRunner().invoke(
        app, ["materialize", "-g", "market", *[a for t in TICKERS for a in ("-t", t)], *MONTHS]
    )
    assert result.exit_code == 0, result.output
    return result.output


def _stored_tickers() -> set[str]:
    frame = Warehouse(Settings().warehouse_path).query("SELECT DISTINCT ticker FROM market.prices")
    return set(frame["ticker"])


def test_a_run_of_three_tickers_asks_once_for_all_of_them(yahoo):
    _materialize()
    assert _stored_tickers() == set(TICKERS)
    batched = [tickers for tickers, _, _ in yahoo.calls if len(tickers) > 1]
    assert batched == [tuple(TICKERS)]  # one request for the run's three tickers
    assert not [call for call in yahoo.calls if len(call[0]) == 1]  # none a ticker


def test_a_failed_batch_leaves_each_ticker_fetched_on_its_own(yahoo):
    yahoo.fail = {1: TimeoutError("read timed out"), 2: TimeoutError("read timed out")}  # both tries
    _materialize()
    assert _stored_tickers() == set(TICKERS)
    assert sorted(tickers[0] for tickers, _, _ in yahoo.calls[2:]) == TICKERS  # then one a ticker
