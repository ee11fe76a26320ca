"""A multi-machine Dagster home: Postgres storage, the run queue, Celery executor settings.

``stocker deploy init`` (``stocker_assets.deploy_cli``) writes, into the Dagster home:

* ``dagster.yaml``: Postgres run/event/schedule storage, telemetry off, the run queue
  (``concurrency.runs.max_concurrent_runs``) and the DuckDB pool of the local template;
* ``celery.yaml``: the executor block ``dagster-celery worker start -y celery.yaml`` reads
  (broker, result backend);
* ``stocker.env``: ``STOCKER_EXECUTOR=celery`` and the broker/backend, for every machine's
  environment (``set -a; . stocker.env; set +a``), so ``stocker materialize`` sends steps
  to the workers.

Nothing is written unless every URL is valid, an existing file is only replaced with
``force``, and each file is written atomically (temp file + rename).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from stocker_core.atomic_files import write_text_atomic
from stocker_core.errors import StockerError

POSTGRES_SCHEMES = ("postgresql", "postgresql+psycopg2")
BROKER_SCHEMES = ("redis", "rediss", "amqp", "pyamqp")
BACKEND_SCHEMES = ("redis", "rediss", "rpc", "db+postgresql", "db+postgresql+psycopg2")

FILES = ("dagster.yaml", "celery.yaml", "stocker.env")


class DeployConfigError(StockerError):
    """A URL or option of ``stocker deploy init`` is unusable (exit 2, nothing written)."""


def _check_url(kind: str, url: str, schemes: tuple[str, ...], need_host: bool = True) -> str:
    url = url.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a non-numeric port)
    except ValueError as exc:
        raise DeployConfigError(f"{kind} URL {url!r} is malformed: {exc}") from None
    if parts.scheme not in schemes:
        raise DeployConfigError(
            f"{kind} URL {url!r} must start with {' or '.join(s + '://' for s in schemes)}"
        )
    if need_host and not parts.hostname:
        raise DeployConfigError(f"{kind} URL {url!r} names no host (e.g. {schemes[0]}://user@host:port/...)")
    if any(c.isspace() for c in url) or "'" in url or '"' in url:
        raise DeployConfigError(f"{kind} URL {url!r} contains spaces or quotes")
    return url


def check_postgres_url(url: str) -> str:
    """``postgresql[+psycopg2]://user[:password]@host[:port]/database``, else DeployConfigError.

    Returned with the driver spelled out (``postgresql+psycopg2://``): SQLAlchemy 2.1 maps a
    bare ``postgresql://`` to psycopg 3, which dagster-postgres does not install.
    """
    url = _check_url("Postgres", url, POSTGRES_SCHEMES)
    if not urlsplit(url).path.strip("/"):
        raise DeployConfigError(f"Postgres URL {url!r} names no database (…/DBNAME at the end)")
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg2://" + url[len("postgresql://") :]
    return url


def check_broker_url(url: str) -> str:
    return _check_url("Celery broker", url, BROKER_SCHEMES)


def check_backend_url(url: str) -> str:
    return _check_url("Celery result backend", url, BACKEND_SCHEMES, need_host=not url.startswith("rpc"))


@dataclass(frozen=True)
class DeployConfig:
    postgres_url: str
    broker_url: str
    backend_url: str | None = None
    max_concurrent_runs: int = 4
    gpu_queue: str | None = None
    llm_queue: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "postgres_url", check_postgres_url(self.postgres_url))
        check_broker_url(self.broker_url)
        if self.backend_url is not None:
            check_backend_url(self.backend_url)
        for option, queue in (("--gpu-queue", self.gpu_queue), ("--llm-queue", self.llm_queue)):
            if queue is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", queue):
                raise DeployConfigError(f"{option} {queue!r}: use letters, digits, '_', '.', '-'")
        if self.max_concurrent_runs < 1:
            raise DeployConfigError(f"--max-concurrent-runs must be ≥ 1, not {self.max_concurrent_runs}")

    @property
    def backend(self) -> str:
        """The result backend: as given, else the broker itself (Redis keeps both)."""
        if self.backend_url:
            return self.backend_url
        if urlsplit(self.broker_url).scheme in ("redis", "rediss"):
            return self.broker_url
        return "rpc://"


def dagster_yaml(config: DeployConfig) -> str:
    body = {
        "storage": {"postgres": {"postgres_url": config.postgres_url}},
        "telemetry": {"enabled": False},
        "concurrency": {
            "runs": {"max_concurrent_runs": config.max_concurrent_runs},
            # every DuckDB-touching asset is in pool "duckdb": one such run at a time
            "pools": {"granularity": "run", "default_limit": 1},
        },
    }
    return (
        "# Written by `stocker deploy init`: the Dagster instance shared by every machine.\n"
        "# Same file on the webserver, daemon, workers and wherever `stocker` runs.\n"
        + yaml.safe_dump(body, sort_keys=False)
    )


def celery_yaml(config: DeployConfig) -> str:
    body = {"execution": {"config": {"broker": config.broker_url, "backend": config.backend}}}
    return (
        "# Written by `stocker deploy init`, for\n"
        "#   dagster-celery worker start -A dagster_celery.app -y celery.yaml\n"
        + yaml.safe_dump(body, sort_keys=False)
    )


def stocker_env(config: DeployConfig, home: Path) -> str:
    return (
        "# Written by `stocker deploy init`: load on every machine with  set -a; . stocker.env; set +a\n"
        f"DAGSTER_HOME={home}\n"
        "STOCKER_EXECUTOR=celery\n"
        f"STOCKER_CELERY_BROKER={config.broker_url}\n"
        f"STOCKER_CELERY_BACKEND={config.backend}\n"
        + (f"STOCKER_CELERY_GPU_QUEUE={config.gpu_queue}\n" if config.gpu_queue else "")
        + (f"STOCKER_CELERY_LLM_QUEUE={config.llm_queue}\n" if config.llm_queue else "")
    )


def _write_atomic(path: Path, text: str) -> None:
    write_text_atomic(path, text, 0o600 if path.name != "celery.yaml" else 0o644)  # the Postgres password


def write_deploy_files(home: Path, config: DeployConfig, force: bool = False) -> list[Path]:
    """Write ``FILES`` into ``home`` (created if needed); returns their paths.

    Refuses (DeployConfigError, nothing written) when any of them exists and not ``force``.
    """
    home = home.expanduser().resolve()
    targets = [home / name for name in FILES]
    existing = [p for p in targets if p.exists()]
    if existing and not force:
        raise DeployConfigError(
            f"{', '.join(str(p) for p in existing)} already exist(s): pass --force to replace"
        )
    home.mkdir(parents=True, exist_ok=True)
    texts = [dagster_yaml(config), celery_yaml(config), stocker_env(config, home)]
    for path, text in zip(targets, texts, strict=True):
        _write_atomic(path, text)
    return targets


def start_commands(home: Path, config: DeployConfig) -> list[tuple[str, str]]:
    """(where, command) for each process of a deployment using ``home``."""
    env = f"set -a; . {home}/stocker.env; set +a"
    workspace = "-m stocker_assets.definitions.celery_definitions"
    worker = f"dagster-celery worker start -A dagster_celery.app -y {home}/celery.yaml"
    commands = [
        ("every machine, first", env + "   # and STOCKER_HOME=<the shared folder>"),
        ("web machine", f"dagster-webserver {workspace} -h 0.0.0.0 -p 3000"),
        ("web machine (one daemon in all)", f"dagster-daemon run {workspace}"),
        ("each worker machine", f"{worker} -q dagster -- -c 2"),
    ]
    if config.gpu_queue:
        commands.append(("GPU machine (training steps)", f"{worker} -q {config.gpu_queue} -- -c 1"))
    if config.llm_queue:
        commands.append(("near the LLM server (council votes)", f"{worker} -q {config.llm_queue} -- -c 4"))
    commands.append(("anywhere", "stocker materialize -g market --from 2020-01 --to 2020-06"))
    return commands
