"""The CLI's Dagster instance stores its event log through PooledSqliteEventLogStorage: the
files Dagster's own SQLite storage reads, with connections kept open (at most MAX_OPEN_SHARDS)."""

import dagster as dg
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from stocker_assets.engine import event_storage
from stocker_assets.engine.event_storage import PooledSqliteEventLogStorage
from stocker_assets.engine.instance import ensure_dagster_home
from stocker_core.config import Settings

months = dg.MonthlyPartitionsDefinition(start_date="2024-01-01", end_offset=0)


@dg.asset(partitions_def=months)
def numbers(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"month": context.partition_key})


def _instance(tmp_path, monkeypatch) -> dg.DagsterInstance:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    home = ensure_dagster_home(Settings(home=tmp_path / "home"))
    return dg.DagsterInstance.from_config(str(home))


def test_the_cli_instance_writes_what_dagsters_storage_reads(tmp_path, monkeypatch):
    instance = _instance(tmp_path, monkeypatch)
    storage = instance.event_log_storage
    assert isinstance(storage, PooledSqliteEventLogStorage)
    runs_dir = tmp_path / "dagster" / "history" / "runs"
    keys = months.get_partition_keys()[:3]
    for key in keys:
        assert dg.materialize([numbers], instance=instance, partition_key=key).success
    plain = SqliteEventLogStorage(str(runs_dir))  # Dagster's own class on the same files
    records = plain.fetch_materializations(dg.AssetKey("numbers"), limit=10).records
    assert sorted(r.partition_key for r in records) == keys
    assert {r.asset_materialization.metadata["month"].value for r in records} == set(keys)
    run_id = records[0].run_id
    assert [e.dagster_event_type for e in plain.get_logs_for_run(run_id) if e.is_dagster_event] == [
        e.dagster_event_type for e in storage.get_logs_for_run(run_id) if e.is_dagster_event
    ]
    instance.dispose()


def test_open_engines_are_bounded_and_dropped_with_their_run(tmp_path, monkeypatch):
    monkeypatch.setattr(event_storage, "MAX_OPEN_SHARDS", 3)
    instance = _instance(tmp_path, monkeypatch)
    storage = instance.event_log_storage
    run_ids = [
        dg.materialize([numbers], instance=instance, partition_key=k).run_id
        for k in months.get_partition_keys()[:4]
    ]
    assert len(storage._engines) == 3  # the index and the two latest runs
    assert run_ids[-1] in storage._engines and run_ids[0] not in storage._engines
    storage.delete_events(run_ids[-1])
    assert run_ids[-1] not in storage._engines
    assert not storage.get_logs_for_run(run_ids[-1])
    assert storage.get_logs_for_run(run_ids[0])  # an evicted run's file opens again
    instance.dispose()
    assert not storage._engines


def test_a_home_written_before_the_engine_folder_still_loads(tmp_path, monkeypatch):
    """A dagster.yaml copied into a home before the split names ``stocker_assets.event_storage``."""
    instance = _instance(tmp_path, monkeypatch)
    instance.dispose()
    config = tmp_path / "dagster" / "dagster.yaml"
    text = config.read_text()
    assert "module: stocker_assets.engine.event_storage" in text
    config.write_text(text.replace("stocker_assets.engine.event_storage", "stocker_assets.event_storage"))
    old = dg.DagsterInstance.from_config(str(tmp_path / "dagster"))
    assert isinstance(old.event_log_storage, PooledSqliteEventLogStorage)
    old.dispose()
