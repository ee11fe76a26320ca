"""Masked prompts: every prompt the council's seven roles, the LLM moderator, the trained
moderator's prompt renderers and the agent build on a planted episode names no ticker, no
company, no calendar date and no raw price level."""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest
from stocker_testing import SEED_DIR as FIXTURE

from stocker_core.text_events.events import TextEvents, load_text_folder
from stocker_core.text_events.masking import PromptMask, mask_json

DAY = pd.Timestamp("2023-08-15")
PLANTED = [
    "Apple (AAPL) hits $195.10 on Aug 14, 2023 as Microsoft and Alphabet's Google lag",
    "Apple Inc shares at 2023-08-14 high; MSFT, GOOGL and gold (GC=F) flat since 14 August",
]
TICKERS = ("AAPL", "MSFT", "GOOGL", "GC=F")
NAMES = ("apple", "microsoft", "google", "alphabet")
DATE_PATTERNS = (
    re.compile(r"\d{4}-\d{2}-\d{2}"),
    re.compile(r"(?<![\d.,])(?:19|20)\d{2}(?![\d.,]\d)"),
    re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b", re.I),
    re.compile(r"\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)", re.I),
)


def _planted_text() -> TextEvents:
    text = load_text_folder(FIXTURE)
    rows = pd.DataFrame(
        {
            "ticker": "AAPL",
            "date": pd.to_datetime(["2023-08-14", "2023-08-11"]),
            "headline": PLANTED,
            "source": ["Apple Newsroom", "wire"],
            "sentiment_label": "positive",
            "url": None,
            "published_at": pd.to_datetime(["2023-08-14 14:00", "2023-08-11 14:00"], utc=True),
            "time_stated": True,
        }
    )
    posts = pd.DataFrame(
        {
            "ticker": "AAPL",
            "date": pd.to_datetime(["2023-08-14"]),
            "subreddit": "apple",
            "score": [50],
            "post_text": ["AAPL to $200 by December 2023, Apple always wins"],
            "published_at": pd.to_datetime(["2023-08-14 14:00"], utc=True),
            "time_stated": True,
        }
    )
    return dataclasses.replace(
        text,
        news=pd.concat([text.news, rows], ignore_index=True),
        forums=pd.concat([text.forums, posts], ignore_index=True),
    )


@pytest.fixture(scope="module")
def episode():
    """task_easy's inputs with planted headlines and a post naming the stock, dates and prices."""
    from stocker_core.decision_context.decision import CouncilInputs
    from stocker_core.market.files_source import FilesSource

    source = FilesSource(FIXTURE)
    lo, hi = pd.Timestamp("2020-01-01").date(), pd.Timestamp("2025-01-01").date()
    closes = pd.concat([source.fetch(s, lo, hi).assign(symbol=s) for s in ("MSFT", "GOOGL", "GC=F")])
    bars = source.fetch("AAPL", lo, hi)
    inputs = CouncilInputs("AAPL", bars, _planted_text(), closes, ("MSFT", "GOOGL"), "GC=F")
    return inputs, bars, closes


def _raw_prices(bars: pd.DataFrame, closes: pd.DataFrame) -> set[str]:
    """The stock's price levels as a prompt would print them (the peers' levels are never
    printed masked: ``test_peer_levels_are_not_shown``; GOOGL's ~100 would collide with the
    rebased numbers)."""
    levels = bars[["open", "high", "low", "close"]].to_numpy().ravel()
    return {f"{x:.2f}" for x in levels} | {f"{x:.1f}" for x in levels}


def leaks(text: str, raw_prices: set[str]) -> list[str]:
    """What in ``text`` identifies the stock, the date or the price level."""
    found = [t for t in TICKERS if re.search(rf"(?<![\w=^]){re.escape(t)}(?![\w=])", text)]
    found += [n for n in NAMES if n in text.lower()]
    found += [m.group(0) for p in DATE_PATTERNS for m in p.finditer(text)]
    numbers = set(re.findall(r"\d+\.\d+", text))
    found += sorted(numbers & raw_prices)
    return found


def _client():
    from stocker_core.language_model.clients import OpenAIChatClient

    return OpenAIChatClient("http://127.0.0.1:9/v1", "m", supports_images=True)  # never called


