"""Point in time is a timestamp: a decision at D's close sees only text published before it."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from stocker_testing import SEED_DIR, make_bars

from stocker_core.council import analysts
from stocker_core.decision_context.decision import CouncilInputs, build_context
from stocker_core.decision_context.point_in_time import (
    date_only_published_at,
    decision_cutoff,
    visible_events,
)
from stocker_core.market.files_source import FilesSource
from stocker_core.text_events.events import TextEvents, load_text_folder, parse_records
from stocker_core.text_events.store import read_events, replace_events
from stocker_core.warehouse.db import Warehouse

EARNINGS_DAY = pd.Timestamp("2022-10-26")  # META reported Q3 after the close
NEXT_SESSION = pd.Timestamp("2022-10-27")
AFTER_CLOSE = {
    "ticker": "META",
    "date": "2022-10-26",
    "published_at": "2022-10-26T20:05:00Z",  # 16:05 New York, five minutes after the close
    "headline": "Meta misses on Q3 profit, guides capex sharply higher; shares plunge 20% after hours",
    "source": "wire",
    "sentiment_label": "negative",
}


def test_decision_cutoff_is_the_exchange_close_in_utc():
    assert decision_cutoff("2022-10-26") == pd.Timestamp("2022-10-26 20:00", tz="UTC")  # EDT
    assert decision_cutoff("2023-01-03") == pd.Timestamp("2023-01-03 21:00", tz="UTC")  # EST
    assert decision_cutoff("2023-11-24") == pd.Timestamp("2023-11-24 18:00", tz="UTC")  # early close 13:00
    assert decision_cutoff("2023-11-25") == pd.Timestamp("2023-11-25 21:00", tz="UTC")  # Saturday: 16:00 NY
    assert date_only_published_at("2022-10-26") == pd.Timestamp("2022-10-27 04:00", tz="UTC")


def test_event_times_parse_to_utc_and_date_only_counts_after_the_close():
    frame = parse_records(
        "news",
        [
            ("a", {"ticker": "META", "date": "2022-10-26", "headline": "date only"}),
            ("b", {"ticker": "META", "date": "2022-10-27T00:30:00Z", "headline": "utc, evening in NY"}),
            ("c", {"ticker": "META", "date": "2022-10-26T15:59:00-04:00", "headline": "offset"}),
            ("d", {"ticker": "META", "date": 1666814700, "headline": "epoch 20:05Z"}),
        ],
    ).set_index("headline")
    assert frame.loc["date only", "published_at"] == pd.Timestamp("2022-10-27 04:00", tz="UTC")
    assert not frame.loc["date only", "time_stated"]
    # 00:30 UTC on the 27th is 20:30 New York on the 26th: the event's day is the 26th
    assert frame.loc["utc, evening in NY", "date"] == EARNINGS_DAY
    assert frame.loc["offset", "published_at"] == pd.Timestamp("2022-10-26 19:59", tz="UTC")
    assert frame.loc["epoch 20:05Z", "published_at"] == pd.Timestamp("2022-10-26 20:05", tz="UTC")
    assert frame["time_stated"].sum() == 3
    seen = set(visible_events(frame.reset_index(), EARNINGS_DAY)["headline"])
    assert seen == {"offset"}  # 15:59 New York is before the 16:00 close; the rest are after


@pytest.fixture(scope="module")
def meta_inputs() -> CouncilInputs:
    source = FilesSource(SEED_DIR)
    bars = source.fetch("META", pd.Timestamp("2022-01-01").date(), pd.Timestamp("2022-12-01").date())
    return CouncilInputs("META", bars, load_text_folder(SEED_DIR))


def _with_after_close_headline(inputs: CouncilInputs) -> CouncilInputs:
    planted = parse_records("news", [("planted", AFTER_CLOSE)])
    news = pd.concat([inputs.text.news, planted], ignore_index=True)
    return CouncilInputs(inputs.ticker, inputs.bars, TextEvents(news, inputs.text.forums, inputs.text.macro))


def test_after_close_headline_is_ignored_on_d_and_seen_on_the_next_session(meta_inputs):
    planted = _with_after_close_headline(meta_inputs)
    on_day, base_day = planted.context(EARNINGS_DAY), meta_inputs.context(EARNINGS_DAY)
    assert AFTER_CLOSE["headline"] not in set(on_day.news["headline"])
    assert analysts.news(on_day) == analysts.news(base_day)
    next_day, base_next = planted.context(NEXT_SESSION), meta_inputs.context(NEXT_SESSION)
    assert AFTER_CLOSE["headline"] in set(next_day.news["headline"])
    seen, without = analysts.news(next_day), analysts.news(base_next)
    assert seen != without and seen.rationale.startswith("2 headlines") and "after hours" in seen.rationale


def test_date_only_event_is_invisible_on_its_day_and_visible_from_the_next_session(meta_inputs):
    # the fixture's headline is dated 2022-10-26 without a time
    headline = "Meta Q3 misses on EPS, Reality Labs loss balloons to $3.7B"
    assert headline not in set(meta_inputs.context(EARNINGS_DAY).news["headline"])
    assert headline in set(meta_inputs.context(NEXT_SESSION).news["headline"])
    # the 2022-10-13 CPI print (date only) counts from 2022-10-14 for the macro analyst too
    cpi = "September core CPI hits 40-year high at 6.6% YoY"
    assert cpi not in set(meta_inputs.context("2022-10-13").macro["headline"])
    assert cpi in set(meta_inputs.context("2022-10-14").macro["headline"])


def test_early_close_day_uses_the_early_close():
    bars = make_bars(np.linspace(100, 110, 60), start="2023-09-01")
    news = parse_records(
        "news",
        [
            ("a", {"ticker": "AAPL", "date": "2023-11-24T17:30:00Z", "headline": "12:30 New York"}),
            ("b", {"ticker": "AAPL", "date": "2023-11-24T18:30:00Z", "headline": "13:30 New York"}),
            ("c", {"ticker": "AAPL", "date": "2023-11-22T18:30:00Z", "headline": "13:30 on a full day"}),
        ],
    )
    text = TextEvents(news, parse_records("forums", []), parse_records("macro", []))

    def seen(day: str) -> set[str]:
        return set(build_context("AAPL", day, bars, text=text).news["headline"])

    assert seen("2023-11-22") == {"13:30 on a full day"}  # before that day's 16:00 close
    assert seen("2023-11-24") == {"12:30 New York", "13:30 on a full day"}  # 13:00 close
    assert seen("2023-11-27") == {"12:30 New York", "13:30 New York", "13:30 on a full day"}


def test_warehouse_keeps_publication_time_and_migrates_old_tables(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    replace_events(warehouse, "news", parse_records("news", [("planted", AFTER_CLOSE)]))
    stored = read_events(warehouse, "news", "META")
    assert stored["published_at"].tolist() == [pd.Timestamp("2022-10-26 20:05", tz="UTC")]
    assert stored["time_stated"].tolist() == [True]

    old = tmp_path / "old.duckdb"
    with duckdb.connect(str(old)) as con:  # a text table as written before publication times
        con.execute("CREATE SCHEMA text")
        con.execute(
            "CREATE TABLE text.news (ticker VARCHAR NOT NULL, date DATE NOT NULL, headline VARCHAR NOT NULL,"
            " source VARCHAR, sentiment_label VARCHAR, url VARCHAR)"
        )
        con.execute("INSERT INTO text.news VALUES ('META', DATE '2022-10-26', 'old row', 'x', NULL, NULL)")
    migrated = read_events(Warehouse(old), "news", "META")
    assert migrated["published_at"].tolist() == [pd.Timestamp("2022-10-27 04:00", tz="UTC")]
    assert migrated["time_stated"].tolist() == [False]
