"""Episodes, ideal trajectories and votes record the data versions they were built from."""

from __future__ import annotations

import json
from datetime import date

import dagster as dg
import pytest

from stocker_assets.definitions.council import specialist_votes
from stocker_assets.definitions.env import episodes, ideal_trajectories
from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.market.builds import build_prices
from stocker_core.market.files_source import FilesSource
from stocker_core.warehouse import Warehouse

KEY = "AAPL|2023-08-01"


def _lineage(warehouse: Warehouse, asset: str) -> list[tuple[str, dict[str, str]]]:
    rows = warehouse.query(
        "SELECT data_version AS v, upstream_data_versions AS u FROM meta.lineage"
        " WHERE asset = ? ORDER BY materialized_at",
        [asset],
    )
    return [(v, json.loads(u)) for v, u in zip(rows["v"], rows["u"], strict=True)]


@pytest.mark.slow
def test_every_lineage_row_lists_its_upstream_data_versions(tmp_path, seed_dir):
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))
    warehouse = Warehouse(resource.settings().warehouse_path)
    resources = {"stocker": resource}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        # first without stored prices: inputs read from the files source are hashed
        assert dg.materialize([episodes], instance=instance, resources=resources, partition_key=KEY).success
        # history months stored directly (the warehouse then covers the episode), window via the asset
        history = [date(2023, month, 1) for month in range(1, 8)]  # the fixture starts 2023-01-13
        build_prices(FilesSource(seed_dir), warehouse, "AAPL", history)
        for key in (KEY, "AAPL|2023-09-01"):
            assert dg.materialize([prices], instance=instance, resources=resources, partition_key=key).success
        assets = [episodes, ideal_trajectories, specialist_votes]
        assert dg.materialize(assets, instance=instance, resources=resources, partition_key=KEY).success

    (_, from_source), (episode_version, from_prices) = _lineage(warehouse, "episodes")
    assert set(from_source) == {"files@AAPL|2023-08-01", "files@AAPL|2023-09-01"}
    price_versions = {f"prices@{k}": v for k, v in warehouse.latest_data_versions("prices", [KEY]).items()}
    price_versions |= {
        f"prices@{k}": v for k, v in warehouse.latest_data_versions("prices", ["AAPL|2023-09-01"]).items()
    }
    assert from_prices == price_versions  # the window's two months (history bars feed no output)
    assert from_source == {k.replace("prices@", "files@"): v for k, v in price_versions.items()}
    [(_, ideal_upstream)] = _lineage(warehouse, "ideal_trajectories")
    assert ideal_upstream == {f"episodes@{KEY}": episode_version, **price_versions}
    [(_, vote_upstream)] = _lineage(warehouse, "specialist_votes")
    assert vote_upstream[f"prices@{KEY}"] == price_versions[f"prices@{KEY}"]

    for asset in ("episodes", "ideal_trajectories", "specialist_votes"):
        for _, upstream in _lineage(warehouse, asset):
            assert upstream and all(isinstance(v, str) and len(v) == 16 for v in upstream.values()), asset
