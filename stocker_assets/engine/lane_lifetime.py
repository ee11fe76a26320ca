"""Lane workers live no longer than the ``stocker materialize`` that started them.

* **Dying with the CLI.** A lane asks the kernel for ``SIGKILL`` when its parent dies
  (``PR_SET_PDEATHSIG`` through ``prctl``, Linux) — a signal Dagster cannot capture, unlike
  ``SIGTERM``, which it turns into an interrupt checked between steps — and, on every system, a
  watchdog thread and a check before each unit exit as soon as the parent is gone.
* **Stopping with the CLI.** The CLI ignores nothing: ``SIGINT`` and ``SIGTERM`` end it, and on
  its way out it kills its lanes (lanes ignore ``SIGINT`` themselves, so a Ctrl-C in the
  terminal stops the run once, in one place).
* **No rerun races leftovers.** Each run writes ``<home>/.lanes/<cli pid>.lock``; every lane
  holds a shared ``flock`` on it for its whole life. A new run waits, saying so, for the lanes
  of an earlier run whose CLI is gone (an exclusive lock on that file), then removes the file.
"""

from __future__ import annotations

import ctypes
import fcntl
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from stocker_core.errors import StockerError

PR_SET_PDEATHSIG = 1
LANES_DIR = ".lanes"
WATCH_SECONDS = 0.5
LEFTOVER_WAIT_SECONDS = 120.0

_HELD: list[int] = []
"""The lane's open lock file (kept open, so held, until the process ends)."""


class LeftoverLanesError(StockerError, RuntimeError):
    """Lanes of an earlier run still held the home after the wait."""


def _exit_now() -> None:
    os._exit(1)


def parent_alive(parent: int) -> bool:
    """True while ``parent`` is still this process's parent (an orphan is re-parented)."""
    return os.getppid() == parent


def die_with_parent(parent: int) -> None:
    """Make this process end when ``parent`` does: the kernel's parent-death signal on Linux, a
    watchdog thread everywhere, and an immediate exit when the parent is already gone."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if not parent_alive(parent):
        _exit_now()

    def watch() -> None:
        while parent_alive(parent):
            time.sleep(WATCH_SECONDS)
        _exit_now()

    threading.Thread(target=watch, name="lane-parent-watch", daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the CLI's to handle


def hold_run_lock(path: str) -> None:
    """Hold a shared lock on this run's lock file for the rest of the process's life."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    fcntl.flock(fd, fcntl.LOCK_SH)
    _HELD.append(fd)


def lane_start(parent: int, lock_path: str, warm: Callable[[], None]) -> None:
    """A lane's initializer: die with ``parent``, hold the run's lock, then ``warm`` up."""
    die_with_parent(parent)
    hold_run_lock(lock_path)
    warm()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_for_leftover_lanes(
    home: Path, say: Callable[[str], None], timeout: float = LEFTOVER_WAIT_SECONDS
) -> int:
    """Wait until no lane of an earlier run whose CLI is gone holds ``home`` (saying what it waits
    for); returns how many such runs it cleared. Runs whose CLI is alive are left alone (two
    live runs on one home are allowed). LeftoverLanesError after ``timeout`` seconds."""
    folder = home / LANES_DIR
    cleared = 0
    for path in sorted(folder.glob("*.lock")) if folder.is_dir() else []:
        try:
            pid = int(path.stem)
        except ValueError:
            continue
        if pid == os.getpid() or _pid_alive(pid):
            continue
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                say(
                    f"waiting for the lane workers of an earlier stocker materialize (PID {pid}, "
                    f"no longer running) to exit: they hold {path}"
                )
                deadline = time.monotonic() + timeout
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() > deadline:
                            raise LeftoverLanesError(
                                f"lane workers of PID {pid} still hold {path} after {timeout:.0f} s: "
                                f"stop them (fuser -k {path}) and retry"
                            ) from None
                        time.sleep(0.2)
            path.unlink(missing_ok=True)
            cleared += 1
        finally:
            os.close(fd)
    return cleared


@contextmanager
def run_lock_file(home: Path) -> Iterator[Path]:
    """This run's lock file (its lanes hold it), removed when the run ends."""
    folder = home / LANES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{os.getpid()}.lock"
    path.write_text(f"{os.getpid()}\n")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def kill_children() -> list[int]:
    """Kill every process this one started through multiprocessing (its lanes); their pids."""
    children = multiprocessing.active_children()
    for child in children:
        child.kill()
    for child in children:
        child.join(timeout=5)
    return [c.pid for c in children if c.pid is not None]


@contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """In the main thread, turn SIGTERM into SystemExit(143) for the block, so the CLI's cleanup
    (killing its lanes) runs; elsewhere, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
