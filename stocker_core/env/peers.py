"""Which peer and commodity symbols a ticker's point-in-time context reads."""

from __future__ import annotations

from stocker_core.config import Settings
from stocker_core.env.tasks import TASKS


def context_symbols(ticker: str, settings: Settings) -> tuple[tuple[str, ...], str | None]:
    """(peers, commodity) of ``ticker``: ``STOCKER_PEERS``/``STOCKER_COMMODITIES``, else the
    reference task's, else the benchmark (``STOCKER_BENCHMARK``) and no commodity."""
    task = next((t for t in TASKS.values() if t.ticker == ticker), None)
    peers = settings.peers.get(ticker) or (task.peers if task else None) or [settings.benchmark]
    commodity = settings.commodities.get(ticker) or (task.commodity if task else None)
    return tuple(p for p in peers if p != ticker), commodity
