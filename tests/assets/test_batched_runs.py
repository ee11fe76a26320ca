"""Many tickers in one Dagster run: the rectangles a run can cover, the batches the lanes
take, per-partition metadata that stays linear, and a batch that builds what per-ticker runs
built (issue 49)."""

from datetime import date

import dagster as dg
import pandas as pd
import pytest
from typer.testing import CliRunner

from stocker_assets.definitions.lineage import add_partitions_metadata
from stocker_assets.definitions.partitions import ticker_month_partitions, ticker_partitions
from stocker_assets.engine.lanes import MAX_BATCH_TICKERS, batch_unit, stage_sizes, take_ready
from stocker_assets.engine.runner import RANGE_END, RANGE_START
from stocker_assets.engine.stages import RunUnit, partition_boxes
from stocker_core.config import Settings
from stocker_core.warehouse import Warehouse

JAN, FEB, MAR, APR = (date(2020, m, 1) for m in (1, 2, 3, 4))


def test_consecutive_tickers_with_the_same_months_share_one_box():
    order = ["A", "B", "C", "D"]
    assert partition_boxes([("A", [JAN, FEB]), ("B", [JAN, FEB]), ("C", [JAN, FEB])], order) == (
        (("A", "B", "C"), (JAN, FEB)),
    )
    # given out of order, boxed in Dagster's order
    assert partition_boxes([("C", [FEB]), ("A", [FEB]), ("B", [FEB])], order) == ((("A", "B", "C"), (FEB,)),)


def test_a_box_never_spans_a_ticker_it_does_not_hold_or_other_months():
    order = ["A", "B", "C", "D"]
    # B is not asked for: A…C would build B too, so A and C are two boxes
    assert partition_boxes([("A", [JAN]), ("C", [JAN])], order) == ((("A",), (JAN,)), (("C",), (JAN,)))
    # other months, other box
    assert partition_boxes([("A", [JAN]), ("B", [JAN, FEB]), ("C", [JAN, FEB])], order) == (
        (("A",), (JAN,)),
        (("B", "C"), (JAN, FEB)),
    )
    # a gap in a ticker's months (a range covers every month between its ends): one box a run
    assert partition_boxes([("A", [JAN, FEB, APR])], order) == ((("A",), (JAN, FEB)), (("A",), (APR,)))
    # a ticker Dagster does not know yet gets its own box
    assert partition_boxes([("A", [JAN]), ("Z", [JAN])], order) == ((("A",), (JAN,)), (("Z",), (JAN,)))


def test_dagster_reads_a_box_as_exactly_its_tickers_and_months():
    """The premise of a box: a multi-partition key range is the product of its dimensions."""
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["A", "B", "C", "D"])
        keys = ticker_month_partitions.get_partition_keys_in_range(
            dg.PartitionKeyRange("B|2020-01-01", "C|2020-02-01"), dynamic_partitions_store=instance
        )
    assert sorted(keys) == ["B|2020-01-01", "B|2020-02-01", "C|2020-01-01", "C|2020-02-01"]


def _ticker_units(tickers: str, stage: int = 1, months=(JAN, FEB)) -> list[RunUnit]:
    return [
        RunUnit(f"{t}@{stage}", f"stage {stage}: {t}", ("prices",), 2, ticker=t, months=tuple(months))
        for t in tickers
    ]


def test_a_free_lane_takes_its_share_of_a_stage_s_ready_tickers():
    pending = [*_ticker_units("ABCDE"), RunUnit("splits", "stage 1: splits", ("splits",), 1)]
    pending += _ticker_units("AB", stage=2)
    # two lanes: a lane takes half of stage 1's ready tickers (rounded up), leaving the rest
    # to the other lane, whenever it frees up
    first = take_ready(pending, set(), lanes=2)
    assert [u.name for u in first] == ["A@1", "B@1", "C@1"]
    assert [u.name for u in take_ready(pending, set(), lanes=2)] == ["D@1"]
    assert [u.name for u in take_ready(pending, set(), lanes=1)] == ["E@1"]
    assert [u.name for u in take_ready(pending, set(), 1)] == ["splits"]  # an unpartitioned one alone
    assert [u.name for u in take_ready(pending, set(), 1)] == ["A@2", "B@2"]
    many = _ticker_units([f"T{i}" for i in range(MAX_BATCH_TICKERS + 5)])
    assert len(take_ready(many, set(), 1)) == MAX_BATCH_TICKERS and len(many) == 5


def test_a_lane_s_share_is_cut_from_the_whole_stage():
    """Eleven tickers on two lanes are two batches of 6 and 5 whenever they become ready, not
    6, 3, 1, 1 (halving what is left)."""
    units = _ticker_units("ABCDEFGHIJK")
    sizes = stage_sizes(units)
    assert sizes == {"1": 11}
    shares = []
    while units:
        shares.append(len(take_ready(units, set(), 2, sizes)))
    assert shares == [6, 5]


def test_a_batch_runs_its_stale_tickers_and_names_the_fresh():
    units = _ticker_units("ABCD")
    stale = [units[0], units[1], units[3]]
    batch = batch_unit(stale, [units[2]], ["A", "B", "C", "D"])
    assert batch.partitioned and batch.ticker is None
    assert batch.boxes == ((("A", "B"), (JAN, FEB)), (("D",), (JAN, FEB)))  # C is fresh: not built
    assert batch.steps == 2 * 2 and batch.name == "A…D@1"
    assert batch.label == "stage 1: 4 tickers A…D 2020-01…2020-02 (6 ticker-months, 2 run(s)); 1 up to date"
    assert [u.name for u in batch.up_to_date] == ["C@1"]


