"""The reference tasks ship in the package: they work on the default sample source."""

from __future__ import annotations

import json
from datetime import date

import pandas as pd
import pytest

from stocker_core.config import REFERENCE_TASKS_DIR, Settings
from stocker_core.env.episode import load_episode
from stocker_core.env.tasks import TASKS
from stocker_core.errors import EmptyDataError
from stocker_core.market.sample_source import SampleSource
from stocker_core.text_events.events import load_text_folder


@pytest.fixture
def sample(tmp_path) -> Settings:
    return Settings(home=tmp_path / "home", source="sample")


def test_the_package_holds_the_three_tasks_data() -> None:
    names = {p.name for p in REFERENCE_TASKS_DIR.iterdir()}
    assert {"prices.csv", "context_closes.csv", "news.jsonl", "forums.jsonl", "macro.jsonl"} <= names
    assert sum(p.stat().st_size for p in REFERENCE_TASKS_DIR.iterdir()) < 100_000
    defined = {t["task_id"]: t for t in json.loads((REFERENCE_TASKS_DIR / "tasks.json").read_text())}
    assert {k: (t.ticker, t.month[:7]) for k, t in TASKS.items()} == {
        k: (t["ticker"], t["start"][:7]) for k, t in defined.items()
    }


@pytest.mark.parametrize(
    ("task", "days", "first", "last"),
    [
        ("task_easy", 43, "2023-08-01", "2023-09-29"),
        ("task_medium", 41, "2024-01-02", "2024-02-29"),
        ("task_hard", 42, "2022-09-01", "2022-10-31"),
    ],
)
def test_tasks_load_on_the_sample_source(sample, task, days, first, last) -> None:
    episode = load_episode(task, sample)
    assert (episode.trading_days, str(episode.start), str(episode.end)) == (days, first, last)
    assert episode.source == "sample"
    assert episode.bars[["open", "high", "low", "close", "volume"]].notna().all().all()
    assert len(episode.history) >= 130  # the fixture's ~135 sessions before the window


def test_reference_bars_never_move_the_samples_own_symbols() -> None:
    source = SampleSource()
    assert source.symbol_info("GOOGL").last_date == date(2018, 8, 29)  # the default traded ticker
    assert source.symbol_info("MSFT").last_date == date(2022, 12, 28)  # skfolio's end, not extended
    aapl = source.fetch("AAPL", date(2022, 12, 1), date(2023, 2, 1))
    before = aapl.loc[aapl["date"] <= pd.Timestamp("2022-12-28")]
    after = aapl.loc[aapl["date"] > pd.Timestamp("2022-12-28")]
    assert before["open"].isna().all() and after["open"].notna().all()  # close-only, then OHLCV
    assert after["date"].iloc[0] == pd.Timestamp("2023-01-13")
    assert float(after["close"].iloc[0]) == pytest.approx(134.759995)
    for symbol in ("INTC", "META", "NVDA", "SNAP", "GC=F", "CL=F"):
        assert symbol in source.symbols()


def test_sample_source_reads_the_shipped_text(sample) -> None:
    assert sample.text_folder == REFERENCE_TASKS_DIR
    text = load_text_folder(sample.text_folder)
    assert (len(text.news), len(text.forums), len(text.macro)) == (25, 17, 12)
    assert Settings(source="sample", text_dir=sample.home).text_folder == sample.home
    assert Settings(source="yfinance").text_folder is None


def test_a_window_outside_the_data_names_what_there_is_and_where_to_get_it(sample) -> None:
    with pytest.raises(EmptyDataError) as error:
        load_episode("AAPL|2024-03-01", sample)
    message = str(error.value)
    assert "has AAPL bars from 1990-01-02 to 2023-09-29" in message
    assert "STOCKER_SOURCE=yfinance" in message
    with pytest.raises(EmptyDataError, match=r"has META 2022-02-14 … 2022-10-31"):
        load_episode("META|2012-03-01", sample)
