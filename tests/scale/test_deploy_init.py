"""`stocker deploy init`: valid files Dagster loads against a real Postgres, clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from services_testing import fresh_database
from typer.testing import CliRunner

from stocker_assets.cli import app
from stocker_assets.engine.deploy import FILES

runner = CliRunner()
BROKER = "redis://127.0.0.1:6379/0"


def _init(home: Path, *args: str):
    return runner.invoke(app, ["deploy", "init", "--home", str(home), *args])


def test_written_files_load_as_a_postgres_instance(pg_redis, tmp_path, monkeypatch):
    import dagster as dg
    from dagster_postgres import PostgresRunStorage

    url = fresh_database(pg_redis)
    home = tmp_path / "dh"
    result = _init(
        home, "--postgres", url, "--broker", pg_redis.redis_url + "/0", "--max-concurrent-runs", "7"
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in home.iterdir()) == sorted(FILES)
    for name in FILES:
        assert str(home / name) in result.output.replace("\n", "")
    assert "dagster-celery worker start" in result.output and "dagster-daemon run" in result.output

    config = yaml.safe_load((home / "dagster.yaml").read_text())
    assert config["storage"]["postgres"]["postgres_url"].startswith("postgresql+psycopg2://")
    assert config["telemetry"] == {"enabled": False}
    assert config["concurrency"]["runs"]["max_concurrent_runs"] == 7
    celery = yaml.safe_load((home / "celery.yaml").read_text())["execution"]["config"]
    assert celery == {"broker": pg_redis.redis_url + "/0", "backend": pg_redis.redis_url + "/0"}
    env = dict(line.split("=", 1) for line in (home / "stocker.env").read_text().splitlines() if "=" in line)
    assert env["STOCKER_EXECUTOR"] == "celery" and env["DAGSTER_HOME"] == str(home.resolve())

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert instance.get_runs() == []
        instance.add_dynamic_partitions("ticker", ["AAPL"])
        assert instance.get_dynamic_partitions("ticker") == ["AAPL"]
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 7

    # the workers' side: dagster-celery validates the executor block it will read
    from dagster_celery.cli import get_validated_config

    assert get_validated_config(str(home / "celery.yaml"))["broker"] == pg_redis.redis_url + "/0"


@pytest.mark.parametrize(
    "option,value,why",
    [
        ("--postgres", "mysql://u@h/db", "must start with postgresql://"),
        ("--postgres", "postgresql://u@h:5432", "names no database"),
        ("--postgres", "postgresql:///db", "names no host"),
        ("--postgres", "postgresql://u@h:port/db", "malformed"),
        ("--broker", "http://h:6379/0", "must start with redis://"),
        ("--backend", "ftp://h/x", "must start with redis://"),
        ("--max-concurrent-runs", "0", "greater than or equal to 1"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, option, value, why):
    good = {"--postgres": "postgresql://u:p@db:5432/dagster", "--broker": BROKER}
    args = {**good, option: value}
    home = tmp_path / "dh"
    result = _init(home, *[x for kv in args.items() for x in kv])
    assert result.exit_code == 2, result.output
    assert why in result.output.replace("\n", "")
    assert not home.exists() or not any(home.iterdir())


def test_existing_files_are_kept_without_force(tmp_path):
    home = tmp_path / "dh"
    first = _init(home, "--postgres", "postgresql://u@db/one", "--broker", BROKER)
    assert first.exit_code == 0, first.output
    before = {name: (home / name).read_text() for name in FILES}
    again = _init(home, "--postgres", "postgresql://u@db/two", "--broker", BROKER)
    assert again.exit_code == 2 and "--force" in again.output
    assert {name: (home / name).read_text() for name in FILES} == before
    forced = _init(home, "--postgres", "postgresql://u@db/two", "--broker", BROKER, "--force")
    assert forced.exit_code == 0, forced.output
    assert "/two" in (home / "dagster.yaml").read_text()
    assert not [p for p in home.iterdir() if p.name.startswith(".")]  # no temp files left


def test_default_home_is_the_clis_dagster_home(tmp_path, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "sh"))
    result = runner.invoke(app, ["deploy", "init", "--postgres", "postgresql://u@db/d", "--broker", BROKER])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "sh" / "dagster" / "dagster.yaml").exists()
