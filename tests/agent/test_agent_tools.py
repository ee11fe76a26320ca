"""Each tool on a planted-future warehouse: nothing after the decision's cut-off comes back;
bad arguments are answers with an error, not exceptions; results are bounded."""

from __future__ import annotations

import json

import pandas as pd
from agent_testing import DECISION_DAY, FUTURE_CLOSE

from stocker_core.agent.tools import TOOL_NAMES, AgentTools, tool_schemas


def _no_future(result: dict) -> None:
    text = json.dumps(result)
    assert "FUTURE" not in text
    assert str(FUTURE_CLOSE) not in text
    for day in ("2023-06-15", "2023-06-16", "2023-06-20", "2023-07-01"):
        assert day not in text


def test_price_history_stops_at_the_decision_day(planted):
    result = AgentTools(planted, DECISION_DAY).get_price_history(lookback_days=20)
    _no_future(result)
    assert result["last_date"] == "2023-06-14"
    # closes are 100 + i: the last close before the future is 100 + index of D
    last = float(planted.bars.loc[planted.bars["date"] == DECISION_DAY, "close"].iloc[0])
    assert result["last_close"] == last
    assert result["return_pct"] == round((last / (last - 20) - 1) * 100, 2)
    assert len(result["closes"]) == 8 and result["truncated"] is True


def test_indicators_stop_at_the_decision_day(planted):
    result = AgentTools(planted, DECISION_DAY).get_indicators(names=["rsi14", "sma20"], lookback_days=5)
    _no_future(result)
    last = result["last_close"]
    # a steady +1 a day: RSI 100, SMA20 = mean of the last 20 closes = last - 9.5
    assert result["latest"]["rsi14"] == 100.0
    assert result["latest"]["sma20"] == last - 9.5
    assert len(result["values"]["rsi14"]) == 5


def test_news_sees_only_what_was_published_before_the_close(planted):
    result = AgentTools(planted, DECISION_DAY).get_news(days=7)
    _no_future(result)
    assert result["count"] == 2
    assert [i["text"] for i in result["items"]] == [
        "SYN upgraded before the bell",
        "SYN beats estimates in strong quarter",
    ]
    assert result["mean_sentiment"] > 0


def test_news_of_the_decision_day_alone_and_a_recency_weighted_mean(planted):
    from stocker_core.text_events.sentiment import score_text

    today = AgentTools(planted, DECISION_DAY).get_news(days=0)
    _no_future(today)
    assert today["days"] == 0 and today["count"] == 1
    assert [i["text"] for i in today["items"]] == ["SYN upgraded before the bell"]
    assert today["recency_weighted_sentiment"] == today["mean_sentiment"]  # one headline
    week = AgentTools(planted, DECISION_DAY).get_news(days=7)
    # the cut-off is 16:00 on D: the 15:59 headline is 1 minute old (weight ~1), yesterday's
    # date-only one 16 hours (weight 0.5 ** (16 / 24))
    fresh, old = (
        score_text("SYN upgraded before the bell"),
        score_text("SYN beats estimates in strong quarter"),
    )
    w_fresh, w_old = 0.5 ** (1 / 1440), 0.5 ** (16 / 24)
    expected = (fresh * w_fresh + old * w_old) / (w_fresh + w_old)
    assert abs(week["recency_weighted_sentiment"] - expected) < 1e-3


def test_forum_and_macro_events_skip_same_day_date_only_rows(planted):
    tools = AgentTools(planted, DECISION_DAY)
    forums = tools.get_forum_posts(days=30)
    _no_future(forums)
    assert forums["count"] == 1 and forums["items"][0]["date"] == "2023-06-12"
    events = tools.get_macro_events(days=90)
    _no_future(events)
    assert events["count"] == 1 and events["hawkish"] == 1 and events["dovish"] == 0


def test_text_windows_count_back_from_the_cutoff(planted):
    tools = AgentTools(planted, DECISION_DAY)
    assert tools.get_forum_posts(days=1)["count"] == 0  # the June 12 post is 2.x days old
    assert tools.get_news(days=1)["count"] == 2


def test_macro_series_stops_at_the_decision_day_and_says_what_is_missing(planted):
    tools = AgentTools(planted, DECISION_DAY)
    gspc = tools.get_macro_series(symbol="^GSPC", lookback_days=10)
    _no_future(gspc)
    assert gspc["available"] and gspc["last_date"] == "2023-06-14"
    missing = tools.get_macro_series(symbol="^TNX", lookback_days=10)
    assert missing == {"symbol": "^TNX", "available": False, "reason": "no ^TNX series in the test source"}


def test_fundamentals_offline_are_honestly_unavailable(planted):
    result = AgentTools(planted, DECISION_DAY).get_fundamentals(kind="income_statement")
    assert result == {"kind": "income_statement", "available": False, "reason": "no fundamentals offline"}


