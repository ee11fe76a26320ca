"""What a decision on day D may see, cut at D's close: bars, indicators, headlines, forum
posts, peer/commodity/rate closes, macro events and the chart.

It sits below ``env`` and ``council`` so both import it from below: the environment's
observation and the council's specialists read the same point-in-time context.
"""

from stocker_core.decision_context.decision import (
    RATE_SYMBOLS,
    CouncilInputs,
    DecisionContext,
    PortfolioState,
    build_context,
    load_council_inputs,
)
from stocker_core.decision_context.point_in_time import (
    date_only_published_at,
    decision_cutoff,
    point_in_time,
    published_before,
    visible_events,
)

__all__ = [
    "CouncilInputs",
    "DecisionContext",
    "PortfolioState",
    "RATE_SYMBOLS",
    "build_context",
    "date_only_published_at",
    "decision_cutoff",
    "load_council_inputs",
    "point_in_time",
    "published_before",
    "visible_events",
]
