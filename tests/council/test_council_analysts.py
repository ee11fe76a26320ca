"""Rule analysts on hand-made situations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from stocker_testing import make_bars

from stocker_core.council import analysts
from stocker_core.decision_context.decision import build_context
from stocker_core.text_events.events import TextEvents, events_frame, parse_records


def _ctx(bars: pd.DataFrame, **kw):
    return build_context("AAPL", bars["date"].iloc[-1], bars, **kw)


def test_clean_breakout_gives_positive_chart_signal():
    rng = np.random.default_rng(0)
    base = 100 + rng.normal(0, 0.4, 59)  # tight range ~99-101
    bars = make_bars(np.r_[base, 106.0])
    vote = analysts.chart_pattern(_ctx(bars))
    assert vote.signal > 0.3 and vote.confidence > 0.3
    assert "breakout" in vote.rationale


def test_breakdown_gives_negative_chart_signal():
    rng = np.random.default_rng(1)
    bars = make_bars(np.r_[100 + rng.normal(0, 0.4, 59), 94.0])
    assert analysts.chart_pattern(_ctx(bars)).signal < -0.3


def test_overbought_rsi_above_upper_band_is_negative():
    closes = np.r_[np.full(60, 100.0) + np.sin(np.arange(60)) * 0.3, 100 * 1.03 ** np.arange(1, 6)]
    bars = make_bars(closes)
    ctx = _ctx(bars)
    row = ctx.indicators.iloc[-1]
    assert row["rsi14"] > 85 and ctx.price > row["bb_upper"]
    vote = analysts.indicator(ctx)
    assert vote.signal < -0.2, vote


def test_oversold_below_lower_band_is_positive():
    closes = np.r_[np.full(60, 100.0) + np.sin(np.arange(60)) * 0.3, 100 * 0.97 ** np.arange(1, 6)]
    vote = analysts.indicator(_ctx(make_bars(closes)))
    assert vote.signal > 0.2


def test_long_uptrend_is_positive_seasonal_trend():
    closes = 100 * 1.002 ** np.arange(300)
    assert analysts.seasonal_trend(_ctx(make_bars(closes, start="2021-01-04"))).signal > 0.3
    assert analysts.seasonal_trend(_ctx(make_bars(closes[::-1], start="2021-01-04"))).signal < -0.3


def _text(news=(), forums=(), macro=()) -> TextEvents:
    return TextEvents(
        parse_records("news", [("t", r) for r in news]),
        parse_records("forums", [("t", r) for r in forums]),
        parse_records("macro", [("t", r) for r in macro]),
    )


def test_news_sentiment_sign_and_window():
    bars = make_bars(np.linspace(100, 110, 80))
    day = bars["date"].iloc[-1] - pd.Timedelta(days=1)  # date-only headlines count from the next session
    good = _text(
        news=[
            {
                "ticker": "AAPL",
                "date": str(day.date()),
                "headline": "Apple beats earnings, shares surge on record growth",
            }
        ]
    )
    bad = _text(
        news=[
            {
                "ticker": "AAPL",
                "date": str(day.date()),
                "headline": "Apple misses estimates, analyst downgrade, shares plunge",
            }
        ]
    )
    old = _text(
        news=[
            {
                "ticker": "AAPL",
                "date": str((day - pd.Timedelta(days=8)).date()),
                "headline": "Apple beats earnings, shares surge",
            }
        ]
    )
    other = _text(news=[{"ticker": "MSFT", "date": str(day.date()), "headline": "Microsoft beats"}])
    assert analysts.news(_ctx(bars, text=good)).signal > 0.3
    assert analysts.news(_ctx(bars, text=bad)).signal < -0.3
    for text in (old, other):
        vote = analysts.news(_ctx(bars, text=text))
        assert (vote.signal, vote.confidence) == (0.0, 0.0)


def test_forum_sentiment_weights_score():
    bars = make_bars(np.linspace(100, 110, 80))
    day = str((bars["date"].iloc[-1] - pd.Timedelta(days=1)).date())  # visible from the next session
    text = _text(
        forums=[
            {"ticker": "AAPL", "date": day, "score": 5000, "post_text": "Bullish, loaded calls, strong"},
            {"ticker": "AAPL", "date": day, "score": 1, "post_text": "weak, bearish, puts"},
        ]
    )
    assert analysts.forum_sentiment(_ctx(bars, text=text)).signal > 0


def test_peer_relative_strength():
    bars = make_bars(np.linspace(100, 120, 80))  # +20%
    peers = pd.concat(
        [
            make_bars(np.linspace(100, 101, 80)).assign(symbol=s)[["date", "symbol", "close"]]
            for s in ("P1", "P2")
        ]
    )
    vote = analysts.peer_commodity(_ctx(bars, context_closes=peers, peers=("P1", "P2")))
    assert vote.signal > 0.2
    weak = make_bars(np.linspace(100, 90, 80))
    assert analysts.peer_commodity(_ctx(weak, context_closes=peers, peers=("P1", "P2"))).signal < 0


def test_hawkish_macro_is_negative_dovish_positive():
    bars = make_bars(np.linspace(100, 110, 80))
    day = str((bars["date"].iloc[-1] - pd.Timedelta(days=1)).date())  # visible from the next session
    hawk = _text(macro=[{"date": day, "headline": "Fed hikes 75bps", "policy_signal": "hawkish"}])
    dove = _text(macro=[{"date": day, "headline": "Fed cuts rates", "policy_signal": "dovish"}])
    assert analysts.geopolitics(_ctx(bars, text=hawk)).signal < -0.2
    assert analysts.geopolitics(_ctx(bars, text=dove)).signal > 0.2


@pytest.mark.parametrize("role", list(analysts.RULE_ANALYSTS))
def test_missing_data_abstains(role):
    bars = make_bars([100.0, 101.0, 102.0])
    vote = analysts.RULE_ANALYSTS[role](_ctx(bars))
    assert vote.signal == 0.0 and vote.confidence == 0.0
    assert "no data" in vote.rationale


def test_events_frame_empty_is_typed():
    assert list(events_frame("news", []).columns)[:3] == ["ticker", "date", "headline"]


def test_rule_votes_deterministic(easy_inputs):
    ctx = easy_inputs.context("2023-08-15")
    first = [analysts.rule_vote(r, ctx) for r in analysts.RULE_ANALYSTS]
    second = [analysts.rule_vote(r, easy_inputs.context("2023-08-15")) for r in analysts.RULE_ANALYSTS]
    assert first == second
