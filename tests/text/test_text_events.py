"""Text event schemas, the files source and the yfinance news fetcher (offline)."""

from __future__ import annotations

import pytest

from stocker_core.config import REFERENCE_TASKS_DIR
from stocker_core.errors import DataSourceError
from stocker_core.text_events.events import fetch_yfinance_news, load_events, load_text_folder
from stocker_core.text_events.store import read_events, replace_events
from stocker_core.warehouse.db import Warehouse

FIXTURE = REFERENCE_TASKS_DIR


def test_fixture_folder_loads():
    text = load_text_folder(FIXTURE)
    assert (len(text.news), len(text.forums), len(text.macro)) == (25, 17, 12)
    assert str(text.news["date"].dtype) == "datetime64[ns]"
    assert text.news["date"].is_monotonic_increasing
    assert set(text.for_ticker("AAPL").news["ticker"]) == {"AAPL"}


def test_malformed_rows_name_file_and_line(tmp_path):
    (tmp_path / "news.jsonl").write_text(
        '{"ticker": "AAPL", "date": "2023-08-01", "headline": "ok"}\n'
        '{"ticker": "AAPL", "date": "not-a-date", "headline": "bad"}\n'
    )
    with pytest.raises(DataSourceError, match=r"news.jsonl:2.*date"):
        load_events(tmp_path, "news")
    (tmp_path / "news.jsonl").write_text("{not json\n")
    with pytest.raises(DataSourceError, match="news.jsonl:1: not valid JSON"):
        load_events(tmp_path, "news")
    (tmp_path / "news.jsonl").write_text('{"ticker": "../etc", "date": "2023-08-01", "headline": "x"}\n')
    with pytest.raises(DataSourceError, match="ticker"):
        load_events(tmp_path, "news")


def test_csv_and_missing_files(tmp_path):
    (tmp_path / "forums.csv").write_text(
        "ticker,date,subreddit,score,post_text\nAAPL,2023-08-01,stocks,5,hello world\n"
    )
    assert len(load_events(tmp_path, "forums")) == 1
    assert load_events(tmp_path, "news").empty
    (tmp_path / "macro.csv").write_text("date,headline,policy_signal\n2023-08-01,x,sideways\n")
    with pytest.raises(DataSourceError, match="macro.csv:2"):
        load_events(tmp_path, "macro")
    with pytest.raises(DataSourceError, match="not a folder"):
        load_events(tmp_path / "nope", "news")


def test_yfinance_news_with_injected_download():
    items = [
        {
            "content": {
                "title": "Apple beats",
                "pubDate": "2023-08-03T20:30:00Z",
                "provider": {"displayName": "Reuters"},
                "canonicalUrl": {"url": "https://x"},
            }
        },
        {"title": "Old layout", "providerPublishTime": 1691000000, "publisher": "WSJ"},
        {"content": {"title": None}},
        "junk",
    ]
    frame = fetch_yfinance_news("AAPL", download=lambda t: items)
    assert list(frame["headline"]) == ["Old layout", "Apple beats"]
    assert list(frame["source"]) == ["WSJ", "Reuters"]

    def boom(ticker):
        raise ConnectionError("offline")

    with pytest.raises(DataSourceError, match="offline"):
        fetch_yfinance_news("AAPL", download=boom)


def test_store_roundtrip_idempotent(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    text = load_text_folder(FIXTURE)
    for _ in range(2):
        replace_events(warehouse, "news", text.news)
        replace_events(warehouse, "macro", text.macro)
    assert len(read_events(warehouse, "news")) == 25
    assert len(read_events(warehouse, "news", "AAPL")) == len(text.for_ticker("AAPL").news)
    assert len(read_events(warehouse, "macro")) == 12
    assert read_events(warehouse, "forums").empty
