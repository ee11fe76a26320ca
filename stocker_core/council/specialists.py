"""The seven built-in specialists, each declared the way an added one is
(``council/registry.py``), in the council's fixed order, with the prompts of ``roles.py``,
the array rules of ``rules_price.py``, ``rules_cross.py`` and ``rules_text.py`` (over many
days; ``analysts.py`` runs them on one day's context).

``register_specialists()`` registers them; the composition root
(``stocker_core.composition.register_all``) calls it. Nothing registers at import.
"""

from __future__ import annotations

from stocker_core.council import analysts, rules_cross, rules_price, rules_text
from stocker_core.council.registry import SPECIALIST_NAMES, Specialist, register_specialist, specialist
from stocker_core.council.roles import (
    chart_message,
    expertise_prompt,
    forum_message,
    indicator_message,
    macro_message,
    news_message,
    peer_message,
    seasonal_message,
)

BUILTIN: tuple[Specialist, ...] = (
    Specialist(
        name="chart_pattern",
        system_prompt=expertise_prompt(
            "chart-pattern analyst: read the 60-day candlestick chart for breakouts, "
            "support/resistance and trend channels"
        ),
        builder=chart_message,
        rule=analysts.chart_pattern,
        batch_rule=rules_price.chart_pattern_votes,
    ),
    Specialist(
        name="seasonal_trend",
        system_prompt=expertise_prompt(
            "seasonal and secular-trend analyst: judge the long-horizon trend, "
            "month-of-year seasonality and cycles"
        ),
        builder=seasonal_message,
        rule=analysts.seasonal_trend,
        batch_rule=rules_price.seasonal_trend_votes,
    ),
    Specialist(
        name="indicator",
        system_prompt=expertise_prompt(
            "technical-indicator analyst: weigh RSI14, MACD(12,26,9), SMA20/50/200, Bollinger(20,2) and ATR14"
        ),
        builder=indicator_message,
        rule=analysts.indicator,
        batch_rule=rules_price.indicator_votes,
    ),
    Specialist(
        name="news",
        system_prompt=expertise_prompt(
            "news analyst: judge the sentiment of the headlines of the last 7 days"
        ),
        builder=news_message,
        rule=analysts.news,
        batch_rule=rules_text.news_votes,
    ),
    Specialist(
        name="forum_sentiment",
        system_prompt=expertise_prompt(
            "crowd-sentiment analyst: judge forum and Reddit posts, weighting popular and recent posts more"
        ),
        builder=forum_message,
        rule=analysts.forum_sentiment,
        batch_rule=rules_text.forum_sentiment_votes,
    ),
    Specialist(
        name="peer_commodity",
        system_prompt=expertise_prompt(
            "relative-strength analyst: compare the stock with its peers and with gold/oil moves"
        ),
        builder=peer_message,
        rule=analysts.peer_commodity,
        batch_rule=rules_cross.peer_commodity_votes,
        rule_revision=2,  # 2: a peer or commodity without the day's close is missing, not stale
    ),
    Specialist(
        name="geopolitics",
        system_prompt=expertise_prompt(
            "macro and geopolitics analyst: judge CPI prints, FOMC decisions, rates and "
            "other dated macro events for risk"
        ),
        builder=macro_message,
        rule=analysts.geopolitics,
        batch_rule=rules_text.geopolitics_votes,
    ),
)
"""The built-in specialists, in the council's order."""


def register_specialists() -> None:
    """Register the built-in specialists in their order (called by the composition root; a
    specialist already registered as the same one is left in place, so again is a no-op)."""
    for builtin in BUILTIN:
        if builtin.name not in SPECIALIST_NAMES or specialist(builtin.name) != builtin:
            register_specialist(builtin)
