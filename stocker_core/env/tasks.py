"""The three reference tasks of SPEC §1 as named aliases of episode partitions."""

from __future__ import annotations

from dataclasses import dataclass

from stocker_core.errors import InvalidNameError


@dataclass(frozen=True)
class Task:
    """A named episode: an alias of a ticker × month partition key."""

    task_id: str
    ticker: str
    month: str
    regime: str
    peers: tuple[str, ...] = ()
    commodity: str | None = None

    @property
    def key(self) -> str:
        """The partition key, e.g. ``AAPL|2023-08-01``."""
        return f"{self.ticker}|{self.month}"


TASKS: dict[str, Task] = {
    task.task_id: task
    for task in (
        Task(
            "task_easy",
            "AAPL",
            "2023-08-01",
            "steady uptrend into a product launch",
            ("MSFT", "GOOGL"),
            "GC=F",
        ),
        Task("task_medium", "INTC", "2024-01-01", "choppy, sideways after earnings", ("AMD", "NVDA"), "GC=F"),
        Task(
            "task_hard", "META", "2022-09-01", "drawdown, then snap-back after Q3", ("GOOGL", "SNAP"), "CL=F"
        ),
    )
}


def get_task(task_id: str) -> Task:
    """The task named ``task_id``; InvalidNameError listing the known ones otherwise."""
    try:
        return TASKS[task_id]
    except (KeyError, TypeError):
        raise InvalidNameError(
            f"unknown task {task_id!r}: use one of {', '.join(TASKS)} or an episode key like AAPL|2023-08-01"
        ) from None


def resolve_episode_key(name_or_key: str) -> tuple[str, str | None]:
    """(partition key, task id or None) for a task alias or a ``TICKER|YYYY-MM-01`` key."""
    if isinstance(name_or_key, str) and name_or_key in TASKS:
        task = TASKS[name_or_key]
        return task.key, task.task_id
    if isinstance(name_or_key, str) and "|" in name_or_key:
        return name_or_key, None
    get_task(name_or_key)  # raises with the list of tasks
    raise AssertionError("unreachable")
