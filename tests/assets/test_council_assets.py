"""Text events and specialist_votes through Dagster on the seed fixture."""

import dagster as dg

from stocker_assets.definitions.council import specialist_votes
from stocker_assets.definitions.market.assets import charts, indicators, prices
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_assets.definitions.text import forum_posts, macro_events, news
from stocker_core.warehouse import Warehouse

KEY = "AAPL|2023-08-01"
ROLES = {
    "chart_pattern",
    "seasonal_trend",
    "indicator",
    "news",
    "forum_sentiment",
    "peer_commodity",
    "geopolitics",
}


def test_votes_are_cached_and_the_second_run_computes_nothing(tmp_path, seed_dir):
    resource = StockerResource(
        home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir), council_backend="rule"
    )
    resources = {"stocker": resource}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        text = dg.materialize([news, forum_posts, macro_events], instance=instance, resources=resources)
        assert text.success
        assert text.asset_materializations_for_node("news")[0].metadata["rows_written"].value == 25
        market = dg.materialize(
            [prices, indicators, charts], instance=instance, resources=resources, partition_key=KEY
        )
        assert market.success
        first = dg.materialize([specialist_votes], instance=instance, resources=resources, partition_key=KEY)
        meta = first.asset_materializations_for_node("specialist_votes")[0].metadata
        assert meta["cache_misses"].value == 23 * 7 and meta["cache_hits"].value == 0
        assert meta["parse_failures"].value == 0
        assert "mean_signal" in meta["by_role"].value
        second = dg.materialize([specialist_votes], instance=instance, resources=resources, partition_key=KEY)
        meta2 = second.asset_materializations_for_node("specialist_votes")[0].metadata
        assert meta2["cache_misses"].value == 0 and meta2["cache_hits"].value == 23 * 7
    votes = Warehouse(resource.settings().warehouse_path).query(
        "SELECT role, count(*) n, count(DISTINCT date) d FROM council.votes GROUP BY role"
    )
    assert set(votes["role"]) == ROLES and set(votes["n"]) == {23} and set(votes["d"]) == {23}
