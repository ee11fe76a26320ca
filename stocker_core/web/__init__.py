"""The web page for people: play an episode, read the council's votes beside a day's chart,
compare policies from the stored evaluation, follow training runs, see the corpus.

A FastAPI app (``create_web_app``) or an addition to any FastAPI app (``mount_web``) with
JSON endpoints under ``/web/api`` and pages under ``/web``; it reads the warehouse
read-only and needs no network (scripts and styles ship in ``static/``).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
