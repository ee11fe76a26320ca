"""Progress inside a step: assets log ``progress: 40/112 months``, the CLI reads it back.

The message is an ordinary Dagster log line (visible in the UI's run log too); the
`stocker materialize` watcher parses it to move its bar within a long step.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg

PREFIX = "progress:"
_PATTERN = re.compile(r"^progress: (\d+)/(\d+) (.+)$")


@dataclass(frozen=True)
class Progress:
    """``done`` of ``total`` ``unit`` (e.g. 40 of 112 months) finished in a step."""

    done: int
    total: int
    unit: str


def progress_message(done: int, total: int, unit: str) -> str:
    """The log line for ``done`` of ``total`` ``unit``."""
    return f"{PREFIX} {done}/{total} {unit}"


def parse_progress(message: str | None) -> Progress | None:
    """The Progress a log line reports, or None for any other line."""
    found = _PATTERN.match((message or "").strip())
    if found is None:
        return None
    return Progress(int(found.group(1)), int(found.group(2)), found.group(3))


def throttled_progress(
    context: dg.AssetExecutionContext, unit: str, every_s: float = 2.0
) -> Callable[[int, int], None]:
    """A callback ``report(done, total)`` that logs at most every ``every_s`` seconds
    (and always the last item), so a fast loop does not flood the event log."""
    last = [float("-inf")]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= every_s:
            last[0] = now
            context.log.info(progress_message(done, total, unit))

    return report
