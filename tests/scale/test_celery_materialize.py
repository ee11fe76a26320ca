"""`stocker materialize` with STOCKER_EXECUTOR=celery: the market group of two tickers runs
(as one batch: one run over both tickers' months) through a real dagster-celery worker (Redis
broker) on a Postgres instance, and the rows land in the warehouse."""

from __future__ import annotations

import pytest
from services_testing import fresh_database, load_env_file, stocker, stocker_env

TICKERS = ("AAPL", "MSFT")


@pytest.mark.slow
def test_market_group_runs_on_a_celery_worker(pg_redis, tmp_path):
    import dagster as dg

    from stocker_core.warehouse import Warehouse

    url = fresh_database(pg_redis)
    env = stocker_env(tmp_path)
    init = stocker("deploy", "init", "--postgres", url, "--broker", pg_redis.redis_url + "/1", env=env)
    assert init.returncode == 0, init.stderr
    home = tmp_path / "dagster"
    env = load_env_file(home / "stocker.env", env)
    worker = pg_redis.start_worker(home / "celery.yaml", env, name="scaletest", concurrency=2)
    try:
        run = stocker(
            "materialize", *[a for t in TICKERS for a in ("-t", t)],
            "--from", "2020-01", "--to", "2020-02", "-g", "market",
            env=env,
        )  # fmt: skip
    finally:
        pg_redis.stop(worker)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "prices done, 4 partition(s)" in run.stdout  # progress still reported

    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_run_records()
        assert len(records) == 1  # both tickers' months in one run (a batch), its steps on the worker
        for record in records:
            assert record.dagster_run.job_name == "market_job"
            assert record.dagster_run.status == dg.DagsterRunStatus.SUCCESS
            events = [
                r.event_log_entry for r in instance.get_records_for_run(record.dagster_run.run_id).records
            ]
            run_pid = next(
                e.dagster_event.pid for e in events if e.dagster_event_type == dg.DagsterEventType.RUN_START
            )
            step_pids = {
                e.dagster_event.pid for e in events if e.dagster_event_type == dg.DagsterEventType.STEP_START
            }
            on_worker = [e for e in events if "in celery worker" in (e.message or "")]
            assert step_pids and run_pid not in step_pids, (run_pid, step_pids)
            assert any("Executing steps prices in celery worker" in e.message for e in on_worker)
            for entry in on_worker:  # each step's engine event names the worker that took it
                worker_name = entry.dagster_event.event_specific_data.metadata["Celery worker"].value
                assert worker_name.startswith("scaletest@"), worker_name

    warehouse = Warehouse(tmp_path / "home" / "stocker.duckdb")
    for ticker in TICKERS:
        rows = warehouse.query("SELECT count(*) AS n FROM market.prices WHERE ticker = ?", [ticker])
        assert int(rows.iloc[0, 0]) == 40, ticker  # Jan + Feb 2020 sessions