def test_the_leak_check_finds_the_planted_facts_unmasked(episode):
    from stocker_core.council.backends import LLMBackend

    inputs, bars, closes = episode
    ctx = inputs.context(DAY)
    assert any(PLANTED[0] in h for h in ctx.news["headline"])  # the plant reached the context
    backend = LLMBackend(_client(), mask=False)
    raw = _raw_prices(bars, closes)
    news = backend.prompts("news", ctx)["user"]
    assert {"AAPL", "apple", "microsoft", "2023-08-14"} <= set(leaks(news, raw))
    chart = backend.prompts("chart_pattern", ctx)["user"]
    assert any(re.fullmatch(r"\d+\.\d+", x) for x in leaks(chart, raw))  # raw OHLC levels


def test_council_and_moderator_prompts_are_masked(episode):
    from stocker_core.council.backends import LLMBackend
    from stocker_core.council.models import SpecialistVote
    from stocker_core.council.roles import ROLE_NAMES
    from stocker_core.council.vote_moderators import LLMModerator
    from stocker_core.decision_context.decision import PortfolioState

    inputs, bars, closes = episode
    raw = _raw_prices(bars, closes)
    backend = LLMBackend(_client())
    for day in ("2023-08-01", DAY, "2023-09-29"):
        ctx = inputs.context(day, PortfolioState(cash=5_000.0, position=12, step=3, total_steps=43))
        for role in ROLE_NAMES:
            sent = backend.prompts(role, ctx)
            for part in ("system", "user"):
                assert leaks(sent[part], raw) == [], (role, part, sent[part])
        votes = [
            SpecialistVote(role=r, signal=0.3, confidence=0.6, rationale=f"AAPL at {ctx.price:.2f} on {day}")
            for r in ROLE_NAMES
        ]
        moderator = LLMModerator(_client())
        sent = moderator.prompts(votes, ctx.portfolio, ctx.price)
        assert leaks(sent["system"] + sent["user"], raw) == [], sent["user"]
        assert "Feasible: buy 0.." in sent["user"]
    news = backend.prompts("news", inputs.context(DAY))["user"]
    assert "STOCK" in news and "PEER1" in news and "session -1" in news and "$[amount]" in news


def test_peer_levels_are_not_shown(episode):
    from stocker_core.council.backends import LLMBackend

    inputs, _, _ = episode
    text = LLMBackend(_client()).prompts("peer_commodity", inputs.context(DAY))["user"]
    body = text.split("Peers and commodity:")[1]
    assert re.findall(r"\d+\.\d+(?!%)", body) == []  # only percentage moves
    assert "PEER1:" in body and "PEER2:" in body and "commodity gold:" in body


def test_prices_are_rebased_to_100_at_the_months_first_session(episode):
    from stocker_core.council.backends import LLMBackend

    inputs, bars, _ = episode
    ctx = inputs.context(DAY)
    first = float(bars.loc[pd.to_datetime(bars["date"]) == pd.Timestamp("2023-08-01"), "close"].iloc[0])
    text = LLMBackend(_client()).prompts("chart_pattern", ctx)["user"]
    assert f"last close {100 * ctx.price / first:.2f}" in text
    assert "session 0 O" in text and "session -59 O" in text
    line = next(x for x in text.splitlines() if x.startswith("session -10 O"))
    close_10 = float(bars.loc[pd.to_datetime(bars["date"]) <= DAY, "close"].iloc[-11])
    assert line.endswith(f"C{100 * close_10 / first:.2f}")


def test_mask_is_part_of_the_cache_key():
    from stocker_core.council.backends import LLMBackend

    masked, plain = LLMBackend(_client()), LLMBackend(_client(), mask=False)
    assert masked.prompt_version("news") != plain.prompt_version("news")


def test_trained_moderator_word_prompt_has_no_identity():
    from stocker_core.council.models import SpecialistVote
    from stocker_core.council.roles import ROLE_NAMES
    from stocker_core.moderator.prompts import ModeratorState, prompt_words, vote_tuples

    votes = vote_tuples([SpecialistVote(role=r, signal=0.4, confidence=0.7) for r in ROLE_NAMES])
    state = ModeratorState(votes, 187.23, 0.012, 5_000.0, 12, 10_000.0, 3, 43)
    assert leaks(prompt_words(state), {"187.23", "187.2"}) == []


