"""Nothing dated after the decision date may change a vote."""

from __future__ import annotations

import dataclasses

import pandas as pd

from stocker_core.council.analysts import RULE_ANALYSTS
from stocker_core.council.roles import ROLES
from stocker_core.decision_context.decision import CouncilInputs
from stocker_core.text_events.events import TextEvents, parse_records

DAY = pd.Timestamp("2023-08-15")


def _future_inputs(inputs: CouncilInputs) -> CouncilInputs:
    bars = inputs.bars.copy()
    future = bars["date"] > DAY
    bars.loc[future, ["open", "high", "low", "close", "adj_close"]] *= 3.0  # a planted rally
    headline = parse_records(
        "news",
        [
            (
                "t",
                {
                    "ticker": "AAPL",
                    "date": str((DAY + pd.Timedelta(days=1)).date()),
                    "headline": "Apple beats, shares soar to record, massive upgrade",
                    "sentiment_label": "positive",
                },
            )
        ],
    )
    post = parse_records(
        "forums",
        [
            (
                "t",
                {
                    "ticker": "AAPL",
                    "date": str((DAY + pd.Timedelta(days=2)).date()),
                    "score": 99999,
                    "post_text": "To the moon, bullish, loaded calls",
                },
            )
        ],
    )
    macro = parse_records(
        "macro",
        [
            (
                "t",
                {
                    "date": str((DAY + pd.Timedelta(days=1)).date()),
                    "headline": "Fed slashes rates",
                    "policy_signal": "dovish",
                },
            )
        ],
    )
    text = TextEvents(
        pd.concat([inputs.text.news, headline], ignore_index=True),
        pd.concat([inputs.text.forums, post], ignore_index=True),
        pd.concat([inputs.text.macro, macro], ignore_index=True),
    )
    closes = inputs.context_closes.copy()
    closes.loc[closes["date"] > DAY, "close"] *= 0.2
    return CouncilInputs(inputs.ticker, bars, text, closes, inputs.peers, inputs.commodity)


def test_planted_future_changes_no_vote_and_no_prompt(easy_inputs):
    planted = _future_inputs(easy_inputs)
    before, after = easy_inputs.context(DAY), planted.context(DAY)
    for role, analyst in RULE_ANALYSTS.items():
        assert analyst(before) == analyst(after), role
        assert ROLES[role].build(before) == ROLES[role].build(after), role


def test_context_holds_nothing_after_the_date(easy_inputs):
    ctx = _future_inputs(easy_inputs).context(DAY)
    for name in ("bars", "indicators", "news", "forums", "macro", "context_closes"):
        frame = getattr(ctx, name)
        assert (pd.to_datetime(frame["date"]) <= DAY).all(), name
    assert (pd.to_datetime(ctx.news["date"]) >= DAY - pd.Timedelta(days=7)).all()
    # indicators from the full history cut at D equal those computed from the cut bars
    fresh = dataclasses.replace(easy_inputs, charts={})
    fresh._indicators = None
    from stocker_core.decision_context.decision import build_context

    direct = build_context("AAPL", DAY, easy_inputs.bars)
    pd.testing.assert_frame_equal(direct.indicators, ctx.indicators, check_exact=False, rtol=1e-9)
