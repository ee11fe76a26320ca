"""charts[ticker×month] through Dagster: files, table, check, idempotence."""

import hashlib
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from stocker_assets.definitions.market.assets import charts, prices
from stocker_assets.definitions.market.checks import charts_are_complete
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.warehouse import Warehouse

KEY = "AAPL|2023-08-01"


@pytest.fixture(autouse=True)
def _charts_eager(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about drawing: every session's chart, as a vision council needs them."""
    monkeypatch.setenv("STOCKER_CHARTS", "eager")


def test_charts_asset_writes_every_session_and_is_idempotent(tmp_path, seed_dir):
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])

        def run():
            return dg.materialize(
                [prices, charts, charts_are_complete],
                instance=instance,
                resources={"stocker": resource},
                partition_key=KEY,
            )

        first = run()
        assert first.success
        warehouse = Warehouse(resource.settings().warehouse_path)
        index = warehouse.read_table("market.charts", "AAPL")
        assert len(index) == 23 and set(index["width"]) == {768} and set(index["height"]) == {768}
        for row in index.itertuples():
            data = Path(row.path).read_bytes()
            assert hashlib.sha256(data).hexdigest() == row.sha256
            assert row.window_end == row.date
        assert Path(index["path"].iloc[0]) == tmp_path / "home" / "charts" / "AAPL" / "2023-08-01.png"
        assert all(e.passed for e in first.get_asset_check_evaluations())
        assert (
            "data:image/png;base64,"
            in first.asset_materializations_for_node("charts")[0].metadata["preview"].value
        )

        (tmp_path / "home" / "charts" / "AAPL" / "2023-08-31.png").write_bytes(b"broken")
        stale = tmp_path / "home" / "charts" / "AAPL" / "2023-08-05.png"  # a Saturday: not a session
        stale.write_bytes(b"stale")
        second = run()
        again = warehouse.read_table("market.charts", "AAPL")
        pd.testing.assert_frame_equal(index, again)
        assert not stale.exists()
        assert all(e.passed for e in second.get_asset_check_evaluations())
        # only the broken file was drawn again; the rest were reused
        notes = second.asset_materializations_for_node("charts")[0].metadata["notes"].value
        assert "1 chart(s) drawn, 22 unchanged" in notes


def test_chart_check_flags_missing_and_unreadable(tmp_path, seed_dir):
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        assert dg.materialize(
            [prices, charts], instance=instance, resources={"stocker": resource}, partition_key=KEY
        ).success
        warehouse = Warehouse(resource.settings().warehouse_path)
        stored = warehouse.read_table("market.charts", "AAPL")
        warehouse.replace_partitions(
            "market.charts", "AAPL", stored[stored["date"] != "2023-08-10"], shrink_reason="a chart lost"
        )
        path = warehouse.read_table("market.charts", "AAPL")["path"].iloc[0]
        Path(path).write_bytes(b"not a png")
        # re-materialize prices only (charts untouched) and run the charts check
        check_only = dg.materialize(
            [prices, charts, charts_are_complete],
            instance=instance,
            resources={"stocker": resource},
            partition_key=KEY,
            selection=dg.AssetSelection.assets(prices) | dg.AssetSelection.checks(charts_are_complete),
        )
        evaluation = check_only.get_asset_check_evaluations()[0]
    assert not evaluation.passed
    problems = evaluation.metadata["problems"].value
    assert "1 session(s) without a chart: 2023-08-10" in problems and "not a readable PNG" in problems


def test_charts_on_demand_draw_nothing_and_the_check_passes(tmp_path, seed_dir, monkeypatch):
    from stocker_core.config import Settings

    monkeypatch.setenv("STOCKER_CHARTS", "auto")  # the default: a rule council needs no chart
    assert not Settings().charts_eager
    assert Settings(council_backend="openai", openai_multimodal=True).charts_eager
    assert Settings(charts="eager").charts_eager and not Settings(charts="on_demand").charts_eager
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        result = dg.materialize(
            [prices, charts, charts_are_complete],
            instance=instance,
            resources={"stocker": resource},
            partition_key=KEY,
        )
        assert result.success and all(e.passed for e in result.get_asset_check_evaluations())
        assert "on demand" in result.asset_materializations_for_node("charts")[0].metadata["charts"].value
        assert not (tmp_path / "home" / "charts").exists()
        assert Warehouse(resource.settings().warehouse_path).read_table("market.charts", "AAPL").empty
