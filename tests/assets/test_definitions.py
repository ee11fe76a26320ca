"""The Definitions load, jobs resolve, and the schedule/sensor produce the right requests."""

from datetime import datetime
from zoneinfo import ZoneInfo

import dagster as dg

from stocker_assets.definitions.location import defs
from stocker_assets.definitions.market.refresh import corpus_refresh, universe_sync
from stocker_assets.definitions.partitions import ticker_month_partitions, ticker_partitions
from stocker_core.universe import write_universe


def test_definitions_resolve():
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"prices", "indicators"} <= keys
    for name in ("market_job", "env_job", "council_job", "evaluation_job"):  # inferred from the assets
        assert defs.resolve_job_def(name).partitions_def == ticker_month_partitions, name
    assert defs.resolve_job_def("training_job").partitions_def is None
    assert {s.name for c in defs.asset_checks for s in c.check_specs} >= {
        "prices_are_valid",
        "indicators_are_sane",
    }
    graph = defs.resolve_asset_graph()
    assert graph.get(dg.AssetKey("prices")).group_name == "market"
    assert dg.AssetKey("prices") in graph.get(dg.AssetKey("indicators")).parent_keys


def test_partition_keys_read_ticker_first():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        # a fresh copy: Dagster caches keys on the definition with a weakref to the instance
        copy = dg.MultiPartitionsDefinition(
            dict(
                zip(
                    [d.name for d in ticker_month_partitions.partitions_defs],
                    [d.partitions_def for d in ticker_month_partitions.partitions_defs],
                    strict=True,
                )
            )
        )
        with dg.partition_loading_context(dynamic_partitions_store=instance):
            keys = copy.get_partition_keys()
    assert "AAPL|2023-08-01" in keys and all(k.startswith("AAPL|") for k in keys)


def test_corpus_refresh_requests_current_month_of_every_ticker():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["MSFT", "AAPL"])
        when = datetime(2024, 3, 15, 18, 30, tzinfo=ZoneInfo("America/New_York"))
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when) as context:
            requests = corpus_refresh(context)
        # the per-dimension tags come from the job's partitioning when Dagster launches the run
        resolved = requests[0].with_resolved_tags_and_config(
            target_definition=defs.resolve_job_def("market_job"),
            dynamic_partitions_requests=[],
            dynamic_partitions_store=instance,
        )
    assert [r.partition_key for r in requests] == ["AAPL|2024-03-01", "MSFT|2024-03-01"]
    assert [r.run_key for r in requests] == ["AAPL|2024-03-15", "MSFT|2024-03-15"]
    assert resolved.tags["dagster/partition/ticker"] == "AAPL"
    assert resolved.tags["dagster/partition/trading_month"] == "2024-03-01"
    assert resolved.tags["stocker/trigger"] == "corpus_refresh"
    assert corpus_refresh.cron_schedule == "30 18 * * 1-5"


def test_corpus_refresh_skips_without_tickers():
    with dg.instance_for_test() as instance:
        when = datetime(2024, 3, 15)
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when) as context:
            assert isinstance(corpus_refresh(context), dg.SkipReason)


def test_universe_sensor_registers_new_tickers(files_env):
    write_universe(files_env, ["AAPL", "NVDA"])
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        result = universe_sync(dg.build_sensor_context(instance=instance))
        assert result.dynamic_partitions_requests[0].partition_keys == ["NVDA"]
        (files_env.universe_path).write_text("AAPL\n../etc\n")
        skipped = universe_sync(dg.build_sensor_context(instance=instance))
        assert isinstance(skipped, dg.SkipReason) and "universe.txt:2" in skipped.skip_message
