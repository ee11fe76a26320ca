"""Rule analysts: deterministic quant logic per role, offline.

Each role's rule is one array rule over many days (``rules_price``, ``rules_cross``,
``rules_text``; assembled by ``rule_batch``); a rule on one day's DecisionContext runs that
same array rule on the context's arrays (``rule_batch.context_vote``), so the per-day and
the batched votes are one implementation. Missing data gives signal 0, confidence 0 and a
rationale that says what was missing (``abstain``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stocker_core.council.models import SpecialistVote
from stocker_core.council.registry import SpecialistMap, specialist
from stocker_core.council.rule_batch import context_vote
from stocker_core.council.vote_columns import abstain_text
from stocker_core.decision_context.decision import DecisionContext


def abstain(role: str, what: str) -> SpecialistVote:
    """The vote of an analyst that has no data: signal 0, confidence 0, saying what was missing."""
    return SpecialistVote.neutral(role, abstain_text(what))


def chart_pattern(ctx: DecisionContext) -> SpecialistVote:
    """60-day OHLC geometry: breakouts above resistance / below support, trend channel."""
    return context_vote("chart_pattern", ctx)


def seasonal_trend(ctx: DecisionContext) -> SpecialistVote:
    """Long-horizon trend (SMA200 / 6-month momentum) and month-of-year history."""
    return context_vote("seasonal_trend", ctx)


def indicator(ctx: DecisionContext) -> SpecialistVote:
    """RSI14, MACD histogram, SMA20/50/200 alignment and Bollinger %B."""
    return context_vote("indicator", ctx)


def news(ctx: DecisionContext) -> SpecialistVote:
    """Headline sentiment (finance lexicon, blended with labels) weighted by recency."""
    return context_vote("news", ctx)


def forum_sentiment(ctx: DecisionContext) -> SpecialistVote:
    """Forum posts up to the date, weighted by recency (half-life 7 days) and score."""
    return context_vote("forum_sentiment", ctx)


def peer_commodity(ctx: DecisionContext) -> SpecialistVote:
    """20-day relative strength vs peers, and the commodity's move (a series without the
    day's close is missing that day)."""
    return context_vote("peer_commodity", ctx)


def geopolitics(ctx: DecisionContext) -> SpecialistVote:
    """Dated macro events (hawkish/dovish, half-life 10 days) and rate moves when present."""
    return context_vote("geopolitics", ctx)


RULE_ANALYSTS: Mapping[str, Callable[[DecisionContext], SpecialistVote]] = SpecialistMap(lambda s: s.rule)
"""Every registered specialist's rule analyst in council order, read live from the registry
(``council/registry.py``; the built-in ones are declared in ``council/specialists.py``)."""
RULES_VERSION = "rules-v1"
RULE_REVISIONS: Mapping[str, int] = SpecialistMap(
    lambda s: s.rule_revision, keep=lambda s: s.rule_revision > 0
)
"""Roles whose rule changed since ``RULES_VERSION`` (``Specialist.rule_revision``; their cached
votes are recomputed)."""


def rule_vote(role: str, ctx: DecisionContext) -> SpecialistVote:
    """The rule analyst's vote of ``role``."""
    return specialist(role).rule(ctx)
