"""Text events (news, forum posts, macro events): sources, sentiment, storage.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

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


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "events":
        import stocker_core.text.events as module
    elif name == "sentiment":
        import stocker_core.text.sentiment as module
    elif name == "store":
        import stocker_core.text.store as module
    elif name == "configured":
        import stocker_core.text.configured as module
    elif name == "synthetic":
        import stocker_core.text.synthetic as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
