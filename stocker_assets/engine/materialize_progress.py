"""What `stocker materialize` shows while its runs go: a bar per run that moves with every
step and, inside long steps, with their partitions and an ETA (terminal), or one line per
run, per step started and finished and per tenth of a long step with its ETA (logs and CI),
and a "still running" line when a step has been quiet for ``HEARTBEAT_S``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from stocker_assets.engine.runner import StepEvent

HEARTBEAT_S = 45.0
"""In line mode, a step quiet this long gets a line (so a log shows life at least every minute)."""


def eta_text(elapsed_s: float, share: float) -> str:
    """``ETA 1m20s`` from the time a step has run and the share of it done (linear)."""
    if share <= 0 or share >= 1 or elapsed_s <= 0:
        return ""
    return f"ETA {clock(elapsed_s * (1 - share) / share)}"


def clock(seconds: float) -> str:
    """``45s``, ``3m05s``, ``1h02m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


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

        self._lock = threading.Lock()
        self._running: dict[tuple[str, str], float] = {}  # (run label, step) -> start
        self._last_line = time.monotonic()
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None

    def __enter__(self) -> MaterializeProgress:
        self.bars.__enter__()
        if not self.interactive:
            self._heartbeat = threading.Thread(target=self._beat, name="materialize-heartbeat", daemon=True)
            self._heartbeat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join(timeout=5)
        self.bars.__exit__(*exc)

    def _beat(self) -> None:
        while not self._stop.wait(min(5.0, HEARTBEAT_S / 3)):
            now = time.monotonic()
            with self._lock:
                quiet = now - self._last_line >= HEARTBEAT_S
                running = sorted(self._running.items(), key=lambda item: item[1])
            if quiet and running:
                (label, step), since = running[0]
                self._line(f"{label}: {step} still running ({clock(now - since)})")

    def _name(self, step: str) -> str:
        """``prices_prices_are_valid`` -> ``check prices_are_valid``; an asset's step as is."""
        for check in self.check_names:
            if step.endswith("_" + check):
                return f"check {check}"
        return step

    def _line(self, text: str) -> None:
        if not self.interactive:
            with self._lock:
                self._last_line = time.monotonic()
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
                with self._lock:
                    self._running[(label, step)] = time.monotonic()
                self.bars.update(task, description=f"{label}: {step}")
                self._line(f"{label}: {step} started ({event.job})")
            elif event.status == "progress" and event.progress is not None:
                p = event.progress
                share = p.done / p.total if p.total else 1.0
                with self._lock:
                    since = self._running.setdefault((label, step), time.monotonic())
                eta = eta_text(time.monotonic() - since, share)
                text = f"{step} {p.done}/{p.total} {p.unit}" + (f", {eta}" if eta else "")
                self.bars.update(task, completed=min(steps, done + share), description=f"{label}: {text}")
                tenth = int(share * 10)
                if tenth != last_tenth.get(event.step) and p.done < p.total:
                    last_tenth[event.step] = tenth
                    self._line(f"{label}: {text}")
            elif event.status in ("done", "failed"):
                with self._lock:
                    self._running.pop((label, step), None)
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
