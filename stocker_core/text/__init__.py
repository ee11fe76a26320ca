"""Text events (news, forum posts, macro events): sources, sentiment, storage.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "NewsItem": "events",
    "ForumPost": "events",
    "MacroEvent": "events",
    "TextEvents": "events",
    "load_events": "events",
    "load_text_folder": "events",
    "fetch_yfinance_news": "events",
    "score_text": "sentiment",
    "weighted_sentiment": "sentiment",
    "replace_events": "store",
    "read_events": "store",
    "configured_text": "configured",
    "configured_events": "configured",
    "synthetic_text": "synthetic",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
