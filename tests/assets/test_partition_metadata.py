"""In one run over many partitions each partition's materialization event carries its own
metadata (its plot, its rows, its totals), as the Dagster UI reads them from the instance."""

from __future__ import annotations

import base64

import dagster as dg
import pytest

from stocker_assets.definitions.env import ideal_trajectories
from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_assets.engine.runner import RANGE_END, RANGE_START
from stocker_core.env.catalog import solve_episode
from stocker_core.env.episode import load_episode

MARCH, APRIL = "GOOGL|2012-03-01", "GOOGL|2012-04-01"


def _latest(instance: dg.DagsterInstance, asset: str, key: str) -> dict[str, object]:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[key]), limit=1
    ).records
    assert len(records) == 1, f"no materialization of {asset} {key}"
    return {name: value.value for name, value in records[0].asset_materialization.metadata.items()}


@pytest.fixture
def resource(tmp_path) -> StockerResource:
    return StockerResource(home=str(tmp_path / "home"), source="sample")


def test_two_month_run_gives_each_partition_its_own_plot_and_totals(resource):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["GOOGL"])
        result = dg.materialize(
            [ideal_trajectories],
            instance=instance,
            resources={"stocker": resource},
            tags={RANGE_START: MARCH, RANGE_END: APRIL},
        )
        assert result.success
        march, april = (
            _latest(instance, "ideal_trajectories", MARCH),
            _latest(instance, "ideal_trajectories", APRIL),
        )
    for key, meta in ((MARCH, march), (APRIL, april)):
        solution = solve_episode(load_episode(key, resource.settings()), resource.settings().transaction_cost)
        assert meta["ideal_total"] == pytest.approx(solution.ideal.total)
        assert meta["ideal_trades"] == solution.ideal.trades
        # an episode is two months: March+April 2012 = 22 + 20 sessions, April+May = 20 + 22
        assert meta["rows_written"] == solution.episode.trading_days == 42
        assert meta["status"] == "written"
        assert meta["plot_path"].endswith(f"GOOGL/{key.split('|')[1]}.png")
    assert march["ideal_total"] != april["ideal_total"]
    assert march["plot"] != april["plot"]
    for meta in (march, april):  # the inline plot is the file written for that partition
        encoded = meta["plot"].split("base64,", 1)[1].rstrip(")")
        with open(meta["plot_path"], "rb") as written:
            assert base64.b64decode(encoded) == written.read()
    assert march["run_episodes"] == april["run_episodes"] == 2  # run-wide facts say so


def test_prices_partitions_show_their_own_dates_and_empty_months_say_no_data(resource):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["GOOGL"])
        # GOOGL in the sample ends on 2018-08-29: September 2018 has no bars
        assert dg.materialize(
            [prices],
            instance=instance,
            resources={"stocker": resource},
            tags={RANGE_START: "GOOGL|2018-07-01", RANGE_END: "GOOGL|2018-09-01"},
        ).success
        july, august, september = (_latest(instance, "prices", f"GOOGL|2018-{m:02d}-01") for m in (7, 8, 9))
    # July 2018: 22 weekdays less Independence Day; August 1-29: 21 weekdays, no holiday
    assert (july["rows_written"], july["first_date"], july["last_date"]) == (21, "2018-07-02", "2018-07-31")
    assert (august["rows_written"], august["first_date"], august["last_date"]) == (
        21,
        "2018-08-01",
        "2018-08-29",
    )
    assert "2018-07-02" in july["preview"] and "2018-08-01" in august["preview"]
    assert "2018-08-01" not in july["preview"]
    assert september["rows_written"] == 0 and september["status"].startswith("no data")
    assert "preview" not in september
    assert july["run_rows_written"] == september["run_rows_written"] == 42
