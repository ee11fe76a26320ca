"""episodes + ideal_trajectories through Dagster on the seed fixture."""

import dagster as dg
import pytest

from stocker_assets.definitions.env import episodes, ideal_trajectories
from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.env.episode import load_episode
from stocker_core.warehouse import Warehouse


@pytest.mark.parametrize(
    ("key", "days"), [("AAPL|2023-08-01", 43), ("INTC|2024-01-01", 41), ("META|2022-09-01", 42)]
)
def test_episode_and_ideal_trajectory_assets(tmp_path, seed_dir, key, days):
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, [key.split("|")[0]])
        result = dg.materialize(
            [episodes, ideal_trajectories],
            instance=instance,
            resources={"stocker": resource},
            partition_key=key,
        )
    assert result.success
    warehouse = Warehouse(resource.settings().warehouse_path)
    row = warehouse.query("SELECT * FROM env.episodes WHERE key = ?", [key]).iloc[0]
    assert row["trading_days"] == days and row["starting_cash"] == 10_000
    assert row["ideal_total"] >= row["greedy_total"] > 0
    path = warehouse.query("SELECT * FROM env.ideal_trajectories ORDER BY step")
    assert len(path) == days and path["ideal_pnl"].iloc[-1] == pytest.approx(row["ideal_total"])
    meta = result.asset_materializations_for_node("ideal_trajectories")[0].metadata
    assert meta["plot"].value.startswith("![ideal position](data:image/png;base64,")
    episode = load_episode(key, resource.settings())
    assert episode.trading_days == days


def test_env_assets_read_the_warehouse_when_prices_are_materialized(tmp_path, seed_dir):
    """The warehouse answers only when it holds history and window (one source per
    episode): with the window months alone the episode comes from the files source."""
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))
    warehouse = Warehouse(resource.settings().warehouse_path)
    window = ["AAPL|2023-08-01", "AAPL|2023-09-01"]
    history = [f"AAPL|2023-{m:02d}-01" for m in range(1, 8)]  # the fixture starts 2023-01-13
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        for keys, expected in ((window, "files"), (history, "warehouse")):
            for key in keys:
                assert dg.materialize(
                    [prices], instance=instance, resources={"stocker": resource}, partition_key=key
                ).success
            assert dg.materialize(
                [episodes], instance=instance, resources={"stocker": resource}, partition_key=window[0]
            ).success
            row = warehouse.query("SELECT source, trading_days FROM env.episodes").iloc[0]
            assert (row["source"], row["trading_days"]) == (expected, 43)