def test_trained_moderator_chat_prompt_has_no_price_level():
    from stocker_core.council.models import SpecialistVote
    from stocker_core.council.roles import ROLE_NAMES
    from stocker_core.moderator.prompts import ModeratorState, prompt_text, vote_tuples

    votes = vote_tuples([SpecialistVote(role=r, signal=0.4, confidence=0.7) for r in ROLE_NAMES])
    state = ModeratorState(votes, 187.23, 0.012, 5_000.0, 12, 10_000.0, 3, 43)
    assert leaks(prompt_text(state), {"187.23", "187.2"}) == []


def test_agent_prompts_are_masked(episode):
    from stocker_core.agent.config import AgentConfig
    from stocker_core.agent.data import AgentData
    from stocker_core.agent.loop import run_decision
    from stocker_core.agent.masking import agent_mask
    from stocker_core.agent.render import chat_messages, render_words, system_prompt
    from stocker_core.agent.scripted import ScriptedWriter
    from stocker_core.agent.tools import AgentTools, tool_schemas

    inputs, bars, closes = episode
    data = AgentData("AAPL", bars, _planted_text(), {}, source="test")
    config = AgentConfig()
    trace = run_decision(ScriptedWriter(config), AgentTools(data, DAY), config, "agent_scripted")
    assert any(t.role == "tool" for t in trace.turns)
    tools = AgentTools(data, DAY)  # every tool once, so every kind of result is checked
    extra = [
        tools.get_price_history(60),
        tools.get_indicators(["rsi14", "sma20", "bb_upper", "macd", "atr14"], 10),
        tools.get_news(7),
        tools.get_forum_posts(30),
        tools.get_macro_events(90),
    ]
    raw = _raw_prices(bars, closes)
    unmasked = chat_messages(trace, tool_schemas(), config.max_tool_calls)
    assert leaks(" ".join(m["content"] for m in unmasked), raw)  # the check would catch them
    mask = agent_mask(data, DAY)
    masked = chat_messages(trace, tool_schemas(), config.max_tool_calls, mask)
    # the system prompt is the same text for every stock and day (tool schemas list the macro
    # symbols a call may name); everything after it is checked
    assert masked[0]["content"] == system_prompt(tool_schemas(), config.max_tool_calls)
    for message in masked[1:]:
        assert leaks(message["content"], raw) == [], message["content"][:500]
    for result in extra:
        shown = str(mask_json(result, mask))
        assert leaks(shown, raw) == [], shown[:500]
    assert "STOCK" in masked[1]["content"] and "session 0" in masked[1]["content"]
    assert leaks(render_words(trace), raw) == []  # the tiny model's bucket words


def test_mask_json_rebases_prices_and_relabels():
    mask = PromptMask.build(
        "AAPL",
        "2023-08-03",
        pd.to_datetime(["2023-08-01", "2023-08-02", "2023-08-03"]),
        [200.0, 210.0, 190.0],
    )
    shown = mask_json(
        {
            "symbol": "AAPL",
            "last_date": "2023-08-03",
            "last_close": 190.0,
            "closes": [{"date": "2023-08-02", "close": 210.0}],
            "rsi14": 55.5,
        },
        mask,
    )
    assert shown == {
        "symbol": "STOCK",
        "last_date": "session 0",
        "last_close": 95.0,
        "closes": [{"date": "session -1", "close": 105.0}],
        "rsi14": 55.5,
    }
    assert mask.day("2023-08-05") == "session 0"  # a weekend counts as the session before
    assert mask.month("2023-06-30") == "month -2"
    assert PromptMask.identity("AAPL", "2023-08-03").text("Apple 2023") == "Apple 2023"


def test_mask_text_replaces_names_dates_and_amounts():
    mask = PromptMask.build(
        "META", "2022-10-27", pd.to_datetime(["2022-10-26", "2022-10-27"]), [100.0, 90.0], peers=("GOOGL",)
    )
    assert mask.text("Meta Platforms (META) loss balloons to $3.7B; Facebook's ad miss") == (
        "STOCK (STOCK) loss balloons to $[amount]; STOCK's ad miss"
    )
    assert mask.text("Google and Alphabet beat, Apple lags on Oct 26, 2022 (2022-10-26)") == (
        "PEER1 and PEER1 beat, ANOTHER lags on [date] ([date])"
    )
    assert mask.text("RSI 33.2034, 1,200.50 shares") == "RSI 33.2034, 1,200.50 shares"  # not years
