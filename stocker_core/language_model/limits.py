"""Wall-clock limits of LLM calls: the decision-day budget and the event loop the HTTP
client runs its requests on (so a deadline cancels a request wherever it is waiting).

A request's deadline covers everything it does — waiting for a concurrency slot,
connecting, each retry and backoff, the headers and every byte of the reply — not
one socket read. Calls made inside ``decision_day(key)`` also share that day's budget:
the first call of a day starts it, later calls of the same day get what is left.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Hashable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

_scope = threading.local()


@contextmanager
def decision_day(key: Hashable) -> Iterator[None]:
    """Calls made in this thread inside the block count against the budget of ``key``
    (e.g. ``(ticker, date)``) in clients that keep day budgets."""
    previous = getattr(_scope, "day", None)
    _scope.day = key
    try:
        yield
    finally:
        _scope.day = previous


def current_day() -> Hashable | None:
    """The decision day of the enclosing ``decision_day`` block of this thread, if any."""
    return getattr(_scope, "day", None)


class DayBudgets:
    """One deadline per decision day: ``seconds`` from the day's first call.

    A call for a day whose budget ran out more than ``seconds`` ago starts a fresh
    budget (a later run of the same day); the last ``keep`` days are remembered.
    """

    def __init__(self, seconds: float, keep: int = 4096) -> None:
        if seconds <= 0:
            raise ValueError(f"a day budget must be positive, got {seconds}")
        self.seconds = seconds
        self.keep = keep
        self._deadlines: OrderedDict[Hashable, float] = OrderedDict()
        self._lock = threading.Lock()

    def deadline(self, key: Hashable, now: float) -> float:
        """The monotonic deadline of day ``key`` seen at ``now`` (started if new)."""
        with self._lock:
            deadline = self._deadlines.get(key)
            if deadline is None or now > deadline + self.seconds:
                deadline = now + self.seconds
                self._deadlines[key] = deadline
            self._deadlines.move_to_end(key)
            while len(self._deadlines) > self.keep:
                self._deadlines.popitem(last=False)
            return deadline


class LoopThread:
    """An asyncio event loop in a daemon thread; blocking callers submit coroutines to it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop (started on first use)."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], wait_s: float) -> T:
        """Run ``coro`` on the loop and wait at most ``wait_s`` seconds for its result.

        The coroutine is expected to enforce its own deadline; ``wait_s`` only guards
        against a stuck loop (the coroutine is then cancelled and TimeoutError raised).
        """
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout=max(0.0, wait_s))
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(f"no result within {wait_s:.3g} s") from None
