"""The public names of ``stocker_core.web``, imported on first use (``__init__.py``)."""

from .app import (
    create_web_app as create_web_app,
    mount_web as mount_web,
    web_app as web_app,
    with_web as with_web,
)
from .api import WebContext as WebContext
from .reader import WarehouseReader as WarehouseReader
from .play import PlaySessions as PlaySessions
from .votes import replay_decisions as replay_decisions, stored_vote_book as stored_vote_book
from .errors import WebError as WebError
from .pages import PAGES as PAGES, render_page as render_page
