"""One DuckDB configuration per warehouse file and process at a time.

DuckDB shares one database instance between all connections of a process to the same file,
and its settings (``file_search_path``, ``allowed_directories``, ``lock_configuration`` …)
belong to that instance. A read-only connection and a read-write one cannot share it
("Can't open a connection to same database file with a different configuration"), and a
locked instance refuses every later ``SET`` ("the configuration has been locked"). So every
connection of a process to one file is opened through ``ModeSlots.hold``: connections of the
same mode (``"read"`` or ``"write"``) share the instance, configured once by the first of
them; a connection of the other mode waits until the last one of the current mode has
closed (or raises at once when its own thread holds one: that would wait for itself).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stocker_core.errors import StockerError


class ModeConflictError(StockerError, RuntimeError):
    """A thread asked for a read connection while holding a write one of the same file (or back)."""


class ModeSlots:
    """Per file: the mode of the open DuckDB instance and how many connections use it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open: dict[str, tuple[str, int]] = {}
        self._mine = threading.local()
        self.configure_lock = threading.RLock()
        """Held while a connection opens and configures the shared instance."""

    def _held(self) -> dict[str, int]:
        held = getattr(self._mine, "held", None)
        if held is None:
            held = self._mine.held = {}
        return held

    @contextmanager
    def hold(self, path: Path, mode: str, timeout: float) -> Iterator[None]:
        """Hold a slot of ``mode`` on ``path`` for the body; waits up to ``timeout`` seconds for
        the other mode's connections of this process to close (TimeoutError after that)."""
        key = str(path.resolve())
        held = self._held()
        deadline = time.monotonic() + timeout
        with self._cond:
            while key in self._open and self._open[key][0] != mode:
                if held.get(key):
                    raise ModeConflictError(
                        f"this thread holds a {self._open[key][0]} connection of {path} and asked for "
                        f"a {mode} one: finish the first block before opening the second"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{path} stayed open in {self._open[key][0]} mode for {timeout:.0f} s")
                self._cond.wait(left)
            count = self._open.get(key, (mode, 0))[1]
            self._open[key] = (mode, count + 1)
        held[key] = held.get(key, 0) + 1
        try:
            yield
        finally:
            held[key] -= 1
            if not held[key]:
                del held[key]
            with self._cond:
                current, count = self._open[key]
                if count <= 1:
                    del self._open[key]
                else:
                    self._open[key] = (current, count - 1)
                self._cond.notify_all()

    def mode(self, path: Path) -> str | None:
        """The mode ``path`` is open in by this process (None when closed)."""
        with self._cond:
            found = self._open.get(str(path.resolve()))
        return found[0] if found else None


SLOTS = ModeSlots()
"""This process's slots (a forked child starts with none: its parent's connections are not its own)."""


def _reset_after_fork() -> None:
    global SLOTS
    SLOTS = ModeSlots()


os.register_at_fork(after_in_child=_reset_after_fork)


def slots() -> ModeSlots:
    """This process's ``ModeSlots``."""
    return SLOTS
