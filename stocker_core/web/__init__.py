"""The web page for people: play an episode, read the council's votes beside a day's chart,
compare policies from the stored evaluation, follow training runs, see the corpus.

A FastAPI app (``create_web_app``) or an addition to any FastAPI app (``mount_web``) with
JSON endpoints under ``/web/api`` and pages under ``/web``; it reads the warehouse
read-only and needs no network (scripts and styles ship in ``static/``).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "create_web_app": "app",
    "mount_web": "app",
    "web_app": "app",
    "with_web": "app",
    "WebContext": "api",
    "WarehouseReader": "reader",
    "PlaySessions": "play",
    "replay_decisions": "votes",
    "stored_vote_book": "votes",
    "WebError": "errors",
    "PAGES": "pages",
    "render_page": "pages",
}

__all__ = sorted(_EXPORTS)


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "app":
        import stocker_core.web.app as module
    elif name == "api":
        import stocker_core.web.api as module
    elif name == "reader":
        import stocker_core.web.reader as module
    elif name == "play":
        import stocker_core.web.play as module
    elif name == "votes":
        import stocker_core.web.votes as module
    elif name == "errors":
        import stocker_core.web.errors as module
    elif name == "pages":
        import stocker_core.web.pages as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
