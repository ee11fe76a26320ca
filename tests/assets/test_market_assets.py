"""prices + indicators through Dagster with test resources, into a temporary STOCKER_HOME."""

from datetime import date

import dagster as dg
import numpy as np
import pandas as pd
import pytest
import talib

from stocker_assets.definitions.market.assets import indicators, prices
from stocker_assets.definitions.market.checks import indicators_are_sane, prices_are_valid
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.market.files_source import FilesSource
from stocker_core.warehouse import Warehouse

KEY = "AAPL|2023-08-01"


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        inst.add_dynamic_partitions(ticker_partitions.name, ["AAPL", "GC=F", "ZZZZ"])
        yield inst


@pytest.fixture
def resource(tmp_path, seed_dir):
    return StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))


def run(instance, resource, key=KEY, assets=(prices, indicators), **kwargs):
    checks = [prices_are_valid, indicators_are_sane][: len(assets)]
    return dg.materialize(
        [*assets, *checks],
        instance=instance,
        resources={"stocker": resource},
        partition_key=key,
        **kwargs,
    )


def test_aapl_august_prices_and_indicators(instance, resource, seed_dir):
    result = run(instance, resource)
    assert result.success
    warehouse = Warehouse(resource.settings().warehouse_path)
    stored = warehouse.read_prices("AAPL")
    assert len(stored) == 23
    assert stored["date"].min() == pd.Timestamp("2023-08-01") and stored["date"].max() == pd.Timestamp(
        "2023-08-31"
    )

    full = FilesSource(seed_dir).fetch("AAPL", date(2000, 1, 1), date(2030, 1, 1))
    close = full["close"].to_numpy()
    expected = (
        pd.DataFrame(
            {
                "date": full["date"],
                "rsi14": talib.RSI(close, 14),
                "macd": talib.MACD(close, 12, 26, 9)[0],
                "sma50": talib.SMA(close, 50),
                "bb_upper": talib.BBANDS(close, 20, 2, 2)[0],
                "atr14": talib.ATR(full["high"].to_numpy(), full["low"].to_numpy(), close, 14),
            }
        )
        .set_index("date")
        .loc["2023-08"]
    )
    got = warehouse.read_table("market.indicators", "AAPL").set_index("date")
    assert len(got) == 23
    np.testing.assert_allclose(got[expected.columns], expected, rtol=1e-12, equal_nan=True)

    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"prices_are_valid": True, "indicators_are_sane": True}
    lineage = warehouse.query(
        "SELECT asset, partition, row_count, upstream_data_versions FROM meta.lineage ORDER BY asset"
    )
    assert lineage["asset"].tolist() == ["indicators", "prices"]
    assert lineage["partition"].tolist() == [KEY, KEY] and lineage["row_count"].tolist() == [23, 23]
    assert "prices@AAPL|2023-08-01" in lineage["upstream_data_versions"].iloc[0]


def test_rematerializing_replaces_rows(instance, resource):
    assert run(instance, resource).success
    warehouse = Warehouse(resource.settings().warehouse_path)
    first = warehouse.read_prices("AAPL")
    first_ind = warehouse.read_table("market.indicators", "AAPL")
    assert run(instance, resource).success
    pd.testing.assert_frame_equal(first, warehouse.read_prices("AAPL"))
    pd.testing.assert_frame_equal(first_ind, warehouse.read_table("market.indicators", "AAPL"))
    versions = warehouse.query("SELECT DISTINCT data_version FROM meta.lineage WHERE asset = 'prices'")
    assert len(versions) == 1  # same data, same version


def test_empty_month_never_wipes_stored_rows(instance, resource):
    assert run(instance, resource).success
    warehouse = Warehouse(resource.settings().warehouse_path)
    # a month before the fixture's history: zero rows, success, nothing deleted
    result = run(instance, resource, key="AAPL|2020-01-01", assets=(prices,))
    assert result.success
    assert len(warehouse.read_prices("AAPL")) == 23
    meta = result.asset_materializations_for_node("prices")[0].metadata
    assert meta["rows_written"].value == 0


def test_close_only_symbol_and_unknown_ticker(instance, resource):
    assert run(instance, resource, key="GC=F|2023-08-01").success
    gold = Warehouse(resource.settings().warehouse_path).read_prices("GC=F")
    assert len(gold) > 0 and gold["open"].isna().all()
    failed = run(instance, resource, key="ZZZZ|2023-08-01", raise_on_error=False)
    assert not failed.success
    errors = [e for e in failed.all_events if e.is_step_failure]
    assert "no symbol 'ZZZZ'" in errors[0].step_failure_data.error.cause.message


def test_single_run_over_a_month_range(instance, resource):
    result = dg.materialize(
        [prices, indicators, prices_are_valid, indicators_are_sane],
        instance=instance,
        resources={"stocker": resource},
        tags={
            "dagster/asset_partition_range_start": "AAPL|2023-02-01",
            "dagster/asset_partition_range_end": "AAPL|2023-09-01",
        },
    )
    assert result.success
    warehouse = Warehouse(resource.settings().warehouse_path)
    assert warehouse.read_prices("AAPL")["date"].dt.month.nunique() == 8
    assert warehouse.query("SELECT count(*) n FROM meta.lineage WHERE asset='prices'")["n"][0] == 8
    assert all(e.passed for e in result.get_asset_check_evaluations())


def test_price_check_fails_on_bad_source_rows(instance, tmp_path, seed_dir):
    bars = pd.read_csv(seed_dir / "prices.csv")
    bars.loc[(bars["ticker"] == "AAPL") & (bars["date"] == "2023-08-10"), "high"] = 1.0
    bars = bars[~((bars["ticker"] == "AAPL") & (bars["date"] == "2023-08-15"))]
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    bars.to_csv(bad_dir / "prices.csv", index=False)
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(bad_dir))
    result = run(instance, resource, assets=(prices,), raise_on_error=False)
    assert not result.success  # the check is blocking (issue 11): a failure fails the run
    evaluation = result.get_asset_check_evaluations()[0]
    assert not evaluation.passed
    problems = evaluation.metadata["problems"].value
    assert "high below open/close on 2023-08-10" in problems
    # the month is quarantined, not stored
    assert Warehouse(resource.settings().warehouse_path).read_prices("AAPL").empty


def test_missing_session_is_listed_but_not_blocking(instance, tmp_path, seed_dir):
    bars = pd.read_csv(seed_dir / "prices.csv")
    bars = bars[~((bars["ticker"] == "AAPL") & (bars["date"] == "2023-08-15"))]
    gap_dir = tmp_path / "gap"
    gap_dir.mkdir()
    bars.to_csv(gap_dir / "prices.csv", index=False)
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(gap_dir))
    result = run(instance, resource, assets=(prices,))
    assert result.success
    evaluation = result.get_asset_check_evaluations()[0]
    assert evaluation.passed
    assert "1 session(s) missing: 2023-08-15" in evaluation.metadata["missing_sessions"].value
