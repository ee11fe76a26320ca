"""Charts the web page drew on demand, kept in the server's memory only (the servers never
write into the home): least recently used dropped first past ``CHART_MEMORY_BYTES``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import date

CHART_MEMORY_BYTES = 32 * 1024 * 1024
"""Drawn charts kept (a 768×768 chart is ~60 KB: about 500 of them)."""


class ChartMemory:
    """PNG bytes by (ticker, day), at most ``limit`` bytes in all; thread-safe."""

    def __init__(self, limit: int = CHART_MEMORY_BYTES) -> None:
        self.limit = limit
        self.size = 0
        self._charts: OrderedDict[tuple[str, date], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, ticker: str, day: date) -> bytes | None:
        """The chart kept for ``ticker`` on ``day``, or None."""
        with self._lock:
            png = self._charts.get((ticker, day))
            if png is not None:
                self._charts.move_to_end((ticker, day))
            return png

    def put(self, ticker: str, day: date, png: bytes) -> None:
        """Keep ``png`` (one larger than the whole limit is not kept)."""
        if len(png) > self.limit:
            return
        with self._lock:
            old = self._charts.pop((ticker, day), None)
            self.size -= len(old) if old is not None else 0
            self._charts[(ticker, day)] = png
            self.size += len(png)
            while self.size > self.limit:
                _, dropped = self._charts.popitem(last=False)
                self.size -= len(dropped)

    def __len__(self) -> int:
        return len(self._charts)
