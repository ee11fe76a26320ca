"""The batched "no data" markers are the same events as one ``report_runless_asset_event``
per partition, in every table the UI reads (issue 22: markers without the cost)."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.instance.utils import RUNLESS_RUN_ID

from stocker_assets.engine.event_batch import report_materializations

KEYS = [dg.AssetKey("prices"), dg.AssetKey(["market", "indicators"])]


def _markers(n: int) -> list[dg.AssetMaterialization]:
    return [
        dg.AssetMaterialization(
            asset_key=key,
            partition=f"GOOGL|{1990 + i // 12}-{i % 12 + 1:02d}-01",
            metadata={"status": "no data: test", "rows_written": 0},
            tags={"stocker/no_data": "true"},
        )
        for key in KEYS
        for i in range(n)
    ]


def _seen(instance: dg.DagsterInstance) -> dict:
    """Everything the UI and Dagster's own queries see of the markers, ids and times aside."""
    out: dict = {"runless_events": len(instance.all_logs(RUNLESS_RUN_ID))}
    for key in KEYS:
        records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=1000).records
        out[key.to_user_string()] = {
            "partitions": sorted(instance.get_materialized_partitions(key)),
            "events": sorted(
                (
                    r.event_log_entry.asset_materialization.partition,
                    r.event_log_entry.asset_materialization.metadata["status"].value,
                    r.event_log_entry.asset_materialization.tags["stocker/no_data"],
                )
                for r in records
            ),
            "latest": instance.get_latest_materialization_event(key).asset_materialization.partition,
            "one_partition": len(
                instance.fetch_materializations(
                    dg.AssetRecordsFilter(asset_key=key, asset_partitions=["GOOGL|1990-03-01"]), limit=10
                ).records
            ),
            "tagged": len(instance.get_event_tags_for_asset(key, filter_tags={"stocker/no_data": "true"})),
        }
    out["keys"] = sorted(k.to_string() for k in instance.all_asset_keys())
    return out


@pytest.fixture
def two_instances(tmp_path):
    (tmp_path / "one_by_one").mkdir()
    (tmp_path / "batched").mkdir()
    with (
        dg.DagsterInstance.local_temp(str(tmp_path / "one_by_one")) as one,
        dg.DagsterInstance.local_temp(str(tmp_path / "batched")) as batched,
    ):
        yield one, batched


def test_the_batch_stores_what_one_call_per_partition_stores(two_instances):
    one, batched = two_instances
    markers = _markers(15)
    for marker in markers:
        one.report_runless_asset_event(marker)
    assert report_materializations(batched, markers) == len(markers)
    seen = _seen(batched)
    assert seen == _seen(one)
    assert seen["runless_events"] == 30 and len(seen["prices"]["partitions"]) == 15
    assert seen["prices"]["latest"] == "GOOGL|1991-03-01" and seen["prices"]["one_partition"] == 1


def test_a_second_batch_adds_to_the_first(two_instances):
    _, batched = two_instances
    first = _markers(5)
    report_materializations(batched, first)
    earlier = {m.partition for m in first}
    report_materializations(batched, [m for m in _markers(8) if m.partition not in earlier])
    assert all(len(batched.get_materialized_partitions(key)) == 8 for key in KEYS)
    assert report_materializations(batched, []) == 0