@dg.asset(partitions_def=ticker_month_partitions, backfill_policy=dg.BackfillPolicy.single_run())
def public_metadata(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    for key in context.partition_keys:
        context.add_asset_metadata({"key": key, "rows": len(key)}, partition_key=key)
        context.add_asset_metadata({"again": True}, partition_key=key)
    return dg.MaterializeResult(metadata={"run_wide": 1})


@dg.asset(partitions_def=ticker_month_partitions, backfill_policy=dg.BackfillPolicy.single_run())
def bulk_metadata(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    add_partitions_metadata(context, {key: {"key": key, "rows": len(key)} for key in context.partition_keys})
    add_partitions_metadata(context, dict.fromkeys(context.partition_keys, {"again": True}))
    return dg.MaterializeResult(metadata={"run_wide": 1})


@dg.asset(partitions_def=ticker_month_partitions, backfill_policy=dg.BackfillPolicy.single_run())
def outside_metadata(context: dg.AssetExecutionContext) -> None:
    add_partitions_metadata(context, {"D|2020-01-01": {"key": "D"}})


def _metadata(instance: dg.DagsterInstance, asset: str) -> dict[str, dict[str, object]]:
    """{partition: its latest materialization's metadata values}."""
    records = instance.fetch_materializations(dg.AssetKey(asset), limit=1000).records
    return {
        r.asset_materialization.partition: {k: v.value for k, v in r.asset_materialization.metadata.items()}
        for r in records
    }


def test_bulk_partition_metadata_is_what_dagster_s_own_call_gives():
    tags = {RANGE_START: "A|2020-01-01", RANGE_END: "B|2020-02-01"}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["A", "B", "C", "D"])
        for asset in (public_metadata, bulk_metadata):
            assert dg.materialize([asset], instance=instance, tags=tags).success
        public, bulk = _metadata(instance, "public_metadata"), _metadata(instance, "bulk_metadata")
        failed = dg.materialize([outside_metadata], instance=instance, tags=tags, raise_on_error=False)
    assert len(public) == 4 and public == bulk
    assert bulk["B|2020-02-01"] == {"run_wide": 1, "key": "B|2020-02-01", "rows": 12, "again": True}
    assert not failed.success  # a partition the run does not target is refused, as Dagster does
    assert "not being targeted" in str(failed.get_step_failure_events()[0].step_failure_data.error.message)


def _tables(settings: Settings) -> dict[str, pd.DataFrame]:
    warehouse = Warehouse(settings.warehouse_path)
    found = {}
    for table, order in (
        ("market.prices", ["ticker", "date"]),
        ("market.indicators", ["ticker", "date"]),
        ("env.episodes", ["ticker", "month"]),
        ("env.ideal_trajectories", ["ticker", "month", "step"]),
    ):
        frame = warehouse.query(f"SELECT * FROM {table}")
        frame = frame.drop(columns=[c for c in frame.columns if c in ("created_at", "run_id")])
        found[table] = frame.sort_values(order, ignore_index=True)
    return found


@pytest.mark.slow
def test_one_batch_builds_what_runs_per_ticker_built(tmp_path, monkeypatch):
    """Three sample tickers in one lane: one run per job for all three, each partition with its
    own metadata, and the same tables as three tickers built one run each (the engine before)."""
    from stocker_assets import pipeline_cli
    from stocker_assets.engine import lanes
    from stocker_core.cli import build_app

    app = build_app([pipeline_cli.commands])
    args = ["materialize", "-t", "GOOGL", "-t", "JPM", "-t", "KO", "--from", "2018-06", "--to", "2018-07"]
    args += ["--groups", "market,env", "--skip", "charts"]
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    monkeypatch.setenv("STOCKER_MAIN_WORKERS", "1")
    built = {}
    for batch in (MAX_BATCH_TICKERS, 1):
        monkeypatch.setattr(lanes, "MAX_BATCH_TICKERS", batch)
        monkeypatch.setenv("STOCKER_HOME", str(tmp_path / f"home{batch}"))
        monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / f"dagster{batch}"))
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        built[batch] = _tables(Settings())
        with dg.DagsterInstance.get() as instance:
            runs = instance.get_runs()
            if batch > 1:
                assert sorted(r.job_name for r in runs) == ["env_job", "market_job"]
                label = "stage 1: 3 tickers GOOGL…KO 2018-06…2018-07 (6 ticker-months, 1 run(s))"
                assert label in result.output
                episodes = _metadata(instance, "episodes")
                written = {p: m for p, m in episodes.items() if m["status"] == "written"}
                assert {p.split("|")[0] for p in written} == {"GOOGL", "JPM", "KO"}
                assert len({m["ideal_total"] for m in written.values()}) == len(written) == 6
            else:
                assert len(runs) == 6  # a market and an env run per ticker
    for table, frame in built[MAX_BATCH_TICKERS].items():
        assert len(frame) > 0, table
        pd.testing.assert_frame_equal(frame, built[1][table], obj=table)
