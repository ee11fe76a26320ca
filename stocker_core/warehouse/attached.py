"""The warehouse file attached to a long-lived in-memory DuckDB instance, one per file, mode and
process, instead of a new DuckDB instance for every connection.

Opening a DuckDB instance costs ~15 ms of CPU whatever the file holds (its built-in catalog:
every function registered again); attaching a file to a live instance ~1.5 ms. The warehouse
opens a connection per operation so that processes take turns as the file's single writer,
and a Dagster run, a backtest or a web page makes hundreds of them. So each process keeps one
in-memory host instance per warehouse file and mode (``"read"``, hardened and locked as
``Warehouse.read_settings`` says, or ``"write"``), attaches the file while connections of that
mode are open — the file's lock is held only then, as before — and detaches it when the last of
them closes, which releases the lock (and checkpoints a written file) for other processes.

Callers hold ``connections.slots().configure_lock`` around ``open_cursor`` and ``release``;
``connections.ModeSlots`` already keeps the two modes of one file from being open at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

KEPT_HOSTS = 8
"""Host instances kept per process (each holds a few threads and buffers): a process that
touches more warehouses (the tests' temporary homes) closes the least recently used idle ones."""

ALIAS = "stocker"
"""The name the file is attached under (every cursor ``USE``s it, so ``market.prices`` etc.
resolve as in a connection of the file itself)."""


def quoted(path: Path | str) -> str:
    """``path`` as an SQL string literal."""
    return "'" + str(path).replace("'", "''") + "'"


@dataclass
class _Host:
    instance: duckdb.DuckDBPyConnection
    cursors: int = 0
    attached: bool = False


@dataclass
class AttachedHosts:
    """This process's host instances, by (resolved file, mode)."""

    hosts: dict[tuple[str, str], _Host] = field(default_factory=dict)

    def open_cursor(
        self, path: Path, read_only: bool, harden: Callable[[duckdb.DuckDBPyConnection], None]
    ) -> duckdb.DuckDBPyConnection:
        """A cursor on the file at ``path`` (attached first when no cursor of this mode is open):
        a new host instance is set up by ``harden`` (read mode) before anything is attached.
        Raises DuckDB's IOException when another process holds a conflicting lock."""
        resolved = path.resolve()
        key = (str(resolved), "read" if read_only else "write")
        host = self.hosts.pop(key, None)
        if host is None:
            self._close_idle(KEPT_HOSTS - 1)
            instance = duckdb.connect(":memory:", config={"file_search_path": str(resolved.parent)})
            try:
                if read_only:
                    harden(instance)
            except BaseException:
                instance.close()  # never keep a half-configured host
                raise
            host = _Host(instance)
        self.hosts[key] = host  # the most recently used last
        if not host.attached:
            options = " (READ_ONLY)" if read_only else ""
            host.instance.execute(f"ATTACH {quoted(resolved)} AS {ALIAS}{options}")
            host.attached = True
        cursor = host.instance.cursor()
        try:
            cursor.execute(f"USE {ALIAS}")
        except BaseException:
            cursor.close()
            self._detach_if_unused(host)
            raise
        host.cursors += 1
        return cursor

    def release(self, path: Path, read_only: bool, cursor: duckdb.DuckDBPyConnection) -> None:
        """Close ``cursor``; detach the file when it was the last open cursor of its mode."""
        host = self.hosts[(str(path.resolve()), "read" if read_only else "write")]
        try:
            cursor.close()
        finally:
            host.cursors -= 1
            self._detach_if_unused(host)

    def _close_idle(self, keep: int) -> None:
        for key in [k for k, h in self.hosts.items() if not h.attached][: max(0, len(self.hosts) - keep)]:
            self.hosts.pop(key).instance.close()

    @staticmethod
    def _detach_if_unused(host: _Host) -> None:
        if host.cursors == 0 and host.attached:
            host.attached = False
            host.instance.execute(f"DETACH {ALIAS}")


HOSTS = AttachedHosts()
"""This process's hosts (a forked child starts with none: its parent's instances are not its own)."""


_PARENTS: list[AttachedHosts] = []


def _reset_after_fork() -> None:
    global HOSTS
    _PARENTS.append(HOSTS)  # kept, never closed: a DuckDB instance destroyed in a forked child crashes it
    HOSTS = AttachedHosts()


os.register_at_fork(after_in_child=_reset_after_fork)


def hosts() -> AttachedHosts:
    """This process's ``AttachedHosts``."""
    return HOSTS
