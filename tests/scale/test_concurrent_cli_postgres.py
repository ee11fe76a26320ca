"""Two `stocker materialize` commands starting at once on one fresh Postgres instance both
succeed: Postgres storage creates its tables in transactions (dagster-postgres retries a
loser of the race), so the SQLite init race (two alembic heads) cannot occur. Each command
has its own DAGSTER_HOME, as on two machines, so the file lock of ``instance.dagster_instance``
(one home only) plays no part; each its own STOCKER_HOME, so only the instance is shared."""

from __future__ import annotations

import pytest
from services_testing import fresh_database, start_stocker, stocker, stocker_env


@pytest.mark.slow
def test_two_cli_runs_on_a_fresh_postgres_instance(pg_redis, tmp_path):
    import dagster as dg
    import psycopg2

    url = fresh_database(pg_redis)
    envs = []
    for name, ticker in (("a", "AAPL"), ("b", "MSFT")):
        env = stocker_env(tmp_path, name)
        init = stocker("deploy", "init", "--postgres", url, "--broker", "redis://127.0.0.1:1/0", env=env)
        assert init.returncode == 0, init.stderr  # stocker.env not loaded: in-process executor
        envs.append((ticker, env))
    months = ("--from", "2020-03", "--to", "2020-03", "-g", "market")
    procs = [(ticker, start_stocker("materialize", "-t", ticker, *months, env=env)) for ticker, env in envs]
    for ticker, proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (ticker, out[-2000:], err[-3000:])

    con = psycopg2.connect(url.replace("+psycopg2", ""))
    with con.cursor() as cur:
        cur.execute("SELECT count(*) FROM alembic_version")
        assert cur.fetchone()[0] == 1
    con.close()
    with dg.DagsterInstance.from_config(str(tmp_path / "dagstera")) as instance:
        runs = instance.get_runs()
        assert sorted(r.tags["dagster/asset_partition_range_start"].split("|")[0] for r in runs) == [
            "AAPL",
            "MSFT",
        ]
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        assert sorted(instance.get_dynamic_partitions("ticker")) == ["AAPL", "MSFT"]
