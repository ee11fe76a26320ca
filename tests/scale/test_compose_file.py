"""deploy/: the compose file, its Dockerfile and the dagster.yaml/celery.yaml templates are
consistent without Docker (no engine here); the templates load against a real Postgres."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
STOCKER_SERVICES = ("webserver", "daemon", "worker", "gpu-worker", "llm-worker", "stocker")


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


def test_compose_services_images_volumes_and_commands():
    compose = _compose()
    services = compose["services"]
    assert {"postgres", "redis", *STOCKER_SERVICES} <= set(services)
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert services["worker"]["deploy"]["replicas"] >= 2
    assert services["daemon"]["command"][:2] == ["dagster-daemon", "run"]
    named_volumes = set(compose["volumes"])
    for name in STOCKER_SERVICES:
        service = services[name]
        build = service["build"]
        assert (DEPLOY / build["context"] / build["dockerfile"]).is_file(), name
        env = service["environment"]
        assert env["STOCKER_EXECUTOR"] == "celery" and env["STOCKER_HOME"] == "/data"
        mounts = {}
        for volume in service["volumes"]:
            source, target = volume.split(":")[:2]
            if source.startswith("."):
                assert (DEPLOY / source).is_file(), f"{name}: {source} missing"
            else:
                assert source in named_volumes, f"{name}: volume {source} not declared"
            mounts[target] = source
        # shared by every stocker container: the warehouse folder and the IO-manager storage
        assert mounts["/data"] == "stocker-data"
        assert mounts[env["DAGSTER_HOME"] + "/storage"] == "dagster-storage"
        assert mounts[env["DAGSTER_HOME"] + "/dagster.yaml"] == "./dagster.yaml"
        command = [str(c) for c in service.get("command", [])]
        for i, arg in enumerate(command):  # every file a command names is mounted from deploy/
            if arg.startswith("/opt/"):
                assert arg in mounts, f"{name}: {arg} not mounted"
            if arg == "-m":
                assert importlib.util.find_spec(command[i + 1]) is not None, command[i + 1]
        if "dagster-celery" in command:
            assert command[command.index("-y") + 1] == "/opt/dagster/celery.yaml"
            queue = command[command.index("-q") + 1]
            assert queue == {"worker": "dagster", "gpu-worker": "gpu", "llm-worker": "llm"}[name]
    for name in ("gpu-worker", "vllm"):
        devices = services[name]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["capabilities"] == ["gpu"]


def test_dockerfile_installs_cpu_torch_then_the_scale_extra():
    text = (DEPLOY / "Dockerfile").read_text()
    assert text.startswith("#") and "FROM python:3.11-slim" in text
    assert text.index("download.pytorch.org/whl/cpu") < text.index("pip install -e '.[scale]'")
    for copied in ("pyproject.toml", "README.md", "stocker_core", "stocker_assets"):
        assert (DEPLOY.parent / copied).exists(), copied
    assert (DEPLOY / "Dockerfile.dockerignore").is_file()


def test_docker_compose_config_when_available():
    if shutil.which("docker") is None:
        pytest.skip("no docker client")
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(
            f"docker has no compose plugin here: {(probe.stderr or probe.stdout).strip().splitlines()[0]}"
        )
    result = subprocess.run(
        ["docker", "compose", "-f", str(DEPLOY / "docker-compose.yml"), "config", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_templates_load_against_postgres(pg_redis, tmp_path, monkeypatch):
    import dagster as dg
    from dagster_celery.cli import get_validated_config
    from dagster_postgres import PostgresEventLogStorage
    from services_testing import fresh_database
    from sqlalchemy.engine import make_url

    url = make_url(fresh_database(pg_redis))
    (tmp_path / "dagster.yaml").write_text(
        (DEPLOY / "dagster.yaml").read_text().replace("port: 5432", f"port: {url.port}")
    )
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    for key, value in (("HOST", url.host), ("USER", url.username), ("PASSWORD", ""), ("DB", url.database)):
        monkeypatch.setenv(f"DAGSTER_POSTGRES_{key}", value)
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert instance.get_runs() == []
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 4
    config = get_validated_config(str(DEPLOY / "celery.yaml"))
    assert (
        config["broker"]
        == config["backend"]
        == _compose()["x-stocker"]["environment"]["STOCKER_CELERY_BROKER"]
    )
