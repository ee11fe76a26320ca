"""Helpers of tests/scale: real Postgres, Redis and dagster-celery workers for the scale-out
tests (one implementation, ``tests/scale/local_services.py``, shared with
bench/bench_scale.py), plus the environment a ``stocker`` subprocess gets.

Every test points DAGSTER_HOME and STOCKER_HOME into its tmp_path; nothing touches the
user's homes. A service that cannot start here skips the test with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from local_services import LocalServices, ServiceUnavailable

STOCKER = str(Path(sys.executable).parent / "stocker")


@contextmanager
def running_services(redis: bool = True) -> Iterator[LocalServices]:
    """Postgres (and Redis) for the block; ``pytest.skip`` when one cannot start."""
    services = LocalServices()
    try:
        try:
            services.start_postgres()
            if redis:
                services.start_redis()
        except ServiceUnavailable as exc:
            pytest.skip(f"scale-out services unavailable here: {exc}")
        yield services
    finally:
        services.close()


def fresh_database(services: LocalServices) -> str:
    """A new empty database on the test Postgres; returns its URL."""
    import psycopg2

    assert services.postgres_url is not None
    name = f"t_{uuid.uuid4().hex[:12]}"
    con = psycopg2.connect(services.postgres_url)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    con.close()
    return services.postgres_url.rsplit("/", 1)[0] + "/" + name


def stocker_env(tmp_path: Path, name: str = "", **extra: str) -> dict[str, str]:
    """The environment of a ``stocker`` subprocess: this one's, with STOCKER_*/DAGSTER_HOME
    variables replaced by temp folders (``name`` tells several apart) and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOCKER_", "DAGSTER_"))}
    env.update(
        STOCKER_HOME=str(tmp_path / f"home{name}"),
        DAGSTER_HOME=str(tmp_path / f"dagster{name}"),
        HOME=str(tmp_path),  # ~/.dagster and other dot-folders stay in the test's folder
        PYTHONWARNINGS="ignore",
    )
    env.update(extra)
    return env


def load_env_file(path: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` plus the ``KEY=value`` lines of a ``stocker.env``."""
    out = dict(env)
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            out[key] = value
    return out


def stocker(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([STOCKER, *args], env=env, capture_output=True, text=True, timeout=timeout)


def start_stocker(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [STOCKER, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
