"""What `stocker materialize` shows while its runs go: a bar per run that moves with every
step and, inside long steps, with their partitions (terminal), or one line per run, per
step started and finished and per tenth of a long step (logs and CI)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from stocker_assets.runner import StepEvent


class MaterializeProgress:
    """Progress display for the runs of one `stocker materialize` (a context manager)."""

    def __init__(self, console: Console, check_names: Iterable[str] = ()) -> None:
        self.console = console
        self.check_names = sorted(set(check_names), key=len, reverse=True)
        self.interactive = console.is_terminal
        self.started = time.perf_counter()
        self.bars = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[steps]}"),
            TimeElapsedColumn(),
            console=console,
            disable=not self.interactive,
        )

    def __enter__(self) -> MaterializeProgress:
        self.bars.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.__exit__(*exc)

    def _name(self, step: str) -> str:
        """``prices_prices_are_valid`` -> ``check prices_are_valid``; an asset's step as is."""
        for check in self.check_names:
            if step.endswith("_" + check):
                return f"check {check}"
        return step

    def _line(self, text: str) -> None:
        if not self.interactive:
            self.console.print(f"[{time.perf_counter() - self.started:5.0f}s] {text}", soft_wrap=True)

    def track(self, label: str, steps: int) -> tuple[TaskID, Callable[[StepEvent], None]]:
        """A bar for one run of ``steps`` steps and the callback that moves it."""
        task = self.bars.add_task(label, total=steps, steps=f"0/{steps} steps")
        self._line(f"{label}: started ({steps} steps)")
        finished: set[str] = set()
        last_tenth: dict[str, int] = {}

        def on_event(event: StepEvent) -> None:
            done = len(finished)
            step = self._name(event.step)
            if event.status == "started":
                self.bars.update(task, description=f"{label}: {step}")
                self._line(f"{label}: {step} started ({event.job})")
            elif event.status == "progress" and event.progress is not None:
                p = event.progress
                share = p.done / p.total if p.total else 1.0
                self.bars.update(
                    task,
                    completed=min(steps, done + share),
                    description=f"{label}: {step} {p.done}/{p.total} {p.unit}",
                )
                tenth = int(share * 10)
                if tenth != last_tenth.get(event.step) and p.done < p.total:
                    last_tenth[event.step] = tenth
                    self._line(f"{label}: {step} {p.done}/{p.total} {p.unit}")
            elif event.status in ("done", "failed"):
                finished.add(event.step)
                done = len(finished)
                parts = f", {event.partitions} partition(s)" if event.partitions else ""
                verb = "done" if event.status == "done" else "FAILED"
                self.bars.update(
                    task,
                    completed=min(steps, done),
                    steps=f"{done}/{steps} steps",
                    description=f"{label}: {step} {verb}{parts}",
                )
                self._line(f"{label}: {step} {verb}{parts}")

        return task, on_event

    def finish(self, task: TaskID, label: str, success: bool, seconds: float) -> None:
        """Close a run's bar (its checks may have been skipped: the bar still ends full)."""
        total = self.bars.tasks[[t.id for t in self.bars.tasks].index(task)].total or 0
        self.bars.update(
            task,
            completed=total,
            description=f"{label}: {'done' if success else 'FAILED'}",
        )
        self._line(f"{label}: {'done' if success else 'FAILED'} in {seconds:.1f}s")
