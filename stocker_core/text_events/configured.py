"""The text events the configuration provides: those generated with a seeded market on a
source that is one (``DataSource.synthetic_spec``), else the text folder's
(``Settings.text_folder``: ``STOCKER_TEXT_DIR``, else ``STOCKER_FILES_DIR``, else the text the
source ships); under ``STOCKER_CLOCK`` only the events published before the clock
(``market.clock.text_before``)."""

from __future__ import annotations

import pandas as pd

from stocker_core.config import Settings
from stocker_core.market.clock import text_before
from stocker_core.text_events.events import EventKind, TextEvents, load_events, load_text_folder


def configured_text(settings: Settings) -> TextEvents:
    """All three kinds: generated with the source's seeded market (``STOCKER_SOURCE=synthetic``),
    else read from the text folder; empty frames when neither applies."""
    spec_of = settings.data_source.synthetic_spec
    if spec_of is not None:
        from stocker_core.text_events.synthetic import synthetic_text

        made = synthetic_text(spec_of(settings))  # cached: hand out copies
        text = TextEvents(made.news.copy(), made.forums.copy(), made.macro.copy())
    else:
        text = load_text_folder(settings.text_folder)
    if settings.clock is None:
        return text
    return TextEvents(*(text_before(frame, settings.clock) for frame in (text.news, text.forums, text.macro)))


def configured_events(settings: Settings, kind: EventKind) -> pd.DataFrame | None:
    """Events of ``kind`` from the same place as ``configured_text``; None when the
    configuration names no text at all (no seeded market, no folder)."""
    if settings.data_source.synthetic_spec is not None:
        text = configured_text(settings)
        return {"news": text.news, "forums": text.forums, "macro": text.macro}[kind]
    folder = settings.text_folder
    return text_before(load_events(folder, kind), settings.clock) if folder is not None else None