def test_fundamentals_online_show_only_published_rows(planted):
    statement = pd.DataFrame(
        {pd.Timestamp("2023-03-31"): [100.0, 10.0], pd.Timestamp("2022-12-31"): [90.0, 9.0]},
        index=["Total Revenue", "Net Income"],
    )
    insiders = pd.DataFrame(
        {
            "Start Date": pd.to_datetime(["2023-06-01", "2023-06-14", "2023-06-20"]),
            "Insider": ["A", "B FUTURE", "C FUTURE"],
            "Shares": [100, 200, 300],
        }
    )
    dividends = pd.Series([0.2, 0.2, 0.25], index=pd.to_datetime(["2023-03-01", "2023-06-01", "2023-09-01"]))
    raw = {"income_statement": statement, "insider_transactions": insiders, "dividends": dividends}
    calls: list[str] = []

    def download(ticker: str, kind: str):
        calls.append(kind)
        return raw[kind]

    planted.online_fundamentals, planted.fundamentals_download = True, download
    tools = AgentTools(planted, DECISION_DAY)
    income = tools.get_fundamentals(kind="income_statement")
    # Q1 2023 ended 2023-03-31: published by the 45-day assumption on 2023-05-15 < D
    assert income["periods"] == ["2023-03-31", "2022-12-31"]
    assert income["items"]["Total Revenue"] == [100.0, 90.0]
    early = AgentTools(planted, pd.Timestamp("2023-05-10")).get_fundamentals(kind="income_statement")
    assert early["periods"] == ["2022-12-31"]  # Q1 not yet published on May 10
    insider = tools.get_fundamentals(kind="insider_transactions")
    _no_future(insider)
    assert insider["count"] == 1 and insider["items"][0]["date"] == "2023-06-01"
    divs = tools.get_fundamentals(kind="dividends")
    assert [i["date"] for i in divs["items"]] == ["2023-06-01", "2023-03-01"]
    estimates = tools.get_fundamentals(kind="earnings_estimates")
    assert estimates["available"] is False  # today's snapshot, unknown on a past date
    assert calls.count("income_statement") == 1  # one download per kind


def test_bad_arguments_come_back_as_errors(planted):
    tools = AgentTools(planted, DECISION_DAY)
    cases = [
        ("get_price_history", {"lookback_days": 0}),
        ("get_price_history", {"lookback_days": "20"}),
        ("get_price_history", {"lookback_days": True}),
        ("get_price_history", {}),
        ("get_news", {"days": 7, "extra": 1}),
        ("get_indicators", {"names": ["rsi99"], "lookback_days": 5}),
        ("get_indicators", {"names": ["rsi14", "rsi14"], "lookback_days": 5}),
        ("get_macro_series", {"symbol": "DROP TABLE", "lookback_days": 5}),
        ("get_fundamentals", {"kind": "horoscope"}),
        ("get_weather", {}),
    ]
    for name, args in cases:
        outcome = tools.call(name, args)
        assert not outcome.valid, (name, args)
        assert outcome.error
    assert tools.call("get_news", "not a dict").valid is False
    assert tools.call("get_news", {"days": 7}).valid is True


def test_every_tool_has_a_json_schema():
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES)
    price = schemas[0]["function"]["parameters"]
    assert price["properties"]["lookback_days"]["type"] == "integer"
    assert price["required"] == ["lookback_days"]
    assert schemas[1]["function"]["parameters"]["properties"]["names"]["type"] == "array"


def test_tools_on_a_planted_future_warehouse(tmp_path):
    """The same cut-off through the real loaders: bars and text events (with their
    publication instants) stored in DuckDB and read back by ``load_agent_data``."""
    from agent_testing import planted_bars, planted_macro, planted_text

    from stocker_core.agent.data import load_agent_data
    from stocker_core.config import Settings
    from stocker_core.text_events.events import COLUMNS, publication_times
    from stocker_core.text_events.store import replace_events
    from stocker_core.warehouse.db import Warehouse

    settings = Settings(home=tmp_path / "home", source="sample")
    warehouse = Warehouse(settings.warehouse_path)
    bars = planted_bars()
    months = sorted({d.replace(day=1) for d in bars["date"].dt.date})
    warehouse.replace_months("market.prices", "SYN", months, bars)
    warehouse.replace_months("market.prices", "^GSPC", months, planted_macro()["^GSPC"])
    text = planted_text()
    for kind in ("news", "forums", "macro"):
        frame = getattr(text, kind)
        stated = frame["published_at"] if "published_at" in frame else pd.Series(pd.NaT, index=frame.index)
        frame = frame.assign(
            published_at=publication_times(frame["date"], stated), time_stated=stated.notna()
        )
        replace_events(warehouse, kind, frame[COLUMNS[kind]])

    data = load_agent_data("SYN", settings, warehouse)
    # ^GSPC from the planted warehouse; the sample source adds the reference tasks' CL=F and GC=F
    assert data.source == "warehouse" and list(data.macro_closes) == ["^GSPC", "CL=F", "GC=F"]
    tools = AgentTools(data, DECISION_DAY)
    answers = {
        "get_price_history": tools.get_price_history(lookback_days=60),
        "get_indicators": tools.get_indicators(names=["sma50", "bb_upper"], lookback_days=10),
        "get_news": tools.get_news(days=30),
        "get_forum_posts": tools.get_forum_posts(days=30),
        "get_macro_series": tools.get_macro_series(symbol="^GSPC", lookback_days=60),
        "get_macro_events": tools.get_macro_events(days=90),
        "get_fundamentals": tools.get_fundamentals(kind="dividends"),
    }
    assert set(answers) == set(TOOL_NAMES)
    for answer in answers.values():
        _no_future(answer)
    assert answers["get_price_history"]["last_date"] == "2023-06-14"
    assert answers["get_news"]["count"] == 2  # D-1 date-only and D 15:59 New York
    assert answers["get_forum_posts"]["count"] == 1
    assert answers["get_macro_events"]["count"] == 1
    assert answers["get_fundamentals"]["available"] is False


def test_stored_schemas_are_the_derived_ones():
    """`stocker agent tools` reads the stored file; it must be what get_json_schema derives
    (after changing a tool: python -m stocker_core.agent.tools)."""
    from stocker_core.agent.tools import derived_tool_schemas

    assert tool_schemas() == derived_tool_schemas()


def test_agent_tools_command_imports_neither_pandas_nor_transformers():
    import subprocess
    import sys

    code = (
        "import sys; from stocker_core.agent.commands import tools_command; tools_command(as_json=True);"
        "print(sorted(m for m in ('pandas', 'transformers', 'torch') if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert '"get_macro_events"' in done.stdout
