"""Spacing requests to a provider: at most ``requests_per_minute``, evenly spread."""

from __future__ import annotations

import time
from collections.abc import Callable


class RateLimiter:
    """Blocks in ``wait`` until the next request may go (a minimum interval between starts).

    ``clock`` and ``sleep`` default to the monotonic clock and ``time.sleep``; tests pass a
    fake pair so that no real time passes."""

    def __init__(
        self,
        requests_per_minute: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not requests_per_minute > 0:
            raise ValueError(f"requests_per_minute must be above 0, got {requests_per_minute}")
        self.interval = 60.0 / requests_per_minute
        self._clock, self._sleep = clock, sleep
        self._next: float | None = None

    def wait(self) -> None:
        """Sleep until one interval has passed since the previous request started."""
        now = self._clock()
        if self._next is not None and now < self._next:
            self._sleep(self._next - now)
            now = self._next
        self._next = now + self.interval
