"""One episode, one source: history and window come from the same place, and gaps are flagged."""

from __future__ import annotations

from datetime import date

import pandas as pd
from stocker_testing import make_bars

from stocker_core.env.episode import episode_from_bars, load_episode
from stocker_core.market.bars import load_bars
from stocker_core.market.builds import build_prices
from stocker_core.market.files_source import FilesSource
from stocker_core.market.gaps import SessionGap, session_gaps
from stocker_core.market.sample_source import SampleSource
from stocker_core.warehouse.db import Warehouse


def test_sample_aapl_in_the_warehouse_does_not_leak_into_a_files_episode(files_env):
    # the bug: AAPL Jan–Mar 2022 materialized from the sample source, then STOCKER_SOURCE=files
    warehouse = Warehouse(files_env.warehouse_path)
    build_prices(SampleSource(), warehouse, "AAPL", [date(2022, 1, 1), date(2022, 2, 1), date(2022, 3, 1)])
    assert len(warehouse.read_prices("AAPL")) == 62  # 20 + 19 + 23 sessions

    episode = load_episode("task_easy", files_env)
    assert episode.source == "files"
    assert episode.history["date"].min() == pd.Timestamp("2023-01-13")  # the fixture's first bar
    assert episode.trading_days == 43 and episode.gaps == ()
    expected = FilesSource(files_env.files_dir).fetch("AAPL", date(1900, 1, 1), date(2023, 10, 1))
    pd.testing.assert_series_equal(
        pd.Series(episode.all_closes), expected["close"].reset_index(drop=True), check_names=False
    )
    assert episode.summary()["source"] == "files" and episode.summary()["gaps"] == []


def test_warehouse_answers_only_when_it_covers_the_range_from_the_configured_source(files_env):
    warehouse = Warehouse(files_env.warehouse_path)
    source = FilesSource(files_env.files_dir)
    months = [date(2023, m, 1) for m in range(1, 10)]
    build_prices(source, warehouse, "AAPL", months[:-2] + months[-1:])  # August missing
    assert load_bars(files_env, "AAPL", None, date(2023, 10, 1))[1] == "files"
    assert load_bars(files_env, "AAPL", date(2023, 2, 1), date(2023, 8, 1))[1] == "warehouse"
    build_prices(source, warehouse, "AAPL", [date(2023, 8, 1)])
    bars, origin = load_bars(files_env, "AAPL", None, date(2023, 10, 1))
    assert origin == "warehouse" and len(bars) == 179  # 2023-01-13 .. 2023-09-29
    fresh = source.fetch("AAPL", date(1900, 1, 1), date(2023, 10, 1))
    assert bars["close"].tolist() == fresh["close"].tolist()
    episode = load_episode("task_easy", files_env)
    assert episode.source == "warehouse" and episode.trading_days == 43
    # bars another source wrote into a covered range make the warehouse ineligible again
    build_prices(SampleSource(), warehouse, "AAPL", [date(2023, 3, 1)])
    assert load_episode("task_easy", files_env).source == "files"


def test_a_gap_of_more_than_five_sessions_is_flagged(files_env):
    # 2023-07-05 .. 2023-08-29 has no NYSE holiday: every business day is a session
    bars = make_bars(list(range(100, 140)), start="2023-07-05")
    holed = bars.drop(index=range(10, 22)).reset_index(drop=True)  # 07-19 .. 08-03 removed
    episode = episode_from_bars("SYN|2023-08-01", holed, files_env, "test")
    assert episode.gaps == (SessionGap(date(2023, 7, 18), date(2023, 8, 4), 12),)
    assert episode.summary()["gaps"] == ["12 sessions missing between 2023-07-18 and 2023-08-04"]
    # five missing sessions are tolerated; a holiday is not a gap
    assert session_gaps(bars.drop(index=range(10, 15))["date"]) == []
    assert session_gaps(pd.Series(pd.to_datetime(["2023-07-03", "2023-07-05"]))) == []
    assert episode_from_bars("SYN|2023-08-01", bars, files_env, "test").gaps == ()
