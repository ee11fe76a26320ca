"""The rule council over many days of one ticker at once.

The per-day path builds a DecisionContext (point-in-time cuts of every frame) per day and
runs each analyst on it. Here the ticker's inputs are turned into arrays once — closes,
highs and lows, indicator columns, peer / commodity / rate closes, the text events with
their publication instants — and each day reads slices of them: the bars up to the day
(a binary search), the events published strictly before the day's decision cut-off. The
analysts' ``*_vote`` functions then run on those slices, so every vote equals the per-day
one (tests/council/test_rule_batch.py compares them).

A specialist's batch rule (``Specialist.batch_rule``) reads one ``BatchDay``; a registered
specialist without one gets its per-day rule on the day's context (built once per day for
all such roles), so a new specialist needs no code here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from stocker_core.context.decision import (
    NEWS_WINDOW_DAYS,
    RATE_SYMBOLS,
    CouncilInputs,
)
from stocker_core.council.analysts import (
    abstain,
    chart_pattern_vote,
    forum_sentiment_vote,
    geopolitics_vote,
    indicator_vote,
    news_vote,
    peer_commodity_vote,
    seasonal_trend_vote,
)
from stocker_core.council.day_arrays import DAY_NS, EMPTY, BatchDay, TickerArrays
from stocker_core.council.models import SpecialistVote
from stocker_core.council.registry import SPECIALIST_NAMES, specialist


def chart_pattern_batch(d: BatchDay) -> SpecialistVote:
    """``chart_pattern`` on the last (up to) 60 bars up to the day."""
    a, lo = d.arrays, max(0, d.end - 60)
    return chart_pattern_vote(a.close[lo : d.end], a.high[lo : d.end], a.low[lo : d.end])


def seasonal_trend_batch(d: BatchDay) -> SpecialistVote:
    """``seasonal_trend`` on the closes up to the day."""
    return seasonal_trend_vote(d.arrays.close[: d.end], d.arrays.monthly, d.day)


def indicator_batch(d: BatchDay) -> SpecialistVote:
    """``indicator`` on the last indicator row up to the day."""
    a = d.arrays
    ind_end = int(np.searchsorted(a.indicator_dates, d.day_ns + DAY_NS, "left"))
    if ind_end == 0 or d.end == 0:
        return abstain("indicator", "no indicators")
    row = {c: values[ind_end - 1] for c, values in a.indicator_columns.items()}
    return indicator_vote(row, float(a.close[d.end - 1]))


def news_batch(d: BatchDay) -> SpecialistVote:
    """``news`` on the headlines published in the window before the day's cut-off."""
    news = d.arrays.news
    since = (d.cutoff - pd.Timedelta(days=NEWS_WINDOW_DAYS)).value
    rows = news.visible(d.cutoff_ns, since)
    return news_vote(
        news.column("headline", rows),
        news.column("sentiment_label", rows),
        news.ages(rows, d.day_ns),
        d.inputs.ticker,
        d.day,
    )


def forum_sentiment_batch(d: BatchDay) -> SpecialistVote:
    """``forum_sentiment`` on the posts published before the day's cut-off."""
    forums = d.arrays.forums
    rows = forums.visible(d.cutoff_ns)
    return forum_sentiment_vote(
        forums.column("post_text", rows),
        forums.values["score"][rows] if len(rows) else EMPTY,
        forums.ages(rows, d.day_ns),
        d.inputs.ticker,
        d.day,
    )


def peer_commodity_batch(d: BatchDay) -> SpecialistVote:
    """``peer_commodity`` on the closes up to the day (peers and commodity with the day's close)."""
    a, inputs = d.arrays, d.inputs
    return peer_commodity_vote(
        a.close[: d.end],
        {p: a.current_closes_of(p, d.day_ns) for p in inputs.peers},
        inputs.commodity,
        a.current_closes_of(inputs.commodity, d.day_ns) if inputs.commodity else None,
    )


def geopolitics_batch(d: BatchDay) -> SpecialistVote:
    """``geopolitics`` on the macro events before the day's cut-off and the rate closes."""
    macro = d.arrays.macro
    rows = macro.visible(d.cutoff_ns)
    return geopolitics_vote(
        macro.column("headline", rows),
        macro.column("policy_signal", rows),
        macro.ages(rows, d.day_ns),
        {s: d.arrays.closes_of(s, d.day_ns) for s in RATE_SYMBOLS},
        d.day,
    )


def rule_votes(
    inputs: CouncilInputs, days: Sequence[pd.Timestamp], roles: Sequence[str] = SPECIALIST_NAMES
) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
    """Every rule analyst's vote in ``roles`` on each of ``days`` (normalized timestamps):
    a specialist's batch rule, else its per-day rule on the day's context."""
    arrays = TickerArrays(inputs)
    chosen = [(role, specialist(role)) for role in roles]
    out: dict[tuple[str, pd.Timestamp], SpecialistVote] = {}
    for day in days:
        d = arrays.day(day)
        for role, spec in chosen:
            out[(role, d.day)] = spec.batch_rule(d) if spec.batch_rule is not None else spec.rule(d.context)
    return out
