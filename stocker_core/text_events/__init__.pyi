"""The public names of ``stocker_core.text_events``, imported on first use (``__init__.py``)."""

from .events import (
    NewsItem as NewsItem,
    ForumPost as ForumPost,
    MacroEvent as MacroEvent,
    TextEvents as TextEvents,
    load_events as load_events,
    load_text_folder as load_text_folder,
    fetch_yfinance_news as fetch_yfinance_news,
)
from .sentiment import score_text as score_text, weighted_sentiment as weighted_sentiment
from .store import replace_events as replace_events, read_events as read_events
from .configured import configured_text as configured_text, configured_events as configured_events
from .synthetic import synthetic_text as synthetic_text
