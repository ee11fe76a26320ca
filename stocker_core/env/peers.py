"""Which peer and commodity symbols a ticker's point-in-time context reads, and the council's
inputs built with them."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import pandas as pd

from stocker_core.config import Settings
from stocker_core.env.tasks import TASKS

if TYPE_CHECKING:
    from stocker_core.decision_context.decision import CouncilInputs
    from stocker_core.text_events.events import TextEvents


def context_symbols(ticker: str, settings: Settings) -> tuple[tuple[str, ...], str | None]:
    """(peers, commodity) of ``ticker``: ``STOCKER_PEERS``/``STOCKER_COMMODITIES``, else the
    reference task's, else the benchmark (``STOCKER_BENCHMARK``) and no commodity."""
    task = next((t for t in TASKS.values() if t.ticker == ticker), None)
    peers = settings.peers.get(ticker) or (task.peers if task else None) or [settings.benchmark]
    commodity = settings.commodities.get(ticker) or (task.commodity if task else None)
    return tuple(p for p in peers if p != ticker), commodity


def council_inputs(
    ticker: str,
    start: date | pd.Timestamp,
    end: date | pd.Timestamp,
    settings: Settings,
    text: TextEvents | None = None,
) -> CouncilInputs:
    """The council's inputs for ``ticker`` over ``start`` … ``end``: its bars with history, the
    closes of its peers and commodity (``context_symbols``), and ``text`` (None: the configured
    text folder). The one way every caller (the council policy, the votes asset, the moderator's
    missing votes, the web page, the observation's view) builds them."""
    from stocker_core.decision_context.decision import load_council_inputs

    peers, commodity = context_symbols(ticker, settings)
    return load_council_inputs(
        ticker, start, end, peers=peers, commodity=commodity, settings=settings, text=text
    )
